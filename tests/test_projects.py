"""The example projects run end to end on tiny data: every backend, checkpoints, plots and CLI errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minitensor

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = ROOT / "projects"
sys.path.insert(0, str(PROJECTS))

import run_digits  # noqa: E402
import run_scalar  # noqa: E402
import run_tensor  # noqa: E402
from common import ProjectError, run_main  # noqa: E402


def _usable(name: str) -> bool:
    try:
        minitensor.get_backend(name)
    except Exception:  # noqa: BLE001 - not importable / no GPU / no simulator
        return False
    return True


BACKENDS = [pytest.param(name, marks=pytest.mark.skipif(not _usable(name), reason=f"{name} backend not available"))
            for name in ("simple", "fast", "cuda")]

QUIET = ["--no-progress", "--quiet"]


def _png_ok(path: Path) -> None:
    assert path.is_file() and path.stat().st_size > 1000
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- Scalar project ----------------------------------------------------------------------------


def test_scalar_project_trains_saves_resumes_and_plots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ckpt, png = tmp_path / "scalar.safetensors", tmp_path / "scalar.png"
    args = ["--dataset", "simple", "--n-points", "40", "--hidden", "4", "--epochs", "2", "--lr", "0.5", *QUIET]
    first = run_scalar.main([*args, "--save", str(ckpt)])
    assert ckpt.is_file()
    assert len(first["history"]["loss"]) == 2
    resumed = run_scalar.main([*args, "--epochs", "1", "--resume", str(ckpt), "--plot", str(png)])
    assert len(resumed["history"]["loss"]) == 3
    assert resumed["history"]["loss"][:2] == pytest.approx(first["history"]["loss"])
    _png_ok(png)
    out = capsys.readouterr().out
    assert "done: scalar 2-4-1 MLP on simple (40 points), 3 epochs: accuracy" in out
    # A checkpoint for a different architecture is refused with a clear error.
    with pytest.raises(ProjectError, match="does not hold a 5-hidden"):
        run_scalar.main([*args, "--hidden", "5", "--resume", str(ckpt)])


def test_scalar_mlp_learns_simple() -> None:
    result = run_scalar.main(["--dataset", "simple", "--n-points", "100", "--hidden", "4", "--epochs", "6", "--lr", "0.5", *QUIET])
    assert result["accuracy"] >= 0.9


def test_scalar_gradients_match_finite_differences() -> None:
    model = run_scalar.ScalarMLP(hidden=3, seed=1)
    x, label = (0.3, -0.2), 1
    loss = run_scalar.bce_with_logit(model.forward(x), label)
    loss.backward()
    for _, p in list(model.named_parameters())[:5]:
        old = p.data
        p.data = old + 1e-6
        up = run_scalar.bce_with_logit(model.forward(x), label).data
        p.data = old - 1e-6
        down = run_scalar.bce_with_logit(model.forward(x), label).data
        p.data = old
        assert p.grad == pytest.approx((up - down) / 2e-6, abs=1e-5)


# --- tensor project ----------------------------------------------------------------------------

TINY_TENSOR = {"simple": ["--n-points", "40", "--hidden", "6", "--batch-size", "20"],
               "fast": ["--n-points", "60", "--hidden", "8", "--batch-size", "20"],
               "cuda": ["--n-points", "8", "--hidden", "3", "--batch-size", "8"]}


@pytest.mark.parametrize("backend", BACKENDS)
def test_tensor_project_end_to_end(backend: str, tmp_path: Path) -> None:
    ckpt, png = tmp_path / "tensor.safetensors", tmp_path / "tensor.png"
    args = ["--backend", backend, "--dataset", "diag", *TINY_TENSOR[backend], "--epochs", "1", *QUIET]
    # The decision-boundary plot evaluates a 100x100 grid: minutes on the CUDA simulator, so plot elsewhere.
    plot = ["--plot", str(png)] if backend != "cuda" else []
    first = run_tensor.main([*args, "--schedule-epochs", "2", "--save", str(ckpt), *plot])
    if plot:
        _png_ok(png)
    assert np.isfinite(first["history"]["loss"][0])
    resumed = run_tensor.main([*args, "--resume", str(ckpt)])
    assert len(resumed["history"]["loss"]) == 2


def _weights(path: Path) -> dict[str, np.ndarray]:
    return {k: v.to_numpy() for k, v in minitensor.load(path)["model"].items()}


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_tensor_resume_is_bit_identical_with_the_cosine_schedule(optimizer: str, tmp_path: Path) -> None:
    """2 epochs + resume 2 == 4 straight, default (cosine) schedule: losses, accuracies and weights bit for bit."""
    backend = "fast" if _usable("fast") else "simple"
    a, b, c = tmp_path / "a.safetensors", tmp_path / "b.safetensors", tmp_path / "c.safetensors"
    args = ["--backend", backend, "--dataset", "xor", "--n-points", "60", "--hidden", "8", "--batch-size", "20",
            "--optimizer", optimizer, *QUIET]
    straight = run_tensor.main([*args, "--epochs", "4", "--save", str(a)])
    run_tensor.main([*args, "--epochs", "2", "--schedule-epochs", "4", "--save", str(b)])
    resumed = run_tensor.main([*args, "--epochs", "2", "--resume", str(b), "--save", str(c)])
    assert resumed["history"]["loss"] == straight["history"]["loss"]
    assert resumed["history"]["acc"] == straight["history"]["acc"]
    final, other = _weights(a), _weights(c)
    assert final.keys() == other.keys() and all(np.array_equal(final[k], other[k]) for k in final)
    # Past the end of the saved schedule: refused in one line (the cosine lr would be 0, then rise).
    with pytest.raises(ProjectError, match="cosine schedule of 4 epochs, which ends before epoch 5"):
        run_tensor.main([*args, "--epochs", "1", "--resume", str(c)])
    with pytest.raises(ProjectError, match="same --schedule"):
        run_tensor.main([*args, "--epochs", "1", "--schedule", "constant", "--resume", str(b)])


def test_digits_resume_with_shift_augmentation_is_bit_identical(tmp_path: Path) -> None:
    backend = "fast" if _usable("fast") else "simple"
    ckpt = tmp_path / "d.safetensors"
    args = ["--backend", backend, "--limit", "48", "--batch-size", "16", "--hidden", "16", "--augment", "shift", *QUIET]
    straight = run_digits.main([*args, "--epochs", "2"])
    run_digits.main([*args, "--epochs", "1", "--schedule-epochs", "2", "--save", str(ckpt)])
    resumed = run_digits.main([*args, "--epochs", "1", "--resume", str(ckpt)])
    assert resumed["history"]["loss"] == straight["history"]["loss"]
    assert resumed["history"]["test_acc"] == straight["history"]["test_acc"]


def test_resume_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--backend", "simple", "--n-points", "20", "--batch-size", "20", "--hidden", "4", "--epochs", "1", *QUIET]
    assert run_main(run_tensor.main, [*base, "--resume", str(tmp_path)]) == 2
    assert "is a directory, not a checkpoint file" in capsys.readouterr().err
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"junk")
    assert run_main(run_tensor.main, [*base, "--resume", str(junk)]) == 2
    assert "is not a readable checkpoint" in capsys.readouterr().err
    flat = tmp_path / "flat.safetensors"
    minitensor.save({"w": minitensor.zeros(2)}, flat)
    assert run_main(run_tensor.main, [*base, "--resume", str(flat)]) == 2
    assert "not a checkpoint written by --save" in capsys.readouterr().err
    with pytest.raises(ProjectError, match="shorter than --epochs"):
        run_tensor.main([*base, "--schedule-epochs", "1", "--epochs", "2"])


def test_tensor_project_learns_split_on_fast() -> None:
    if not _usable("fast"):
        pytest.skip("fast backend not available")
    result = run_tensor.main(["--backend", "fast", "--dataset", "split", "--n-points", "200", "--hidden", "32",
                              "--batch-size", "20", "--optimizer", "adam", "--lr", "0.01", "--epochs", "20", *QUIET])
    assert result["accuracy"] >= 0.9


def test_tensor_checkpoint_of_another_shape_is_refused(tmp_path: Path) -> None:
    ckpt = tmp_path / "t.safetensors"
    base = ["--backend", "simple", "--n-points", "20", "--batch-size", "20", "--epochs", "1", *QUIET]
    run_tensor.main([*base, "--hidden", "4", "--save", str(ckpt)])
    with pytest.raises(ProjectError, match="does not fit"):
        run_tensor.main([*base, "--hidden", "5", "--resume", str(ckpt)])
    assert run_main(run_tensor.main, [*base, "--hidden", "4", "--resume", str(tmp_path / "missing.safetensors")]) == 2


# --- digits project ----------------------------------------------------------------------------

TINY_DIGITS = {"simple": ["--limit", "16", "--batch-size", "8", "--hidden", "8", "--channels", "2"],
               "fast": ["--limit", "48", "--batch-size", "16", "--hidden", "16", "--channels", "4"],
               "cuda": ["--limit", "8", "--batch-size", "8", "--hidden", "4", "--channels", "2"]}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_digits_project_end_to_end(backend: str, model: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if backend == "cuda" and model == "cnn" and os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        pytest.skip("the CNN takes minutes on the CUDA simulator; the cuda MLP run covers the project's cuda path")
    ckpt, png = tmp_path / "digits.safetensors", tmp_path / "digits.png"
    optimizer = "sgd" if model == "mlp" else "adam"
    args = ["--backend", backend, "--model", model, "--optimizer", optimizer, *TINY_DIGITS[backend], "--epochs", "1", *QUIET]
    first = run_digits.main([*args, "--schedule-epochs", "2", "--save", str(ckpt), "--plot", str(png)])
    _png_ok(png)
    assert 0.0 <= first["test_accuracy"] <= 1.0
    resumed = run_digits.main([*args, "--resume", str(ckpt)])
    assert len(resumed["history"]["test_acc"]) == 2
    assert f"done: {model} on digits, backend {backend}, 2 epochs: test accuracy" in capsys.readouterr().out
    # The optimizer kind is part of the checkpoint.
    other = "adam" if optimizer == "sgd" else "sgd"
    with pytest.raises(ProjectError, match=f"holds {'SGD' if optimizer == 'sgd' else 'Adam'} state"):
        run_digits.main([*args, "--optimizer", other, "--resume", str(ckpt)])


def test_digits_on_mnist_idx_folder(tmp_path: Path) -> None:
    from test_datasets import make_mnist

    make_mnist(tmp_path / "mnist", gz=True, n_train=20, n_test=8)
    backend = "fast" if _usable("fast") else "simple"
    args = ["--backend", backend, "--data-dir", str(tmp_path / "mnist"), "--epochs", "1", "--hidden", "8",
            "--batch-size", "10", *QUIET]
    with pytest.raises(ProjectError, match="MD5.*pass --no-verify"):  # made-up files are not the published ones
        run_digits.main(args)
    assert run_main(run_digits.main, args) == 2  # ... reported in one line, exit code 2
    result = run_digits.main([*args, "--no-verify", "--model", "cnn", "--dataset", "fashion"])
    assert 0.0 <= result["test_accuracy"] <= 1.0
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte.gz"):
        run_digits.main(["--data-dir", str(tmp_path / "empty"), *QUIET])
    with pytest.raises(ProjectError, match="needs --data-dir"):
        run_digits.main(["--dataset", "mnist", *QUIET])


# --- command line ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "module, argv",
    [
        (run_tensor, ["--backend", "tpu"]),
        (run_tensor, ["--dataset", "moons"]),
        (run_tensor, ["--epochs", "0"]),
        (run_scalar, ["--lr", "-1"]),
        (run_digits, ["--model", "resnet"]),
        (run_digits, ["--optimizer", "lbfgs"]),
    ],
)
def test_bad_flags_exit_2_with_a_usage_message(module, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        module.main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "usage:" in err and "error:" in err


@pytest.mark.parametrize("module", [run_scalar, run_tensor, run_digits])
def test_bad_output_paths_fail_before_training(module, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--save onto a directory, --plot with a non-image suffix, an unwritable folder or a missing --resume file:
    one line, exit 2, before any epoch runs (the runs below would take minutes)."""
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    slow = ["--epochs", "1000", "--no-progress"]
    cases = [(["--save", str(tmp_path)], "is a directory"), (["--plot", str(tmp_path / "curves.txt")], "unknown image format"),
             (["--plot", str(tmp_path / "curves")], "no extension"), (["--resume", str(tmp_path / "nope.safetensors")], "nope")]
    if os.geteuid() != 0:  # root writes anywhere
        cases.append((["--save", str(locked / "x.safetensors")], "not writable"))
    for argv, message in cases:
        assert run_main(module.main, [*slow, *argv]) == 2
        captured = capsys.readouterr()
        assert message in captured.err and captured.err.count("\n") == 1, captured.err
        assert "epoch" not in captured.out  # nothing trained


def test_cuda_without_a_gpu_is_one_line_and_exit_2() -> None:
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0"}
    proc = subprocess.run(
        [sys.executable, str(PROJECTS / "run_tensor.py"), "--backend", "cuda", "--n-points", "8", "--hidden", "2",
         "--epochs", "1", "--no-progress"],
        capture_output=True, text=True, env=env, timeout=300, cwd=ROOT,
    )
    if proc.returncode == 0:
        pytest.skip("a real GPU is present")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: backend 'cuda' is not available"), proc.stderr
    assert "Traceback" not in proc.stderr
