"""Reductions and contractions as Function classes: sum and max/min along a dim, and (batched) matmul."""

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


class MatMul(TensorFunction):
    """Batched a @ b with broadcast batch dims; grads are d @ b^T and a^T @ d."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        need_a, need_b = ctx.needs_input_grad
        transposed = False
        if need_b and not b._data.is_contiguous():
            order = list(range(b.dims))
            order[-2], order[-1] = order[-1], order[-2]
            transposed = b._data.permute(*order).is_contiguous()
        ctx.save_for_backward(a if need_b else None, b if need_a else None, transposed)
        return a._matmul(b)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b, transposed = ctx.saved_values
        need_a, need_b = ctx.needs_input_grad
        if not is_grad_enabled() and d.dims >= 2:  # the ordinary backward: raw kernels and views, no graph
            grad_a = d._matmul(_transposed(b)) if need_a else None
            grad_b = None
            if need_b:
                grad_b = _transposed(_transposed(d)._matmul(a)) if transposed else _transposed(a)._matmul(d)
            return grad_a, grad_b
        mm = MatMul.apply  # under create_graph differentiable
        grad_a = mm(d, b.transpose(-1, -2)) if need_a else None
        grad_b = None
        if need_b:
            if transposed:
                # b is a transposed view (e.g. Linear's weight.T): a gradient in the same layout
                # becomes contiguous once the transpose's backward undoes it, saving a copy later.
                grad_b = mm(d.transpose(-1, -2), a).transpose(-1, -2)
            else:
                grad_b = mm(a.transpose(-1, -2), d)
        return grad_a, grad_b


def _transposed(x: Tensor) -> Tensor:
    """A view of ``x`` with its last two dims swapped, without history (for raw backward formulas)."""
    order = list(range(x.dims))
    order[-2], order[-1] = order[-1], order[-2]
    return x._view_of(x._data.permute(*order))
