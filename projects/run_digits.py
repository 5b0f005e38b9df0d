"""Digit classification with an MLP or a small CNN: the bundled 8x8 digits by default, or MNIST / Fashion-MNIST.

    python projects/run_digits.py                                  # bundled digits, MLP, default backend
    python projects/run_digits.py --model cnn --backend fast
    python projects/run_digits.py --data-dir ~/data/mnist --dataset mnist --model cnn --epochs 3
    mpiexec -n 2 python projects/run_digits.py --distributed       # data-parallel over 2 processes

The bundled digits (scikit-learn's 1,797 8x8 images) need no download. For MNIST or Fashion-MNIST,
put the four standard IDX files (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz,
t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz) in a folder and pass it as --data-dir.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from common import (  # noqa: E402
    Log,
    ProjectError,
    Timer,
    add_backend_arg,
    add_distributed_arg,
    add_run_args,
    add_schedule_args,
    check_paths,
    check_schedule,
    load_checkpoint,
    make_scheduler,
    positive_float,
    positive_int,
    reduce_sums,
    resolve_backend,
    run_main,
    save_checkpoint,
    save_plot,
    setup_distributed,
    split_batch,
    training_loader,
)

import minitensor  # noqa: E402
from minitensor import nn, optim  # noqa: E402
from minitensor.datasets import ChecksumError, ImageDataset, load_digits, load_mnist  # noqa: E402
from minitensor.train import progress_bar  # noqa: E402

DEFAULT_LR = {("adam", "mlp"): 0.003, ("adam", "cnn"): 0.01, ("sgd", "mlp"): 0.05, ("sgd", "cnn"): 0.05}


def build_model(kind: str, image_shape: tuple[int, ...], hidden: int, backend: str, dtype: str,
                conv_channels: int | None = None) -> nn.Sequential:
    """``mlp``: flatten -> hidden (ReLU) -> 10. ``cnn``: two 3x3 conv + ReLU + 2x2 max-pool blocks -> 10."""
    channels, height, width = image_shape
    if kind == "mlp":
        return nn.Sequential(
            nn.Flatten(),
            nn.Linear(channels * height * width, hidden, backend=backend, dtype=dtype),
            nn.ReLU(),
            nn.Linear(hidden, 10, backend=backend, dtype=dtype),
        )
    c1 = conv_channels or (32 if height <= 16 else 8)
    c2 = 2 * c1
    return nn.Sequential(
        nn.Conv2d(channels, c1, 3, padding=1, backend=backend, dtype=dtype),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(c1, c2, 3, padding=1, backend=backend, dtype=dtype),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(c2 * (height // 4) * (width // 4), 10, backend=backend, dtype=dtype),
    )


def evaluate(model: nn.Module, X: np.ndarray, y: np.ndarray, backend: str, dtype: str, batch: int = 256) -> tuple[float, float]:
    """(mean cross-entropy, accuracy) over ``X``, ``y`` without building a graph."""
    model.eval()
    loss_sum, correct = 0.0, 0
    with minitensor.no_grad():
        for start in range(0, len(X), batch):
            xb, yb = X[start : start + batch], y[start : start + batch]
            logits = model(minitensor.tensor(xb, backend=backend, dtype=dtype))
            loss_sum += nn.functional.cross_entropy(logits, yb).item() * len(yb)
            correct += int(np.sum(np.argmax(logits.to_numpy(), axis=1) == yb))
    model.train()
    n = max(len(X), 1)
    return loss_sum / n, correct / n


def load_data(args: argparse.Namespace) -> ImageDataset:
    if args.data_dir is None:
        if args.dataset != "digits":
            raise ProjectError(f"--dataset {args.dataset} needs --data-dir pointing at a folder with its IDX files")
        data = load_digits(seed=0)
    else:
        if args.dataset == "digits":
            raise ProjectError("--data-dir is for --dataset mnist or --dataset fashion (the digits are bundled)")
        try:
            data = load_mnist(args.data_dir, args.dataset, verify=not args.no_verify)
        except ChecksumError as error:  # the library's advice names its argument; a CLI user has the flag
            raise ProjectError(str(error).replace("pass verify=False", "pass --no-verify")) from error
    if args.limit:
        data = data.limit(args.limit, max(args.limit // 4, 10))
    return data


class Standardize:
    """``(x - mean) / (std + 0.1)`` with training-set statistics: per pixel for the MLP, global for the CNN."""

    def __init__(self, X: np.ndarray, per_pixel: bool):
        axis = 0 if per_pixel else None
        self.mean = X.mean(axis=axis, keepdims=True).astype(np.float32)
        self.scale = (1.0 / (X.std(axis=axis, keepdims=True) + 0.1)).astype(np.float32)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return (X - self.mean) * self.scale


def shift_augment(xb: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each image moved by up to one pixel in each direction (edges padded with the image's own border)."""
    out = np.empty_like(xb)
    padded = np.pad(xb, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="edge")
    h, w = xb.shape[2:]
    shifts = rng.integers(0, 3, size=(len(xb), 2))
    for i, (dy, dx) in enumerate(shifts):
        out[i] = padded[i, :, dy : dy + h, dx : dx + w]
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    add_backend_arg(parser)
    parser.add_argument("--model", choices=("mlp", "cnn"), default="mlp", help="network (default mlp)")
    parser.add_argument("--dataset", choices=("digits", "mnist", "fashion"), default=None,
                        help="digits (bundled, default) or mnist / fashion (need --data-dir; default mnist there)")
    parser.add_argument("--data-dir", metavar="DIR", help="folder holding the MNIST / Fashion-MNIST IDX files")
    parser.add_argument("--no-verify", action="store_true", help="skip the MD5 check of the standard IDX files")
    parser.add_argument("--hidden", type=positive_int, default=256, help="MLP hidden units (default 256)")
    parser.add_argument("--channels", type=positive_int, default=None,
                        help="CNN channels in the first conv (the second has twice as many; default 32 digits / 8 MNIST)")
    parser.add_argument("--optimizer", choices=("sgd", "adam"), default="adam", help="optimizer (default adam)")
    parser.add_argument("--lr", type=positive_float, default=None, help="learning rate (default adam 0.003 mlp / 0.01 cnn, sgd 0.05)")
    parser.add_argument("--batch-size", type=positive_int, default=32, help="images per step (default 32)")
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32", help="parameter dtype (default float32)")
    parser.add_argument("--augment", choices=("shift", "none"), default="none",
                        help="training augmentation: random one-pixel shifts, or none (default none)")
    add_schedule_args(parser)
    parser.add_argument("--limit", type=positive_int, default=None, help=argparse.SUPPRESS)  # tiny runs for tests
    add_run_args(parser, epochs=None, epochs_help="30 mlp, 15 cnn")
    add_distributed_arg(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    check_paths(args)
    if args.epochs is None:
        args.epochs = 30 if args.model == "mlp" else 15
    if args.dataset is None:
        args.dataset = "digits" if args.data_dir is None else "mnist"
    lr = args.lr if args.lr is not None else DEFAULT_LR[args.optimizer, args.model]
    rank, world = setup_distributed(args)
    per_rank_batch = split_batch(args.batch_size, world)
    log = Log(args.quiet or rank != 0)
    backend = resolve_backend(args.backend, args.threads)
    data = load_data(args)
    minitensor.manual_seed(args.seed)
    model = build_model(args.model, data.image_shape, args.hidden, backend, args.dtype, args.channels)
    optimizer: optim.Optimizer
    if args.optimizer == "adam":
        optimizer = optim.Adam(model.parameters(), lr=lr)
    else:
        optimizer = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    scheduler = make_scheduler(optimizer, args)
    augment_rng = np.random.default_rng([args.seed, 1])  # its state is part of the checkpoint
    history: dict[str, list[float]] = {"loss": [], "train_acc": [], "test_acc": [], "seconds": []}
    start_epoch = 0
    if args.resume:
        meta = load_checkpoint(args.resume, model, optimizer, scheduler, {"augment": augment_rng})
        start_epoch = int(meta.get("epoch", 0))
        check_schedule(scheduler, args.resume, start_epoch + args.epochs)
        history = {k: list(meta.get("history", {}).get(k, [])) for k in history}
        log(f"resumed from {args.resume} at epoch {start_epoch}")

    standardize = Standardize(data.X_train, per_pixel=args.model == "mlp")
    net, loader = training_loader(model, data.X_train, data.y_train, args.batch_size, per_rank_batch, world, rank, args.seed)
    n_params = sum(p.numel() for p in model.parameters())
    log(f"{data.name}: {len(data.X_train)} train / {len(data.X_test)} test images of shape {data.image_shape}; "
        f"{args.model} ({n_params} parameters) on backend {backend!r}, {args.dtype}; "
        f"{type(optimizer).__name__} lr={lr}, batch {args.batch_size}"
        + (f" ({per_rank_batch} on each of {world} processes)" if world > 1 else ""))
    show = not (args.no_progress or args.quiet) and rank == 0
    last = start_epoch + args.epochs
    for epoch in range(start_epoch + 1, last + 1):
        loader.set_epoch(epoch - 1)
        if world > 1:  # every rank its own augmentation stream, keyed by epoch so a resumed run repeats it
            augment_rng = np.random.default_rng([args.seed, 1, epoch, rank])
        total, correct, seen = 0.0, 0, 0
        with Timer() as timer:
            bar = progress_bar(loader, len(loader), f"epoch {epoch}", enabled=show)
            for xb, yb in bar:
                if args.augment == "shift":
                    xb = shift_augment(xb, augment_rng)
                logits = net(minitensor.tensor(standardize(xb), backend=backend, dtype=args.dtype))
                loss = nn.functional.cross_entropy(logits, yb)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                value = loss.item()
                total += value * len(yb)
                seen += len(yb)
                correct += int(np.sum(np.argmax(logits.to_numpy(), axis=1) == yb))
                if show:
                    bar.set_postfix(loss=f"{value:.3f}")
        if scheduler is not None:
            scheduler.step()
        # Each rank evaluates its slice of the test set; sums are reduced over the ranks (a no-op alone).
        X_test, y_test = standardize(data.X_test)[rank::world], data.y_test[rank::world]  # noqa: N806
        _, shard_acc = evaluate(model, X_test, y_test, backend, args.dtype)
        total, correct, seen, test_correct = reduce_sums(total, correct, seen, round(shard_acc * len(y_test)))
        test_acc = test_correct / len(data.y_test)
        n = seen
        history["loss"].append(total / n)
        history["train_acc"].append(correct / n)
        history["test_acc"].append(test_acc)
        history["seconds"].append(timer.seconds)
        log(f"epoch {epoch:3d}  loss {total / n:.4f}  train acc {correct / n:.3f}  test acc {test_acc:.4f}  "
            f"{timer.seconds:.2f} s")

    if args.save and rank == 0:
        save_checkpoint(args.save, model, optimizer, scheduler, {"epoch": start_epoch + args.epochs, "history": history},
                        {"augment": augment_rng})
        log(f"saved checkpoint to {args.save}")
    if args.plot and rank == 0:
        save_plot(args.plot, history, f"{args.model} on {data.name} ({backend})")
        log(f"saved plot to {args.plot}")
    train_seconds = float(np.sum(history["seconds"][-args.epochs:]))
    if rank == 0:
        print(
            f"done: {args.model} on {data.name}, backend {backend}, {start_epoch + args.epochs} epochs: "
            f"test accuracy {history['test_acc'][-1]:.4f} ({len(data.X_test)} images), "
            f"training {train_seconds:.1f} s ({train_seconds / args.epochs:.2f} s/epoch)"
            + (f", {world} processes" if world > 1 else "")
        )
    return {"test_accuracy": history["test_acc"][-1], "history": history, "train_seconds": train_seconds}


if __name__ == "__main__":
    sys.exit(run_main(main))
