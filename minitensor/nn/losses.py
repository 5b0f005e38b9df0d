"""Loss functions with ``torch.nn.functional``'s names, signatures, defaults and semantics.

``reduction`` is ``"mean"`` (default), ``"sum"`` or ``"none"`` (``kl_div`` also takes ``"batchmean"``); the
deprecated ``size_average``/``reduce`` flags map onto it as in PyTorch. Targets may be Tensors, NumPy arrays or
lists (moved to the input's backend). Class-index targets are validated on the host (one copy of the small int
target) so that out-of-range entries can be named; everything else is built from differentiable Tensor ops.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from ..autodiff import Context
from ..autograd import Function
from ..creation import arange
from ..errors import DTypeError, IndexOutOfRangeError, ShapeError
from ..tensor import Tensor
from ..tensor_softmax import fused_softmax
from .activation import log_softmax
from .common import tensor_args
from .cross_entropy import _class_target, fusable_weight, nll, on_backend, unbatched

__all__ = [
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "one_hot",
]

REDUCTIONS = ("mean", "sum", "none")


def _reduction(reduction: str, size_average: bool | None = None, reduce: bool | None = None,
               allowed: tuple[str, ...] = REDUCTIONS) -> str:
    """The reduction to apply: PyTorch's legacy mapping when ``size_average``/``reduce`` are given, else checked."""
    if size_average is not None or reduce is not None:
        average = True if size_average is None else size_average
        keep = True if reduce is None else reduce
        return ("mean" if average else "sum") if keep else "none"
    if reduction not in allowed:
        raise ValueError(f"reduction must be one of {allowed}, got {reduction!r}")
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _float_input(input: Tensor, name: str) -> None:  # noqa: A002 - torch's name
    if not isinstance(input, Tensor):
        raise DTypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
    if input.dtype.kind != "f":
        raise DTypeError(f"{name}: input must be a floating-point tensor, got {input.dtype}")


def _as_target(target: Any, like: Tensor, name: str) -> Tensor:
    """``target`` as a float tensor of ``like``'s backend and dtype with exactly ``like``'s shape."""
    _float_input(like, name)
    t = on_backend(target, like, like.dtype)
    if t.shape != like.shape:
        raise ShapeError(f"{name}: input of shape {like.shape} and target of shape {t.shape} differ")
    return t


def _elementwise_weight(weight: Any, like: Tensor, name: str, exact: bool = False) -> Tensor:
    """A float weight on ``like``'s backend that broadcasts to (or, with ``exact``, has) ``like``'s shape."""
    w = on_backend(weight, like, like.dtype)
    ok = w.shape == like.shape if exact else _broadcasts(w.shape, like.shape)
    if not ok:
        need = "have" if exact else "broadcast to"
        raise ShapeError(f"{name}: weight of shape {w.shape} must {need} the input's shape {like.shape}")
    return w


def _broadcasts(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    if len(shape) > len(to):
        return False
    return all(s in (1, t) for s, t in zip(reversed(shape), reversed(to)))


# --- classification ---


def _class_dim(input: Tensor, name: str) -> int:  # noqa: A002
    _float_input(input, name)
    if input.dims == 0:
        raise ShapeError(f"{name}: input must be (C,), (N, C) or (N, C, d1, ...), got a 0-d tensor")
    return 0 if input.dims == 1 else 1


def _class_weight(weight: Any, input: Tensor, c: int, name: str) -> Tensor | None:  # noqa: A002
    if weight is None:
        return None
    w = on_backend(weight, input, input.dtype)
    if w.shape != (c,):
        raise ShapeError(f"{name}: weight must have shape ({c},), one per class, got {w.shape}")
    return w


def _picked(logp: Tensor, t: Tensor, weight: Tensor | None, ignore_index: int) -> tuple[Tensor, Tensor, Tensor]:
    """Per-target loss -w[t] logp[t] (0 where ignored), the mean's denominator, and the not-ignored mask.

    ``logp`` is batched (N, C, ...). The target entry is picked with ``gather`` and ignored entries are masked
    with ``where`` (never multiplied by 0), so a -inf logit elsewhere leaves loss and gradient finite.
    """
    valid = t != ignore_index
    safe = t.masked_fill(~valid, 0)
    loss = (-logp.gather(1, safe.unsqueeze(1)).squeeze(1)).masked_fill(~valid, 0.0)
    if weight is None:
        return loss, valid.cast(logp.dtype).sum(), valid
    w = weight.gather(0, safe.reshape(-1)).reshape(*safe.shape).masked_fill(~valid, 0.0)
    return loss * w, w.sum(), valid


def _batched(input: Tensor, t: Tensor) -> tuple[Tensor, Tensor]:  # noqa: A002
    return (input.unsqueeze(0), t.reshape(1)) if input.dims == 1 else (input, t)


def _finish(loss: Tensor, denom: Tensor, reduction: str, unbatched: bool) -> Tensor:
    if reduction == "mean":
        return loss.sum() / denom
    if reduction == "sum":
        return loss.sum()
    return loss.reshape(()) if unbatched else loss


@tensor_args("input")
def nll_loss(input: Tensor, target: Any, weight: Any = None, size_average: bool | None = None,  # noqa: A002
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood: loss_i = -weight[t_i] * input[i, t_i] for log-probabilities ``input``.

    input (C,), (N, C) or (N, C, d1, ...); target (), (N,) or (N, d1, ...) of class indices. Entries equal to
    ``ignore_index`` contribute 0; "mean" divides by the sum of weight[t_i] over the other entries.
    """
    red = _reduction(reduction, size_average, reduce)
    c = input.shape[_class_dim(input, "nll_loss")]
    w = _class_weight(weight, input, c, "nll_loss")
    t, plain = _class_target(target, input, ignore_index, "nll_loss")
    logp, t = _batched(input, t)
    if fusable_weight(w):
        return unbatched(nll(logp, t, w, ignore_index, red, plain), red, input.dims == 1)
    loss, denom, _ = _picked(logp, t, w, ignore_index)
    return _finish(loss, denom, red, input.dims == 1)


def _is_probability_target(target: Any, input: Tensor, name: str) -> bool:  # noqa: A002
    shape = target.shape if isinstance(target, Tensor) else np.shape(target)
    if tuple(shape) != input.shape:
        return False
    kind = target.dtype.kind if isinstance(target, Tensor) else np.asarray(target).dtype.kind
    if kind != "f":
        raise DTypeError(
            f"{name}: a target of the input's shape {input.shape} holds class probabilities and must be floating-point, "
            f"got {target.dtype if isinstance(target, Tensor) else np.asarray(target).dtype}"
        )
    return True


@tensor_args("input")
def cross_entropy(input: Tensor, target: Any, weight: Any = None, size_average: bool | None = None,  # noqa: A002
                  ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Softmax cross-entropy of raw logits ``input`` (class dim 1, or 0 for unbatched (C,) input).

    Class indices: loss_i = -w[t_i] log_softmax(x)_i[t_i], as :func:`nll_loss`; with label smoothing e it is
    (1 - e) * nll + (e / C) * sum_c -w[c] log_softmax(x)_i[c] (ignored entries 0, same "mean" denominator).
    Probabilities (target of the input's shape): loss_i = -sum_c w[c] p_ic log_softmax(x)_ic with
    p = (1 - e) p + e / C; "mean" divides by the number of samples (N * d1 * ...).
    """
    red = _reduction(reduction, size_average, reduce)
    cdim = _class_dim(input, "cross_entropy")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0.0, 1.0], got {label_smoothing}")
    c = input.shape[cdim]
    w = _class_weight(weight, input, c, "cross_entropy")
    probabilities = _is_probability_target(target, input, "cross_entropy")
    if not probabilities and label_smoothing == 0 and fusable_weight(w):
        t, plain = _class_target(target, input, ignore_index, "cross_entropy")
        lp, t = _batched(fused_softmax(input, cdim, log=True), t)
        return unbatched(nll(lp, t, w, ignore_index, red, plain), red, input.dims == 1)
    w_b = None if w is None else w.reshape(c, *([1] * (input.dims - cdim - 1)))
    logp = log_softmax(input, cdim)
    if probabilities:
        p = _as_target(target, input, "cross_entropy")
        if label_smoothing > 0:
            p = p * (1.0 - label_smoothing) + label_smoothing / c
        terms = logp * p if w_b is None else logp * p * w_b
        if red == "none":
            return -terms.sum(cdim)
        total = -terms.sum()
        return total / (input.numel() // c) if red == "mean" else total
    lp, t = _batched(logp, _class_target(target, input, ignore_index, "cross_entropy")[0])
    loss, denom, valid = _picked(lp, t, w, ignore_index)
    if label_smoothing > 0:
        every = lp if w_b is None else lp * w_b
        smooth = (-every.sum(1)).masked_fill(~valid, 0.0)
        loss = loss * (1.0 - label_smoothing) + smooth * (label_smoothing / c)
    return _finish(loss, denom, red, input.dims == 1)


@tensor_args("tensor")
def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 tensor of shape tensor.shape + (num_classes,) with 1 at each index (``torch.nn.functional.one_hot``).

    ``num_classes=-1`` uses max + 1. The range check reads the min and max back to the host (one sync).
    """
    if not isinstance(tensor, Tensor) or tensor.dtype.kind not in "iu":
        got = f"a {tensor.dtype} tensor" if isinstance(tensor, Tensor) else type(tensor).__name__
        raise DTypeError(f"one_hot needs an integer (int64) tensor of class indices, got {got}")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise ValueError("one_hot: cannot infer num_classes from an empty tensor; pass num_classes")
        lo, hi = 0, -1
    else:
        lo, hi = int(tensor.amin().item()), int(tensor.amax().item())
    if num_classes == -1:
        num_classes = hi + 1
    if lo < 0 or hi >= num_classes:
        raise IndexOutOfRangeError(f"one_hot: class values range over [{lo}, {hi}], out of [0, {num_classes})")
    classes = arange(num_classes, dtype=dtypes.int64, backend=tensor.backend)
    return (tensor.cast(dtypes.int64).unsqueeze(-1) == classes).cast(dtypes.int64)


# --- binary ---


class _BinaryCrossEntropy(Function):
    """-(y max(log p, -100) + (1 - y) max(log(1 - p), -100)) with PyTorch's gradients:
    d/dp = (p - y) / max(p (1 - p), eps) (finite at p = 0 and 1), d/dy = log(1 - p) - log(p); eps is PyTorch's
    float32 1e-12."""

    EPSILON = float(np.float32(1e-12))

    @staticmethod
    def forward(ctx: Context, p: Tensor, y: Tensor) -> Tensor:
        ctx.save_for_backward(p, y)
        return -(y * p.log().clamp(min=-100.0) + (1.0 - y) * (-p).log1p().clamp(min=-100.0))

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
        p, y = ctx.saved_tensors
        dp = grad * (p - y) / (p * (1.0 - p)).clamp(min=_BinaryCrossEntropy.EPSILON) if ctx.needs_input_grad[0] else None
        dy = grad * ((-p).log1p() - p.log()) if ctx.needs_input_grad[1] else None
        return dp, dy


@tensor_args("input")
def binary_cross_entropy(input: Tensor, target: Any, weight: Any = None, size_average: bool | None = None,  # noqa: A002
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """-w (y log p + (1 - y) log(1 - p)) for probabilities ``input`` = p in [0, 1]; each log is clamped at -100 and
    d/dp = w (p - y) / max(p (1 - p), 1e-12), as in PyTorch, so p = 0 or 1 gives finite gradients."""
    red = _reduction(reduction, size_average, reduce)
    y = _as_target(target, input, "binary_cross_entropy")
    if input.numel():  # PyTorch's range check (one host sync)
        lo, hi = input.detach().amin().item(), input.detach().amax().item()
        if not 0.0 <= lo <= hi <= 1.0:
            raise ValueError(f"binary_cross_entropy: input must hold probabilities in [0, 1], got values in [{lo}, {hi}]")
    loss = _BinaryCrossEntropy.apply(input, y)
    if weight is not None:
        loss = loss * _elementwise_weight(weight, input, "binary_cross_entropy")
    return _reduce(loss, red)


@tensor_args("input")
def binary_cross_entropy_with_logits(input: Tensor, target: Any, weight: Any = None,  # noqa: A002
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: Any = None) -> Tensor:
    """w ((1 - y) x + (1 + (pos_weight - 1) y) log(1 + exp(-x))) for logits x: BCE of sigmoid(x), stable for any |x|.

    log(1 + exp(-x)) is m + log(exp(-m) + exp(-x - m)) with m = max(-x, 0) held constant, so both exponents are
    <= 0 and the gradient is (1 - y) - lw sigmoid(-x) everywhere (including x = 0).
    """
    red = _reduction(reduction, size_average, reduce)
    y = _as_target(target, input, "binary_cross_entropy_with_logits")
    m = (-input.detach()).clamp(min=0.0)
    softplus_neg = m + ((-m).exp() + (-input - m).exp()).log()
    if pos_weight is not None:
        pw = on_backend(pos_weight, input, input.dtype)
        if not _broadcasts(pw.shape, input.shape):
            raise ShapeError(f"binary_cross_entropy_with_logits: pos_weight of shape {pw.shape} does not broadcast to {input.shape}")
        softplus_neg = softplus_neg * ((pw - 1.0) * y + 1.0)
    loss = (1.0 - y) * input + softplus_neg
    if weight is not None:
        loss = loss * _elementwise_weight(weight, input, "binary_cross_entropy_with_logits")
    return _reduce(loss, red)


# --- regression and divergence ---


def _weighted(loss: Tensor, weight: Any, input: Tensor, red: str, name: str, mean_by_weight: bool = True) -> Tensor:  # noqa: A002
    if weight is None:
        return _reduce(loss, red)
    w = _elementwise_weight(weight, input, name, exact=True)
    loss = loss * w
    if red == "mean" and mean_by_weight:
        return loss.sum() / w.sum()
    return _reduce(loss, red)


@tensor_args("input")
def mse_loss(input: Tensor, target: Any, size_average: bool | None = None, reduce: bool | None = None,  # noqa: A002
             reduction: str = "mean", weight: Any = None) -> Tensor:
    """(input - target)^2, times ``weight`` (input's shape) if given; weighted "mean" divides by sum(weight)."""
    red = _reduction(reduction, size_average, reduce)
    d = input - _as_target(target, input, "mse_loss")
    return _weighted(d * d, weight, input, red, "mse_loss")


@tensor_args("input")
def l1_loss(input: Tensor, target: Any, size_average: bool | None = None, reduce: bool | None = None,  # noqa: A002
            reduction: str = "mean", weight: Any = None) -> Tensor:
    """|input - target|, times ``weight`` (input's shape) if given; weighted "mean" divides by sum(weight)."""
    red = _reduction(reduction, size_average, reduce)
    return _weighted((input - _as_target(target, input, "l1_loss")).abs(), weight, input, red, "l1_loss")


@tensor_args("input")
def smooth_l1_loss(input: Tensor, target: Any, size_average: bool | None = None, reduce: bool | None = None,  # noqa: A002
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta, with d = input - target (beta = 0 is the L1 loss)."""
    red = _reduction(reduction, size_average, reduce)
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    d = input - _as_target(target, input, "smooth_l1_loss")
    a = d.abs()
    if beta == 0:
        return _reduce(a, red)
    return _reduce((d * d * (0.5 / beta)).where(a < beta, a - 0.5 * beta), red)


@tensor_args("input")
def huber_loss(input: Tensor, target: Any, reduction: str = "mean", delta: float = 1.0,  # noqa: A002
               weight: Any = None) -> Tensor:
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta), with d = input - target; times ``weight`` if given."""
    red = _reduction(reduction)
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    d = input - _as_target(target, input, "huber_loss")
    a = d.abs()
    loss = (d * d * 0.5).where(a < delta, (a - 0.5 * delta) * delta)
    return _weighted(loss, weight, input, red, "huber_loss", mean_by_weight=False)


@tensor_args("input")
def kl_div(input: Tensor, target: Any, size_average: bool | None = None, reduce: bool | None = None,  # noqa: A002
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Pointwise KL divergence target * (log target - input) for log-probabilities ``input``.

    ``log_target``: target holds log-probabilities (exp(t) (t - input)); else 0 log 0 counts as 0. "mean" averages
    over every element (as PyTorch does); "batchmean" divides the sum by the batch size input.shape[0].
    """
    red = _reduction(reduction, size_average, reduce, allowed=(*REDUCTIONS, "batchmean"))
    t = _as_target(target, input, "kl_div")
    if log_target:
        loss = t.exp() * (t - input)
    else:
        zero = t == 0
        loss = (t * t.masked_fill(zero, 1.0).log()).masked_fill(zero, 0.0) - t * input
    if red == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.dims else total
    return _reduce(loss, red)
