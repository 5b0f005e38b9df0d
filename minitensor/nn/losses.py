"""Loss functions. ``reduction`` is ``"mean"`` (default), ``"sum"`` or ``"none"``.

Class targets (for :func:`cross_entropy` / :func:`nll_loss`) are integer class indices given as a
NumPy int array, a Python list or a Tensor of integral values; the one-hot matrix is built on the
host with NumPy and moved to the logits' backend once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DTypeError, IndexOutOfRangeError, ShapeError
from ..tensor import Tensor

REDUCTIONS = ("mean", "sum", "none")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")


def _as_target(target: Any, like: Tensor, name: str) -> Tensor:
    """``target`` as a tensor of ``like``'s backend and dtype with exactly ``like``'s shape."""
    if isinstance(target, Tensor):
        if target.backend is not like.backend:
            target = target.detach().to(like.backend)
    else:
        target = Tensor(like.backend.from_numpy(np.asarray(target, dtype=like.dtype)), like.backend)
    if target.shape != like.shape:
        raise ShapeError(f"{name}: input of shape {like.shape} and target of shape {target.shape} differ")
    return target


def class_indices(target: Any, batch: int, num_classes: int) -> np.ndarray:
    """Validate integer class targets: a 1-D int64 array of ``batch`` values in [0, num_classes)."""
    array = target.to_numpy() if isinstance(target, Tensor) else np.asarray(target)
    if array.dtype.kind == "f":
        if not np.all(np.isfinite(array)) or not np.all(array == np.round(array)):
            bad = array[~(np.isfinite(array) & (array == np.round(array)))]
            raise DTypeError(f"class targets must be integers, got non-integral values {bad[:10].tolist()}")
    elif array.dtype.kind not in "iub":
        raise DTypeError(f"class targets must be integers, got dtype {array.dtype}")
    array = array.astype(np.int64)
    if array.ndim != 1 or array.shape[0] != batch:
        raise ShapeError(f"class targets of shape {array.shape} do not match a batch of {batch} (need shape ({batch},))")
    bad = np.flatnonzero((array < 0) | (array >= num_classes))
    if bad.size:
        shown = ", ".join(f"target[{i}]={array[i]}" for i in bad[:10])
        more = f" and {bad.size - 10} more" if bad.size > 10 else ""
        raise IndexOutOfRangeError(f"class targets out of range [0, {num_classes}): {shown}{more}")
    return array


def one_hot(target: Any, num_classes: int, like: Tensor, batch: int | None = None) -> Tensor:
    """(N, num_classes) one-hot matrix of the class indices ``target``, on ``like``'s backend and dtype."""
    array = target.to_numpy() if isinstance(target, Tensor) else np.asarray(target)
    if batch is None:
        batch = array.shape[0] if array.ndim == 1 else -1
    indices = class_indices(array, batch, num_classes)
    matrix = np.zeros((batch, num_classes), dtype=like.dtype)
    matrix[np.arange(batch), indices] = 1.0
    return Tensor(like.backend.from_numpy(matrix), like.backend)


def nll_loss(logprobs: Tensor, target: Any, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class ``target`` under ``logprobs`` (N, C) (log-probabilities)."""
    if logprobs.dims != 2:
        raise ShapeError(f"nll_loss needs (N, C) log-probabilities, got shape {logprobs.shape}")
    n, c = logprobs.shape
    picked = (logprobs * one_hot(target, c, logprobs, batch=n)).sum(1)
    return _reduce(-picked, reduction)


def cross_entropy(logits: Tensor, target: Any, reduction: str = "mean") -> Tensor:
    """Softmax cross-entropy of raw ``logits`` (N, C) against class indices ``target`` (stable for large logits)."""
    from .functional import logsoftmax

    if logits.dims != 2:
        raise ShapeError(f"cross_entropy needs (N, C) logits, got shape {logits.shape}")
    return nll_loss(logsoftmax(logits, 1), target, reduction)


def mse_loss(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:  # noqa: A002 - torch's name
    """(input - target)^2."""
    diff = input - _as_target(target, input, "mse_loss")
    return _reduce(diff * diff, reduction)


def l1_loss(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:  # noqa: A002
    """|input - target|."""
    return _reduce((input - _as_target(target, input, "l1_loss")).abs(), reduction)


def huber_loss(input: Tensor, target: Any, reduction: str = "mean", delta: float = 1.0) -> Tensor:  # noqa: A002
    """0.5 d^2 where |d| <= delta, else delta (|d| - 0.5 delta), with d = input - target."""
    if delta <= 0:
        raise ValueError(f"huber_loss delta must be positive, got {delta}")
    a = (input - _as_target(target, input, "huber_loss")).abs()
    q = a.minimum(delta)  # = min(|d|, delta); loss = 0.5 q^2 + delta (|d| - q)
    return _reduce(q * q * 0.5 + (a - q) * delta, reduction)


def binary_cross_entropy(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:  # noqa: A002
    """-(y log p + (1 - y) log(1 - p)) for probabilities ``input``; each log is clamped at -100 like PyTorch."""
    y = _as_target(target, input, "binary_cross_entropy")
    log_p = input.log().maximum(-100.0)
    log_q = (1.0 - input).log().maximum(-100.0)
    return _reduce(-(y * log_p + (1.0 - y) * log_q), reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:  # noqa: A002
    """BCE of sigmoid(input) computed stably as max(x, 0) - x y + log(1 + exp(-|x|))."""
    y = _as_target(target, input, "binary_cross_entropy_with_logits")
    return _reduce(input.relu() - input * y + ((-input.abs()).exp() + 1.0).log(), reduction)
