"""Helpers shared by the example projects: CLI flags, backend checks, progress, plots, checkpoints."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # running `python projects/run_x.py` from a checkout
    sys.path.insert(0, str(ROOT))

import minitensor  # noqa: E402
from minitensor.datasets import ChecksumError, IDXError  # noqa: E402
from minitensor.errors import BackendError, BackendUnavailableError  # noqa: E402

BACKENDS = ("simple", "fast", "cuda")


class ProjectError(Exception):
    """A user error (bad flag combination, missing data, no GPU): reported in one line, exit code 2."""


# --------------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------------


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0.0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value}")
    return value


def add_run_args(parser: argparse.ArgumentParser, epochs: int | None, seed: int = 0, epochs_help: str = "") -> None:
    """Flags every project shares."""
    parser.add_argument("--epochs", type=positive_int, default=epochs,
                        help=f"training epochs (default {epochs_help or epochs})")
    parser.add_argument("--seed", type=int, default=seed, help=f"random seed for data, init and shuffling (default {seed})")
    parser.add_argument("--plot", metavar="FILE.png", help="save loss/accuracy curves (and decision boundary) to FILE.png")
    parser.add_argument("--save", metavar="PATH", help="save a checkpoint (model + optimizer + epoch) after training")
    parser.add_argument("--resume", metavar="PATH", help="resume from a checkpoint written by --save, then train --epochs more epochs")
    parser.add_argument("--threads", type=positive_int, default=None,
                        help="CPU threads for the fast backend's parallel kernels (default: Numba's, one per core)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--quiet", action="store_true", help="only the final summary line")


def add_backend_arg(parser: argparse.ArgumentParser, default: str | None = None) -> None:
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default=default,
        help="tensor backend (default: $MINITENSOR_BACKEND or the library default)",
    )


def run_main(main_fn: Callable[[Sequence[str] | None], Any], argv: Sequence[str] | None = None) -> int:
    """Call ``main_fn(argv)``; user errors become one line on stderr and exit code 2 instead of a traceback."""
    try:
        main_fn(argv)
    except (ProjectError, BackendUnavailableError, BackendError, FileNotFoundError, IDXError, ChecksumError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return 0


def set_threads(threads: int | None) -> None:
    """Limit Numba's worker threads (fewer can be faster for small tensors on a busy machine)."""
    if threads is None:
        return
    import numba

    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))


def resolve_backend(name: str | None, threads: int | None = None) -> str:
    """The backend name to use, checked to be importable and usable here (ProjectError otherwise)."""
    try:
        chosen = name or minitensor.default_backend_name()
        minitensor.get_backend(chosen)
    except BackendUnavailableError as error:
        raise ProjectError(f"backend {chosen!r} is not available: {error}") from error
    except ModuleNotFoundError as error:
        raise ProjectError(f"backend {chosen!r} is not available in this installation ({error})") from error
    except BackendError as error:
        raise ProjectError(str(error)) from error
    set_threads(threads)
    return chosen



def available_backends(include_cuda: bool = True) -> list[str]:
    out = []
    for name in BACKENDS:
        if name == "cuda" and not include_cuda:
            continue
        try:
            minitensor.get_backend(name)
        except Exception:  # noqa: BLE001 - anything that stops a backend loading means "not available"
            continue
        out.append(name)
    return out


def cosine_lr(base: float, epoch: int, last: int) -> float:
    """Cosine decay from ``base`` (epoch 1) towards 0 at ``last``: lr for 1-based ``epoch``."""
    import math

    return base * 0.5 * (1.0 + math.cos(math.pi * (epoch - 1) / max(last, 1)))


# --------------------------------------------------------------------------------------------------
# Progress and logging
# --------------------------------------------------------------------------------------------------


def progress(iterable: Iterable, total: int | None = None, desc: str = "", enabled: bool = True) -> Iterable:
    """A tqdm progress bar (on stderr) when enabled, else the iterable itself."""
    if not enabled:
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, total=total, desc=desc, leave=False, dynamic_ncols=True, file=sys.stderr)


class Log:
    def __init__(self, quiet: bool = False):
        self.quiet = quiet

    def __call__(self, *args: Any) -> None:
        if not self.quiet:
            print(*args, flush=True)


class Timer:
    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.seconds = time.perf_counter() - self.start


# --------------------------------------------------------------------------------------------------
# Plots
# --------------------------------------------------------------------------------------------------


def save_plot(
    path: str | Path,
    history: dict[str, list[float]],
    title: str = "",
    boundary: tuple[Callable[[np.ndarray], np.ndarray], np.ndarray, np.ndarray] | None = None,
) -> Path:
    """Loss and accuracy per epoch; with ``boundary=(predict_proba, X, y)`` also a 2-D decision-boundary panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = 3 if boundary is not None else 2
    fig, axes = plt.subplots(1, panels, figsize=(5 * panels, 4))
    epochs = np.arange(1, len(history.get("loss", [])) + 1)
    axes[0].plot(epochs, history.get("loss", []), marker="o", ms=3)
    axes[0].set_xlabel("epoch")
    axes[0].set_ylabel("training loss")
    axes[0].set_title("loss")
    for key, label in (("train_acc", "train"), ("test_acc", "test"), ("acc", "train")):
        if history.get(key):
            axes[1].plot(np.arange(1, len(history[key]) + 1), history[key], marker="o", ms=3, label=label)
    axes[1].set_xlabel("epoch")
    axes[1].set_ylabel("accuracy")
    axes[1].set_ylim(0.0, 1.02)
    axes[1].set_title("accuracy")
    axes[1].legend(loc="lower right")
    if boundary is not None:
        predict, X, y = boundary
        grid = 100
        xs = np.linspace(-0.55, 0.55, grid)
        gx, gy = np.meshgrid(xs, xs)
        points = np.stack([gx.ravel(), gy.ravel()], axis=1)
        probs = np.asarray(predict(points), dtype=np.float64).reshape(grid, grid)
        ax = axes[2]
        ax.contourf(gx, gy, probs, levels=np.linspace(0.0, 1.0, 11), cmap="RdBu_r", alpha=0.6)
        ax.contour(gx, gy, probs, levels=[0.5], colors="k", linewidths=1)
        ax.scatter(X[:, 0], X[:, 1], c=y, cmap="RdBu_r", s=6, edgecolors="none")
        ax.set_xlim(-0.55, 0.55)
        ax.set_ylim(-0.55, 0.55)
        ax.set_aspect("equal")
        ax.set_title("decision boundary")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


# --------------------------------------------------------------------------------------------------
# Checkpoints
# --------------------------------------------------------------------------------------------------


def _flatten(prefix: str, value: Any, out: dict[str, np.ndarray]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _flatten(f"{prefix}.{i}", v, out)
    elif value is None:
        return
    else:
        if hasattr(value, "to_numpy"):
            value = value.to_numpy()
        out[prefix] = np.ascontiguousarray(np.asarray(value))


def save_arrays(path: str | Path, tree: dict[str, Any]) -> Path:
    """Write a nested dict of arrays/tensors/numbers as one safetensors file (keys joined with dots)."""
    from safetensors.numpy import save_file

    flat: dict[str, np.ndarray] = {}
    _flatten("", tree, flat)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(flat, str(path))
    return path


def load_arrays(path: str | Path) -> dict[str, np.ndarray]:
    """The flat ``{dotted key: array}`` dict written by :func:`save_arrays`."""
    from safetensors.numpy import load_file

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {path} does not exist")
    try:
        return load_file(str(path))
    except Exception as error:  # noqa: BLE001
        raise ProjectError(f"{path} is not a readable checkpoint: {error}") from error


def subtree(flat: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    """Entries under ``prefix.`` with the prefix removed."""
    p = prefix + "."
    return {k[len(p) :]: v for k, v in flat.items() if k.startswith(p)}


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def save_checkpoint(path: str | Path, model: Any, optimizer: Any = None, meta: dict[str, Any] | None = None) -> Path:
    """Model parameters/buffers + optimizer state + ``meta`` (epoch, history, settings) in one safetensors file.

    Tensors go in as arrays (``model.<name>``, ``optim.<param index>.<name>``); the optimizer's
    hyperparameters and plain-number state and ``meta`` go in the file's metadata as JSON.
    Written with :func:`minitensor.save` (atomic).
    """
    import json

    from minitensor import checkpoint

    arrays: dict[str, Any] = {f"model.{k}": v for k, v in model.state_dict().items()}
    optim_meta: dict[str, Any] = {}
    if optimizer is not None:
        state = optimizer.state_dict()
        numbers: dict[str, dict[str, Any]] = {}
        for index, entry in state["state"].items():
            for name, value in entry.items():
                if isinstance(value, np.ndarray):
                    arrays[f"optim.{index}.{name}"] = value
                else:
                    numbers.setdefault(str(index), {})[name] = _jsonable(value)
        optim_meta = {"type": type(optimizer).__name__, "param_groups": _jsonable(state["param_groups"]), "numbers": numbers}
    metadata = {"optimizer": json.dumps(optim_meta), "meta": json.dumps(_jsonable(meta or {}))}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save = getattr(minitensor, "save", checkpoint.save)
    save(arrays, path, metadata=metadata)
    return path


def load_checkpoint(path: str | Path, model: Any, optimizer: Any = None) -> dict[str, Any]:
    """Restore what :func:`save_checkpoint` wrote into ``model`` (and ``optimizer``); returns ``meta``."""
    import json

    from safetensors import safe_open

    from minitensor import checkpoint

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {path} does not exist")
    try:
        with safe_open(str(path), framework="numpy") as handle:
            metadata = handle.metadata() or {}
            arrays = {key: handle.get_tensor(key) for key in handle.keys()}  # noqa: SIM118 - safe_open has no items()
    except Exception as error:  # noqa: BLE001 - safetensors raises its own types
        raise ProjectError(f"{path} is not a readable checkpoint: {error}") from error
    model_state = {k[len("model.") :]: v for k, v in arrays.items() if k.startswith("model.")}
    try:
        checkpoint.load_state_dict(model, model_state)
    except ValueError as error:
        raise ProjectError(f"{path} does not fit this model (different flags?): {error}") from error
    optim_meta = json.loads(metadata.get("optimizer", "{}") or "{}")
    if optimizer is not None and optim_meta:
        if optim_meta.get("type") != type(optimizer).__name__:
            raise ProjectError(f"{path} holds {optim_meta.get('type')} state but this run uses {type(optimizer).__name__}")
        state: dict[int, dict[str, Any]] = {}
        for key, value in arrays.items():
            if key.startswith("optim."):
                _, index, name = key.split(".", 2)
                state.setdefault(int(index), {})[name] = value
        for index, entry in optim_meta["numbers"].items():
            for name, value in entry.items():
                state.setdefault(int(index), {})[name] = tuple(value) if isinstance(value, list) else value
        groups = []
        for group in optim_meta["param_groups"]:
            groups.append({k: (tuple(v) if isinstance(v, list) and k != "params" else v) for k, v in group.items()})
        try:
            optimizer.load_state_dict({"state": state, "param_groups": groups})
        except (ValueError, KeyError) as error:
            raise ProjectError(f"{path}: optimizer state does not fit: {error}") from error
    return json.loads(metadata.get("meta", "{}") or "{}")
