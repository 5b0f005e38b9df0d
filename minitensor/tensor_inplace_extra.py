"""More in-place methods of Tensor (the ``InplaceExtraMethods`` mixin): comparisons written into self (``eq_`` ...
``not_equal_``), in-place forms of existing out-of-place ops (``tril_`` ... ``baddbmm_``, ``fill_diagonal_``) and the
in-place view ops that change self's shape and strides (``squeeze_`` ... ``swapdims_``); and the ``mt.`` in-place
functions PyTorch has for some of them (``addmv_``, ``clamp_min_``, ``clamp_max_``, ``ldexp_``).

The value ops follow tensor_inplace.py: the out-of-place op runs (on a copy of the old value under grad mode) and its
result is written through self's strides, so views see it and the storage's version counter is bumped; a result
that does not broadcast to self's shape raises ShapeError, one of a higher category than self's dtype DTypeError.
A comparison writes 1/0 in self's dtype. Under grad mode a float self that requires grad (or that is compared with a
tensor that does) is rebased on a node whose gradient is zero for both, as PyTorch's EqBackward.

The view ops give self the view's layout (same storage, new shape and strides) and, when recorded, the history of
the view op applied to a stand-in that holds self's old layout and history: gradients flow back through the old shape,
and a later write through self still reaches the base it views. Each counts as a write (the version counter is
bumped, as in PyTorch), so a graph that saved self refuses to backpropagate. Under grad mode a leaf that requires grad
(or a view of one) cannot be reshaped in place, nor a view made under no_grad of a tensor that requires grad
(GradientError, PyTorch's RuntimeErrors).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import is_grad_enabled
from .errors import DTypeError, GradientError, ShapeError
from .tensor_index import masked_fill
from .tensor_inplace import _check_leaf, _inplace

if TYPE_CHECKING:
    from .tensor import Tensor


def _is_tensor(x: Any) -> bool:
    """Every Tensor is an InplaceExtraMethods (tensor.py imports this module, so Tensor is not importable here)."""
    return isinstance(x, InplaceExtraMethods)


# --- comparisons ---


def _compare_(self: Tensor, op: str, other: Any) -> Tensor:
    """self = (self op other) as 1/0 in self's dtype; recorded with a zero gradient to self and to ``other``."""

    def compute(old: Tensor) -> Tensor:
        value = getattr(old, op)(other).cast(old.dtype)
        if old.dtype.kind != "f" or not is_grad_enabled():
            return value
        for source in (old, other):
            if _is_tensor(source) and source.requires_grad:
                everywhere = old._lift(np.ones(value.shape, dtype=np.bool_), dtypes.bool_)
                value = F.Where.apply(everywhere, value, source.cast(old.dtype))
        return value

    return _inplace(self, compute)


# --- fill_diagonal_ ---


def _diagonal_mask(self: Tensor, wrap: bool) -> np.ndarray:
    """Which elements PyTorch's ``fill_diagonal_`` writes: those at the storage offsets k * sum(strides) from the
    first element (k < min(rows, cols)), and, with ``wrap`` on a matrix more than one row taller than wide, those
    continuing from row cols + 1 (PyTorch's offsets; one outside this tensor's elements writes nothing here)."""
    if self.dims < 2:
        raise ShapeError(f"fill_diagonal_: dimensions must larger than 1, got shape {self.shape}")
    height, width = self.shape[0], self.shape[1]
    if self.dims > 2 and any(size != height for size in self.shape):
        raise ShapeError(f"fill_diagonal_: all dimensions of input must be of equal length, got shape {self.shape}")
    offsets = np.zeros(self.shape, dtype=np.int64)
    for d, (size, stride) in enumerate(zip(self.shape, self.strides)):
        offsets += (np.arange(size, dtype=np.int64) * stride).reshape([size if k == d else 1 for k in range(self.dims)])
    step, count = sum(self.strides), min(height, width)
    targets = np.arange(count, dtype=np.int64) * step
    if wrap and self.dims == 2 and height > width + 1:
        extra = (self.numel() + width) // (width + 1) - count
        targets = np.concatenate([targets, self.strides[0] * (width + 1) + np.arange(extra, dtype=np.int64) * step])
    return np.isin(offsets, targets)


# --- in-place view ops ---


def _view_(self: Tensor, make: Callable[[Tensor], Tensor]) -> Tensor:
    """self given the layout of the view ``make(self)`` (same storage), its history rebased on that view op."""
    _check_leaf(self)
    grad_mode = is_grad_enabled()
    base = self._base
    if grad_mode and self.history is None and base is not None and base.requires_grad:
        raise GradientError(
            f"a view (shape {self.shape}) of a tensor that requires grad was made in no_grad mode and is being "
            "modified in place with grad mode on; make the view with grad mode on, or clone() it"
        )
    if grad_mode and self.requires_grad:
        stand_in = self._alias(self._data)  # self's old layout and history
        stand_in.history, stand_in._requires_grad, stand_in._base = self.history, True, base
        view = make(stand_in)
        if view is not stand_in:
            self.history = view.history
    else:
        view = make(self)
    self._data = view._data
    self._bump_version()
    return self


class InplaceExtraMethods:
    """In-place comparisons, in-place forms of existing ops and in-place view ops of Tensor; each returns self."""

    # --- comparisons: 1/0 in self's dtype ---

    def eq_(self: Any, other: Any) -> Tensor:
        """self = (self == other), broadcast to self's shape, as 1/0 (True/False) in self's dtype."""
        return _compare_(self, "eq", other)

    def ne_(self: Any, other: Any) -> Tensor:
        """self = (self != other) in self's dtype."""
        return _compare_(self, "ne", other)

    def lt_(self: Any, other: Any) -> Tensor:
        """self = (self < other) in self's dtype."""
        return _compare_(self, "lt", other)

    def le_(self: Any, other: Any) -> Tensor:
        """self = (self <= other) in self's dtype."""
        return _compare_(self, "le", other)

    def gt_(self: Any, other: Any) -> Tensor:
        """self = (self > other) in self's dtype."""
        return _compare_(self, "gt", other)

    def ge_(self: Any, other: Any) -> Tensor:
        """self = (self >= other) in self's dtype."""
        return _compare_(self, "ge", other)

    greater_, greater_equal_, less_, less_equal_, not_equal_ = gt_, ge_, lt_, le_, ne_

    # --- in-place forms of existing ops ---

    def tril_(self: Any, diagonal: int = 0) -> Tensor:
        """self = self.tril(diagonal): elements above the ``diagonal``-th diagonal set to 0."""
        return _inplace(self, lambda x: x.tril(diagonal))

    def triu_(self: Any, diagonal: int = 0) -> Tensor:
        """self = self.triu(diagonal): elements below the ``diagonal``-th diagonal set to 0."""
        return _inplace(self, lambda x: x.triu(diagonal))

    def cumsum_(self: Any, dim: int, *, dtype: Any = None) -> Tensor:
        """self = self.cumsum(dim); ``dtype``, if given, must be self's (DTypeError otherwise, as PyTorch)."""
        _same_dtype(self, dtype, "cumsum_")
        return _inplace(self, lambda x: x.cumsum(dim))

    def cumprod_(self: Any, dim: int, *, dtype: Any = None) -> Tensor:
        """self = self.cumprod(dim); ``dtype``, if given, must be self's."""
        _same_dtype(self, dtype, "cumprod_")
        return _inplace(self, lambda x: x.cumprod(dim))

    def heaviside_(self: Any, values: Any) -> Tensor:
        """self = self.heaviside(values) (values of self's dtype)."""
        return _inplace(self, lambda x: x.heaviside(values))

    def ldexp_(self: Any, other: Tensor) -> Tensor:
        """self = self * 2**other (a float self: the float result cannot go into an integer tensor)."""
        return _inplace(self, lambda x: x.ldexp(other))

    def polygamma_(self: Any, n: int) -> Tensor:
        """self = the n-th derivative of digamma at self (float self)."""
        return _inplace(self, lambda x: x.polygamma(n))

    def sgn_(self: Any) -> Tensor:
        """self = self.sgn() (the sign, for real tensors)."""
        return _inplace(self, lambda x: x.sgn())

    def clamp_min_(self: Any, min: Any) -> Tensor:  # noqa: A002 - PyTorch's names
        """self = max(self, min) (a number or a tensor broadcasting to self)."""
        return _inplace(self, lambda x: x.clamp_min(min))

    def clamp_max_(self: Any, max: Any) -> Tensor:  # noqa: A002
        """self = min(self, max)."""
        return _inplace(self, lambda x: x.clamp_max(max))

    def fill_diagonal_(self: Any, fill_value: Any, wrap: bool = False) -> Tensor:
        """``fill_value`` (cast to self's dtype) on the main diagonal of a matrix (or of a tensor whose dims are all
        of one size); ``wrap`` restarts it every cols + 1 rows of a tall matrix, as PyTorch."""
        mask = self._lift(_diagonal_mask(self, wrap), dtypes.bool_)
        return _inplace(self, lambda x: masked_fill(x, mask, fill_value), check_cast=False)

    def addmm_(self: Any, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """self = beta * self + alpha * (mat1 @ mat2); the product must have self's shape."""
        return _inplace(self, lambda x: x.addmm(mat1, mat2, beta=beta, alpha=alpha))

    def addmv_(self: Any, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """self = beta * self + alpha * (mat @ vec); self is a vector of mat's row count."""
        return _inplace(self, lambda x: x.addmv(mat, vec, beta=beta, alpha=alpha))

    def addr_(self: Any, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """self = beta * self + alpha * outer(vec1, vec2)."""
        return _inplace(self, lambda x: x.addr(vec1, vec2, beta=beta, alpha=alpha))

    def addbmm_(self: Any, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """self = beta * self + alpha * sum_i batch1[i] @ batch2[i]."""
        return _inplace(self, lambda x: x.addbmm(batch1, batch2, beta=beta, alpha=alpha))

    def baddbmm_(self: Any, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """self = beta * self + alpha * bmm(batch1, batch2); self has the product's (b, n, m) shape."""
        return _inplace(self, lambda x: x.baddbmm(batch1, batch2, beta=beta, alpha=alpha))

    # --- in-place view ops: self's shape and strides change, its storage does not ---

    def squeeze_(self: Any, dim: int | Sequence[int] | None = None) -> Tensor:
        """Drop size-1 dims (all of them, or those among ``dim``) from self's shape."""
        return _view_(self, lambda x: x.squeeze(dim))

    def unsqueeze_(self: Any, dim: int) -> Tensor:
        """Insert a size-1 dim at ``dim`` in self's shape."""
        return _view_(self, lambda x: x.unsqueeze(dim))

    def t_(self: Any) -> Tensor:
        """Transpose self, a tensor of at most 2 dims (0-D and 1-D stay as they are)."""
        return _view_(self, lambda x: x.t())

    def transpose_(self: Any, dim0: int, dim1: int) -> Tensor:
        """Swap dims ``dim0`` and ``dim1`` of self."""
        return _view_(self, lambda x: x.transpose(dim0, dim1))

    def swapaxes_(self: Any, axis0: int, axis1: int) -> Tensor:
        """``transpose_(axis0, axis1)`` (NumPy's name)."""
        return _view_(self, lambda x: x.transpose(axis0, axis1))

    def swapdims_(self: Any, dim0: int, dim1: int) -> Tensor:
        """``transpose_(dim0, dim1)``."""
        return _view_(self, lambda x: x.transpose(dim0, dim1))


def _same_dtype(self: Tensor, dtype: Any, name: str) -> None:
    """DTypeError unless ``dtype`` is None or self's dtype (an in-place scan cannot change the dtype)."""
    if dtype is not None and dtypes.as_dtype(dtype) != self.dtype:
        raise DTypeError(f"{name}: Bad in-place call: input tensor dtype {self.dtype} and output tensor dtype "
                         f"{dtypes.as_dtype(dtype)} should match")
