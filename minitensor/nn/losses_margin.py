"""Margin, ranking, embedding and soft-margin losses with ``torch.nn.functional``'s names, signatures and defaults,
and their Modules: ``margin_ranking_loss hinge_embedding_loss cosine_embedding_loss triplet_margin_loss
triplet_margin_with_distance_loss soft_margin_loss`` (the multi-class/multi-label ones live in losses_multilabel.py).

Reductions and the deprecated ``size_average``/``reduce`` flags are handled as in :mod:`.losses`. Targets may be
Tensors, NumPy arrays or lists; a floating-point target Tensor keeps its dtype (so float32 inputs with a float64
target give float64, as PyTorch promotes), anything else takes the input's dtype. Every loss is a composition of
differentiable Tensor ops, so it runs on every backend and autodiff gives the gradients. Hinges use ``clamp(min=0)``
whose gradient passes at exactly 0, as PyTorch's ``clamp_min``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import DTypeError, ShapeError
from ..tensor import Tensor
from .common import tensor_args
from .cross_entropy import on_backend
from .distance import PairwiseDistance, pairwise_distance
from .loss import _Loss
from .losses import REDUCTIONS, _broadcasts, _float_input, _reduce, _reduction

__all__ = [
    "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss", "soft_margin_loss",
    "MarginRankingLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss", "TripletMarginLoss",
    "TripletMarginWithDistanceLoss", "SoftMarginLoss",
]

COSINE_EPSILON = 1e-12  # PyTorch's cosine_embedding_loss adds it to each squared norm


# --- helpers shared with losses_multilabel.py and losses_nll.py ---


def operand(value: Any, like: Tensor) -> Tensor:
    """``value`` on ``like``'s backend: a floating-point Tensor keeps its dtype (arithmetic then promotes, as in
    PyTorch); an integer or bool Tensor, an array or a list takes ``like``'s dtype."""
    if isinstance(value, Tensor):
        if value.backend is not like.backend:
            value = value.to(like.backend)
        return value if value.dtype.kind == "f" else value.cast(like.dtype)
    return on_backend(value, like, like.dtype)


def broadcast_shape(name: str, **shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of the named shapes, or a ShapeError naming each of them."""
    try:
        return tuple(np.broadcast_shapes(*shapes.values()))
    except ValueError:
        listed = ", ".join(f"{key} {shape}" for key, shape in shapes.items())
        raise ShapeError(f"{name}: shapes do not broadcast: {listed}") from None


def int_array(value: Any, name: str, what: str) -> np.ndarray:
    """An integer Tensor, array or list as an int64 NumPy array (a host copy); DTypeError for anything else."""
    if isinstance(value, Tensor):
        kind, dtype, array = value.dtype.kind, value.dtype, None
    else:
        array = np.asarray(value)
        kind, dtype = array.dtype.kind, array.dtype
    if kind not in "iu":
        raise DTypeError(f"{name}: {what} must be an integer (int64) tensor, got dtype {dtype}")
    if array is None:
        array = value.to_numpy()
    return np.asarray(array, dtype=np.int64)


def softplus_exact(z: Tensor) -> Tensor:
    """log(1 + exp(z)) for any z: m + log1p(expm1(-m) + exp(z - m)) with m = max(z, 0) held constant, so no exp
    overflows, the value is log1p(exp(z)) bit for bit where z <= 0, and the gradient is sigmoid(z) everywhere."""
    m = z.detach().clamp(min=0.0)
    return m + ((-m).expm1() + (z - m).exp()).log1p()


# --- pairs ---


@tensor_args("input1", "input2")
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Any, margin: float = 0.0,
                        size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """loss = max(0, -y (x1 - x2) + margin) with y = 1 when x1 should rank higher, -1 when x2 should.

    x1, x2 and y broadcast, but must have the same number of dims (PyTorch's rule).
    """
    red = _reduction(reduction, size_average, reduce)
    _float_input(input1, "margin_ranking_loss")
    y = operand(target, input1)
    if not input1.dims == input2.dims == y.dims:
        raise ShapeError(f"margin_ranking_loss: input1, input2 and target must have the same number of dims, got shapes "
                         f"input1 {input1.shape}, input2 {input2.shape}, target {y.shape}")
    broadcast_shape("margin_ranking_loss", input1=input1.shape, input2=input2.shape, target=y.shape)
    return _reduce((margin - y * (input1 - input2)).clamp(min=0.0), red)


@tensor_args("input")
def hinge_embedding_loss(input: Tensor, target: Any, margin: float = 1.0, size_average: bool | None = None,  # noqa: A002
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """loss = x where y = 1, max(0, margin - x) where y = -1 (x a distance; input and target broadcast).

    As PyTorch: an entry of y that is neither 1 nor -1 gets both terms; the target gets no gradient.
    """
    red = _reduction(reduction, size_average, reduce)
    _float_input(input, "hinge_embedding_loss")
    y = operand(target, input)
    broadcast_shape("hinge_embedding_loss", input=input.shape, target=y.shape)
    hinge = (margin - input).clamp(min=0.0)
    return _reduce(hinge.where(y != 1, 0.0) + input.where(y != -1, 0.0), red)


@tensor_args("input1", "input2")
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Any, margin: float = 0.0,
                          size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """loss = 1 - cos(x1, x2) where y = 1, max(0, cos(x1, x2) - margin) where y = -1 (0 for any other y).

    cos = sum(x1 x2) / sqrt((sum(x1^2) + 1e-12) (sum(x2^2) + 1e-12)) over the feature dim. Inputs (N, D) with target
    (N,), or (D,) with a 0-d target; x1 and x2 broadcast.
    """
    red = _reduction(reduction, size_average, reduce)
    _float_input(input1, "cosine_embedding_loss")
    y = operand(target, input1)
    if y.dims > 1:
        raise ShapeError(f"cosine_embedding_loss: target must be 0-d or 1-D (multi-target is not supported), got {y.shape}")
    need = 2 if y.dims == 1 else 1
    if input1.dims != need or input2.dims != need:
        raise ShapeError(f"cosine_embedding_loss: a {y.dims}-D target needs {need}-D inputs, got input1 {input1.shape} "
                         f"and input2 {input2.shape}")
    dim = y.dims
    broadcast_shape("cosine_embedding_loss", input1=input1.shape, input2=input2.shape)
    prod = (input1 * input2).sum(dim)
    squares = ((input1 * input1).sum(dim) + COSINE_EPSILON) * ((input2 * input2).sum(dim) + COSINE_EPSILON)
    cos = prod / squares.sqrt()
    broadcast_shape("cosine_embedding_loss", cosine=cos.shape, target=y.shape)
    loss = (1.0 - cos).where(y == 1, 0.0) + (cos - margin).clamp(min=0.0).where(y == -1, 0.0)
    return _reduce(loss, red)


# --- triplets ---


def _triplet_checks(name: str, margin: float, anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    if margin <= 0:
        raise ValueError(f"{name}: margin must be greater than 0, got {margin}")
    if not anchor.dims == positive.dims == negative.dims:
        raise ShapeError(f"{name}: anchor, positive and negative must have the same number of dims, got anchor "
                         f"{anchor.shape}, positive {positive.shape}, negative {negative.shape}")


def _triplet(d_pos: Tensor, d_neg: Tensor, d_swap: Tensor | None, margin: float, red: str) -> Tensor:
    if d_swap is not None:
        d_neg = d_neg.minimum(d_swap)  # ties split the gradient in halves, as torch.minimum
    return _reduce((margin + d_pos - d_neg).clamp(min=0.0), red)


@tensor_args("anchor", "positive", "negative")
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2.0,
                        eps: float = 1e-6, swap: bool = False, size_average: bool | None = None,
                        reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """loss = max(0, d(a, p) + margin - d(a, n)) with d(x, y) = ||x - y + eps||_p over the last dim.

    ``swap``: d(a, n) is replaced by min(d(a, n), d(p, n)) (Balntas et al.). The three inputs broadcast but must have
    the same number of dims; margin must be > 0.
    """
    red = _reduction(reduction, size_average, reduce)
    _triplet_checks("triplet_margin_loss", margin, anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    return _triplet(d_pos, d_neg, pairwise_distance(positive, negative, p, eps) if swap else None, margin, red)


@tensor_args("anchor", "positive", "negative")
def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """loss = max(0, d(a, p) + margin - d(a, n)) for any distance ``d`` (default :func:`pairwise_distance`).

    ``swap``: d(a, n) is replaced by min(d(a, n), d(p, n)). margin must be > 0.
    """
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    _triplet_checks("triplet_margin_with_distance_loss", margin, anchor, positive, negative)
    d = distance_function if distance_function is not None else pairwise_distance
    return _triplet(d(anchor, positive), d(anchor, negative), d(positive, negative) if swap else None, margin, reduction)


# --- soft margin ---


@tensor_args("input")
def soft_margin_loss(input: Tensor, target: Any, size_average: bool | None = None, reduce: bool | None = None,  # noqa: A002
                     reduction: str = "mean") -> Tensor:
    """loss = log(1 + exp(-y x)) for targets y in {1, -1}; the target must broadcast to the input's shape.

    Computed without overflow (a huge -y x gives -y x, not inf) and in the input's dtype, as PyTorch's kernel.
    """
    red = _reduction(reduction, size_average, reduce)
    _float_input(input, "soft_margin_loss")
    y = on_backend(target, input, input.dtype)
    if not _broadcasts(y.shape, input.shape):
        raise ShapeError(f"soft_margin_loss: target of shape {y.shape} must broadcast to the input's shape {input.shape}")
    return _reduce(softplus_exact(-input * y), red)


# --- Modules ---


class MarginRankingLoss(_Loss):
    """max(0, -y (x1 - x2) + margin); see :func:`margin_ranking_loss`."""

    _defaults = {"margin": 0.0, "reduction": "mean"}

    def __init__(self, margin: float = 0.0, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Any) -> Tensor:
        return margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """x where y = 1, max(0, margin - x) where y = -1; see :func:`hinge_embedding_loss`."""

    _defaults = {"margin": 1.0, "reduction": "mean"}

    def __init__(self, margin: float = 1.0, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002 - torch's name
        return hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """1 - cos(x1, x2) where y = 1, max(0, cos - margin) where y = -1; see :func:`cosine_embedding_loss`."""

    _defaults = {"margin": 0.0, "reduction": "mean"}

    def __init__(self, margin: float = 0.0, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Any) -> Tensor:
        return cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """max(0, d(a, p) + margin - d(a, n)) with the p-norm distance; see :func:`triplet_margin_loss`."""

    _defaults = {"margin": 1.0, "p": 2.0, "eps": 1e-6, "swap": False, "reduction": "mean"}

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                   swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """max(0, d(a, p) + margin - d(a, n)) for a distance function (default a :class:`PairwiseDistance` submodule);
    see :func:`triplet_margin_with_distance_loss`."""

    _defaults = {"margin": 1.0, "swap": False, "reduction": "mean"}

    def __init__(self, *, distance_function: Callable[[Tensor, Tensor], Tensor] | None = None, margin: float = 1.0,
                 swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead")
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                 margin=self.margin, swap=self.swap, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """log(1 + exp(-y x)); see :func:`soft_margin_loss`."""

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return soft_margin_loss(input, target, reduction=self.reduction)
