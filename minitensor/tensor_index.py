"""Indexing of Tensor (the ``IndexMethods`` mixin) and the matching ``mt.`` functions.

Basic indexing (ints, slices, ``None``, ``...``) returns views through :mod:`minitensor.tensor_shape`;
everything here selects by index tensors on the backend's gather/scatter_add kernels.

Advanced indexing follows PyTorch: ints (and 0-d int tensors) select first, as views; the index tensors
(int64/int32 tensors, lists, NumPy arrays, and bool masks as their ``nonzero()`` indices) broadcast together
and their result dims take their place when they are adjacent (ints removed), else go in front. The result is
a copy made by one gather over the advanced dims flattened into one, so the gradient scatter-adds back and
repeated indices accumulate. Index values are bounds-checked with a reduction and a host sync, as are masks.

Functions (and methods): gather, take_along_dim, index_select, masked_select, nonzero, and the out-of-place
scatter, scatter_add, index_add and masked_fill. Their in-place variants and item assignment are in tensor_inplace.py;
reading a key (basic items, index tensors, masks) is in index_key.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context, is_grad_enabled
from .compiler.capture import active
from .errors import DTypeError, IndexOutOfRangeError, ShapeError
from .index_key import INDEX_DTYPES, _basic, _broadcast_all, _expand_key, _is_basic
from .tensor_data import normalize_dim, shape_broadcast
from .tensor_shape import getitem as basic_getitem

if TYPE_CHECKING:
    from .tensor import Tensor


def _is_tensor(x: Any) -> bool:
    """Every Tensor is an IndexMethods (tensor.py imports this module, so Tensor itself is not importable here)."""
    return isinstance(x, IndexMethods)


# --- checks shared by the functions ---


def _check_index_dtype(index: Any, name: str) -> None:
    """DTypeError unless ``index`` is an int64/int32 tensor."""
    if not _is_tensor(index) or index.dtype not in INDEX_DTYPES:
        got = f"a {index.dtype} tensor" if _is_tensor(index) else f"{type(index).__name__}"
        raise DTypeError(f"{name}: index must be an int64 or int32 tensor, got {got}")


def _check_mask_dtype(mask: Any, name: str) -> None:
    """DTypeError unless ``mask`` is a bool tensor."""
    if not _is_tensor(mask) or mask.dtype != dtypes.bool_:
        got = f"a {mask.dtype} tensor" if _is_tensor(mask) else f"{type(mask).__name__}"
        raise DTypeError(f"{name}: mask must be a bool tensor, got {got}; compare first (x > 0) or call .bool()")


def _check_range(index: Tensor, low: int, size: int, what: str) -> int:
    """IndexOutOfRangeError unless every value of ``index`` lies in [low, size) (one host sync); returns the smallest
    value (0 when there is none)."""
    if index.numel() == 0:
        return 0
    lo, hi = int(index.amin().item()), int(index.amax().item())
    if lo < low or hi >= size:
        raise IndexOutOfRangeError(
            f"{what}: index values range over [{lo}, {hi}], out of range [{low}, {size}) for a dim of size {size}"
        )
    return lo


def _head(x: Tensor, shape: Sequence[int], skip: int | None = None) -> Tensor:
    """The view of ``x``'s first ``shape[d]`` elements along every dim ``d`` except ``skip``."""
    return x if tuple(x.shape) == tuple(shape) else basic_getitem(x, _head_key(shape, skip))


# --- advanced __getitem__ ---


def _flat_index(indices: list[Tensor], sizes: list[int], in_range: bool = False) -> Tensor:
    """One int64 index into the advanced dims flattened row-major: indices broadcast, wrapped and bounds-checked
    (``in_range``: the caller has already checked that every value lies in [0, size))."""
    try:
        shape = _broadcast_all([i.shape for i in indices])
    except ShapeError as error:
        shapes = ", ".join(str(tuple(i.shape)) for i in indices)
        raise ShapeError(f"indexing tensors could not be broadcast together with shapes {shapes}") from error
    flat = None
    for index, size in zip(indices, sizes):
        lowest = 0 if in_range else _check_range(index, -size, size, "index")
        index = index.cast(dtypes.int64)
        if size and (lowest < 0 or active() is not None):  # a traced step wraps always: replays may see negatives
            index = index.remainder(size)
        flat = index if flat is None else flat * size + index
    assert flat is not None
    return flat.expand(*shape)


def _advanced(x: Tensor, key: tuple[Any, ...], in_range: bool = False) -> Tensor:
    """x[key] for keys with index tensors: basic part as a view, then one gather over the advanced dims
    (``in_range``: as for ``_flat_index``)."""
    items = _expand_key(x, key)
    view = _basic(x, [slice(None) if _is_tensor(k) else k for k in items])
    adv_dims, indices, out_dim = [], [], 0
    for k in items:
        if _is_tensor(k):
            adv_dims.append(out_dim)
            indices.append(k)
        if not isinstance(k, (int, np.integer)):
            out_dim += 1
    if not indices:
        return view
    adjacent = adv_dims == list(range(adv_dims[0], adv_dims[0] + len(adv_dims)))
    front = adv_dims[0] if adjacent else 0
    sizes = [view.shape[d] for d in adv_dims]
    flat = _flat_index(indices, sizes, in_range)
    moved = view.movedim(adv_dims, list(range(front, front + len(adv_dims))))
    merged = moved.reshape(*moved.shape[:front], math.prod(sizes), *moved.shape[front + len(sizes) :])
    count = flat.numel()
    lead, tail = merged.shape[:front], merged.shape[front + 1 :]
    index = flat.reshape(*([1] * front), count, *([1] * len(tail))).expand(*lead, count, *tail)
    out = F.Gather.apply(merged, front, index)
    return out.reshape(*lead, *flat.shape, *tail)


def getitem(self: Tensor, key: Any) -> Tensor:
    """self[key] with PyTorch's semantics: views for basic keys, a gathered copy when index tensors are present."""
    key = key if isinstance(key, tuple) else (key,)
    if all(_is_basic(k) and k is not None for k in key):
        return basic_getitem(self, key)
    return _advanced(self, key)


# --- gather family ---


def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """out[i][j] = input[index[i][j]][j] for dim 0 (and so on), as ``torch.gather``; index may be smaller than input
    in the other dims; the gradient scatter-adds back."""
    _check_index_dtype(index, "gather")
    input._check_backend(index)
    if index.dims != input.dims:
        raise ShapeError(f"gather: index {index.shape} and input {input.shape} must have the same number of dims")
    if input.dims == 0:
        return gather(input.reshape(1), 0, index.reshape(1)).reshape(())
    d = normalize_dim(dim, input.dims)
    if any(i > s for k, (i, s) in enumerate(zip(index.shape, input.shape)) if k != d):
        raise ShapeError(f"gather: index {index.shape} is larger than input {input.shape} outside dim {dim}")
    _check_range(index, 0, input.shape[d], "gather")
    return F.Gather.apply(_head(input, index.shape, d), d, index.cast(dtypes.int64))


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:  # noqa: A002
    """Values at ``indices`` along ``dim`` (of the flattened input when None); input and indices broadcast
    outside ``dim``, as ``torch.take_along_dim``."""
    _check_index_dtype(indices, "take_along_dim")
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    if indices.dims != input.dims:
        raise ShapeError(f"take_along_dim: indices {indices.shape} and input {input.shape} must have the same number of dims")
    d = normalize_dim(dim, input.dims)
    try:
        outer = shape_broadcast(_without(input.shape, d), _without(indices.shape, d))
    except ShapeError as error:
        raise ShapeError(f"take_along_dim: input {input.shape} and indices {indices.shape} do not broadcast outside dim {dim}") from error
    a = input.expand(*outer[:d], input.shape[d], *outer[d + 1 :])
    i = indices.expand(*outer[:d], indices.shape[d], *outer[d + 1 :])
    return gather(a, d, i)


def _without(shape: Sequence[int], dim: int) -> tuple[int, ...]:
    """``shape`` with ``shape[dim]`` set to 1."""
    return tuple(1 if k == dim else s for k, s in enumerate(shape))


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:  # noqa: A002
    """The entries ``index`` (1-D, non-negative) along ``dim``, as ``torch.index_select``; a copy."""
    _check_index_dtype(index, "index_select")
    if index.dims > 1:
        raise ShapeError(f"index_select: index must be 0-d or 1-D, got shape {index.shape}")
    if input.dims == 0:
        return index_select(input.reshape(1), 0, index).reshape(())
    d = normalize_dim(dim, input.dims)
    _check_range(index, 0, input.shape[d], "index_select")
    return _advanced(input, (slice(None),) * d + (index.reshape(-1),), in_range=True)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:  # noqa: A002
    """A 1-D copy of the elements where ``mask`` (bool, broadcast with input) is True, as ``torch.masked_select``."""
    _check_mask_dtype(mask, "masked_select")
    input._check_backend(mask)
    try:
        shape = shape_broadcast(input.shape, mask.shape)
    except ShapeError as error:
        raise ShapeError(f"masked_select: mask {mask.shape} does not broadcast with input {input.shape}") from error
    shape = shape or (1,)
    return _advanced(input.expand(*shape), (mask.expand(*shape),))


def nonzero(input: Tensor, as_tuple: bool = False) -> Any:  # noqa: A002
    """int64 (n, ndim) indices of the nonzero elements in row-major order, or a tuple of ndim 1-D tensors
    (``as_tuple``), as ``torch.nonzero``; a host sync."""
    array = input.to_numpy()
    if as_tuple:
        return tuple(input._lift(col, dtypes.int64) for col in np.nonzero(np.atleast_1d(array)))
    return input._lift(np.argwhere(array).astype(np.int64), dtypes.int64)


# --- scatter family (out-of-place) ---


class ScatterAdd(F.TensorFunction):
    """A copy of ``a`` with ``src`` added at ``index`` along ``dim``; index and src have the same shape, at most a's
    outside ``dim``. The gradient is d for a and d gathered at ``index`` for src."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
        key = _head_key(index.shape, dim)
        ctx.save_for_backward(dim, index, key)
        out = a._map("id")
        if index.numel():
            a.backend.scatter_add(src._data, dim, index._data, out._data.slice(key))
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, None, None, Tensor]:
        dim, index, key = ctx.saved_values
        if is_grad_enabled() and index.numel():  # create_graph: a differentiable gather
            return d, None, None, F.Gather.apply(F.Slice.apply(d, key), dim, index)
        out = d.backend.zeros(index.shape, d.dtype)
        if index.numel():
            d.backend.gather(d._data.slice(key), dim, index._data, out)
        return d, None, None, d._view_of(out)


def _head_key(shape: Sequence[int], skip: int | None) -> tuple[slice, ...]:
    """The basic key of the first ``shape[d]`` elements along every dim ``d`` except ``skip``."""
    return tuple(slice(None) if d == skip else slice(0, s) for d, s in enumerate(shape))


def _scatter_args(input: Tensor, dim: int, index: Tensor, src: Tensor, name: str) -> tuple[int, Tensor, Tensor]:
    """Checked (dim, int64 index, src cut to index's shape) for scatter and scatter_add."""
    _check_index_dtype(index, name)
    input._check_backend(index)
    input._check_backend(src)
    if src.dtype != input.dtype:
        raise DTypeError(f"{name}: src dtype {src.dtype} differs from input dtype {input.dtype}")
    if not index.dims == input.dims == src.dims:
        raise ShapeError(f"{name}: index {index.shape}, input {input.shape} and src {src.shape} need the same number of dims")
    d = normalize_dim(dim, max(input.dims, 1))
    too_big = any(i > s for i, s in zip(index.shape, src.shape)) or any(
        i > s for k, (i, s) in enumerate(zip(index.shape, input.shape)) if k != d
    )
    if too_big:
        raise ShapeError(f"{name}: index {index.shape} is larger than src {src.shape} or than input {input.shape} outside dim {dim}")
    _check_range(index, 0, input.shape[d] if input.dims else 1, name)
    return d, index.cast(dtypes.int64), _head(src, index.shape)


def _scatter_add_into(input: Tensor, d: int, index: Tensor, src: Tensor) -> Tensor:
    """input with src added at index along d (checked arguments; 0-d tensors as 1-D)."""
    if input.dims == 0:
        return ScatterAdd.apply(input.reshape(1), 0, index.reshape(1), src.reshape(1)).reshape(())
    return ScatterAdd.apply(input, d, index, src)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:  # noqa: A002
    """A copy of input with ``src[i][j]`` added at ``[index[i][j]][j]`` (dim 0), as ``torch.scatter_add``;
    repeated indices accumulate; gradients: identity to input, gather to src."""
    d, index, src = _scatter_args(input, dim, index, src, "scatter_add")
    return _scatter_add_into(input, d, index, src)


def scatter(input: Tensor, dim: int, index: Tensor, src: Any = None, value: Any = None) -> Tensor:  # noqa: A002
    """A copy of input with ``src[i][j]`` (or a number) written at ``[index[i][j]][j]`` (dim 0), as ``torch.scatter``.

    Gradients: input's is masked where written, src's is gathered. Repeated indices are undefined in PyTorch;
    here the written values are summed.
    """
    src = value if src is None else src
    if not _is_tensor(src):
        src = input._lift(src, input.dtype).expand(*index.shape) if index.dims else input._lift(src, input.dtype)
    d, index, src = _scatter_args(input, dim, index, src, "scatter")
    ones = index._lift(1, dtypes.int64).expand(*index.shape)
    hits = _scatter_add_into(input._zeros(input.shape).cast(dtypes.int64), d, index, ones) > 0
    written = _scatter_add_into(input._zeros(input.shape), d, index, src)
    return F.Where.apply(hits, written, input)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, alpha: Any = 1) -> Tensor:  # noqa: A002
    """A copy of input with ``alpha * source`` added at entries ``index`` (1-D) along ``dim``, as ``torch.index_add``."""
    _check_index_dtype(index, "index_add")
    if index.dims > 1:
        raise ShapeError(f"index_add: index must be 0-d or 1-D, got shape {index.shape}")
    if input.dims == 0:
        return index_add(input.reshape(1), 0, index, source.reshape(1), alpha).reshape(())
    d = normalize_dim(dim, input.dims)
    index = index.reshape(-1)
    expected = input.shape[:d] + (index.shape[0],) + input.shape[d + 1 :]
    if source.shape != expected:
        raise ShapeError(f"index_add: source {source.shape} must be {expected} for input {input.shape}, dim {dim}, index {index.shape}")
    if alpha != 1:
        source = source * alpha
    shaped = index.reshape(*([1] * d), -1, *([1] * (input.dims - d - 1))).expand(*source.shape)
    return scatter_add(input, d, shaped, source.cast(input.dtype))


def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:  # noqa: A002
    """A copy of input with ``value`` (a number or a 0-d tensor) where ``mask`` (bool, broadcasting) is True."""
    _check_mask_dtype(mask, "masked_fill")
    input._check_backend(mask)
    if _is_tensor(value):
        if value.dims != 0:
            raise ShapeError(f"masked_fill: value must be a number or a 0-d tensor, got a tensor of shape {value.shape}")
        fill = value.cast(input.dtype)
    else:
        fill = input._lift(value, input.dtype)
    try:
        shape_broadcast(input.shape, mask.shape)
    except ShapeError as error:
        raise ShapeError(f"masked_fill: mask {mask.shape} does not broadcast with input {input.shape}") from error
    return F.Where.apply(mask, fill, input)


class IndexMethods:
    """Indexing methods of Tensor."""

    __getitem__ = getitem

    def gather(self, dim: int, index: Tensor) -> Tensor:
        return gather(self, dim, index)  # type: ignore[arg-type]

    def take_along_dim(self, indices: Tensor, dim: int | None = None) -> Tensor:
        return take_along_dim(self, indices, dim)  # type: ignore[arg-type]

    def index_select(self, dim: int, index: Tensor) -> Tensor:
        return index_select(self, dim, index)  # type: ignore[arg-type]

    def masked_select(self, mask: Tensor) -> Tensor:
        return masked_select(self, mask)  # type: ignore[arg-type]

    def nonzero(self, as_tuple: bool = False) -> Any:
        return nonzero(self, as_tuple)  # type: ignore[arg-type]

    def scatter(self, dim: int, index: Tensor, src: Any = None, value: Any = None) -> Tensor:
        return scatter(self, dim, index, src, value)  # type: ignore[arg-type]

    def scatter_add(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return scatter_add(self, dim, index, src)  # type: ignore[arg-type]

    def index_add(self, dim: int, index: Tensor, source: Tensor, alpha: Any = 1) -> Tensor:
        return index_add(self, dim, index, source, alpha)  # type: ignore[arg-type]

    def masked_fill(self, mask: Tensor, value: Any) -> Tensor:
        return masked_fill(self, mask, value)  # type: ignore[arg-type]


__all__: list[str] = [
    "gather", "take_along_dim", "index_select", "masked_select", "nonzero", "scatter", "scatter_add", "index_add",
    "masked_fill",
]
