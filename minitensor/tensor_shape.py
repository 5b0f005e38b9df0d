"""Shape and layout methods of Tensor (the ``ShapeMethods`` mixin) and the matching ``mt.`` functions.

Everything here is a view that shares storage and changes only shape and strides, as in PyTorch:
permute/transpose/movedim, view, squeeze/unsqueeze, unflatten, expand, t/mT/T. ``reshape`` and ``flatten`` copy only
when no strides can describe the result. ``ShapeMethods`` also takes in the views of parts of a tensor (narrow/select,
the pieces of split/chunk/unbind, diagonal, basic indexing: tensor_pieces.py), which this module re-exports;
``view(dtype)``, which reads the same bytes as another dtype, is in tensor_view_dtype.py. Joining and copying ops
(cat, stack, flip, roll, repeat, tril, diag, ...) are in tensor_join.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import tensor_functions as F
from .autodiff import Context
from .errors import NonContiguousError, PermutationError, ShapeError
from .tensor_data import TensorData, infer_shape, normalize_dim, strides_from_shape
from .tensor_join import int_list

# Re-exported: what moved to these modules stays importable from here.
from .tensor_pieces import (  # noqa: F401
    Diagonal,
    PieceMethods,
    chunk,
    diagonal,
    diagonal_data,
    getitem,
    iterate,
    narrow,
    select,
    split,
    unbind,
)
from .tensor_view_dtype import view_dtype

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


class ShapeMethods(PieceMethods):
    """Shape and layout methods of Tensor; the views of parts of a tensor come from the mixin it extends."""

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


swapaxes = swapdims = transpose
moveaxis = movedim

__all__ = [
    "permute", "transpose", "swapaxes", "swapdims", "movedim", "moveaxis", "t", "reshape", "squeeze", "unsqueeze",
    "flatten", "unflatten", "narrow", "select", "split", "chunk", "unbind", "diagonal",
]
