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
    assert list(state) == ["0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var",
                           "1.num_batches_tracked", "3.weight", "3.bias"]
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
    with pytest.raises(TypeError, match="cannot save a set at 'a.1'"):
        mt.save({"a": [1.0, {2}]}, path)


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


def test_nested_objects_round_trip(backend, tmp_path):
    """Model and optimizer state dicts, numbers, strings, None, tuples, int keys, inf, arrays: all come back."""
    from collections import Counter

    model = nn.Linear(3, 2, backend=backend)
    opt = mt.optim.Adam(model.parameters(), lr=0.1)
    model(mt.randn(4, 3, backend=backend)).sum().backward()
    opt.step()
    obj = {
        "model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3, "best": float("inf"),
        "name": "run 1", "note": None, "flags": [True, False], "shape": (2, (3, 4)), "milestones": Counter([2, 2, 5]),
        "rng": np.random.default_rng(5).bit_generator.state, "array": np.arange(4, dtype=np.int32),
        "odd keys": {1: "one", "$x": 2, 2.5: mt.zeros(0, backend=backend), None: np.float32(1.5)},
        "scalar": mt.tensor(2.0, backend=backend),
    }
    path = tmp_path / "nested.safetensors"
    mt.save(obj, path)
    back = mt.load(path, backend=backend)
    assert back["epoch"] == 3 and back["best"] == float("inf") and back["name"] == "run 1" and back["note"] is None
    assert back["flags"] == [True, False] and back["shape"] == (2, (3, 4)) and back["milestones"] == Counter([2, 2, 5])
    assert back["rng"] == obj["rng"]
    assert isinstance(back["array"], np.ndarray) and back["array"].dtype == np.int32
    assert back["odd keys"][1] == "one" and back["odd keys"]["$x"] == 2 and back["odd keys"][None] == 1.5
    assert back["odd keys"][2.5].shape == (0,) and back["scalar"].shape == () and back["scalar"].item() == 2.0
    assert list(back["optimizer"]["state"]) == [0, 1]  # int keys, as in PyTorch
    assert back["optimizer"]["param_groups"] == opt.state_dict()["param_groups"]  # betas stay a tuple
    for k, v in opt.state_dict()["state"][0].items():
        assert back["optimizer"]["state"][0][k].backend.name == backend
        np.testing.assert_array_equal(back["optimizer"]["state"][0][k].to_numpy(), v.to_numpy())
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(back["model"][k].to_numpy(), v.to_numpy())
    from safetensors import safe_open

    with safe_open(str(path), framework="numpy") as f:  # tensors are plain entries under dotted keys
        assert "model.weight" in f.keys() and "optimizer.state.0.exp_avg" in f.keys()  # noqa: SIM118


def test_flat_files_from_before_still_load(tmp_path):
    from safetensors.numpy import save_file

    path = tmp_path / "old.safetensors"
    save_file({"0.weight": np.ones((2, 3), dtype=np.float32)}, str(path), metadata={"format": "minitensor"})
    loaded = mt.load(path)
    assert list(loaded) == ["0.weight"] and loaded["0.weight"].dtype == np.float32


def test_saved_files_honor_the_umask(tmp_path):
    path = tmp_path / "m.safetensors"
    old = os.umask(0o027)
    try:
        mt.save({"w": mt.zeros(2)}, path)
        assert path.stat().st_mode & 0o777 == 0o640
        os.chmod(path, 0o604)
        mt.save({"w": mt.ones(2), "nested": [1]}, path)  # replacing a file keeps its mode
        assert path.stat().st_mode & 0o777 == 0o604
    finally:
        os.umask(old)
    os.umask(0o022)
    try:
        mt.save({"w": mt.zeros(2)}, tmp_path / "n.safetensors")
        assert (tmp_path / "n.safetensors").stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(old)


def test_damaged_structure_record(tmp_path):
    from safetensors.numpy import save_file

    path = tmp_path / "bad.safetensors"
    save_file({"a": np.zeros(2)}, str(path), metadata={"format": "minitensor", "minitensor.structure": '{"x": {"$tensor": "b"}}'})
    with pytest.raises(CheckpointError, match="damaged structure"):
        mt.load(path)
