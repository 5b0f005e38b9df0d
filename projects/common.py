"""Helpers shared by the example projects: CLI flags, backend checks, progress, plots, checkpoints."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # running `python projects/run_x.py` from a checkout
    sys.path.insert(0, str(ROOT))

import minitensor  # noqa: E402
from minitensor import distributed  # noqa: E402
from minitensor.datasets import ChecksumError, IDXError  # noqa: E402
from minitensor.errors import BackendError, BackendUnavailableError  # noqa: E402

BACKENDS = ("simple", "fast", "cuda")


class ProjectError(Exception):
    """A user error (bad flag combination, missing data, no GPU): reported in one line, exit code 2."""


# --------------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------------


def _int_at_least(text: str, least: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a {what} integer, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"expected a {what} integer, got {value}")
    return value


def positive_int(text: str) -> int:
    return _int_at_least(text, 1, "positive")


def non_negative_int(text: str) -> int:
    return _int_at_least(text, 0, "non-negative")


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


PLOT_FORMATS = ("png", "pdf", "svg", "jpg", "jpeg", "eps", "ps", "tif", "tiff", "webp")


def _check_writable(flag: str, path: str | Path) -> None:
    """ProjectError unless ``path`` can be written: not a directory, and its nearest existing folder is writable."""
    path = Path(path)
    if path.is_dir():
        raise ProjectError(f"{flag} {path} is a directory; give a file name")
    folder = path.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise ProjectError(f"{flag} {path}: {folder} is not a directory")
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ProjectError(f"{flag} {path} is not writable")


def check_paths(args: argparse.Namespace) -> None:
    """Check ``--save``, ``--plot`` and ``--resume`` before any training, so a bad path fails in one line (exit 2)
    instead of with a traceback after the run."""
    if getattr(args, "save", None):
        _check_writable("--save", args.save)
    if getattr(args, "plot", None):
        suffix = Path(args.plot).suffix.lower().lstrip(".")
        if suffix not in PLOT_FORMATS:
            raise ProjectError(f"--plot {args.plot}: unknown image format {suffix or '(no extension)'!r}; use one of "
                               f"{', '.join('.' + f for f in PLOT_FORMATS)}")
        _check_writable("--plot", args.plot)
    if getattr(args, "resume", None):
        _checkpoint_file(args.resume)


def run_main(main_fn: Callable[[Sequence[str] | None], Any], argv: Sequence[str] | None = None) -> int:
    """Call ``main_fn(argv)``; user errors become one line on stderr and exit code 2 instead of a traceback
    (in an MPI job the failing rank then aborts the job, so no other rank waits for it forever)."""
    try:
        main_fn(argv)
    except (ProjectError, BackendUnavailableError, BackendError, FileNotFoundError, IDXError, ChecksumError) as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        if distributed.is_initialized():
            time.sleep(distributed.ABORT_GRACE_SECONDS)
            distributed.abort(2)
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


# --------------------------------------------------------------------------------------------------
# Data-parallel runs (mpiexec -n N python projects/run_x.py --distributed)
# --------------------------------------------------------------------------------------------------


def add_distributed_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--distributed", action="store_true",
                        help="data-parallel training over the processes of `mpiexec -n N` (on by itself under mpiexec with "
                             "N > 1): the global --batch-size is split across ranks, rank 0 alone logs and writes files")


def setup_distributed(args: argparse.Namespace) -> tuple[int, int]:
    """(rank, world size) of this process: joins the MPI job when ``--distributed`` is given or the script was
    started by ``mpiexec``, else (0, 1). Without ``--threads``, each rank gets an equal share of the cores."""
    if not (getattr(args, "distributed", False) or distributed.launched_by_mpiexec()):
        return 0, 1
    try:
        distributed.init()
    except distributed.DistributedError as error:
        raise ProjectError(str(error)) from error
    world = distributed.world_size()
    if world > 1 and getattr(args, "threads", 0) is None:
        local = int(os.environ.get("MPI_LOCALNRANKS", world))
        args.threads = max(1, (os.cpu_count() or 1) // max(local, 1))
    return distributed.rank(), world


def split_batch(batch_size: int, world: int) -> int:
    """The per-rank share of a global batch (ProjectError unless ``world`` divides it)."""
    if batch_size % world:
        raise ProjectError(f"--batch-size {batch_size} must be divisible by the number of processes ({world})")
    return batch_size // world


def reduce_sums(*values: float) -> list[float]:
    """Each value summed over every rank (the values themselves in a single process)."""
    array = np.array(values, dtype=np.float64)
    distributed.all_reduce(array, "sum")
    return array.tolist()


# --------------------------------------------------------------------------------------------------
# Progress and logging
# --------------------------------------------------------------------------------------------------




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
    # Atomically: render into a temp file beside the target, then rename over it (an old plot survives a crash).
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp{target.suffix}")
    try:
        fig.savefig(tmp, dpi=80, format=target.suffix.lstrip(".").lower() or None)
        os.replace(tmp, target)
    finally:
        plt.close(fig)
        if tmp.exists():
            tmp.unlink()
    return target


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
        out[prefix] = np.array(value, order="C")


def save_arrays(path: str | Path, tree: dict[str, Any]) -> Path:
    """Write a nested dict of arrays/tensors/numbers as one flat safetensors file (keys joined with dots),
    atomically and honoring the umask (:func:`minitensor.save`)."""
    flat: dict[str, np.ndarray] = {}
    _flatten("", tree, flat)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    minitensor.save(flat, path)
    return path


def _checkpoint_file(path: str | Path) -> Path:
    """``path`` as an existing regular file (FileNotFoundError / ProjectError in one line otherwise)."""
    path = Path(path)
    if path.is_dir():
        raise ProjectError(f"checkpoint {path} is a directory, not a checkpoint file written by --save")
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {path} does not exist")
    return path


def load_arrays(path: str | Path) -> dict[str, np.ndarray]:
    """The flat ``{dotted key: array}`` dict written by :func:`save_arrays`."""
    from safetensors.numpy import load_file

    path = _checkpoint_file(path)
    try:
        return load_file(str(path))
    except Exception as error:  # noqa: BLE001
        raise ProjectError(f"{path} is not a readable checkpoint: {error}") from error


def subtree(flat: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    """Entries under ``prefix.`` with the prefix removed."""
    p = prefix + "."
    return {k[len(p) :]: v for k, v in flat.items() if k.startswith(p)}


CHECKPOINT_FORMAT = "minitensor-project-checkpoint/2"


def save_checkpoint(path: str | Path, model: Any, optimizer: Any = None, scheduler: Any = None,
                    meta: dict[str, Any] | None = None, generators: dict[str, np.random.Generator] | None = None) -> Path:
    """Everything an exact resume needs, in one file written by :func:`minitensor.save` (atomic, umask mode).

    ``{"format", "model": state dict, "optimizer": {"type", "state"}, "scheduler": {"type", "state"},
    "rng": {"minitensor": the shared generator's state, <name>: state of each of ``generators``}, "meta"}``
    (``meta``: epoch, history, settings).
    """
    def typed(obj: Any) -> dict[str, Any] | None:
        return None if obj is None else {"type": type(obj).__name__, "state": obj.state_dict()}

    rng = {"minitensor": minitensor.generator().bit_generator.state}
    rng.update({name: g.bit_generator.state for name, g in (generators or {}).items()})
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    minitensor.save({"format": CHECKPOINT_FORMAT, "model": model.state_dict(), "optimizer": typed(optimizer),
                     "scheduler": typed(scheduler), "rng": rng, "meta": meta or {}}, path)
    return path


def add_schedule_args(parser: argparse.ArgumentParser) -> None:
    """``--schedule`` (cosine or constant) and ``--schedule-epochs`` (the cosine's length)."""
    parser.add_argument("--schedule", choices=("cosine", "constant"), default="cosine",
                        help="learning rate per epoch: cosine decay to 0 over the schedule, or constant (default cosine)")
    parser.add_argument("--schedule-epochs", type=positive_int, default=None, metavar="N",
                        help="length of the cosine schedule in epochs (default --epochs); set it to the planned total "
                             "when training in pieces with --save/--resume (a resumed run keeps its checkpoint's)")


def make_scheduler(optimizer: Any, args: argparse.Namespace) -> Any:
    """The per-epoch lr scheduler the flags ask for: CosineAnnealingLR(T_max = --schedule-epochs or --epochs), or
    None for a constant lr. Call its ``step()`` after every epoch."""
    if args.schedule == "constant":
        if args.schedule_epochs is not None:
            raise ProjectError("--schedule-epochs is for --schedule cosine")
        return None
    total = args.schedule_epochs or args.epochs
    if total < args.epochs and not args.resume:
        raise ProjectError(f"--schedule-epochs {total} is shorter than --epochs {args.epochs}")
    return minitensor.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=total)


def check_schedule(scheduler: Any, path: str | Path, last_epoch: int) -> None:
    """ProjectError when a resumed cosine schedule would end before ``last_epoch`` (its lr would be 0, then rise)."""
    if scheduler is not None and last_epoch > scheduler.T_max:
        raise ProjectError(
            f"{path} holds a cosine schedule of {scheduler.T_max} epochs, which ends before epoch {last_epoch}; train "
            f"fewer epochs, or plan the whole run with --schedule-epochs when starting it"
        )


def load_checkpoint(path: str | Path, model: Any, optimizer: Any = None, scheduler: Any = None,
                    generators: dict[str, np.random.Generator] | None = None) -> dict[str, Any]:
    """Restore what :func:`save_checkpoint` wrote into ``model``, ``optimizer``, ``scheduler`` (build it before
    calling, as in PyTorch) and the random generators; returns ``meta``. Every mismatch is a one-line ProjectError."""
    from minitensor import checkpoint

    path = _checkpoint_file(path)
    try:
        saved = minitensor.load(path, backend=next(iter(model.parameters())).backend)
    except checkpoint.CheckpointError as error:
        raise ProjectError(f"{path} is not a readable checkpoint: {error}") from error
    if not isinstance(saved, dict) or saved.get("format") != CHECKPOINT_FORMAT:
        raise ProjectError(f"{path} is not a checkpoint written by --save of this version of the projects")
    try:
        checkpoint.load_state_dict(model, saved["model"])
    except ValueError as error:
        raise ProjectError(f"{path} does not fit this model (different flags?): {error}") from error
    if scheduler is None and saved["scheduler"] is not None:
        raise ProjectError(f"{path} was trained with a {saved['scheduler']['type']} schedule; resume it with the same "
                           "--schedule")
    for obj, entry, what in ((optimizer, saved["optimizer"], "optimizer"), (scheduler, saved["scheduler"], "scheduler")):
        if obj is None:
            continue
        if entry is None:
            raise ProjectError(f"{path} holds no {what} state (a different --schedule?)")
        if entry["type"] != type(obj).__name__:
            raise ProjectError(f"{path} holds {entry['type']} state but this run uses {type(obj).__name__}")
        try:
            obj.load_state_dict(entry["state"])
        except (ValueError, TypeError, KeyError) as error:
            raise ProjectError(f"{path}: {what} state does not fit: {error}") from error
    minitensor.generator().bit_generator.state = saved["rng"]["minitensor"]
    for name, g in (generators or {}).items():
        if name not in saved["rng"]:
            raise ProjectError(f"{path} holds no state for the {name!r} random generator")
        g.bit_generator.state = saved["rng"][name]
    return saved["meta"]


def training_loader(model: Any, X: np.ndarray, y: np.ndarray, batch_size: int, per_rank_batch: int, world: int,
                    rank: int, seed: int) -> tuple[Any, Any]:
    """(module to call, DataLoader) for training: in an MPI job of ``world`` > 1 ranks, the model wrapped in
    DistributedDataParallel and this rank's shard of every epoch, ``per_rank_batch`` rows a step; else the model
    and a shuffled loader of ``batch_size``."""
    from minitensor.data_loader import DataLoader, DistributedSampler
    from minitensor.nn.parallel import DistributedDataParallel

    if world > 1:
        sampler = DistributedSampler(len(X), world, rank, shuffle=True, seed=seed)
        return DistributedDataParallel(model), DataLoader(X, y, per_rank_batch, seed=seed, sampler=sampler)
    return model, DataLoader(X, y, batch_size, shuffle=True, seed=seed)
