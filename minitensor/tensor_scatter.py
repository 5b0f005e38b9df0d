"""Reducing scatters and embedding copies (the ``ScatterMethods`` mixin) and the matching ``mt.`` functions:
scatter_reduce (and the in-place scatter_reduce_), slice_scatter, select_scatter, diagonal_scatter, narrow_copy.

Each is a composition of existing kernels, so autograd and every backend work without new ones:

- ``scatter_reduce`` "sum" and "mean" are ``scatter_add`` of src (and of ones, for the count) onto input, or onto
  zeros where ``include_self`` is False; autodiff gives their gradients.
- "prod", "amax" and "amin" have no scatter kernel. The values of src are put in order of their target slot by one
  stable sort of the index along ``dim``; a segmented inclusive fold (``*``, maximum or minimum) over the runs of
  equal targets takes ceil(log2 m) doubling steps (each a shifted ``where`` over the m entries of a line, so
  O(m log m) time and O(m) memory, never quadratic); the last entry of each run, found by a cumulative sum of the
  per-slot counts, is the slot's reduction, gathered back and combined with input where ``include_self``.
  Their gradients are PyTorch's formulas (:class:`ScatterFold`): exact products with zeros (a single zero in a slot
  gets the product of the others), and amax/amin split the gradient evenly among the entries equal to the result
  (input's only where ``include_self``; PyTorch counts it otherwise too, then drops its share).
- The ``*_scatter`` functions write src through the view (a slice, an index, a diagonal) into zeros (``PutView``)
  and pick it with ``where``: input's gradient is masked there, src's is that view of the gradient.

Names, signatures, defaults and result dtypes follow PyTorch.
"""

from __future__ import annotations

import functools
import operator
from typing import TYPE_CHECKING, Any

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context, no_grad
from .errors import DTypeError, IndexOutOfRangeError, ShapeError
from .functions_views import _SliceOf
from .tensor_data import normalize_dim
from .tensor_index import _head_key, _scatter_add_into, _scatter_args
from .tensor_inplace import _inplace
from .tensor_join import cat
from .tensor_order import gather_raw, sort_indices
from .tensor_shape import diagonal_data

if TYPE_CHECKING:
    from .tensor import Tensor

REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _is_tensor(x: Any) -> bool:
    """Every Tensor is a ScatterMethods (tensor.py imports this module, so Tensor itself is not importable here)."""
    return isinstance(x, ScatterMethods)


# --- scatter_reduce ---


def _fold_op(reduce: str, a: Tensor, b: Tensor) -> Tensor:
    """The binary op that folds a reduction: product, maximum or minimum (NaN propagates, as in PyTorch)."""
    return a * b if reduce == "prod" else a.maximum(b) if reduce == "amax" else a.minimum(b)


def _segment_fold(values: Tensor, keys: Tensor, dim: int, reduce: str) -> Tensor:
    """Inclusive fold of ``reduce`` along ``dim`` within each run of equal ``keys`` (sorted along ``dim``): entry j
    becomes the fold of its run's entries up to j. Doubling steps: after the step of width s each entry holds the
    fold of up to 2s entries (keys sorted, so equal keys s apart mean one run between)."""
    m = values.shape[dim]
    step = 1
    while step < m:
        earlier, later = values.narrow(dim, 0, m - step), values.narrow(dim, step, m - step)
        same = keys.narrow(dim, step, m - step) == keys.narrow(dim, 0, m - step)
        values = cat([values.narrow(dim, 0, step), F.Where.apply(same, _fold_op(reduce, later, earlier), later)], dim)
        step *= 2
    return values


def _embed(part: Tensor, shape: tuple[int, ...], key: tuple[slice, ...]) -> Tensor:
    """Zeros of ``shape`` with ``part`` written at the basic ``key`` (differentiable: PutView)."""
    return part if part.shape == shape else F.PutView.apply(part, shape, _SliceOf(key))


def _fold(x: Tensor, d: int, index: Tensor, src: Tensor, reduce: str, include_self: bool) -> tuple[Tensor, Tensor]:
    """(scatter_reduce's result, bool mask of the slots written) for "prod", "amax" or "amin", without history;
    checked arguments (index int64 in range, src of index's shape, x at least 1-D)."""
    with no_grad():
        x, src = x.detach(), src.detach()
        if index.numel() == 0:
            return x._map("id"), x._zeros(x.shape).cast(dtypes.bool_)
        n = x.shape[d]
        slots = (*index.shape[:d], n, *index.shape[d + 1:])  # index's lines, every slot of each
        order = sort_indices(index, d, False)  # stable: src in order of its target slot
        folded = _segment_fold(gather_raw(src, d, order), gather_raw(index, d, order), d, reduce)
        ones = index._lift(1, dtypes.int64).expand(*index.shape)
        counts = _scatter_add_into(index._zeros(slots), d, index, ones)
        last = (counts.cumsum(d) - 1).clamp(min=0)  # each slot's run ends there (meaningless where counts == 0)
        key = _head_key(slots, None)
        hits = _embed(counts, x.shape, key) > 0
        reduced = _embed(gather_raw(folded, d, last), x.shape, key)
        out = F.Where.apply(hits, _fold_op(reduce, x, reduced) if include_self else reduced, x)
    return out, hits


class ScatterFold(F.TensorFunction):
    """scatter_reduce with "prod", "amax" or "amin" of ``src`` (index's shape) into ``a`` along ``dim``, with
    PyTorch's gradients: products exclude the element itself (exact with zeros); amax/amin split the gradient evenly
    among the entries (of src, and of input where included) equal to the result."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, src: Tensor, dim: int, index: Tensor, reduce: str, include_self: bool) -> Tensor:
        out, hits = _fold(a, dim, index, src, reduce, include_self)
        ctx.save_for_backward(a.detach(), src.detach(), out, hits, dim, index, reduce, include_self)
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, Tensor, None, None, None, None]:
        a, src, out, hits, dim, index, reduce, include_self = ctx.saved_values
        one, zero = a._lift(1), a._lift(0)
        if reduce == "prod":
            nonzero_a = F.Where.apply(a == 0, one, a)
            grad_a = d * _fold(nonzero_a, dim, index, src, reduce, include_self)[0] / nonzero_a
            zeros = (src == 0).cast(dtypes.int64)
            in_slot = gather_raw(_scatter_add_into(a._zeros(a.shape).cast(dtypes.int64), dim, index, zeros), dim, index)
            single = (zeros + in_slot) == 2  # the only zero sent to its slot
            others = _fold(a, dim, index, F.Where.apply(single, one, src), reduce, include_self)[0]
            grad_src = F.Where.apply(single, gather_raw(d * others, dim, index),
                                     gather_raw(d * out, dim, index) / F.Where.apply(zeros > 0, one, src))
        else:
            counted_a = F.Where.apply(hits, (a == out)._zip("logical_and", a._lift(include_self, dtypes.bool_)),
                                      a._lift(True, dtypes.bool_))
            counted_src = src == gather_raw(out, dim, index)
            ties = _scatter_add_into(counted_a.cast(a.dtype), dim, index, counted_src.cast(a.dtype))
            share = d / ties
            grad_a = F.Where.apply(counted_a, share, zero)
            grad_src = F.Where.apply(counted_src, gather_raw(share, dim, index), zero)
        grad_a = F.Where.apply(hits, grad_a if include_self else zero, d)  # untouched slots pass the gradient on
        return grad_a, grad_src, None, None, None, None


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,  # noqa: A002 - PyTorch's names
                   include_self: bool = True) -> Tensor:
    """A copy of input whose slots ``[index[i][j]][j]`` (dim 0, and so on) hold the ``reduce`` ("sum", "prod",
    "mean", "amax" or "amin") of every ``src[i][j]`` sent there, and of input's own value when ``include_self``;
    other slots keep input's value. Integer "mean" rounds down; bool tensors take "sum"/"amax" as any and
    "prod"/"amin" as all. Gradients as PyTorch's."""
    if reduce not in REDUCTIONS:
        raise ValueError(f"scatter_reduce(): reduce argument must be either sum, prod, mean, amax or amin, got {reduce!r}")
    if not _is_tensor(src):
        raise TypeError(f"scatter_reduce(): argument 'src' must be Tensor, not {type(src).__name__}")
    d, index, src = _scatter_args(input, dim, index, src, "scatter_reduce")
    if input.dtype == dtypes.bool_:
        if reduce == "mean":
            raise DTypeError("scatter_reduce(): reduce='mean' is not supported for bool tensors")
        wide = scatter_reduce(input.cast(dtypes.int64), d, index, src.cast(dtypes.int64), reduce, include_self=include_self)
        return wide.cast(dtypes.bool_)
    if input.dims == 0:
        out = scatter_reduce(input.reshape(1), 0, index.reshape(1), src.reshape(1), reduce, include_self=include_self)
        return out.reshape(())
    if reduce not in ("sum", "mean"):
        return ScatterFold.apply(input, src, d, index, reduce, include_self)
    ones = index._lift(1, dtypes.int64).expand(*index.shape)
    count = _scatter_add_into(input._zeros(input.shape).cast(dtypes.int64), d, index, ones)
    base = input if include_self else F.Where.apply(count > 0, input._lift(0), input)
    total = _scatter_add_into(base, d, index, src)
    if reduce == "sum":
        return total
    count = F.Where.apply(count == 0, count._lift(1), count + 1 if include_self else count)
    return (total // count).cast(input.dtype) if input.dtype.kind in "iu" else total / count.cast(input.dtype)


# --- embedding copies ---


def _embed_scatter(input: Tensor, src: Tensor, view: Any, name: str, what: str) -> Tensor:  # noqa: A002
    """A copy of input with ``src`` written through ``view`` (a function from TensorData to a view of it)."""
    if not _is_tensor(src):
        raise TypeError(f"{name}(): argument 'src' must be Tensor, not {type(src).__name__}")
    input._check_backend(src)
    region = view(input._data).shape
    if src.shape != region:
        raise ShapeError(f"{name}(): expected src to have a size equal to the {what} of input {input.shape}: "
                         f"src {src.shape}, {what} {region}")
    mask = F.PutView.apply(input._lift(True, dtypes.bool_).expand(*region), input.shape, view)
    return F.Where.apply(mask, F.PutView.apply(src.cast(input.dtype), input.shape, view), input)


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,  # noqa: A002
                  end: int | None = None, step: int = 1) -> Tensor:
    """A copy of input with ``src`` written into ``input[start:end:step]`` along ``dim`` (src of that slice's shape,
    cast to input's dtype); gradients: input's masked there, src's that slice of the gradient."""
    if step <= 0:
        raise ValueError(f"slice_scatter(): slice step must be positive, got {step}")
    d = normalize_dim(dim, input.dims)
    first, stop, _ = slice(start, end, step).indices(input.shape[d])
    key = (slice(None),) * d + (slice(first, max(stop, first), step),)
    return _embed_scatter(input, src, _SliceOf(key), "slice_scatter", "slice")


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:  # noqa: A002
    """A copy of input with ``src`` (input's shape without ``dim``) written at ``index`` along ``dim``."""
    d, index = normalize_dim(dim, input.dims), operator.index(index)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexOutOfRangeError(f"select_scatter(): index {index} out of range for dim {dim} of size {n} (shape {input.shape})")
    key = (slice(None),) * d + (index % n,)
    return _embed_scatter(input, src, _SliceOf(key), "select_scatter", "selection")


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:  # noqa: A002
    """A copy of input with ``src`` written into the diagonal that ``input.diagonal(offset, dim1, dim2)`` views."""
    d1, d2 = normalize_dim(dim1, input.dims), normalize_dim(dim2, input.dims)
    if d1 == d2:
        raise ShapeError(f"diagonal_scatter(): diagonal dims cannot be identical: {dim1} and {dim2} (shape {input.shape})")
    view = functools.partial(diagonal_data, offset=int(offset), dim1=d1, dim2=d2)
    return _embed_scatter(input, src, view, "diagonal_scatter", "diagonal")


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:  # noqa: A002
    """A contiguous copy (not a view) of ``input.narrow(dim, start, length)``."""
    return input.narrow(dim, start, length).clone()


class ScatterMethods:
    """Reducing-scatter and embedding-copy methods of Tensor; ``scatter_reduce_`` writes in place and returns self."""

    def scatter_reduce(self, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True) -> Tensor:
        return scatter_reduce(self, dim, index, src, reduce, include_self=include_self)  # type: ignore[arg-type]

    def scatter_reduce_(self: Any, dim: int, index: Any, src: Any, reduce: str, *, include_self: bool = True) -> Any:
        return _inplace(self, lambda x: scatter_reduce(x, dim, index, src, reduce, include_self=include_self))

    def slice_scatter(self, src: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1) -> Tensor:
        return slice_scatter(self, src, dim, start, end, step)  # type: ignore[arg-type]

    def select_scatter(self, src: Tensor, dim: int, index: int) -> Tensor:
        return select_scatter(self, src, dim, index)  # type: ignore[arg-type]

    def diagonal_scatter(self, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        return diagonal_scatter(self, src, offset, dim1, dim2)  # type: ignore[arg-type]

    def narrow_copy(self, dim: int, start: int, length: int) -> Tensor:
        return narrow_copy(self, dim, start, length)  # type: ignore[arg-type]


__all__ = ["scatter_reduce", "slice_scatter", "select_scatter", "diagonal_scatter", "narrow_copy"]
