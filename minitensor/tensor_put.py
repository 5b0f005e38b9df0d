"""Writes by position and raw strided views (the ``PutMethods`` mixin of Tensor): ``index_put``, ``put``,
``masked_scatter`` (each with its in-place ``_`` form), ``as_strided`` and ``storage_offset``, and the small
queries ``argwhere``, ``split_with_sizes``, ``rsub``, ``is_nonzero``, ``is_same_size``, ``is_complex``.

The out-of-place writes are built from differentiable ops (gather, ``scatter_add``, ``where``), so gradients reach
both the tensor written into and the values written, as in PyTorch. ``as_strided`` views the storage the tensor
lives in (the base of a view) with any non-negative strides; its gradient adds the incoming gradient into a zero
storage at the view's positions and reads it back at the input's (PyTorch's rule; an input whose elements overlap
shares each position's gradient equally).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context
from .errors import DTypeError, IndexOutOfRangeError, ShapeError
from .index_key import INDEX_DTYPES
from .tensor_data import TensorData, shape_broadcast, storage_address
from .tensor_index import _check_mask_dtype, _check_range, getitem, nonzero, scatter_add
from .tensor_inplace import _inplace, _positions, _scatter_value, _torch_name

if TYPE_CHECKING:
    from .tensor import Tensor

__all__ = ["as_strided", "masked_scatter", "index_put", "index_put_", "put", "argwhere", "split_with_sizes", "rsub"]


def _is_tensor(x: Any) -> bool:
    """Every Tensor is a PutMethods (tensor.py imports this module, so Tensor itself is not importable here)."""
    return isinstance(x, PutMethods)


def _need_tensor(value: Any, fn: str, name: str) -> None:
    if not _is_tensor(value):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(value).__name__}")


# --- as_strided ---


def _storage_origin(x: Tensor) -> tuple[Any, int]:
    """(the storage x's elements live in: its base's, x's offset into it in elements)."""
    own = x._data.storage
    base = x._base if x._base is not None else x
    whole = base._data.storage
    pw, po = storage_address(whole), storage_address(own)
    if whole is own or pw is None or po is None or po < pw:
        return own, 0
    offset = (po - pw) // own.dtype.itemsize
    return (whole, offset) if offset + own.size <= whole.size else (own, 0)


def _element_offsets(shape: Sequence[int], strides: Sequence[int], start: int) -> np.ndarray:
    """The storage offsets of the elements of a (shape, strides) view starting at ``start``, in row-major order."""
    offsets = np.full((), start, dtype=np.int64)
    for size, stride in zip(shape, strides):
        offsets = offsets[..., None] + np.arange(size, dtype=np.int64) * stride
    return offsets.reshape(-1)


class AsStrided(F.TensorFunction):
    """A view of ``a``'s storage with any shape, strides and offset (``torch.as_strided``)."""

    higher_order = True
    is_view = True

    @staticmethod
    def forward(ctx: Context, a: Tensor, size: tuple[int, ...], stride: tuple[int, ...], offset: int) -> Tensor:
        storage, own = _storage_origin(a)
        empty = any(s == 0 for s in size)
        view = TensorData(storage[offset:] if offset and not empty else storage, size, stride)
        ctx.save_for_backward(a.shape, a.strides, own, size, stride, offset)
        return a._alias(view)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, None, None, None]:
        shape, strides, own, size, stride, offset = ctx.saved_values
        into = _element_offsets(shape, strides, own)
        outof = _element_offsets(size, stride, offset)
        if not into.size or not outof.size:
            return d._lift(np.zeros(shape), d.dtype), None, None, None
        lo = builtins.min(into.min(), outof.min())
        span = int(builtins.max(into.max(), outof.max()) - lo + 1)
        storage = scatter_add(d._lift(np.zeros(span), d.dtype), 0, d._lift(outof - lo, dtypes.int64), d.reshape(-1))
        grad = getitem(storage, d._lift(into - lo, dtypes.int64))
        counts = np.bincount(into - lo)[into - lo]
        if counts.max() > 1:  # an input whose elements share storage: each shares the position's gradient
            grad = grad / d._lift(counts.astype(np.float64), d.dtype)
        return grad.reshape(*shape), None, None, None


def _int_tuple(values: Any, fn: str, name: str) -> tuple[int, ...]:
    items = (values,) if isinstance(values, (int, np.integer)) else values
    if not isinstance(items, Sequence) or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in items):
        raise TypeError(f"{fn}(): argument '{name}' must be a sequence of ints, got {values!r}")
    return tuple(builtins.int(v) for v in items)


def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None) -> Tensor:  # noqa: A002
    """A view of ``input``'s storage with the given ``size``, ``stride`` and ``storage_offset`` (elements; default:
    input's own offset); every element must lie inside the storage. Strides may overlap elements."""
    shape, strides = _int_tuple(size, "as_strided", "size"), _int_tuple(stride, "as_strided", "stride")
    if len(shape) != len(strides):
        raise ShapeError(f"as_strided: mismatch in length of strides and shape: size {list(shape)}, stride {list(strides)}")
    if builtins.min(shape, default=0) < 0:
        raise ShapeError(f"as_strided: negative size {list(shape)}")
    if builtins.min(strides, default=0) < 0:
        raise ShapeError(f"as_strided: negative strides are not supported, got strides {list(strides)}")
    storage, own = _storage_origin(input)
    offset = own if storage_offset is None else storage_offset
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)) or offset < 0:
        raise ShapeError(f"as_strided: storage_offset must be a non-negative int, got {storage_offset!r}")
    need = 0 if 0 in shape else offset + 1 + builtins.sum((n - 1) * s for n, s in zip(shape, strides))
    if need > storage.size:
        raise ShapeError(
            f"as_strided: size {list(shape)}, stride {list(strides)} and storage offset {offset} need a storage of "
            f"{need} elements, but input's storage holds {storage.size}"
        )
    return AsStrided.apply(input, shape, strides, builtins.int(offset))


# --- writes by position ---


def _same_dtype(input: Tensor, values: Tensor, fn: str, name: str) -> None:
    if values.dtype != input.dtype:
        raise DTypeError(f"{fn}: expected self and {name} to have the same dtype, but got self.dtype = "
                         f"{_torch_name(input.dtype)} and {name}.dtype = {_torch_name(values.dtype)}")


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:  # noqa: A002
    """A copy of ``input`` (broadcast with the bool ``mask``) whose masked positions take ``source``'s first
    elements in row-major order; ``source`` needs at least as many elements as ``mask`` has True (a host sync)."""
    _check_mask_dtype(mask, "masked_scatter")
    _need_tensor(source, "masked_scatter", "source")
    input._check_backend(mask)
    input._check_backend(source)
    _same_dtype(input, source, "masked_scatter", "source")
    try:
        shape = shape_broadcast(input.shape, mask.shape)
    except ShapeError as error:
        raise ShapeError(f"masked_scatter: mask {mask.shape} does not broadcast with input {input.shape}") from error
    base, where = input.expand(*shape), mask.expand(*shape)
    flat = where.reshape(-1)
    count = builtins.int(flat.sum().item()) if flat.numel() else 0
    if count > source.numel():
        raise ShapeError(f"masked_scatter: mask has {count} True elements but source of shape {source.shape} only "
                         f"{source.numel()}")
    if count == 0:
        return base.clone()
    order = (flat.cast(dtypes.int64).cumsum(0) - 1).clamp(min=0)
    picked = getitem(source.reshape(-1), order).reshape(*shape)
    return F.Where.apply(where, picked, base)


def _index_key(input: Tensor, indices: Any) -> tuple[Any, ...]:
    """``indices`` (a tuple or list of index tensors or None) as an indexing key, checked."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not {type(indices).__name__}")
    if len(indices) > builtins.max(input.dims, 1):
        raise IndexOutOfRangeError(f"index_put: too many indices for tensor of dimension {input.dims} (got {len(indices)})")
    for i, index in enumerate(indices):
        if index is None:
            continue
        if not _is_tensor(index):
            raise TypeError(f"index_put(): indices[{i}] must be a Tensor or None, not {type(index).__name__}")
        if index.dtype not in (*INDEX_DTYPES, dtypes.bool_):
            raise DTypeError(f"index_put: tensors used as indices must be int64, int32 or bool tensors, got indices[{i}] "
                             f"of dtype {index.dtype}")
        input._check_backend(index)
    return tuple(slice(None) if index is None else index for index in indices)


def index_put(input: Tensor, indices: Sequence[Tensor | None], values: Tensor, accumulate: bool = False) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``values`` (broadcast to ``input[indices]``'s shape) written at ``input[indices]``
    (None in ``indices`` selects a whole dim); ``accumulate`` adds instead, summing repeated positions. Without it, the
    last write to a repeated position wins."""
    key = _index_key(input, indices)
    _need_tensor(values, "index_put", "values")
    input._check_backend(values)
    _same_dtype(input, values, "index_put", "values")
    if not accumulate:
        return _scatter_value(input, key, values)
    positions = _positions(input, key)
    try:
        spread = values.expand(*positions.shape).reshape(-1)
    except ShapeError as error:
        raise ShapeError(f"index_put: values of shape {values.shape} cannot be broadcast to the indexing result of shape "
                         f"{positions.shape}") from error
    return scatter_add(input.reshape(-1), 0, positions.reshape(-1), spread).reshape(*input.shape)


def index_put_(input: Tensor, indices: Sequence[Tensor | None], values: Tensor, accumulate: bool = False) -> Tensor:  # noqa: A002
    """In-place :func:`index_put`: ``input[indices] = values`` (or ``+=`` with ``accumulate``); returns input."""
    return _inplace(input, lambda x: index_put(x, indices, values, accumulate))


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``source``'s elements written at the flat (row-major) positions ``index`` (negative
    from the end); ``accumulate`` adds them instead."""
    _need_tensor(index, "put", "index")
    _need_tensor(source, "put", "source")
    if index.dtype not in INDEX_DTYPES:
        raise DTypeError(f"put: index must be an int64 or int32 tensor, got {index.dtype}")
    input._check_backend(index)
    input._check_backend(source)
    _same_dtype(input, source, "put", "source")
    if index.numel() != source.numel():
        raise ShapeError(f"put: source and index must have the same number of elements, but got source.numel() = "
                         f"{source.numel()} and index.numel() = {index.numel()}")
    n = input.numel()
    if index.numel() == 0:
        return input.clone()
    _check_range(index, -n, n, f"put (a tensor of {n} elements)")
    flat_index = index.reshape(-1).cast(dtypes.int64).remainder(n)
    flat, values = input.reshape(-1), source.reshape(-1)
    out = scatter_add(flat, 0, flat_index, values) if accumulate else _scatter_value(flat, (flat_index,), values)
    return out.reshape(*input.shape)


# --- small queries ---


def argwhere(input: Tensor) -> Tensor:  # noqa: A002
    """int64 (n, input.dim()) indices of the nonzero elements, in row-major order (a host sync)."""
    return nonzero(input)


def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """Views of ``input`` along ``dim`` of the given sizes, which must sum to that dim's size."""
    sizes = list(_int_tuple(split_sizes, "split_with_sizes", "split_sizes")) if not isinstance(split_sizes, int) else None
    if sizes is None:
        raise TypeError(f"split_with_sizes(): argument 'split_sizes' must be a sequence of ints, not {split_sizes!r}")
    return input.split(sizes, dim)


def rsub(input: Tensor, other: Any, alpha: Any = 1) -> Tensor:  # noqa: A002
    """``other - alpha * input`` (the operands swapped in ``sub``)."""
    return input._operand(other).sub(input, alpha=alpha)


class PutMethods:
    """Position writes, strided views and small queries of Tensor."""

    def as_strided(self: Any, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None) -> Tensor:
        return as_strided(self, size, stride, storage_offset)

    def storage_offset(self: Any) -> int:
        """This tensor's first element's offset (in elements) into the storage of its base."""
        return _storage_origin(self)[1]

    def masked_scatter(self: Any, mask: Tensor, source: Tensor) -> Tensor:
        return masked_scatter(self, mask, source)

    def masked_scatter_(self: Any, mask: Tensor, source: Tensor) -> Tensor:
        return _inplace(self, lambda x: masked_scatter(x, mask, source))

    def index_put(self: Any, indices: Sequence[Tensor | None], values: Tensor, accumulate: bool = False) -> Tensor:
        return index_put(self, indices, values, accumulate)

    def index_put_(self: Any, indices: Sequence[Tensor | None], values: Tensor, accumulate: bool = False) -> Tensor:
        return index_put_(self, indices, values, accumulate)

    def put(self: Any, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
        return put(self, index, source, accumulate)

    def put_(self: Any, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
        return _inplace(self, lambda x: put(x, index, source, accumulate))

    def argwhere(self: Any) -> Tensor:
        return argwhere(self)

    def split_with_sizes(self: Any, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
        return split_with_sizes(self, split_sizes, dim)

    def is_complex(self: Any) -> bool:
        return False

    def is_same_size(self: Any, other: Tensor) -> bool:
        _need_tensor(other, "is_same_size", "other")
        return tuple(self.shape) == tuple(other.shape)

    def is_nonzero(self: Any) -> bool:
        n = self.numel()
        if n != 1:
            what = "no values" if n == 0 else "more than one value"
            raise ShapeError(f"Boolean value of Tensor with {what} is ambiguous (shape {self.shape})")
        return builtins.bool(self.item() != 0)
