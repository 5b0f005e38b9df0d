"""Reductions of Tensor (the ``ReduceMethods`` mixin) and the matching ``mt.`` functions.

``dim`` is an int, a tuple of ints or None (every dim); ``keepdim`` keeps reduced dims as size 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import dtypes
from . import tensor_functions as F
from .errors import DTypeError, ShapeError
from .tensor_data import normalize_dim

if TYPE_CHECKING:
    from .tensor import Tensor

Dim = int | Sequence[int] | None


def reduced_dims(x: Tensor, dim: Dim) -> list[int]:
    """The sorted, non-negative dims that ``dim`` names (all of them for None)."""
    if dim is None:
        return list(range(x.dims))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted({normalize_dim(d, max(x.dims, 1)) for d in dims})


def reduce_with(x: Tensor, fn: type[F.TensorFunction], dim: Dim, keepdim: bool) -> Tensor:
    """Apply the keepdim reduction Function ``fn`` over each dim of ``dim``, then drop them unless ``keepdim``."""
    if x.dims == 0:
        reduced_dims(x, dim)  # validates dim (0 and -1 name the single element)
        return fn.apply(x.view(1), 0).view(())
    dims = reduced_dims(x, dim)
    if dim is None and x.dims > 1 and not keepdim:
        # Full reduction: one pass over a flat copy is cheaper than one pass per dim.
        return fn.apply(x.contiguous().view(x.numel()), 0).view(())
    out = x
    for d in dims:
        out = fn.apply(out, d)
    if keepdim:
        return out
    return out.view(*[s for i, s in enumerate(out.shape) if i not in dims])


def sum(self: Tensor, dim: Dim = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A001
    """Sum over ``dim`` (all dims when None, giving a 0-d tensor); integers and bools sum to int64."""
    x = self
    if dtype is not None:
        x = x.cast(dtype)
    elif x.dtype.kind in "ub" or x.dtype == dtypes.int32:
        x = x.cast(dtypes.int64)
    return reduce_with(x, F.Sum, dim, keepdim)


def mean(self: Tensor, dim: Dim = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Arithmetic mean over ``dim`` (float tensors only, as in PyTorch)."""
    x = self if dtype is None else self.cast(dtype)
    if x.dtype.kind != "f":
        raise DTypeError(f"mean() needs a float tensor, got {x.dtype}; pass dtype= or call .float() first")
    count = 1
    for d in reduced_dims(x, dim):
        count *= x.shape[d] if x.dims else 1
    return x.sum(dim, keepdim) / float(count)


def amax(self: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:
    """Largest value over ``dim``; tied maxima share the gradient evenly."""
    if self.numel() == 0:
        raise ShapeError(f"amax() of an empty tensor of shape {self.shape}")
    return reduce_with(self, F.Max, dim, keepdim)


def amin(self: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:
    """Smallest value over ``dim``; tied minima share the gradient evenly."""
    if self.numel() == 0:
        raise ShapeError(f"amin() of an empty tensor of shape {self.shape}")
    if self.dtype.kind == "b":
        return self.logical_not().amax(dim, keepdim).logical_not()
    return -((-self).amax(dim, keepdim))


def all(self: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where every element over ``dim`` is nonzero (True for an empty tensor)."""
    return (self == 0).any(dim, keepdim).logical_not()


def any(self: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where some element over ``dim`` is nonzero (False for an empty tensor)."""
    nonzero = (self != 0).cast(dtypes.int64)
    if nonzero.dims == 0:
        return nonzero.cast(dtypes.bool_)
    return reduce_with(nonzero, F.Sum, dim, keepdim).cast(dtypes.bool_)


class ReduceMethods:
    """Reduction methods of Tensor."""

    sum = sum
    mean = mean
    amax = amax
    amin = amin
    max = amax
    min = amin
    all = all
    any = any


__all__ = ["sum", "mean", "amax", "amin", "all", "any"]
