"""Reductions and contractions as Function classes: sum and max/min along a dim, softmax (one fused kernel each
way), and (batched) matmul."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .autodiff import Context, is_grad_enabled
from .functions_base import TensorFunction

if TYPE_CHECKING:
    from .tensor import Tensor


# --- reductions ---


class Sum(TensorFunction):
    """sum along ``dim`` (keepdim)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, dim: int) -> Tensor:
        ctx.save_for_backward(a.shape)
        return a._reduce("sum", dim)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        shape = ctx.saved_values[0]
        return d.expand(*shape) if is_grad_enabled() else d._view_of(d._data.expand(shape))


class Max(TensorFunction):
    """max along ``dim`` (keepdim); the gradient is shared evenly among tied maxima. Subclasses set ``op`` ("min")."""

    op = "max"

    @classmethod
    def forward(cls, ctx: Context, a: Tensor, dim: int) -> Tensor:  # type: ignore[override]
        out = a._reduce(cls.op, dim)
        ctx.save_for_backward(a, out, dim)
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        a, out, dim = ctx.saved_values
        mask = a._zip("eq", out)
        return d * mask / mask._reduce("sum", dim)


# --- matmul ---


class FusedSoftmax(TensorFunction):
    """softmax(scale * x) along ``dim`` (``log``: log_softmax; ``causal``: entries above the diagonal of the last two
    dims masked) in one backend kernel (``Backend.softmax``); backward in one more from the saved result y.

    Under ``create_graph`` the backward is written with differentiable ops on y, which carries this node's history,
    so second derivatives are exact: scale * y * (g - sum(g y)), or scale * (g - exp(y) sum(g)) for log."""

    @staticmethod
    def forward(ctx: Context, x: Tensor, dim: int, log: bool, scale: float, causal: bool) -> Tensor:  # type: ignore[override]
        out = x.backend.empty(x.shape, x.dtype)
        x.backend.softmax(x._data, dim, out, log, scale, causal)
        y = x._view_of(out)
        ctx.save_for_backward(y, dim, log, scale)
        return y

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> Tensor:  # type: ignore[override]
        y, dim, log, scale = ctx.saved_values
        if is_grad_enabled():
            gx = grad - y.exp() * grad.sum(dim, keepdim=True) if log else y * (grad - (grad * y).sum(dim, keepdim=True))
            return gx * scale if scale != 1.0 else gx
        out = y.backend.empty(y.shape, y.dtype)
        y.backend.softmax_backward(grad._data, y._data, dim, out, log, scale)
        return y._view_of(out)


class MatMul(TensorFunction):
    """Batched a @ b with broadcast batch dims; grads are d @ b^T and a^T @ d.

    ``order`` (optional, a permutation of the output's dims ending in its last one) lays the output out densely
    with dim ``order[0]`` outermost (e.g. (0, 2, 1, 3): a (B, H, L, E) product stored as (B, L, H, E), so its
    ``transpose(1, 2)`` is contiguous). Gradients of operands that are dense permutations (a head split's
    transposed views, Linear's ``weight.T``) come out in the operand's own dim order, so undoing the view that
    made the operand needs no copy."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor, order: tuple[int, ...] | None = None) -> Tensor:
        need_a, need_b = ctx.needs_input_grad[:2]
        ctx.save_for_backward(a if need_b else None, b if need_a else None, _order_of(a) if need_a else None,
                              _order_of(b) if need_b else None)
        if order is None:
            return a._matmul(b)
        return _product(a, b, order)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b, order_a, order_b = ctx.saved_values
        need_a, need_b = ctx.needs_input_grad[:2]
        if not is_grad_enabled() and d.dims >= 2:  # the ordinary backward: raw kernels and views, no graph
            grad_a = _product(d, _transposed(b), order_a) if need_a else None
            grad_b = _product(_transposed(a), d, order_b) if need_b else None
            return grad_a, grad_b
        mm = MatMul.apply  # under create_graph differentiable
        grad_a = mm(d, b.transpose(-1, -2)) if need_a else None
        grad_b = mm(a.transpose(-1, -2), d) if need_b else None
        return grad_a, grad_b


def _transposed(x: Tensor) -> Tensor:
    """A view of ``x`` with its last two dims swapped, without history (for raw backward formulas)."""
    order = list(range(x.dims))
    order[-2], order[-1] = order[-1], order[-2]
    return x._view_of(x._data.permute(*order))


def _order_of(x: Tensor) -> tuple[int, ...] | None:
    """``x``'s dims from the largest stride to the smallest (ties in dim order), or None when ``x`` is contiguous:
    the dense layout a result shaped like ``x`` should take to match it."""
    data = x._data
    if data.is_contiguous():
        return None
    strides = data.strides
    return tuple(sorted(range(data.dims), key=lambda i: -strides[i]))


def _product(x: Tensor, y: Tensor, order: tuple[int, ...] | None) -> Tensor:
    """x @ y without history, stored densely in dim order ``order`` when that ends in one of the two matrix dims
    and nothing broadcasts or promotes (else as ``_matmul`` stores it, row-major). An order ending in the row dim
    (a column-major result) is computed as y^T @ x^T into the row-major transposed view."""
    xd, yd = x._data, y._data
    dims = xd.dims
    if (order is None or len(order) != dims or order[-1] < dims - 2 or order == tuple(range(dims)) or yd.dims != dims
            or xd.shape[:-2] != yd.shape[:-2] or xd.dtype != yd.dtype or x.backend is not y.backend):
        return x._matmul(y)
    shape = (*xd.shape[:-1], yd.shape[-1])
    backend = x.backend
    stored = backend.empty(tuple([shape[i] for i in order]), xd.dtype)
    out = stored.permute(*sorted(range(dims), key=order.__getitem__))  # the inverse permutation: shape ``shape``
    if order[-1] == dims - 1:
        backend.matmul(xd, yd, out)
    else:
        backend.matmul(_transposed(y)._data, _transposed(x)._data, _transposed(x._view_of(out))._data)
    return x._view_of(out)
