"""2-D binary classification with a tensor MLP (2 -> hidden -> hidden -> 1) on any backend.

    python projects/run_tensor.py --backend fast --dataset split --hidden 100
    python projects/run_tensor.py --backend simple --dataset xor --epochs 50 --plot xor.png
    mpiexec -n 2 python projects/run_tensor.py --distributed      # data-parallel over 2 processes

ReLU hidden layers, one logit out (sigmoid + binary cross-entropy, computed stably from the logit),
minibatch SGD. Prints loss, accuracy and seconds for every epoch.
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
from minitensor.datasets import TOY_DATASETS, toy  # noqa: E402
from minitensor.train import progress_bar  # noqa: E402


def build_model(hidden: int, backend: str, dtype: str = "float64") -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(2, hidden, backend=backend, dtype=dtype),
        nn.ReLU(),
        nn.Linear(hidden, hidden, backend=backend, dtype=dtype),
        nn.ReLU(),
        nn.Linear(hidden, 1, backend=backend, dtype=dtype),
    )


def predict_logits(model: nn.Module, X: np.ndarray, backend: str, dtype: str, batch: int = 4096) -> np.ndarray:
    """Logits for every row of ``X`` (evaluated without building a graph)."""
    model.eval()
    outs = []
    with minitensor.no_grad():
        for start in range(0, len(X), batch):
            x = minitensor.tensor(X[start : start + batch], backend=backend, dtype=dtype)
            outs.append(model(x).to_numpy().reshape(-1))
    model.train()
    return np.concatenate(outs) if outs else np.zeros(0)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    add_backend_arg(parser)
    parser.add_argument("--dataset", choices=list(TOY_DATASETS), default="split", help="2-D dataset (default split)")
    parser.add_argument("--n-points", type=positive_int, default=1000, help="number of points (default 1000)")
    parser.add_argument("--hidden", type=positive_int, default=100, help="hidden units per layer (default 100)")
    parser.add_argument("--lr", type=positive_float, default=0.1, help="learning rate (default 0.1)")
    parser.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd", help="optimizer (default sgd)")
    parser.add_argument("--momentum", type=float, default=0.9, help="SGD momentum (default 0.9)")
    add_schedule_args(parser)
    parser.add_argument("--batch-size", type=positive_int, default=50, help="points per step (default 50)")
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float64", help="parameter dtype (default float64)")
    add_run_args(parser, epochs=30)
    add_distributed_arg(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    check_paths(args)
    rank, world = setup_distributed(args)
    per_rank_batch = split_batch(args.batch_size, world)
    log = Log(args.quiet or rank != 0)
    backend = resolve_backend(args.backend, args.threads)
    minitensor.manual_seed(args.seed)
    data = toy(args.dataset, args.n_points, seed=args.seed)
    model = build_model(args.hidden, backend, args.dtype)
    if args.optimizer == "adam":
        optimizer: optim.Optimizer = optim.Adam(model.parameters(), lr=args.lr)
    else:
        optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    scheduler = make_scheduler(optimizer, args)
    history: dict[str, list[float]] = {"loss": [], "acc": [], "seconds": []}
    start_epoch = 0
    if args.resume:
        meta = load_checkpoint(args.resume, model, optimizer, scheduler)
        start_epoch = int(meta.get("epoch", 0))
        check_schedule(scheduler, args.resume, start_epoch + args.epochs)
        history = {k: list(meta.get("history", {}).get(k, [])) for k in history}
        log(f"resumed from {args.resume} at epoch {start_epoch}")

    net, loader = training_loader(model, data.X, data.y, args.batch_size, per_rank_batch, world, rank, args.seed)
    n_params = sum(p.numel() for p in model.parameters())
    log(f"dataset {args.dataset}: {len(data)} points ({data.description}); MLP 2-{args.hidden}-{args.hidden}-1 "
        f"({n_params} parameters) on backend {backend!r}; {type(optimizer).__name__} lr={args.lr}, batch {args.batch_size}"
        + (f" ({per_rank_batch} on each of {world} processes)" if world > 1 else ""))
    show = not (args.no_progress or args.quiet) and rank == 0
    last = start_epoch + args.epochs
    for epoch in range(start_epoch + 1, last + 1):
        loader.set_epoch(epoch - 1)
        total, seen = 0.0, 0
        with Timer() as timer:
            for xb, yb in progress_bar(loader, len(loader), f"epoch {epoch}", enabled=show):
                x = minitensor.tensor(xb, backend=backend, dtype=args.dtype)
                logits = net(x).view(len(yb))
                loss = nn.functional.binary_cross_entropy_with_logits(logits, yb.astype(np.float64))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += loss.item() * len(yb)
                seen += len(yb)
        total, seen = reduce_sums(total, seen)  # over every rank's shard (a no-op alone)
        acc = float(np.mean((predict_logits(model, data.X, backend, args.dtype) > 0) == (data.y == 1)))
        if scheduler is not None:
            scheduler.step()
        history["loss"].append(total / seen)
        history["acc"].append(acc)
        history["seconds"].append(timer.seconds)
        log(f"epoch {epoch:3d}  loss {total / seen:.4f}  accuracy {acc:.3f}  {timer.seconds:.3f} s/epoch")

    if args.save and rank == 0:
        save_checkpoint(args.save, model, optimizer, scheduler, {"epoch": start_epoch + args.epochs, "history": history})
        log(f"saved checkpoint to {args.save}")
    if args.plot and rank == 0:
        def proba(points: np.ndarray) -> np.ndarray:
            return 1.0 / (1.0 + np.exp(-predict_logits(model, points, backend, args.dtype)))

        save_plot(args.plot, history, f"tensor MLP ({backend}) on {args.dataset}", (proba, data.X, data.y))
        log(f"saved plot to {args.plot}")
    seconds = history["seconds"][-args.epochs:]
    # After warm-up: the first epoch pays for JIT compilation on the fast and cuda backends.
    steady = float(np.median(seconds[1:])) if len(seconds) > 1 else float(seconds[0])
    if rank == 0:
        print(
            f"done: tensor MLP 2-{args.hidden}-{args.hidden}-1 on {args.dataset} ({len(data)} points), backend {backend}, "
            f"{start_epoch + args.epochs} epochs: accuracy {history['acc'][-1]:.3f}, final loss {history['loss'][-1]:.4f}, "
            f"first epoch {seconds[0]:.3f} s, then median {steady:.3f} s/epoch" + (f", {world} processes" if world > 1 else "")
        )
    return {"accuracy": history["acc"][-1], "history": history, "seconds_per_epoch": steady}


if __name__ == "__main__":
    sys.exit(run_main(main))
