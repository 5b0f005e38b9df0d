"""A small training loop: :class:`Trainer` fits a model on batches and reports per-epoch loss and metrics.

``batches`` is any re-iterable of ``(inputs, targets)`` pairs (a list, or an object whose
``__iter__`` starts a new pass). Inputs may be NumPy arrays (moved to the model's backend and
dtype) or Tensors; targets are handed to ``loss_fn`` as given (the nn losses accept NumPy arrays,
lists and Tensors).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from tqdm import tqdm

from .autodiff import no_grad
from .creation import tensor
from .module import Module
from .optim.lr_scheduler import ReduceLROnPlateau
from .tensor import Tensor

Metric = Callable[[np.ndarray, np.ndarray], float]


PIPE_REFRESH_SECONDS = 30.0
"""How often a progress bar redraws when stderr is not a terminal (a log file, CI)."""


class ProgressBar(tqdm):
    """tqdm whose ``set_postfix`` waits for the next timed redraw (tqdm's default redraws on every call, which
    would write a line per batch into a log)."""

    def set_postfix(self, ordered_dict: Any = None, refresh: bool = False, **kwargs: Any) -> None:
        super().set_postfix(ordered_dict, refresh, **kwargs)


def progress_bar(iterable: Iterable[Any], total: int | None = None, desc: str = "", enabled: bool = True) -> tqdm:
    """A tqdm bar on stderr (silent when not ``enabled``). On a terminal it redraws ten times a second; into a
    file or pipe at most every ``PIPE_REFRESH_SECONDS``, so a captured log stays a few lines (``set_postfix``
    included)."""
    tty = bool(getattr(sys.stderr, "isatty", lambda: False)())
    interval = 0.1 if tty else PIPE_REFRESH_SECONDS
    return ProgressBar(iterable, total=total, desc=desc, leave=False, file=sys.stderr, dynamic_ncols=tty, mininterval=interval,
                maxinterval=max(10.0, interval), disable=not enabled)


def accuracy(outputs: np.ndarray, targets: np.ndarray) -> float:
    """Fraction of correct predictions: argmax over classes for (N, C) outputs with C > 1; a single output is a
    logit (as for ``binary_cross_entropy_with_logits``), predicting class 1 when it is > 0."""
    targets = np.asarray(targets).reshape(-1)
    if outputs.ndim >= 2 and outputs.shape[1] > 1:
        predicted = np.argmax(outputs.reshape(outputs.shape[0], -1), axis=1)
    else:
        predicted = (outputs.reshape(-1) > 0.0).astype(np.int64)
    return float(np.mean(predicted == targets.astype(np.int64))) if targets.size else 0.0


METRICS: dict[str, Metric] = {"accuracy": accuracy}


def _numpy(value: Any) -> np.ndarray:
    return value.to_numpy() if isinstance(value, Tensor) else np.asarray(value)


class Trainer:
    """Fit ``model`` with ``loss_fn(outputs, targets) -> scalar Tensor`` and ``optimizer``.

    ``metrics`` are names from :data:`METRICS` or ``(name, fn(outputs_np, targets_np) -> float)``
    pairs; each is averaged over an epoch weighted by batch size. An optional ``scheduler`` is
    stepped once per epoch (a ReduceLROnPlateau with the validation loss, else the training loss).
    """

    def __init__(self, model: Module, loss_fn: Callable[[Tensor, Any], Tensor], optimizer: Any,
                 metrics: Sequence[str | tuple[str, Metric]] = ("accuracy",), scheduler: Any = None):
        self.model, self.loss_fn, self.optimizer, self.scheduler = model, loss_fn, optimizer, scheduler
        self.metrics: list[tuple[str, Metric]] = []
        for metric in metrics:
            if isinstance(metric, str):
                if metric not in METRICS:
                    raise ValueError(f"unknown metric {metric!r}; known: {', '.join(METRICS)} (or pass a (name, fn) pair)")
                self.metrics.append((metric, METRICS[metric]))
            else:
                self.metrics.append((metric[0], metric[1]))

    def _input(self, x: Any) -> Any:
        if isinstance(x, Tensor):
            return x
        params = list(self.model.parameters())
        if not params:
            return tensor(np.asarray(x))
        like = params[0]
        return Tensor(like.backend.from_numpy(np.asarray(x, dtype=like.dtype)), like.backend)

    def _run(self, batches: Iterable[tuple[Any, Any]], train: bool, desc: str, progress: bool) -> dict[str, float]:
        totals = {"loss": 0.0, **{name: 0.0 for name, _ in self.metrics}}
        count = 0
        total = len(batches) if hasattr(batches, "__len__") else None  # type: ignore[arg-type]
        bar = progress_bar(batches, total=total, desc=desc, enabled=progress)
        for inputs, targets in bar:
            x = self._input(inputs)
            if train:
                self.optimizer.zero_grad()
                outputs = self.model(x)
                loss = self.loss_fn(outputs, targets)
                loss.backward()
                self.optimizer.step()
            else:
                with no_grad():
                    outputs = self.model(x)
                    loss = self.loss_fn(outputs, targets)
            n = int(np.shape(_numpy(targets))[0]) if np.ndim(_numpy(targets)) else 1
            value = loss.item()
            totals["loss"] += value * n
            if self.metrics:
                out_np, target_np = outputs.to_numpy(), _numpy(targets)
                for name, fn in self.metrics:
                    totals[name] += fn(out_np, target_np) * n
            count += n
            bar.set_postfix(loss=f"{value:.4f}")
        bar.close()
        if count == 0:
            raise ValueError("no batches to run over")
        return {name: value / count for name, value in totals.items()}

    def fit(self, train_batches: Iterable[tuple[Any, Any]], epochs: int = 1, val_batches: Iterable[tuple[Any, Any]] | None = None,
            progress: bool = True) -> dict[str, list[float]]:
        """Train for ``epochs`` passes; returns ``{"loss": [...], "accuracy": [...], "val_loss": [...], ...}`` per epoch."""
        history: dict[str, list[float]] = {}
        for epoch in range(epochs):
            self.model.train()
            results = self._run(train_batches, True, f"epoch {epoch + 1}/{epochs}", progress)
            if val_batches is not None:
                results.update({f"val_{k}": v for k, v in self.evaluate(val_batches, progress=progress).items()})
            for key, value in results.items():
                history.setdefault(key, []).append(value)
            if self.scheduler is not None:
                self._step_scheduler(results)
        return history

    def _step_scheduler(self, results: dict[str, float]) -> None:
        """One scheduler step; ReduceLROnPlateau gets the epoch's validation loss (the training loss without one)."""
        if isinstance(self.scheduler, ReduceLROnPlateau):
            self.scheduler.step(results.get("val_loss", results["loss"]))
        else:
            self.scheduler.step()

    def evaluate(self, batches: Iterable[tuple[Any, Any]], progress: bool = False) -> dict[str, float]:
        """Mean loss and metrics over ``batches`` in eval mode without gradients (the previous mode is restored)."""
        was_training = self.model.training
        self.model.eval()
        try:
            return self._run(batches, False, "eval", progress)
        finally:
            self.model.train(was_training)
