"""Shape and layout methods of Tensor (the ``ShapeMethods`` mixin) and the matching ``mt.`` functions.

Everything here is a view that shares storage and changes only shape and strides, as in PyTorch:
permute/transpose/movedim, view, squeeze/unsqueeze, unflatten, expand, narrow/select, the pieces of
split/chunk/unbind, diagonal, t/mT/T; ``view(dtype)`` also reads the same bytes as another dtype.
``reshape`` and ``flatten`` copy only when no strides can describe the result. Joining and copying ops
(cat, stack, flip, roll, repeat, tril, diag, ...) are in tensor_join.py.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context
from .errors import IndexOutOfRangeError, NonContiguousError, PermutationError, ShapeError
from .tensor_data import TensorData, infer_shape, normalize_dim, storage_address, strides_from_shape
from .tensor_join import int_list

if TYPE_CHECKING:
    from .tensor import Tensor


def _sizes(args: Sequence[Any]) -> tuple[int, ...]:
    """``f(2, 3)`` and ``f((2, 3))`` both as (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    return tuple(int(a) for a in args)


def view_strides(data: TensorData, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """Strides that read ``data``'s elements in the same row-major order as ``shape``, or None when none can.

    PyTorch's rule (``computeStride``): dims may be merged or split only within runs of dims that are
    contiguous with each other in storage.
    """
    if data.is_contiguous():  # including every empty tensor
        return strides_from_shape(shape)
    old_shape, old_strides = data.shape, data.strides
    strides = [0] * len(shape)
    view_d = len(shape) - 1
    base = old_strides[-1]
    old_numel = new_numel = 1
    for d in range(len(old_shape) - 1, -1, -1):
        old_numel *= old_shape[d]
        if d == 0 or (old_shape[d - 1] != 1 and old_strides[d - 1] != old_numel * base):
            while view_d >= 0 and (new_numel < old_numel or shape[view_d] == 1):
                strides[view_d] = new_numel * base
                new_numel *= shape[view_d]
                view_d -= 1
            if new_numel != old_numel:
                return None
            if d > 0:
                base, old_numel, new_numel = old_strides[d - 1], 1, 1
    return tuple(strides) if view_d == -1 else None


class StridedView(F.TensorFunction):
    """A view with new shape and strides over the same storage that keeps the row-major order of the elements
    (view, reshape, squeeze, unsqueeze, flatten, unflatten); the gradient is reshaped back."""

    is_view = True

    @staticmethod
    def forward(ctx: Context, a: Tensor, shape: tuple[int, ...], strides: tuple[int, ...]) -> Tensor:
        ctx.save_for_backward(a.shape)
        return a._alias(TensorData(a._data.storage, shape, strides))

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        return d.reshape(*ctx.saved_values[0])


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

    @staticmethod
    def forward(ctx: Context, a: Tensor, offset: int, dim1: int, dim2: int) -> Tensor:
        ctx.save_for_backward(a.shape, offset, dim1, dim2)
        return a._alias(diagonal_data(a._data, offset, dim1, dim2))

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        shape, offset, dim1, dim2 = ctx.saved_values
        return F.PutView.apply(d, shape, functools.partial(diagonal_data, offset=offset, dim1=dim1, dim2=dim2))


# --- reordering dims ---


def permute(self: Tensor, *dims: int) -> Tensor:
    """Dims reordered: dim i of the result is dim ``dims[i]`` of this tensor (a view)."""
    return F.Permute.apply(self, tuple(normalize_dim(d, self.dims) for d in _sizes(dims)))


def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """Dims ``dim0`` and ``dim1`` swapped (a view)."""
    if self.dims == 0:
        for d in (dim0, dim1):
            normalize_dim(d, 1)
        return self
    order = list(range(self.dims))
    d0, d1 = normalize_dim(dim0, self.dims), normalize_dim(dim1, self.dims)
    order[d0], order[d1] = order[d1], order[d0]
    return F.Permute.apply(self, tuple(order))


def movedim(self: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """Dims ``source`` moved to positions ``destination``; the other dims keep their order (a view)."""
    src = int_list(source)
    dst = int_list(destination)
    if len(src) != len(dst):
        raise PermutationError(f"movedim needs as many destinations as sources, got source {src} and destination {dst}")
    n = max(self.dims, 1)
    src, dst = [normalize_dim(d, n) for d in src], [normalize_dim(d, n) for d in dst]
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise PermutationError(f"movedim: repeated dim in {name} {dims} (shape {self.shape})")
    if self.dims == 0:
        return self
    order = [-1] * self.dims
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(self.dims) if i not in src)
    return F.Permute.apply(self, tuple(o if o >= 0 else next(rest) for o in order))


def t(self: Tensor) -> Tensor:
    """The transpose of a matrix; 0-D and 1-D tensors unchanged (as ``torch.t``)."""
    if self.dims > 2:
        raise ShapeError(f"t() expects a tensor with <= 2 dims, got shape {self.shape}; use transpose() or mT")
    return self if self.dims < 2 else self.transpose(0, 1)


@property  # type: ignore[misc]
def mT(self: Tensor) -> Tensor:  # noqa: N802 - PyTorch's name
    """The last two dims swapped (a batch of matrices transposed)."""
    if self.dims < 2:
        raise ShapeError(f"mT needs a matrix or a batch of matrices, got shape {self.shape}")
    return self.transpose(-2, -1)


@property  # type: ignore[misc]
def T(self: Tensor) -> Tensor:  # noqa: N802 - PyTorch's name
    """All dims reversed (the transpose of a matrix)."""
    return F.Permute.apply(self, tuple(reversed(range(self.dims))))


# --- new shapes over the same elements ---


def view(self: Tensor, *shape: Any, dtype: Any = None) -> Tensor:
    """The same elements read as ``shape`` (one entry may be -1), sharing storage; raises NonContiguousError when
    no strides can give that shape (see ``reshape``). ``view(dtype)`` (one dtype argument, or ``dtype=``) reads the
    same bytes as another dtype instead: see :func:`view_dtype`."""
    if dtype is not None or (len(shape) == 1 and isinstance(shape[0], (np.dtype, str, type))):
        if dtype is not None and shape:
            raise TypeError(f"view() takes a shape or a dtype, not both (got {shape} and dtype={dtype!r})")
        return view_dtype(self, shape[0] if dtype is None else dtype)
    shape = infer_shape(shape, self._data.size, self.shape)
    strides = view_strides(self._data, shape)
    if strides is None:
        raise NonContiguousError(
            f"cannot view tensor of shape {self.shape} with strides {self.strides} as {shape} without a copy; "
            "use .reshape() or call .contiguous() first"
        )
    return StridedView.apply(self, shape, strides)


def view_dtype(self: Tensor, dtype: Any) -> Tensor:
    """The same bytes read as ``dtype`` (``torch.Tensor.view(dtype)``: a bit reinterpretation, not a conversion),
    sharing storage and its version counter. The result never requires grad and writes through it are not recorded
    (as PyTorch, for every dtype, the same one included).

    Same element size: the same shape and strides. Otherwise the last dim's size and the other strides scale by the
    size ratio, with PyTorch's checks: not 0-d (ShapeError); to a smaller element, stride(-1) must be 1; to a larger
    one, size(-1) must be divisible by the ratio (ShapeError), and the storage offset and the other strides too, and
    stride(-1) must be 1 (NonContiguousError). Strides of size-1 dims are not checked (minitensor gives them other
    values than PyTorch: ``unsqueeze`` makes them 0)."""
    new, old, data = dtypes.as_dtype(dtype), self.dtype, self._data
    shape, strides = list(data.shape), list(data.strides)
    if new.itemsize != old.itemsize:
        what = f"to view {old} as {new} (different element sizes)"
        if not shape:
            raise ShapeError(f"view(dtype): self.dim() cannot be 0 {what} (a 0-d tensor)")
        if old.itemsize > new.itemsize:
            ratio = old.itemsize // new.itemsize
            if shape[-1] != 1 and strides[-1] != 1:
                raise NonContiguousError(f"view(dtype): self.stride(-1) must be 1 {what}, but got {strides[-1]} "
                                         f"(shape {data.shape}, strides {data.strides}); call .contiguous() first")
            strides = [s * ratio for s in strides[:-1]] + [1]
            shape[-1] *= ratio
        else:
            ratio = new.itemsize // old.itemsize
            if shape[-1] % ratio:
                raise ShapeError(f"view(dtype): self.size(-1) must be divisible by {ratio} {what}, but got "
                                 f"{shape[-1]} (shape {data.shape})")
            offset = _storage_offset_mod(data.storage, ratio)
            if offset:
                raise NonContiguousError(f"view(dtype): self.storage_offset() must be divisible by {ratio} {what}, but "
                                         f"it is {offset} more than a multiple of {ratio} (shape {data.shape}); call "
                                         ".clone() first")
            for d, (size, stride) in enumerate(zip(shape[:-1], strides[:-1])):
                if size != 1 and stride % ratio:
                    raise NonContiguousError(f"view(dtype): self.stride({d}) must be divisible by {ratio} {what}, but "
                                             f"got {stride} (shape {data.shape}, strides {data.strides})")
            if strides[-1] != 1:
                raise NonContiguousError(f"view(dtype): self.stride(-1) must be 1 {what}, but got {strides[-1]} "
                                         f"(shape {data.shape}, strides {data.strides}); call .contiguous() first")
            strides = [s // ratio for s in strides[:-1]] + [1]
            shape[-1] //= ratio
    storage = self.backend.view_storage(data.storage, new)
    out = self._alias(TensorData.trusted(storage, tuple(shape), tuple(strides), math.prod(shape)))
    out._base = None  # like detach(): writes through it are not recorded into this tensor's graph
    return out


def _storage_offset_mod(storage: Any, ratio: int) -> int:
    """Where ``storage`` starts, in its elements, modulo ``ratio``: storages start on aligned allocations (at least
    8 bytes), so this is PyTorch's storage_offset() % ratio. 0 when the storage has no address."""
    address = storage_address(storage)
    return 0 if address is None else (address // storage.dtype.itemsize) % ratio


def reshape(self: Tensor, *shape: Any) -> Tensor:
    """Like ``view`` when strides allow it, else a contiguous copy read as ``shape``."""
    shape = infer_shape(shape, self._data.size, self.shape)
    strides = view_strides(self._data, shape)
    if strides is None:
        return StridedView.apply(F.Contiguous.apply(self), shape, strides_from_shape(shape))
    return StridedView.apply(self, shape, strides)


def view_as(self: Tensor, other: Tensor) -> Tensor:
    return self.view(*other.shape)


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    return self.reshape(*other.shape)


def is_contiguous(self: Tensor) -> bool:
    """True when the elements lie in row-major order in storage (size-1 dims may have any stride)."""
    return self._data.is_contiguous()


def contiguous(self: Tensor) -> Tensor:
    """Row-major data (a copy only when needed)."""
    return self if self._data.is_contiguous() else F.Contiguous.apply(self)


def expand(self: Tensor, *sizes: Any) -> Tensor:
    """Broadcast to ``sizes`` without copying (stride 0 along new and stretched dims); -1 keeps a dim's size."""
    shape = list(_sizes(sizes))
    pad = len(shape) - self.dims
    for i, size in enumerate(shape):
        if size == -1:
            if i < pad:
                raise ShapeError(f"cannot expand shape {self.shape} to {tuple(sizes)}: -1 is not allowed in a new leading dim")
            shape[i] = self.shape[i - pad]
    return self if tuple(shape) == self.shape else F.Expand.apply(self, tuple(shape))


def expand_as(self: Tensor, other: Tensor) -> Tensor:
    return self.expand(*other.shape)


def squeeze(self: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """Size-1 dims removed: all of them, or those among ``dim`` (an int or a tuple; other sizes are left alone)."""
    if dim is None:
        drop = {i for i, s in enumerate(self.shape) if s == 1}
    else:
        dims = {normalize_dim(d, max(self.dims, 1)) for d in int_list(dim)}
        drop = {d for d in dims if self.dims and self.shape[d] == 1}
    if not drop:
        return self
    keep = [i for i in range(self.dims) if i not in drop]
    return StridedView.apply(self, tuple(self.shape[i] for i in keep), tuple(self.strides[i] for i in keep))


def unsqueeze(self: Tensor, dim: int) -> Tensor:
    """A size-1 dim inserted at ``dim`` (a view)."""
    data = self._data.unsqueeze(dim)
    return StridedView.apply(self, data.shape, data.strides)


def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Dims ``start_dim``..``end_dim`` merged into one (a view when strides allow it); a 0-D tensor becomes 1-D."""
    if self.dims == 0:
        return self.reshape(1)
    start, end = normalize_dim(start_dim, self.dims), normalize_dim(end_dim, self.dims)
    if start > end:
        raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} (shape {self.shape})")
    if start == end:
        return self
    return self.reshape(*self.shape[:start], math.prod(self.shape[start : end + 1]), *self.shape[end + 1 :])


def unflatten(self: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Dim ``dim`` split into ``sizes`` (one may be -1), a view."""
    d = normalize_dim(dim, self.dims)
    sizes, n = tuple(int(s) for s in sizes), self.shape[d]
    known = math.prod(s for s in sizes if s != -1)
    if not sizes or sizes.count(-1) > 1 or (-1 in sizes and (known == 0 or n % known)) or (-1 not in sizes and known != n):
        raise ShapeError(f"unflatten: sizes {sizes} do not multiply up to the size {n} of dim {dim} (shape {self.shape})")
    sizes = tuple(n // known if s == -1 else s for s in sizes)
    return self.view(*self.shape[:d], *sizes, *self.shape[d + 1 :])


# --- pieces: views into the same storage ---


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


class ShapeMethods:
    """Shape and layout methods of Tensor."""

    T = T
    mT = mT
    t = t
    permute = permute
    transpose = swapaxes = swapdims = transpose
    movedim = moveaxis = movedim
    view = view
    view_as = view_as
    reshape = reshape
    reshape_as = reshape_as
    contiguous = contiguous
    is_contiguous = is_contiguous
    expand = expand
    expand_as = expand_as
    unsqueeze = unsqueeze
    squeeze = squeeze
    flatten = flatten
    unflatten = unflatten
    narrow = narrow
    select = select
    split = split
    chunk = chunk
    unbind = unbind
    diagonal = diagonal
    __iter__ = iterate


swapaxes = swapdims = transpose
moveaxis = movedim

__all__ = [
    "permute", "transpose", "swapaxes", "swapdims", "movedim", "moveaxis", "t", "reshape", "squeeze", "unsqueeze",
    "flatten", "unflatten", "narrow", "select", "split", "chunk", "unbind", "diagonal",
]
