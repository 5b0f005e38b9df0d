"""Shape and layout methods of Tensor (bound in its class body): views that share storage, copies only where needed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import tensor_functions as F
from .tensor_data import normalize_dim

if TYPE_CHECKING:
    from .tensor import Tensor


def permute(self: Tensor, *order: int) -> Tensor:
    if len(order) == 1 and isinstance(order[0], (tuple, list)):
        order = tuple(order[0])
    return F.Permute.apply(self, tuple(o % self.dims if -self.dims <= o < 0 else o for o in order))


def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    order = list(range(self.dims))
    d0, d1 = normalize_dim(dim0, self.dims), normalize_dim(dim1, self.dims)
    order[d0], order[d1] = order[d1], order[d0]
    return self.permute(*order)


def view(self: Tensor, *shape: Any) -> Tensor:
    """Same data read as ``shape``; needs contiguous data (see ``reshape``)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return F.View.apply(self, tuple(shape))


def reshape(self: Tensor, *shape: Any) -> Tensor:
    """Like ``view``, copying first when the data is not contiguous."""
    return (self if self._data.is_contiguous() else self.contiguous()).view(*shape)


def contiguous(self: Tensor) -> Tensor:
    """Row-major data (a copy only when needed)."""
    return self if self._data.is_contiguous() else F.Contiguous.apply(self)


def expand(self: Tensor, *shape: Any) -> Tensor:
    """Broadcast to ``shape`` without copying (stride 0 along new/stretched dims)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return self if tuple(shape) == self.shape else F.Expand.apply(self, tuple(shape))


def unsqueeze(self: Tensor, dim: int) -> Tensor:
    dim = normalize_dim(dim, self.dims + 1)
    return self.reshape(*self.shape[:dim], 1, *self.shape[dim:])


def squeeze(self: Tensor, dim: int | None = None) -> Tensor:
    if dim is None:
        return self.reshape(*[s for s in self.shape if s != 1])
    dim = normalize_dim(dim, self.dims)
    if self.shape[dim] != 1:
        return self
    return self.reshape(*(self.shape[:dim] + self.shape[dim + 1 :]))


def flatten(self: Tensor, start_dim: int = 0) -> Tensor:
    start = normalize_dim(start_dim, self.dims) if self.dims else 0
    return self.reshape(*self.shape[:start], -1)


def getitem(self: Tensor, key: Any) -> Tensor:
    key = key if isinstance(key, tuple) else (key,)
    return F.Slice.apply(self, key)


def iterate(self: Tensor) -> Any:
    for i in range(len(self)):
        yield self[i]


@property  # type: ignore[misc]
def T(self: Tensor) -> Tensor:
    """All dims reversed (the transpose of a matrix)."""
    return self.permute(*reversed(range(self.dims)))


class ShapeMethods:
    """Shape and layout methods of Tensor."""

    T = T
    permute = permute
    transpose = transpose
    view = view
    reshape = reshape
    contiguous = contiguous
    expand = expand
    unsqueeze = unsqueeze
    squeeze = squeeze
    flatten = flatten
    __getitem__ = getitem
    __iter__ = iterate


__all__ = ["permute", "transpose", "reshape", "unsqueeze", "squeeze", "flatten"]
