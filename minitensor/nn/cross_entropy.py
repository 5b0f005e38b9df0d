"""The class-index negative log-likelihood as one autodiff node (``nll_loss`` and ``cross_entropy``'s common case).

For log-probabilities ``logp`` of shape (N, C, d1, ...) and validated class indices ``t`` of shape (N, d1, ...):

    w_i = weight[t_i] (1 without weight), 0 where t_i == ignore_index
    loss_i = -w_i * logp[i, t_i]                   (0 where ignored, even when logp there is -inf)
    "none": loss_i,  "sum": sum_i loss_i,  "mean": sum_i loss_i / sum_i w_i

Composed from Tensor ops this is ~15 autodiff nodes (compare, mask, gather, negate, cast, two sums, divide); here it
is one :class:`NllLoss` whose forward runs ~10 backend calls and whose backward is d loss / d logp[i, t_i] = -w_i * g_i
(g_i the incoming gradient, divided by sum_i w_i for "mean") scattered into zeros. ``cross_entropy`` feeds it the
fused log-softmax (:func:`~minitensor.tensor_softmax.fused_softmax`), whose backward turns that into
coef_i * (softmax(x)_i - onehot(t_i)) in one more kernel. Under ``create_graph`` the backward is built from
differentiable ops (a scatter of g * w), so second derivatives pass through.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from ..autodiff import Context, is_grad_enabled
from ..compiler.capture import active
from ..errors import DTypeError, IndexOutOfRangeError, ShapeError
from ..tensor import Tensor, _result
from ..tensor_data import TensorData
from ..tensor_functions import ScatterAddInto, TensorFunction

__all__ = ["NllLoss", "nll", "fusable_weight", "on_backend", "unbatched"]


class NllLoss(TensorFunction):
    """``nll_loss(logp, t, weight, ignore_index, reduction)`` with class dim 1 of a batched ``logp``; ``t`` int64,
    every entry in [0, C) or ``ignore_index`` (the caller validates); ``weight`` (C,) of logp's dtype or None."""

    higher_order = True
    backward_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx: Context, logp: Tensor, t: Tensor, weight: Tensor | None, ignore_index: int,  # type: ignore[override]
                reduction: str, plain: bool = False) -> Tensor:
        backend, lp, td = logp.backend, logp._data, t._data
        dtype, shape = lp.dtype, td.shape
        if plain:  # no entry is ignored: the masks below would change nothing, so they are left out (same bits)
            return _plain_forward(ctx, logp, t, weight, reduction)
        valid = backend.empty(shape, dtypes.bool_)
        backend.zip("ne", td, t._lift(ignore_index)._data, valid)
        safe = backend.empty(shape, dtypes.int64)  # ignored entries pick class 0 (then masked)
        backend.where(valid, td, t._lift(0)._data, safe)
        column = _as(safe, shape[:1] + (1,) + shape[1:])
        picked = backend.empty(column.shape, dtype)
        backend.gather(lp, 1, column, picked)
        picked = _as(picked, shape)
        zero = logp._lift(0.0)._data
        w = backend.empty(shape, dtype)  # w_i, then (in place) -w_i
        if weight is None:
            backend.map("id", valid, w)
        else:
            backend.gather(weight._data, 0, _as(safe, (safe.size,)), _as(w, (safe.size,)))
            backend.where(valid, w, zero, w)
        total = _flat_sum(backend, w) if reduction == "mean" else None
        backend.map("neg", w, w)
        backend.where(valid, picked, zero, picked)  # never multiply an ignored -inf by 0
        loss = _reduced(backend, picked, w, total, reduction)
        ctx.save_for_backward(lp.shape, _result(column, backend), _result(w, backend),
                              None if total is None else _result(total, backend))
        return _result(loss, backend)

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> tuple[Tensor, None, None, None, None]:  # type: ignore[override]
        shape, column, neg_w, total = ctx.saved_values[:4]  # (plain: the targets follow, for their version check)
        if is_grad_enabled():  # create_graph: differentiable in grad
            scale = grad if total is None else grad / total
            return ScatterAddInto.apply((neg_w * scale).unsqueeze(1), shape, 1, column), None, None, None, None
        backend, g = grad.backend, grad._data
        if total is not None:
            scaled = backend.empty((), g.dtype)
            backend.zip("div", g, total._data, scaled)
            g = scaled
        picked = backend.empty(neg_w.shape, neg_w.dtype)
        backend.zip("mul", neg_w._data, g, picked)
        out = backend.zeros(shape, neg_w.dtype)
        backend.scatter_add(_as(picked, column.shape), 1, column._data, out)
        return _result(out, backend), None, None, None, None


def _plain_forward(ctx: Context, logp: Tensor, t: Tensor, weight: Tensor | None, reduction: str) -> Tensor:
    """NllLoss's forward when every target is a class: no compare, masks or safe copy of the targets; the weights
    are a broadcast -1 and the "mean" denominator the count N (exact, as the sum of N ones) without weight."""
    backend, lp, td = logp.backend, logp._data, t._data
    dtype, shape, n = lp.dtype, td.shape, td.size
    column = td.unsqueeze(1)
    picked = backend.empty(column.shape, dtype)
    backend.gather(lp, 1, column, picked)
    picked = _as(picked, shape)
    total = None
    if weight is None:
        minus_one = logp._lift(-1.0)._data
        w = TensorData.trusted(minus_one.storage, shape, (0,) * len(shape), n)
        if reduction == "mean":
            total = logp._lift(float(n))._data
    else:
        w = backend.empty(shape, dtype)
        backend.gather(weight._data, 0, td.view(n) if td.is_contiguous() else _as(_copy(backend, td), (n,)), _as(w, (n,)))
        total = _flat_sum(backend, w) if reduction == "mean" else None
        backend.map("neg", w, w)
    loss = _reduced(backend, picked, w, total, reduction)
    ctx.save_for_backward(lp.shape, t._view_of(column), t._view_of(w), None if total is None else t._view_of(total), t)
    return _result(loss, backend)


def _copy(backend: Any, data: TensorData) -> TensorData:
    out = backend.empty(data.shape, data.dtype)
    backend.map("id", data, out)
    return out


def _reduced(backend: Any, picked: TensorData, neg_w: TensorData, total: TensorData | None, reduction: str) -> TensorData:
    """picked * -w (in place), then summed, and divided by ``total`` for "mean"."""
    backend.zip("mul", picked, neg_w, picked)
    if reduction == "none":
        return picked
    loss = _flat_sum(backend, picked)
    if total is not None:
        backend.zip("div", loss, total, loss)
    return loss


def _as(data: TensorData, shape: tuple[int, ...]) -> TensorData:
    """A fresh contiguous buffer ``data`` read as ``shape`` (same number of elements; no checks: hot path)."""
    return TensorData.trusted(data.storage, shape, None, data.size)


def _flat_sum(backend: Any, data: TensorData) -> TensorData:
    """The sum of a contiguous TensorData's elements as a fresh 0-d TensorData (one reduce over a flat view)."""
    out = backend.empty((1,), data.dtype)
    backend.reduce("sum", _as(data, (data.size,)), 0, out)
    return _as(out, ())


def nll(logp: Tensor, t: Tensor, weight: Tensor | None, ignore_index: int, reduction: str, plain: bool = False) -> Tensor:
    """:class:`NllLoss` on batched ``logp`` (N, C, ...) and targets ``t`` (N, ...); see the module docstring.

    ``plain`` (no target equals ``ignore_index``, as the caller's host-side check found) takes the mask-free forward,
    except while :func:`minitensor.compile` records a step: its replays see other targets, so the masks stay."""
    return NllLoss.apply(logp, t, weight, ignore_index, reduction, plain and active() is None)  # type: ignore[no-any-return]


# --- argument handling shared with nn/losses.py ---


def on_backend(value: Any, like: Tensor, dtype: Any) -> Tensor:
    """``value`` (Tensor, array or list) as a tensor on ``like``'s backend with ``dtype``."""
    if isinstance(value, Tensor):
        if value.backend is not like.backend:
            value = value.to(like.backend)
        return value if value.dtype == dtype else value.cast(dtype)
    return Tensor(like.backend.from_numpy(np.asarray(value, dtype=dtype)), like.backend)


def _class_target(target: Any, input: Tensor, ignore_index: int, name: str) -> tuple[Tensor, bool]:  # noqa: A002
    """Integer class indices of shape input.shape without the class dim, each in [0, C) or ``ignore_index``, and
    whether none of them is ignored (every entry a class: the one-node loss can skip its masks in eager mode)."""
    cdim = 0 if input.dims == 1 else 1
    c, expected = input.shape[cdim], input.shape[:cdim] + input.shape[cdim + 1 :]
    if isinstance(target, Tensor):
        if target.dtype.kind not in "iu":
            raise DTypeError(
                f"{name}: class-index targets must be an integer (int64) tensor, got {target.dtype} of shape "
                f"{target.shape}; probability targets must have the input's shape {input.shape}"
            )
        array = target.to_numpy()
    else:
        array = np.asarray(target)
        if array.dtype.kind == "f":
            whole = np.isfinite(array) & (array == np.round(array))
            if not whole.all():
                raise DTypeError(f"{name}: class targets must be integers, got non-integral values {array[~whole][:10].tolist()}")
        elif array.dtype.kind not in "iu":
            raise DTypeError(f"{name}: class targets must be integers, got dtype {array.dtype}")
    if array.shape != expected:
        raise ShapeError(f"{name}: input of shape {input.shape} needs class targets of shape {expected}, got {array.shape}")
    array = array.astype(np.int64, copy=False)
    in_range = bool(array.size) and 0 <= array.min() and array.max() < c  # the common case: no search for bad entries
    plain = in_range and not (0 <= ignore_index < c and bool((array == ignore_index).any()))
    bad = None if in_range else np.argwhere((array != ignore_index) & ((array < 0) | (array >= c)))
    if bad is not None and bad.size:
        shown = ", ".join(f"target[{', '.join(map(str, i))}]={array[tuple(i)]}" for i in bad[:10])
        more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
        raise IndexOutOfRangeError(f"{name}: class targets out of range [0, {c}) (ignore_index={ignore_index}): {shown}{more}")
    if isinstance(target, Tensor):
        return on_backend(target, input, dtypes.int64), plain
    return Tensor(input.backend.from_numpy(array), input.backend), plain


def fusable_weight(weight: Tensor | None) -> bool:
    """Whether the one-node :func:`~.cross_entropy.nll` applies (a weight that requires grad takes the composed path,
    which differentiates it)."""
    return weight is None or not weight.requires_grad


def unbatched(loss: Tensor, reduction: str, unbatched: bool) -> Tensor:
    return loss.reshape(()) if unbatched and reduction == "none" else loss
