"""Likelihood losses with ``torch.nn.functional``'s names, signatures and defaults, and their Modules:
``poisson_nll_loss gaussian_nll_loss ctc_loss`` and ``PoissonNLLLoss GaussianNLLLoss CTCLoss``.

All three are compositions of differentiable Tensor ops, so they run on every backend and autodiff gives the
gradients. CTC runs the forward (alpha) recursion of Graves et al. (2006) in log space, one batched step per time
step, through a logsumexp that stays finite where every term is -inf (impossible states); its gradient is the true
derivative of the loss with respect to ``log_probs`` (PyTorch's kernel returns that plus exp(log_probs), which only
cancels after a log_softmax; the gradients with respect to the logits agree).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import IndexOutOfRangeError, ShapeError
from ..tensor import Tensor
from ..tensor_join import cat, stack
from .common import tensor_args
from .loss import _Loss
from .losses import _float_input, _reduce, _reduction
from .losses_margin import broadcast_shape, int_array, operand

__all__ = ["poisson_nll_loss", "gaussian_nll_loss", "ctc_loss", "PoissonNLLLoss", "GaussianNLLLoss", "CTCLoss"]

NEG_INF = -math.inf


@tensor_args("input")
def poisson_nll_loss(input: Tensor, target: Any, log_input: bool = True, full: bool = False,  # noqa: A002
                     size_average: bool | None = None, eps: float = 1e-8, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of target ~ Poisson(rate), dropping the constant log(target!):

    log_input: loss = exp(x) - y x (x = log rate); else loss = x - y log(x + eps) (x = rate).
    full: adds the Stirling term y log y - y + 0.5 log(2 pi y) where y > 1. Input and target broadcast.
    """
    red = _reduction(reduction, size_average, reduce)
    _float_input(input, "poisson_nll_loss")
    y = operand(target, input)
    broadcast_shape("poisson_nll_loss", input=input.shape, target=y.shape)
    loss = input.exp() - y * input if log_input else input - y * (input + eps).log()
    if full:
        small = y <= 1  # masked: the term is 0 there (and y = 1 stands in, so 0 log 0 makes no NaN gradient)
        safe = y.masked_fill(small, 1.0)
        stirling = safe * safe.log() - safe + 0.5 * (safe * (2 * math.pi)).log()
        loss = loss + stirling.masked_fill(small, 0.0)
    return _reduce(loss, red)


@tensor_args("input")
def gaussian_nll_loss(input: Tensor, target: Any, var: Any, full: bool = False, eps: float = 1e-6,  # noqa: A002
                      reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of target ~ N(input, var): loss = 0.5 (log max(var, eps) + (input - target)^2 / max(var, eps)),
    plus 0.5 log(2 pi) when ``full``.

    var (a float, or a tensor of non-negative entries) has the input's shape, that shape without the last dim, or the
    input's number of dims with one dim of size 1 (PyTorch's homoscedastic cases). The clamp at eps passes the
    gradient through unchanged, as PyTorch's no-grad clamp.
    """
    _float_input(input, "gaussian_nll_loss")
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if var < 0:
            raise ValueError(f"gaussian_nll_loss: var must be non-negative, got {var}")
        v = input.new_full(input.shape, float(var))
    else:
        v = operand(var, input)
        if v.numel() and bool((v < 0).any().item()):
            raise ValueError(f"gaussian_nll_loss: var has negative entries (min {v.detach().amin().item()})")
    if v.shape != input.shape:
        if input.shape[:-1] == v.shape:
            v = v.unsqueeze(-1)
        elif not (v.dims == input.dims and sum(b for a, b in zip(input.shape, v.shape) if a != b) == 1):
            raise ShapeError(f"gaussian_nll_loss: var of shape {v.shape} is of incorrect size for input of shape "
                             f"{input.shape}: it must be the input's shape, that shape without the last dim, or the "
                             f"input's shape with one dim of size 1")
    red = _reduction(reduction)
    y = operand(target, input)
    broadcast_shape("gaussian_nll_loss", input=input.shape, target=y.shape, var=v.shape)
    flat = v.detach()
    v = v + (flat.clamp(min=eps) - flat)  # value max(var, eps), gradient 1
    d = input - y
    loss = 0.5 * (v.log() + d * d / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, red)


# --- CTC ---


def logsumexp_safe(x: Tensor, dim: int) -> Tensor:
    """log(sum(exp(x))) over ``dim``, -inf (with a zero, never NaN, gradient) where every entry is -inf.

    The max is held constant (its gradient cancels) and replaced by 0 where it is not finite; an empty sum takes
    log(1) and is then masked to -inf, so no log(0) or inf - inf reaches the graph.
    """
    top = x.detach().amax(dim, keepdim=True)
    top = top.masked_fill(~top.isfinite(), 0.0)
    total = (x - top).exp().sum(dim, keepdim=True)
    empty = total == 0
    out = total.masked_fill(empty, 1.0).log() + top
    return out.masked_fill(empty, NEG_INF).squeeze(dim)


def _lengths(value: Any, name: str) -> np.ndarray:
    if isinstance(value, int) and not isinstance(value, bool):
        return np.array([value], dtype=np.int64)
    if isinstance(value, (list, tuple)) and not value:
        return np.zeros(0, dtype=np.int64)
    return int_array(value, "ctc_loss", name).reshape(-1)


def _ctc_targets(targets: Any, t_len: np.ndarray, n: int, c: int) -> np.ndarray:
    """The targets as a host (N, max target length) array padded with 0, after PyTorch's shape checks."""
    array = int_array(targets, "ctc_loss", "targets")
    longest = int(t_len.max()) if n else 0
    if array.ndim == 1:  # concatenated
        if array.size != t_len.sum():
            raise ShapeError(f"ctc_loss: concatenated targets must hold sum(target_lengths) = {t_len.sum()} entries, "
                             f"got {array.size}")
        starts = np.concatenate([[0], np.cumsum(t_len)[:-1]]).astype(np.int64)
    elif array.ndim == 2:  # padded (N, S)
        if array.shape[0] != n or array.shape[1] < longest:
            raise ShapeError(f"ctc_loss: padded targets must have shape (N, S) = ({n}, >= {longest}) for "
                             f"target_lengths {t_len.tolist()}, got {array.shape}")
        starts = np.arange(n, dtype=np.int64) * array.shape[1]
    else:
        raise ShapeError(f"ctc_loss: targets must be padded (N, S) or concatenated 1-D, got shape {array.shape}")
    flat = array.reshape(-1)
    position = np.arange(longest, dtype=np.int64)
    inside = position < t_len[:, None]
    padded = np.where(inside, flat[np.where(inside, starts[:, None] + position, 0)] if flat.size else 0, 0)
    bad = np.argwhere(inside & ((padded < 0) | (padded >= c)))
    if bad.size:
        raise IndexOutOfRangeError(f"ctc_loss: target classes out of range [0, {c}): "
                                   + ", ".join(f"sample {i} label {j} = {padded[i, j]}" for i, j in bad[:10]))
    return padded.astype(np.int64)


@tensor_args("log_probs")
def ctc_loss(log_probs: Tensor, targets: Any, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist Temporal Classification: loss_n = -log sum over the alignments a of targets[n] (labels with
    blanks inserted and repeats merged) of prod_t exp(log_probs[t, n, a_t]), over the first input_lengths[n] steps.

    log_probs (T, N, C) or unbatched (T, C); targets padded (N, S) or concatenated 1-D (sum(target_lengths)) of
    class indices (labels equal to ``blank`` are allowed, as in PyTorch); input_lengths and target_lengths (N,) ints,
    tensors, lists or tuples (an int or 0-d tensor for unbatched input).
    "mean" divides each loss by its target length (at least 1), then averages over the batch, as PyTorch.
    ``zero_infinity`` replaces infinite losses (no possible alignment) and their gradients by 0.
    """
    red = _reduction(reduction)
    _float_input(log_probs, "ctc_loss")
    if log_probs.dims not in (2, 3):
        raise ShapeError(f"ctc_loss: log_probs must be (T, N, C) or unbatched (T, C), got shape {log_probs.shape}")
    if log_probs.numel() == 0:
        raise ShapeError(f"ctc_loss: log_probs must not be empty, got shape {log_probs.shape}")
    batched = log_probs.dims == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    steps, n, c = lp.shape
    if not 0 <= blank < c:
        raise ValueError(f"ctc_loss: blank must be a class in [0, {c}), got {blank}")
    in_len, t_len = _lengths(input_lengths, "input_lengths"), _lengths(target_lengths, "target_lengths")
    for name, lengths in (("input_lengths", in_len), ("target_lengths", t_len)):
        if lengths.size != n:
            raise ShapeError(f"ctc_loss: {name} must hold one length per sample ({n}), got {lengths.size}")
    if (t_len < 0).any() or (in_len < 0).any() or (in_len > steps).any():
        raise ValueError(f"ctc_loss: input_lengths must lie in [0, {steps}] and target_lengths be >= 0, got "
                         f"input_lengths {in_len.tolist()} and target_lengths {t_len.tolist()}")
    labels = _ctc_targets(targets, t_len, n, c)
    states = 2 * labels.shape[1] + 1
    extended = np.full((n, states), blank, dtype=np.int64)  # blank, l1, blank, l2, ..., blank
    extended[:, 1::2] = np.where(np.arange(labels.shape[1]) < t_len[:, None], labels, blank)
    no_skip = np.ones((n, states), dtype=bool)  # s - 2 -> s only between different symbols (PyTorch's rule)
    no_skip[:, 2:] = extended[:, 2:] == extended[:, :-2]

    def on(array: np.ndarray) -> Tensor:
        return Tensor(lp.backend.from_numpy(np.ascontiguousarray(array)), lp.backend)

    picked = lp.gather(2, on(np.broadcast_to(extended, (steps, n, states))))  # (T, N, S') log-probs of each state
    alpha = on(np.where(np.arange(states) == 0, 0.0, NEG_INF).astype(lp.dtype.name)[None].repeat(n, 0))
    walls = on(np.full((n, 2), NEG_INF, dtype=lp.dtype.name))
    skip_blocked, running = on(no_skip), on(np.arange(steps)[:, None, None] < in_len[None, :, None])
    for t in range(steps):  # alpha_t(s) = logsumexp(alpha_{t-1}(s), alpha_{t-1}(s - 1), alpha_{t-1}(s - 2)) + lp_t(s)
        stay, advance = alpha, cat([walls[:, :1], alpha[:, :-1]], 1)
        skip = cat([walls, alpha[:, :-2]], 1)[:, :states].masked_fill(skip_blocked, NEG_INF)
        step = logsumexp_safe(stack([stay, advance, skip], 2), 2) + picked[t]
        alpha = step.where(running[t], alpha)  # frozen after the sample's last step
    final = alpha.gather(1, on(2 * t_len[:, None]))  # ending on the last blank or the last label
    label = alpha.gather(1, on(np.maximum(2 * t_len[:, None] - 1, 0))).masked_fill(on(t_len[:, None] == 0), NEG_INF)
    ends = cat([final, label], 1)
    loss = -logsumexp_safe(ends, 1)
    if zero_infinity:
        loss = loss.masked_fill(loss == math.inf, 0.0)
    if red == "mean":
        loss = (loss / on(np.maximum(t_len, 1).astype(lp.dtype.name))).mean()
    elif red == "sum":
        loss = loss.sum()
    return loss if batched or red != "none" else loss.reshape(())


# --- Modules ---


class PoissonNLLLoss(_Loss):
    """exp(x) - y x (log_input) or x - y log(x + eps); see :func:`poisson_nll_loss`."""

    _defaults = {"log_input": True, "full": False, "eps": 1e-8, "reduction": "mean"}

    def __init__(self, log_input: bool = True, full: bool = False, size_average: bool | None = None, eps: float = 1e-8,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Any) -> Tensor:
        return poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """0.5 (log var + (input - target)^2 / var); see :func:`gaussian_nll_loss`."""

    _defaults = {"full": False, "eps": 1e-6, "reduction": "mean"}

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Any, var: Any) -> Tensor:  # noqa: A002 - torch's name
        return gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class CTCLoss(_Loss):
    """Connectionist Temporal Classification loss; see :func:`ctc_loss`."""

    _defaults = {"blank": 0, "reduction": "mean", "zero_infinity": False}

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets: Any, input_lengths: Any, target_lengths: Any) -> Tensor:
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=self.blank, reduction=self.reduction,
                        zero_infinity=self.zero_infinity)
