"""Multi-class and multi-label margin losses with ``torch.nn.functional``'s names, signatures and defaults, and
their Modules: ``multi_margin_loss multilabel_margin_loss multilabel_soft_margin_loss``.

Class-index targets are validated on the host (one copy of the small int target) so that bad entries can be named;
the losses are compositions of differentiable Tensor ops (gather, compare, masked_fill, sum), so they run on every
backend and autodiff gives the gradients. A hinge term counts only where it is strictly positive (PyTorch's
``z > 0``), so a margin hit exactly passes no gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from ..creation import arange
from ..errors import IndexOutOfRangeError, ShapeError
from ..tensor import Tensor
from .common import tensor_args
from .loss import _Loss, _WeightedLoss
from .losses import _float_input, _reduce, _reduction
from .losses_margin import broadcast_shape, int_array, operand, softplus_exact

__all__ = [
    "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
    "MultiMarginLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss",
]


def _frames(input: Tensor, name: str) -> tuple[int, int]:  # noqa: A002 - torch's name
    """(samples, classes) of a (C,), (N, C) or 0-d input, with PyTorch's non-empty check."""
    _float_input(input, name)
    if input.dims == 0:
        return 1, 1
    if input.dims > 2 or input.shape[-1] == 0:
        raise ShapeError(f"{name}: expected a non-empty (C,) or (N, C) input (N may be 0), got shape {input.shape}")
    return (1, input.shape[0]) if input.dims == 1 else (input.shape[0], input.shape[1])


def _on(array: np.ndarray, like: Tensor) -> Tensor:
    return Tensor(like.backend.from_numpy(np.ascontiguousarray(array)), like.backend)


@tensor_args("input")
def multi_margin_loss(input: Tensor, target: Any, p: int = 1, margin: float = 1.0, weight: Any = None,  # noqa: A002
                      size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """loss(x, y) = sum_{i != y} w[y] max(0, margin - x[y] + x[i])^p / C for class index y, p in {1, 2}.

    input (N, C), (C,) or 0-d; target (N,) (or 0-d / (1,) for one sample) of int64 class indices; weight (C,).
    "none" gives (N,), or a 0-d loss for a 0-d target.
    """
    red = _reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError(f"multi_margin_loss: only p == 1 and p == 2 are supported, got p={p}")
    w = None if weight is None else operand(weight, input)
    if w is not None and w.dims != 1:
        raise ValueError(f"multi_margin_loss: weight must be one-dimensional, got shape {w.shape}")
    n, c = _frames(input, "multi_margin_loss")
    array = int_array(target, "multi_margin_loss", "target")
    if array.ndim > 1 or array.size != n:
        raise ShapeError(f"multi_margin_loss: target must be 1-D with one class index per sample ({n}), got shape "
                         f"{array.shape} for input of shape {input.shape}")
    bad = np.flatnonzero((array < 0) | (array >= c))
    if bad.size:
        raise IndexOutOfRangeError(f"multi_margin_loss: target values out of range [0, {c}): "
                                   + ", ".join(f"target[{i}]={array.reshape(-1)[i]}" for i in bad[:10]))
    if w is not None and w.shape != (c,):
        raise ShapeError(f"multi_margin_loss: weight must have shape ({c},), one per class, got {w.shape}")
    x = input.reshape(n, c)
    t = _on(array.reshape(n, 1), input)
    z = margin - x.gather(1, t) + x
    counted = (z > 0).logical_and(arange(c, dtype=dtypes.int64, backend=input.backend) != t)
    h = z if p == 1 else z * z
    if w is not None:
        h = h * w.gather(0, t.reshape(n)).reshape(n, 1)
    loss = h.masked_fill(~counted, 0.0).sum(1) / c
    if red == "none":
        return loss if array.ndim else loss.reshape(())
    return _reduce(loss, red)


@tensor_args("input")
def multilabel_margin_loss(input: Tensor, target: Any, size_average: bool | None = None,  # noqa: A002
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """loss(x, y) = sum_j sum_{i not in y} max(0, 1 - (x[y_j] - x[i])) / C over the target classes y_j.

    input (N, C) or (C,); target of the same shape holding class indices, ended by the first -1 (later entries are
    ignored but must still lie in [-1, C)). Repeated target classes count once per repeat, as in PyTorch.
    "none" gives (N,) for a 2-D input, a 0-d loss for a 1-D one.
    """
    red = _reduction(reduction, size_average, reduce)
    n, c = _frames(input, "multilabel_margin_loss")
    array = int_array(target, "multilabel_margin_loss", "target")
    if (array.size != c or array.ndim > 1) if input.dims <= 1 else array.shape != (n, c):
        raise ShapeError(f"multilabel_margin_loss: target must have the input's shape {input.shape}, got {array.shape}")
    array = array.reshape(n, c)
    bad = np.argwhere((array < -1) | (array >= c))
    if bad.size:
        raise IndexOutOfRangeError(f"multilabel_margin_loss: target values out of range [-1, {c}): "
                                   + ", ".join(f"target[{i}, {j}]={array[i, j]}" for i, j in bad[:10]))
    listed = np.cumprod(array >= 0, axis=1).astype(bool)  # entries before the first -1
    is_target = np.zeros((n, c), dtype=bool)
    rows, cols = np.nonzero(listed)
    is_target[rows, array[rows, cols]] = True
    pairs = listed[:, :, None] & ~is_target[:, None, :]  # (sample, target entry j, class i)
    x = input.reshape(n, c)
    picked = x.gather(1, _on(np.where(listed, array, 0), input))
    z = 1.0 - picked.unsqueeze(2) + x.unsqueeze(1)
    counted = (z > 0).logical_and(_on(pairs, input))
    loss = z.masked_fill(~counted, 0.0).sum(2).sum(1) / c
    if red == "none":
        return loss if input.dims == 2 else loss.reshape(())
    return _reduce(loss, red)


@tensor_args("input")
def multilabel_soft_margin_loss(input: Tensor, target: Any, weight: Any = None,  # noqa: A002
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    """loss(x, y) = -sum_i w_i (y_i log sigmoid(x_i) + (1 - y_i) log sigmoid(-x_i)) / C over the last dim (C classes).

    Target (0/1 labels) and weight broadcast with the input; "none" gives one loss per sample (the input's shape
    without its last dim).
    """
    red = _reduction(reduction, size_average, reduce)
    _float_input(input, "multilabel_soft_margin_loss")
    if input.dims == 0:
        raise ShapeError("multilabel_soft_margin_loss: input must have a class dim (C,) or (N, C), got a 0-d tensor")
    y = operand(target, input)
    shapes = {"input": input.shape, "target": y.shape}
    w = None if weight is None else operand(weight, input)
    if w is not None:
        shapes["weight"] = w.shape
    broadcast_shape("multilabel_soft_margin_loss", **shapes)
    loss = y * softplus_exact(-input) + (1.0 - y) * softplus_exact(input)
    if w is not None:
        loss = loss * w
    loss = loss.sum(input.dims - 1) / input.shape[-1]
    return _reduce(loss, red)


# --- Modules ---


class MultiMarginLoss(_WeightedLoss):
    """The multi-class hinge loss sum_{i != y} w[y] max(0, margin - x[y] + x[i])^p / C; see :func:`multi_margin_loss`."""

    _defaults = {"p": 1, "margin": 1.0, "reduction": "mean"}

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 are supported, got p={p}")
        if weight is not None and weight.dims != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dims}D instead")
        self.p, self.margin = p, margin

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002 - torch's name
        return multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """The multi-label hinge loss over -1-terminated target class lists; see :func:`multilabel_margin_loss`."""

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-class logistic loss averaged over the classes; see :func:`multilabel_soft_margin_loss`."""

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)
