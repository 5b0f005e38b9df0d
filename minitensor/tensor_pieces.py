"""Views of parts of a tensor (the ``PieceMethods`` mixin, which ``ShapeMethods`` extends) and the matching ``mt.``
functions: narrow, select, split, chunk, unbind and diagonal; and the basic indexing (ints, slices, ``None``, ``...``)
and iteration over the first dim that tensor_index.py builds on. Each piece shares storage with the tensor, as in
PyTorch.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import tensor_functions as F
from .autodiff import Context
from .errors import IndexOutOfRangeError, ShapeError
from .tensor_data import TensorData, normalize_dim
from .tensor_join import int_list

if TYPE_CHECKING:
    from .tensor import Tensor


def diagonal_data(data: TensorData, offset: int, dim1: int, dim2: int) -> TensorData:
    """The view of diagonal ``offset`` of the (dim1, dim2) planes: those dims removed, the diagonal appended."""
    n1, n2 = data.shape[dim1], data.shape[dim2]
    length = max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))
    keep = [i for i in range(data.dims) if i not in (dim1, dim2)]
    shape = [data.shape[i] for i in keep] + [length]
    strides = [data.strides[i] for i in keep] + [data.strides[dim1] + data.strides[dim2]]
    start = offset * data.strides[dim2] if offset >= 0 else -offset * data.strides[dim1]
    storage = data.storage[start:] if start and math.prod(shape) else data.storage
    return TensorData(storage, shape, strides)


class Diagonal(F.TensorFunction):
    """A diagonal as a view; the gradient is written into the diagonal of zeros."""

    is_view = True
    higher_order = True  # the backward writes d into zeros with PutView, a differentiable Function

    @staticmethod
    def forward(ctx: Context, a: Tensor, offset: int, dim1: int, dim2: int) -> Tensor:
        ctx.save_for_backward(a.shape, offset, dim1, dim2)
        return a._alias(diagonal_data(a._data, offset, dim1, dim2))

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        shape, offset, dim1, dim2 = ctx.saved_values
        return F.PutView.apply(d, shape, functools.partial(diagonal_data, offset=offset, dim1=dim1, dim2=dim2))


def narrow(self: Tensor, dim: int, start: int, length: int) -> Tensor:
    """Elements ``start`` .. ``start + length - 1`` along ``dim`` (a view)."""
    d = normalize_dim(dim, self.dims)
    n = self.shape[d]
    if not -n <= start <= n:
        raise IndexOutOfRangeError(f"narrow: start {start} is out of range [{-n}, {n}] for dim {dim} of shape {self.shape}")
    start = start + n if start < 0 else start
    if length < 0 or start + length > n:
        raise IndexOutOfRangeError(f"narrow: start {start} + length {length} exceeds the size {n} of dim {dim} (shape {self.shape})")
    return F.Slice.apply(self, (slice(None),) * d + (slice(start, start + length),))


def select(self: Tensor, dim: int, index: int) -> Tensor:
    """Element ``index`` along ``dim``, that dim removed (a view)."""
    return F.Slice.apply(self, (slice(None),) * normalize_dim(dim, self.dims) + (int(index),))


def split(self: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """Views of ``split_size`` elements along ``dim`` (the last may be smaller), or of the given sizes."""
    d = normalize_dim(dim, self.dims)
    n = self.shape[d]
    if not isinstance(split_size_or_sections, (tuple, list)):
        (size,) = int_list(split_size_or_sections)
        if size < 0 or (size == 0 and n):
            raise ShapeError(f"split size must be positive (0 only for an empty dim), got {size} for dim {dim} of shape {self.shape}")
        sizes = [size] * (n // size) + [n % size] * bool(n % size) if n else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n or min(sizes, default=0) < 0:
            raise ShapeError(f"split sizes {sizes} do not sum to the size {n} of dim {dim} (shape {self.shape})")
    starts = itertools.accumulate(sizes, initial=0)
    return tuple(self.narrow(d, start, size) for start, size in zip(starts, sizes))


def chunk(self: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """At most ``chunks`` views of equal size (the last may be smaller) along ``dim``, as ``torch.chunk``."""
    if chunks <= 0:
        raise ShapeError(f"chunk needs chunks > 0, got {chunks}")
    n = self.shape[normalize_dim(dim, self.dims)]
    return self.split(-(-n // chunks) if n else [0] * chunks, dim)


def unbind(self: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """Every element along ``dim``, that dim removed: views."""
    return tuple(self.select(dim, i) for i in range(self.shape[normalize_dim(dim, self.dims)]))


def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """Diagonal ``offset`` (above the main one when positive) of the (dim1, dim2) planes, appended as the last dim
    (a view)."""
    d1, d2 = normalize_dim(dim1, self.dims), normalize_dim(dim2, self.dims)
    if d1 == d2:
        raise ShapeError(f"diagonal dims cannot be identical: {dim1} and {dim2} (shape {self.shape})")
    return Diagonal.apply(self, int(offset), d1, d2)


def getitem(self: Tensor, key: Any) -> Tensor:
    key = key if isinstance(key, tuple) else (key,)
    return F.Slice.apply(self, key)


def iterate(self: Tensor) -> Any:
    for i in range(len(self)):
        yield self[i]


class PieceMethods:
    """Views of parts of a tensor (methods of Tensor, through ShapeMethods)."""

    narrow = narrow
    select = select
    split = split
    chunk = chunk
    unbind = unbind
    diagonal = diagonal
    __iter__ = iterate


__all__ = ["narrow", "select", "split", "chunk", "unbind", "diagonal"]
