"""More views of Tensor (the ``StridedMethods`` mixin): ``unfold``'s sliding windows and the conjugate transposes
``H``, ``mH`` and ``adjoint`` (``mt.adjoint``); the other views are in tensor_shape.py.

``x.unfold(dimension, size, step)`` shares x's storage: dim ``dimension`` becomes the (len - size) // step + 1
window starts (stride step * its stride) and a new last dim of length ``size`` walks each window (that dim's
stride), so overlapping windows (step < size) read the same elements. Its gradient sums the windows back: the
windows fall into ceil(size / step) groups of non-overlapping ones (every ceil(size / step)-th window), each
written into zeros through its own view (PutView) and the groups added, so it differentiates again. minitensor
has real dtypes only, so the conjugate transposes are the transposes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from . import tensor_functions as F
from .autodiff import Context
from .errors import ShapeError
from .tensor_data import TensorData, normalize_dim

if TYPE_CHECKING:
    from .tensor import Tensor


class _Windows:
    """The view of ``count`` windows of ``size`` along ``dim``, the first starting at ``start``, each ``step`` after
    the last (a picklable, comparable view function of TensorData, as PutView takes)."""

    def __init__(self, dim: int, size: int, step: int, start: int, count: int) -> None:
        self.dim, self.size, self.step, self.start, self.count = dim, size, step, start, count

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Windows) and vars(self) == vars(other)

    def __hash__(self) -> int:
        return hash(tuple(vars(self).values()))

    def __call__(self, data: TensorData) -> TensorData:
        shape, strides = list(data.shape), list(data.strides)
        along = strides[self.dim]
        shape[self.dim], strides[self.dim] = self.count, along * self.step
        offset = self.start * along
        storage = data.storage[offset:] if offset and self.count and math.prod(shape) and self.size else data.storage
        return TensorData(storage, (*shape, self.size), (*strides, along))


class Unfold(F.TensorFunction):
    """The windows as a view of ``a``; the gradient sums each element's windows (see the module docstring)."""

    is_view = True
    higher_order = True

    @staticmethod
    def forward(ctx: Context, a: Tensor, dim: int, size: int, step: int) -> Tensor:
        count = (a.shape[dim] - size) // step + 1 if a.dims else 1
        ctx.save_for_backward(a.shape, dim, size, step, count)
        if a.dims == 0:
            return a._alias(TensorData(a._data.storage, (1,), (1,)))
        return a._alias(_Windows(dim, size, step, 0, count)(a._data))

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, None, None, None]:
        shape, dim, size, step, count = ctx.saved_values
        if not shape:
            return d.reshape(()), None, None, None
        groups = max(1, min(-(-size // step), count))
        grad: Tensor | None = None
        for r in range(groups):
            key = (slice(None),) * dim + (slice(r, None, groups),)
            part = d[key] if groups > 1 else d
            n = part.shape[dim]
            piece = F.PutView.apply(part, shape, _Windows(dim, size, step * groups, r * step, n))
            grad = piece if grad is None else grad + piece
        assert grad is not None
        return grad, None, None, None


def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Every slice of length ``size`` along ``dimension``, ``step`` apart, as a view: that dim becomes the
    (len - size) // step + 1 window starts and a new last dim of length ``size`` holds each window (a 0-d tensor is
    read as one element)."""
    for name, value in (("dimension", dimension), ("size", size), ("step", step)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"unfold(): argument '{name}' must be int, not {type(value).__name__}")
    dim = normalize_dim(dimension, max(self.dims, 1))
    length = self.shape[dim] if self.dims else 1
    if size > length:
        raise ShapeError(f"maximum size for tensor at dimension {dim} is {length} but size is {size} (shape {self.shape})")
    if size < 0:
        raise ShapeError(f"size is {size} but must be >= 0 (shape {self.shape})")
    if step <= 0:
        raise ValueError(f"step is {step} but must be > 0")
    return Unfold.apply(self, dim, size, step)


def _matrices(self: Tensor, name: str) -> None:
    if self.dims < 2:
        raise ShapeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got {self.dims}-D "
                         f"tensor (shape {self.shape}).")


def adjoint(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """The last two dims swapped and conjugated, a view (the transpose ``mT``: minitensor's dtypes are real)."""
    _matrices(input, "adjoint()")
    return input.transpose(-2, -1)


@property  # type: ignore[misc]
def H(self: Tensor) -> Tensor:  # noqa: N802 - PyTorch's name
    """The conjugate transpose of a matrix, a view (its transpose: real dtypes); a 0-d tensor itself."""
    if self.dims not in (0, 2):
        hint = "; for batches of matrices, consider using tensor.mH" if self.dims > 2 else ""
        raise ShapeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.dims}-D tensor "
                         f"(shape {self.shape}){hint}")
    return self if self.dims == 0 else self.transpose(0, 1)


@property  # type: ignore[misc]
def mH(self: Tensor) -> Tensor:  # noqa: N802 - PyTorch's name
    """The last two dims swapped and conjugated (a batch of matrices' adjoints), a view."""
    _matrices(self, "mH")
    return self.transpose(-2, -1)


class StridedMethods:
    """unfold, H, mH and adjoint of Tensor."""

    unfold = unfold
    adjoint = adjoint
    H = H
    mH = mH


__all__ = ["adjoint"]
