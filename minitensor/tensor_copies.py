"""PyTorch's copying forms of the view ops (``alias_copy`` ... ``view_copy``), ``as_strided_``/``as_strided_scatter``,
the ``unsafe_`` splits and ``nonzero_static`` (the ``CopyMethods`` mixin holds the methods).

Each ``name_copy`` is ``name``'s view made into a tensor with its own contiguous storage: the same values, and the
same gradient as the view (the view's backward, then the copy's identity); ``detach_copy`` has none. Those that
PyTorch gives ``out=`` take it: the result is written into ``out`` (:func:`minitensor.tensor_storage.write_out`; the
list forms ``split_copy``, ``split_with_sizes_copy`` and ``unbind_copy`` then return None, as PyTorch's).

``as_strided_scatter(input, src, size, stride, offset)`` is PyTorch's: a copy of input's whole storage is viewed as
``input`` and written through ``as_strided(size, stride, offset)`` (offsets from the start of the storage input's
base owns, default input's own), so the elements of ``input`` at a written storage position take ``src``'s values;
positions input does not see (gaps between its strides, outside it) are written but not seen. Its gradient is the
true one (PyTorch 2.13's gives ``input`` the gradient of the written elements instead of the others, and refuses a
non-contiguous ``input`` that requires grad). ``unsafe_chunk``/``unsafe_split``/``unsafe_split_with_sizes`` are the
ordinary splits (minitensor's views carry no extra checks to skip).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from .errors import IndexOutOfRangeError, ShapeError
from .tensor_compare import where
from .tensor_data import normalize_dim
from .tensor_inplace import _check_leaf
from .tensor_inplace_extra import _view_
from .tensor_put import _element_offsets, _int_tuple, _storage_origin, as_strided
from .tensor_storage import need_tensor, write_out, write_outs

if TYPE_CHECKING:
    from .tensor import Tensor


def _copied(view: Tensor, out: Any, fn: str) -> Tensor:
    """``view`` copied into its own contiguous storage (differentiable), or written into ``out``."""
    result = view.clone()
    return result if out is None else write_out(out, result, fn)


def _copied_all(views: Sequence[Tensor], out: Any, fn: str) -> tuple[Tensor, ...] | None:
    """Each view copied (a tuple), or written into the list ``out`` (then None)."""
    results = tuple(view.clone() for view in views)
    if out is None:
        return results
    write_outs(out, results, fn)
    return None


def _split_into(pieces: tuple[Tensor, ...], out: Any, fn: str) -> tuple[Tensor, ...] | None:
    """The pieces (views), or written into the list ``out`` (then None)."""
    if out is None:
        return pieces
    write_outs(out, pieces, fn)
    return None


def _sizes(size: Any, fn: str) -> tuple[int, ...]:
    """A size argument: one sequence of ints (or one int)."""
    return _int_tuple(size, fn, "size")


# --- the copying view ops ---


def alias_copy(input: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002 - PyTorch's names
    """A copy of ``input`` (``torch.alias``'s copying form)."""
    return _copied(input, out, "alias_copy")


def as_strided_copy(input: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None,  # noqa: A002
                    *, out: Any = None) -> Tensor:
    """A copy of ``input.as_strided(size, stride, storage_offset)``."""
    return _copied(as_strided(input, size, stride, storage_offset), out, "as_strided_copy")


def detach_copy(input: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """A copy of ``input`` without history (a new leaf that does not require grad)."""
    return _copied(input.detach(), out, "detach_copy")


def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1, *, out: Any = None) -> Tensor:  # noqa: A002
    """A copy of ``input.diagonal(offset, dim1, dim2)``."""
    return _copied(input.diagonal(offset, dim1, dim2), out, "diagonal_copy")


def expand_copy(input: Tensor, size: Sequence[int], *, implicit: bool = False, out: Any = None) -> Tensor:  # noqa: A002
    """A copy of ``input.expand(size)`` (every element stored; ``implicit`` is ignored, as PyTorch's eager mode)."""
    return _copied(input.expand(*_sizes(size, "expand_copy")), out, "expand_copy")


def permute_copy(input: Tensor, dims: Sequence[int], *, out: Any = None) -> Tensor:  # noqa: A002
    """A copy of ``input.permute(dims)``."""
    return _copied(input.permute(*_int_tuple(dims, "permute_copy", "dims")), out, "permute_copy")


def select_copy(input: Tensor, dim: int, index: int, *, out: Any = None) -> Tensor:  # noqa: A002
    """A copy of ``input.select(dim, index)``."""
    return _copied(input.select(dim, index), out, "select_copy")


def _slice(input: Tensor, dim: int, start: int | None, end: int | None, step: int) -> Tensor:  # noqa: A002
    """input[..., start:end:step] along ``dim`` (a view; ``step`` > 0)."""
    if operator.index(step) <= 0:
        raise ValueError(f"slice step must be positive, got {step}")
    if input.dims == 0:
        raise IndexOutOfRangeError("slice() cannot be applied to a 0-dim tensor")
    d = normalize_dim(dim, input.dims)
    return input[(slice(None),) * d + (slice(start, end, step),)]


def slice_copy(input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1,  # noqa: A002
               *, out: Any = None) -> Tensor:
    """A copy of ``input[..., start:end:step]`` along ``dim`` (bounds clamp as Python's; ``step`` > 0)."""
    return _copied(_slice(input, dim, start, end, step), out, "slice_copy")


def split_copy(input: Tensor, split_size: int, dim: int = 0, *, out: Any = None) -> tuple[Tensor, ...] | None:  # noqa: A002
    """Copies of ``input.split(split_size, dim)``'s pieces (``split_size`` an int)."""
    if isinstance(split_size, bool) or not isinstance(split_size, (int, np.integer)):
        raise TypeError(f"split_copy(): argument 'split_size' must be int, not {type(split_size).__name__}")
    return _copied_all(input.split(int(split_size), dim), out, "split_copy")


def split_with_sizes_copy(input: Tensor, split_sizes: Sequence[int], dim: int = 0,  # noqa: A002
                          *, out: Any = None) -> tuple[Tensor, ...] | None:
    """Copies of ``input.split_with_sizes(split_sizes, dim)``'s pieces."""
    return _copied_all(input.split_with_sizes(split_sizes, dim), out, "split_with_sizes_copy")


def squeeze_copy(input: Tensor, dim: int | Sequence[int] | None = None, *, out: Any = None) -> Tensor:  # noqa: A002
    """A copy of ``input.squeeze(dim)``."""
    return _copied(input.squeeze(dim), out, "squeeze_copy")


def t_copy(input: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """A copy of ``input.t()``."""
    return _copied(input.t(), out, "t_copy")


def transpose_copy(input: Tensor, dim0: int, dim1: int, *, out: Any = None) -> Tensor:  # noqa: A002
    """A copy of ``input.transpose(dim0, dim1)``."""
    return _copied(input.transpose(dim0, dim1), out, "transpose_copy")


def unbind_copy(input: Tensor, dim: int = 0, *, out: Any = None) -> tuple[Tensor, ...] | None:  # noqa: A002
    """Copies of ``input.unbind(dim)``'s slices."""
    return _copied_all(input.unbind(dim), out, "unbind_copy")


def unfold_copy(input: Tensor, dimension: int, size: int, step: int, *, out: Any = None) -> Tensor:  # noqa: A002
    """A copy of ``input.unfold(dimension, size, step)`` (overlapping windows stored apart)."""
    return _copied(input.unfold(dimension, size, step), out, "unfold_copy")


def unsqueeze_copy(input: Tensor, dim: int, *, out: Any = None) -> Tensor:  # noqa: A002
    """A copy of ``input.unsqueeze(dim)``."""
    return _copied(input.unsqueeze(dim), out, "unsqueeze_copy")


def view_copy(input: Tensor, size: Any = None, *, dtype: Any = None, out: Any = None) -> Tensor:  # noqa: A002
    """A copy of ``input.view(size)`` (a sequence of ints, one may be -1) or of ``input.view(dtype)`` (a dtype, by
    keyword or in ``size``'s place)."""
    if (size is None) == (dtype is None):
        raise TypeError("view_copy() takes a size or a dtype (one of them)")
    if dtype is None and not isinstance(size, (Sequence, int, np.integer)):
        dtype, size = size, None
    view = input.view(dtypes.as_dtype(dtype)) if dtype is not None else input.view(*_sizes(size, "view_copy"))
    return _copied(view, out, "view_copy")


# --- strided writes ---


def as_strided_scatter(input: Tensor, src: Tensor, size: Sequence[int], stride: Sequence[int],  # noqa: A002
                       storage_offset: int | None = None, *, out: Any = None) -> Tensor:
    """A copy of ``input`` in which the elements that share a storage position with the strided view
    (size, stride, storage_offset) of input's storage take ``src``'s values (cast to input's dtype); the offset
    defaults to input's own. Differentiable in both."""
    need_tensor(src, "as_strided_scatter", "src")
    input._check_backend(src)
    shape, strides = _int_tuple(size, "as_strided_scatter", "size"), _int_tuple(stride, "as_strided_scatter", "stride")
    if len(shape) != len(strides):
        raise ShapeError(f"as_strided_scatter: mismatch in length of strides and shape: size {list(shape)}, "
                         f"stride {list(strides)}")
    if tuple(src.shape) != shape:
        raise ShapeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                         f"slice size = {list(shape)}")
    storage, own = _storage_origin(input)
    offset = own if storage_offset is None else operator.index(storage_offset)
    if offset < 0 or min(shape, default=0) < 0 or min(strides, default=0) < 0:
        raise ShapeError(f"as_strided_scatter: size {list(shape)}, stride {list(strides)} and storage offset {offset} "
                         "must be non-negative")
    written = _element_offsets(shape, strides, offset)
    if written.size and int(written.max()) >= storage.size:
        raise ShapeError(f"as_strided_scatter: size {list(shape)}, stride {list(strides)} and storage offset {offset} "
                         f"reach element {int(written.max())}, out of bounds for a storage of {storage.size} elements")
    if np.unique(written).size != written.size:
        raise ShapeError(f"as_strided_scatter: size {list(shape)} with stride {list(strides)} refers to one memory "
                         "location from more than one element; the written-to view must not overlap")
    read = _element_offsets(input.shape, input.stride(), own)
    which = np.full(int(max(read.max(initial=0), written.max(initial=0))) + 1, -1, dtype=np.int64)
    which[written] = np.arange(written.size)
    source = which[read].reshape(input.shape)  # for each input element, the src element written over it (or -1)
    result = input.clone()
    if (source >= 0).any():
        hits = input._lift(source >= 0, dtypes.bool_)
        picked = src.cast(input.dtype).reshape(-1)[input._lift(np.maximum(source, 0), dtypes.int64)]
        result = where(hits, picked, input)
    return result if out is None else write_out(out, result, "as_strided_scatter")


def as_strided_(self: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None) -> Tensor:
    """self made the view ``self.as_strided(size, stride, storage_offset)`` of its storage, in place."""
    _check_leaf(self)
    if self._base is None:  # keep the whole storage reachable, so the offset stays meaningful afterwards
        keeper = self._alias(self._data)
        keeper._base, self._base = None, keeper
    return _view_(self, lambda x: as_strided(x, size, stride, storage_offset))


# --- splits, nonzero_static ---


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """``input.chunk(chunks, dim)``."""
    return input.chunk(chunks, dim)  # type: ignore[no-any-return]


def unsafe_split(input: Tensor, split_size: int, dim: int = 0, *, out: Any = None) -> tuple[Tensor, ...] | None:  # noqa: A002
    """``input.split(split_size, dim)`` (with ``out``: the pieces written into it, None returned)."""
    return _split_into(input.split(split_size, dim), out, "unsafe_split")


def unsafe_split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0,  # noqa: A002
                            *, out: Any = None) -> tuple[Tensor, ...] | None:
    """``input.split_with_sizes(split_sizes, dim)`` (with ``out``: the pieces written into it, None returned)."""
    return _split_into(input.split_with_sizes(split_sizes, dim), out, "unsafe_split_with_sizes")


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1, out: Any = None) -> Tensor:  # noqa: A002
    """int64 (size, input.dim()) indices of the first ``size`` nonzero elements (row-major), padded with rows of
    ``fill_value`` when there are fewer; a host sync."""
    for name, value in (("size", size), ("fill_value", fill_value)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"nonzero_static(): argument '{name}' must be int, not {type(value).__name__}")
    if size < 0:
        raise ValueError(f"nonzero_static: 'size' must be a non-negative integer, got {size}")
    found = np.argwhere(input.to_numpy()).astype(np.int64)[:size]
    padded = np.full((int(size), input.dims), int(fill_value), dtype=np.int64)
    padded[: len(found)] = found
    result = input._lift(padded, dtypes.int64)
    return result if out is None else write_out(out, result, "nonzero_static")


class CopyMethods:
    """as_strided_, as_strided_scatter, nonzero_static and the unsafe splits of Tensor."""

    as_strided_ = as_strided_

    def as_strided_scatter(self: Any, src: Tensor, size: Sequence[int], stride: Sequence[int],
                           storage_offset: int | None = None) -> Tensor:
        return as_strided_scatter(self, src, size, stride, storage_offset)

    def nonzero_static(self: Any, *, size: int, fill_value: int = -1) -> Tensor:
        return nonzero_static(self, size=size, fill_value=fill_value)

    def unsafe_chunk(self: Any, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        return unsafe_chunk(self, chunks, dim)

    def unsafe_split(self: Any, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
        return self.split(split_size, dim)  # type: ignore[no-any-return]

    def unsafe_split_with_sizes(self: Any, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
        return self.split_with_sizes(split_sizes, dim)  # type: ignore[no-any-return]


__all__ = [
    "alias_copy", "as_strided_copy", "as_strided_scatter", "detach_copy", "diagonal_copy",
    "expand_copy", "nonzero_static", "permute_copy", "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy",
    "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy", "unfold_copy", "unsafe_chunk", "unsafe_split",
    "unsafe_split_with_sizes", "unsqueeze_copy", "view_copy",
]  # fmt: skip
