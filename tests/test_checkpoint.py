"""Checkpoints: state dict round trips on every backend, atomic writes, and bad files."""

from __future__ import annotations

import os

import numpy as np
import pytest

import minitensor as mt
from minitensor import checkpoint, nn
from minitensor.checkpoint import CheckpointError


def _model(backend=None, dtype=None):
    return nn.Sequential(
        nn.Conv2d(1, 2, 3, backend=backend, dtype=dtype), nn.BatchNorm2d(2, backend=backend, dtype=dtype), nn.Flatten(),
        nn.Linear(8, 3, backend=backend, dtype=dtype),
    )


def test_round_trip(backend, tmp_path):
    mt.manual_seed(0)
    model = _model(backend)
    model(mt.randn(2, 1, 4, 4, backend=backend))  # update the batch-norm buffers
    state = model.state_dict()
    assert list(state) == ["0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var", "3.weight", "3.bias"]
    path = tmp_path / "model.safetensors"
    mt.save(state, path)
    loaded = mt.load(path, backend=backend)
    assert set(loaded) == set(state)
    for name, value in loaded.items():
        assert value.backend.name == backend
        np.testing.assert_array_equal(value.to_numpy(), state[name].to_numpy())
    other = _model(backend)
    other.load_state_dict(loaded)
    x = mt.randn(2, 1, 4, 4, backend=backend)
    model.eval()
    other.eval()
    np.testing.assert_array_equal(other(x).to_numpy(), model(x).to_numpy())
    assert all(p.requires_grad for p in other.parameters())


def test_load_converts_backend_and_dtype(backend, tmp_path):
    model = _model("simple", "float64")
    path = tmp_path / "m.safetensors"
    mt.save(model.state_dict(), path)
    target = _model(backend, "float32")
    checkpoint.load_state_dict(target, mt.load(path))  # loaded on the default backend, converted on load
    for (name, p), (_, q) in zip(model.named_parameters(), target.named_parameters()):
        assert q.backend.name == backend and q.dtype == np.float32, name
        np.testing.assert_allclose(q.to_numpy(), p.to_numpy(), rtol=1e-6)
    assert mt.load(path)["0.weight"].dtype == np.float64  # dtype stored in the file


def test_numpy_values_and_metadata(tmp_path):
    path = tmp_path / "arrays.safetensors"
    mt.save({"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": mt.tensor([1.0, 2.0])}, path)
    loaded = mt.load(path)
    assert loaded["a"].dtype == np.float32 and loaded["a"].shape == (2, 3)
    from safetensors import safe_open

    with safe_open(str(path), framework="numpy") as f:
        assert f.metadata()["format"] == "minitensor"
    with pytest.raises(TypeError):
        mt.save({"a": [1.0]}, path)


def test_write_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.safetensors"
    mt.save({"w": mt.tensor([1.0, 2.0])}, path)
    original = path.read_bytes()

    def fail_midway(handle, data):
        handle.write(data[: len(data) // 2])
        raise OSError("disk full")

    monkeypatch.setattr(checkpoint, "_write_all", fail_midway)
    with pytest.raises(OSError, match="disk full"):
        mt.save({"w": mt.tensor([3.0, 4.0, 5.0])}, path)
    assert path.read_bytes() == original
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]  # no temp file left behind
    np.testing.assert_array_equal(mt.load(path)["w"].to_numpy(), [1.0, 2.0])


def test_mismatched_state_dict_lists_every_problem():
    model = _model()
    state = model.state_dict()
    del state["0.bias"]
    del state["1.running_var"]
    state["extra.weight"] = mt.zeros(2)
    state["3.weight"] = mt.zeros(3, 9)
    state["1.weight"] = np.zeros(5)
    before = next(model.parameters()).to_numpy()
    with pytest.raises(CheckpointError) as info:
        model.load_state_dict(state)
    message = str(info.value)
    for fragment in ("0.bias", "1.running_var", "extra.weight", "3.weight", "(3, 9)", "(3, 8)", "1.weight"):
        assert fragment in message
    np.testing.assert_array_equal(next(model.parameters()).to_numpy(), before)  # nothing changed
    del state["3.weight"], state["1.weight"]
    result = checkpoint.load_state_dict(model, state, strict=False)
    assert result.missing_keys == ["0.bias", "1.weight", "1.running_var", "3.weight"]
    assert result.unexpected_keys == ["extra.weight"]


def test_corrupt_files(tmp_path):
    good = tmp_path / "good.safetensors"
    mt.save({"w": mt.zeros(4, 4)}, good)
    data = good.read_bytes()
    for name, content in [("garbage", b"not a checkpoint at all"), ("truncated", data[: len(data) - 10]),
                          ("empty", b""), ("badheader", b"\xff" * 8 + data[8:])]:
        bad = tmp_path / f"{name}.safetensors"
        bad.write_bytes(content)
        with pytest.raises(CheckpointError, match=name):
            mt.load(bad)
    with pytest.raises(FileNotFoundError):
        mt.load(tmp_path / "missing.safetensors")
