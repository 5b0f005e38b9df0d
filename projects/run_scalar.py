"""2-D binary classification with a 2-16-1 MLP built from minitensor Scalars (pure Python autodiff).

    python projects/run_scalar.py                      # parabola, 1,000 points
    python projects/run_scalar.py --dataset xor --epochs 40 --plot scalar.png

Hidden ReLU layer, sigmoid output, binary cross-entropy, plain minibatch SGD. Every number is a
``minitensor.Scalar``, so this is slow by design (a few seconds per epoch on 1,000 points) and shows the
autodiff engine with nothing else in the way.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from common import (  # noqa: E402
    Log,
    ProjectError,
    Timer,
    add_run_args,
    check_paths,
    load_arrays,
    positive_float,
    positive_int,
    run_main,
    save_arrays,
    save_plot,
    subtree,
)

import minitensor  # noqa: E402
from minitensor import Module, Scalar  # noqa: E402
from minitensor.data_loader import DataLoader  # noqa: E402
from minitensor.datasets import TOY_DATASETS, toy  # noqa: E402
from minitensor.train import progress_bar  # noqa: E402


class ScalarLinear(Module):
    """``out_j = b_j + sum_i w_ij * x_i`` with one Scalar Parameter per weight."""

    def __init__(self, in_size: int, out_size: int, rng: random.Random):
        super().__init__()
        self.in_size, self.out_size = in_size, out_size
        bound = math.sqrt(6.0 / in_size)  # He-uniform: keeps ReLU activations at a steady scale
        self.weights = [[self._scalar(f"w_{i}_{j}", rng.uniform(-bound, bound)) for j in range(out_size)] for i in range(in_size)]
        self.bias = [self._scalar(f"b_{j}", 0.0) for j in range(out_size)]

    def _scalar(self, name: str, value: float) -> Scalar:
        """A trainable Scalar registered as parameter ``name``."""
        scalar = Scalar(value)
        self.register_parameter(name, scalar)
        return scalar

    def forward(self, inputs: Sequence[Scalar | float]) -> list[Scalar]:
        outs = []
        for j in range(self.out_size):
            acc = self.bias[j]
            for i in range(self.in_size):
                acc = acc + inputs[i] * self.weights[i][j]
            outs.append(acc)
        return outs

    def extra_repr(self) -> str:
        return f"{self.in_size}, {self.out_size}"


class ScalarMLP(Module):
    """2 -> hidden (ReLU) -> 1 logit."""

    def __init__(self, hidden: int = 16, seed: int = 0):
        super().__init__()
        rng = random.Random(seed)
        self.layer1 = ScalarLinear(2, hidden, rng)
        self.layer2 = ScalarLinear(hidden, 1, rng)

    def forward(self, x: Sequence[float]) -> Scalar:
        h = [v.relu() for v in self.layer1.forward(x)]
        return self.layer2.forward(h)[0]

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        with minitensor.no_grad():
            return np.array([self.forward((float(a), float(b))).sigmoid().data for a, b in X])


def bce_with_logit(logit: Scalar, label: int) -> Scalar:
    """-log p(label): sigmoid output and binary cross-entropy, as -log(sigmoid(+-logit)) for stability."""
    return -((logit if label == 1 else -logit).sigmoid().log())


class SGD:
    """Plain SGD on Scalar parameters: ``w <- w - lr * grad``."""

    def __init__(self, parameters: Iterable[Scalar], lr: float):
        self.parameters = list(parameters)
        self.lr = lr

    def zero_grad(self) -> None:
        for p in self.parameters:
            p.grad = None

    def step(self) -> None:
        for p in self.parameters:
            if p.grad is not None:
                p.data -= self.lr * p.grad


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", choices=list(TOY_DATASETS), default="parabola", help="2-D dataset (default parabola)")
    parser.add_argument("--n-points", type=positive_int, default=1000, help="number of points (default 1000)")
    parser.add_argument("--hidden", type=positive_int, default=16, help="hidden units (default 16)")
    parser.add_argument("--lr", type=positive_float, default=0.2, help="SGD learning rate (default 0.2)")
    parser.add_argument("--batch-size", type=positive_int, default=10, help="points per SGD step (default 10)")
    add_run_args(parser, epochs=40)
    return parser


def accuracy(model: ScalarMLP, X: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean((model.predict_proba(X) > 0.5) == (y == 1)))


def main(argv: Sequence[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    check_paths(args)
    log = Log(args.quiet)
    data = toy(args.dataset, args.n_points, seed=args.seed)
    model = ScalarMLP(args.hidden, seed=args.seed)
    optimizer = SGD(model.parameters(), args.lr)
    history: dict[str, list[float]] = {"loss": [], "acc": [], "seconds": []}
    start_epoch = 0
    if args.resume:
        flat = load_arrays(args.resume)
        params = dict(model.named_parameters())
        state = subtree(flat, "model")
        if set(state) != set(params):
            raise ProjectError(f"{args.resume} does not hold a {args.hidden}-hidden Scalar MLP checkpoint")
        for name, p in params.items():
            p.data = float(state[name].reshape(-1)[0])
        start_epoch = int(flat["meta.epoch"].reshape(-1)[0])
        for key in history:
            saved = subtree(flat, f"history.{key}")
            history[key] = [float(saved[str(i)].reshape(-1)[0]) for i in range(len(saved))]
        log(f"resumed from {args.resume} at epoch {start_epoch}")

    loader = DataLoader(data.X, data.y, args.batch_size, shuffle=True, seed=args.seed)
    log(f"dataset {args.dataset}: {len(data)} points ({data.description}); model 2-{args.hidden}-1, "
        f"{len(list(model.parameters()))} Scalar parameters; SGD lr={args.lr}, batch {args.batch_size}")
    for epoch in range(start_epoch + 1, start_epoch + args.epochs + 1):
        loader.set_epoch(epoch - 1)
        total = 0.0
        with Timer() as timer:
            for xb, yb in progress_bar(loader, len(loader), f"epoch {epoch}", enabled=not (args.no_progress or args.quiet)):
                optimizer.zero_grad()
                loss: Scalar | float = 0.0
                for (a, b), label in zip(xb, yb):
                    loss = loss + bce_with_logit(model.forward((float(a), float(b))), int(label))
                loss = loss * (1.0 / len(yb))
                assert isinstance(loss, Scalar)
                loss.backward()
                optimizer.step()
                total += loss.data * len(yb)
        acc = accuracy(model, data.X, data.y)
        history["loss"].append(total / len(data))
        history["acc"].append(acc)
        history["seconds"].append(timer.seconds)
        log(f"epoch {epoch:3d}  loss {total / len(data):.4f}  accuracy {acc:.3f}  {timer.seconds:.2f} s/epoch")

    final_acc = history["acc"][-1] if history["acc"] else accuracy(model, data.X, data.y)
    if args.save:
        state = {name: np.array(p.data) for name, p in model.named_parameters()}
        save_arrays(args.save, {"model": state, "meta": {"epoch": np.array(start_epoch + args.epochs)}, "history": history})
        log(f"saved checkpoint to {args.save}")
    if args.plot:
        save_plot(args.plot, history, f"Scalar MLP on {args.dataset}", (model.predict_proba, data.X, data.y))
        log(f"saved plot to {args.plot}")
    seconds = history["seconds"][-args.epochs:]
    print(
        f"done: scalar 2-{args.hidden}-1 MLP on {args.dataset} ({len(data)} points), {start_epoch + args.epochs} epochs: "
        f"accuracy {final_acc:.3f}, final loss {history['loss'][-1]:.4f}, "
        f"{np.mean(seconds):.2f} s/epoch"
    )
    return {"accuracy": final_acc, "history": history}


if __name__ == "__main__":
    sys.exit(run_main(main))
