"""Shape, layout, indexing and copies as Function classes: views sharing storage (permute, expand, basic slices,
any view function through TakeView/PutView), gather with its scatter-add gradient, and copies (contiguous, cast,
to another backend).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .autodiff import Context, is_grad_enabled
from .functions_base import TensorFunction

if TYPE_CHECKING:
    from .tensor import Tensor


# --- shape and layout: forward returns a view sharing storage ---


class Permute(TensorFunction):
    """Reorder the dims (a view); the gradient is permuted back."""

    is_view = True

    @staticmethod
    def forward(ctx: Context, a: Tensor, order: tuple[int, ...]) -> Tensor:
        ctx.save_for_backward(order)
        return a._alias(a._data.permute(*order))

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        order = ctx.saved_values[0]
        inverse = sorted(range(len(order)), key=lambda i: order[i])
        return d.permute(*inverse) if is_grad_enabled() else d._view_of(d._data.permute(*inverse))


class Expand(TensorFunction):
    """Broadcast to a larger shape with stride 0; the gradient sums back."""

    is_view = True

    @staticmethod
    def forward(ctx: Context, a: Tensor, shape: tuple[int, ...]) -> Tensor:
        return a._alias(a._data.expand(shape))

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        return d  # chain_rule sums it back to the input shape


class Slice(TensorFunction):
    """Basic indexing (ints and slices); the gradient is written into zeros through the same slice."""

    is_view = True

    @staticmethod
    def forward(ctx: Context, a: Tensor, key: tuple[Any, ...]) -> Tensor:
        ctx.save_for_backward(a.shape, key)
        return a._alias(a._data.slice(key))

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        shape, key = ctx.saved_values
        return PutView.apply(d, shape, _SliceOf(key))

    @staticmethod
    def backward_into(ctx: Context, d: Tensor, into: Tensor | None) -> Tensor:
        """``into[key] += d`` in place (autodiff owns ``into``); without ``into``, backward's new buffer."""
        shape, key = ctx.saved_values
        return _put_into(d, shape, _SliceOf(key), into)


class _SliceOf:
    """The view ``data.slice(key)`` of any TensorData (a picklable, comparable view function)."""

    def __init__(self, key: tuple[Any, ...]) -> None:
        self.key = key

    def __call__(self, data: Any) -> Any:
        return data.slice(self.key)


class TakeView(TensorFunction):
    """``view(a)`` for a function ``view`` from TensorData to a view of it (diagonal, slice); the gradient is
    written into zeros through the same view (PutView), so both are differentiable any number of times."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, view: Any) -> Tensor:
        ctx.save_for_backward(a.shape, view)
        return a._alias(view(a._data))

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, None]:
        shape, view = ctx.saved_values
        return PutView.apply(d, shape, view), None

    @staticmethod
    def backward_into(ctx: Context, d: Tensor, into: Tensor | None) -> Tensor:
        """``view(into) += d`` in place (autodiff owns ``into``); without ``into``, backward's new buffer."""
        shape, view = ctx.saved_values
        return _put_into(d, shape, view, into)


def _put_into(d: Tensor, shape: tuple[int, ...], view: Any, into: Tensor | None) -> Tensor:
    """Add ``d`` into ``view(into)`` in place and return ``into``; with ``into=None``, zeros of ``shape`` with ``d``
    written through ``view`` (PutView's forward: a copy, so the bits are backward's, signed zeros included)."""
    if into is None:
        grad = d._zeros(shape)
        d.backend.map("id", d._data, view(grad._data))
        return grad
    region = view(into._data)
    d.backend.zip("add", region, d._data, region)
    return into


class PutView(TensorFunction):
    """Zeros of ``shape`` with ``d`` written through ``view``; the gradient is that view of the incoming one."""

    @staticmethod
    def forward(ctx: Context, d: Tensor, shape: tuple[int, ...], view: Any) -> Tensor:
        ctx.save_for_backward(view)
        return _put_into(d, shape, view, None)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None, None]:
        return TakeView.apply(g, ctx.saved_values[0]), None, None


class Contiguous(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        return a._map("id")

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        return d


class Cast(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor, dtype: Any) -> Tensor:
        return a._map("id", dtype=dtype)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        return d  # chain_rule casts back to the input dtype


class ToBackend(TensorFunction):
    @staticmethod
    def forward(ctx: Context, a: Tensor, backend: Any) -> Tensor:
        ctx.save_for_backward(a.backend)
        return a._to_backend(backend)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, None]:
        return ToBackend.apply(d, ctx.saved_values[0]), None


# --- gather: a kernel beyond the four ---


class Gather(TensorFunction):
    """out[..., j, ...] = a[..., index[..., j, ...], ...] along ``dim``; the gradient scatter-adds back.

    ``index`` is an int64 tensor with every index in range (callers check); its shape is the output's.
    """

    @staticmethod
    def forward(ctx: Context, a: Tensor, dim: int, index: Tensor) -> Tensor:
        ctx.save_for_backward(a.shape, dim, index)
        out = a.backend.empty(index.shape, a.dtype)
        rows = _row_index(a._data, dim, index._data)
        if rows is not None:  # whole rows (an embedding): a backend may copy each row at once
            a.backend.take_rows(a._data, rows, out)
        else:
            a.backend.gather(a._data, dim, index._data, out)
        return a._view_of(out)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, None, None]:
        shape, dim, index = ctx.saved_values
        return ScatterAddInto.apply(d, shape, dim, index), None, None


class ScatterAddInto(TensorFunction):
    """Zeros of ``shape`` with ``d`` added at ``index`` along ``dim`` (Gather's gradient); its gradient is a gather."""

    @staticmethod
    def forward(ctx: Context, d: Tensor, shape: tuple[int, ...], dim: int, index: Tensor) -> Tensor:
        ctx.save_for_backward(dim, index)
        grad = d._zeros(shape)
        rows = _row_index(grad._data, dim, index._data)
        if rows is not None:
            d.backend.add_rows(d._data, rows, grad._data)
        else:
            d.backend.scatter_add(d._data, dim, index._data, grad._data)
        return grad

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None, None, None]:
        dim, index = ctx.saved_values
        return Gather.apply(g, dim, index), None, None, None


def _row_index(table: Any, dim: int, index: Any) -> Any:
    """The 1-D row indices when ``gather(table, dim, index)`` (or the matching scatter_add) moves whole rows of a
    contiguous 2-D ``table`` (dim 0, ``index`` constant along dim 1: an expanded column of int64), else None."""
    if table.dims != 2 or dim not in (0, -2) or index.dims != 2 or index.shape[1] != table.shape[1] or not index.size:
        return None
    if index.shape[1] > 1 and index.strides[1] != 0 or not table.is_contiguous() or index.dtype.str[1:] != "i8":
        return None
    return index.slice((slice(None), 0))
