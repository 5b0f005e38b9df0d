"""Comparisons and what builds on them (the ``CompareMethods`` mixin) and the matching ``mt.`` functions:
comparisons, logical and bitwise ops, selection by a condition (where, clamp, nan_to_num), closeness (isclose,
allclose, equal), infinity tests (isposinf, isneginf) and membership (isin).

Operands broadcast, and Python numbers are lifted with PyTorch's type promotion (``Tensor._operand``).
Names, arguments, result dtypes and gradients (at ties, zeros and bounds too) follow PyTorch.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context
from .errors import DTypeError
from .tensor_math import _integral, _is_tensor, _pass
from .tensor_search import searchsorted

if TYPE_CHECKING:
    from .tensor import Tensor

ISIN_MATRIX_MAX = 1 << 12
"""isin compares every element with every test element at once (one broadcast ``==``) while elements x
test_elements is at most this many entries; larger inputs go through a sort and a binary search instead."""


class Clamp(F.TensorFunction):
    """min(max(x, lo), hi) in ``dtype``, either bound None; gradients as PyTorch's clamp_backward_min_max."""

    @staticmethod
    def forward(ctx: Context, x: Tensor, lo: Tensor | None, hi: Tensor | None, dtype: np.dtype) -> Tensor:
        ctx.save_for_backward(x, lo, hi)
        out = x if lo is None else x._zip("max", lo, dtype=dtype)
        return out if hi is None else out._zip("min", hi, dtype=dtype)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None, None]:
        x, lo, hi = ctx.saved_values
        need_x, need_lo, need_hi, _ = ctx.needs_input_grad
        grad_x = grad_lo = grad_hi = None
        if need_x:
            inside = x >= lo if hi is None else x <= hi if lo is None else (x >= lo) & (x <= hi)
            grad_x = _pass(inside, d)
        if need_lo:
            grad_lo = _pass(x < lo if hi is None else (x < lo) & (lo < hi), d)
        if need_hi:
            grad_hi = _pass(x > hi if lo is None else (x > hi) | (hi < lo), d)
        return grad_x, grad_lo, grad_hi, None


# --- comparisons: bool results, IEEE nan semantics (nan compares unequal to everything) ---


def lt(self: Tensor, other: Any) -> Tensor:
    """self < other"""
    return F.LT.apply(self, self._operand(other))


def gt(self: Tensor, other: Any) -> Tensor:
    """self > other"""
    return F.GT.apply(self, self._operand(other))


def le(self: Tensor, other: Any) -> Tensor:
    """self <= other"""
    return F.LE.apply(self, self._operand(other))


def ge(self: Tensor, other: Any) -> Tensor:
    """self >= other"""
    return F.GE.apply(self, self._operand(other))


def eq(self: Tensor, other: Any) -> Tensor:
    """self == other"""
    return F.EQ.apply(self, self._operand(other))


def ne(self: Tensor, other: Any) -> Tensor:
    """self != other (True where either is nan)"""
    return F.NE.apply(self, self._operand(other))


# --- logical (any dtype: nonzero is True; bool results) ---


def logical_not(self: Tensor) -> Tensor:
    """x == 0"""
    return self._map("logical_not", dtype=dtypes.bool_)


def logical_and(self: Tensor, other: Any) -> Tensor:
    """(self != 0) and (other != 0)"""
    return self._zip("logical_and", self._operand(other), dtype=dtypes.bool_)


def logical_or(self: Tensor, other: Any) -> Tensor:
    """(self != 0) or (other != 0)"""
    return self._zip("logical_or", self._operand(other), dtype=dtypes.bool_)


def logical_xor(self: Tensor, other: Any) -> Tensor:
    """(self != 0) != (other != 0)"""
    return self._zip("logical_xor", self._operand(other), dtype=dtypes.bool_)


# --- bitwise (integers and bools) ---


def bitwise_and(self: Tensor, other: Any) -> Tensor:
    """self & other"""
    other = self._operand(other)
    _integral(self, "&")
    _integral(other, "&")
    return self._zip("bitwise_and", other)


def bitwise_or(self: Tensor, other: Any) -> Tensor:
    """self | other"""
    other = self._operand(other)
    _integral(self, "|")
    _integral(other, "|")
    return self._zip("bitwise_or", other)


def bitwise_xor(self: Tensor, other: Any) -> Tensor:
    """self ^ other"""
    other = self._operand(other)
    _integral(self, "^")
    _integral(other, "^")
    return self._zip("bitwise_xor", other)


def bitwise_not(self: Tensor) -> Tensor:
    """~x: logical not for bool tensors, two's complement not for integers"""
    _integral(self, "~")
    return self._map("logical_not" if self.dtype.kind == "b" else "bitwise_not")


# --- selection ---


def where(condition: Tensor, input: Any, other: Any) -> Tensor:  # noqa: A002 - PyTorch's names
    """input where condition else other, broadcast; either may be a Python number; differentiable in both"""
    if not _is_tensor(condition) or condition.dtype != dtypes.bool_:
        got = f"a {condition.dtype} tensor of shape {condition.shape}" if _is_tensor(condition) else repr(condition)
        raise DTypeError(f"where() needs a bool condition tensor, got {got}; compare first (x > 0) or call .bool()")
    dtype = dtypes.result_type(input, other)
    a = input if _is_tensor(input) else condition._lift(input, dtype)
    b = other if _is_tensor(other) else condition._lift(other, dtype)
    condition._check_backend(a)
    condition._check_backend(b)
    return F.Where.apply(condition, a, b)


def where_method(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    """x.where(condition, other) is mt.where(condition, x, other)"""
    return where(condition, self, other)


def clamp(self: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002 - PyTorch's names
    """min(max(x, min), max) with either bound None, numbers or tensors (all max when min > max); the gradient
    passes where min <= x <= max"""
    if min is None and max is None:
        raise ValueError(f"clamp() needs min or max (or both), got neither (tensor of shape {self.shape})")
    dtype = dtypes.result_type(*[v for v in (self, min, max) if v is not None])
    lo = None if min is None else self._lift(min, dtype)
    hi = None if max is None else self._lift(max, dtype)
    for bound in (lo, hi):
        if bound is not None:
            self._check_backend(bound)
    return Clamp.apply(self, lo, hi, dtype)


def clamp_min(self: Tensor, min: Any) -> Tensor:  # noqa: A002
    """max(x, min)"""
    return clamp(self, min=min)


def clamp_max(self: Tensor, max: Any) -> Tensor:  # noqa: A002
    """min(x, max)"""
    return clamp(self, max=max)


def nan_to_num(self: Tensor, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
    """nan, +inf, -inf replaced (by default with 0 and the dtype's largest and lowest finite values); the gradient
    passes where x is finite"""
    if self.dtype.kind != "f":
        return self._map("id")
    info = np.finfo(self.dtype)
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    out = where(self.isnan(), float(nan), self)
    out = where(self == math.inf, hi, out)
    return where(self == -math.inf, lo, out)


# --- closeness ---


def isclose(self: Tensor, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """|self - other| <= atol + rtol * |other|, or equal (infs too; nans only with equal_nan); both of one dtype"""
    other = self._operand(other)
    if other.dtype != self.dtype:
        raise DTypeError(f"isclose() needs both tensors of one dtype, got {self.dtype} {self.shape} and {other.dtype} {other.shape}")
    if rtol < 0 or atol < 0:
        raise ValueError(f"isclose() needs rtol >= 0 and atol >= 0, got rtol={rtol}, atol={atol}")
    a, b = self.detach(), other.detach()
    close = a == b
    if equal_nan and a.dtype.kind == "f":
        close = close | (a.isnan() & b.isnan())
    if rtol == 0 and atol == 0:
        return close
    if a.dtype.kind == "b":
        a, b = a.cast(dtypes.get_default_dtype()), b.cast(dtypes.get_default_dtype())
    allowed = (b * rtol).abs() + atol
    actual = (a - b).abs()
    return close | (actual.isfinite() & (actual <= allowed))


def allclose(self: Tensor, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """isclose(...) holds for every element (a Python bool)"""
    return bool(isclose(self, other, rtol, atol, equal_nan).all())


def equal(self: Tensor, other: Tensor) -> bool:
    """same shape and every element equal (a Python bool; nan is never equal)"""
    return self.shape == other.shape and bool((self == other).all())


# --- infinities and membership (bool results, no gradient) ---


def _all_false(x: Tensor) -> Tensor:
    """A new bool tensor of x's shape, all False."""
    return x._view_of(x.backend.zeros(x.shape, dtypes.bool_))


def isposinf(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """True where x is +inf; all False for integer and bool tensors (they hold no infinities), as PyTorch."""
    x = input.detach()
    return x == math.inf if x.dtype.kind == "f" else _all_false(x)


def isneginf(input: Tensor) -> Tensor:  # noqa: A002
    """True where x is -inf; all False for integer and bool tensors, as PyTorch."""
    x = input.detach()
    return x == -math.inf if x.dtype.kind == "f" else _all_false(x)


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """True where an element of ``elements`` equals some element of ``test_elements`` (any shape; either, not both,
    may be a Python number), compared in their promoted dtype (-0.0 equals 0.0; nan is never in); False there
    instead with ``invert``. A bool tensor of elements' shape (0-d for a number), as ``torch.isin``; bool inputs
    are a DTypeError, as in PyTorch. Small inputs compare all pairs; larger ones sort the m test elements and
    binary-search them (``searchsorted``), O((n + m) log(n + m)) with no n x m matrix. ``assume_unique`` is only a
    hint in PyTorch and is accepted and ignored."""
    for name, value in (("elements", elements), ("test_elements", test_elements)):
        if not _is_tensor(value) and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise TypeError(f"isin(): argument '{name}' must be a Tensor or a number, not {type(value).__name__}")
    if not _is_tensor(elements) and not _is_tensor(test_elements):
        raise TypeError(f"isin(): elements and test_elements cannot both be numbers (got {elements!r} and "
                        f"{test_elements!r}); pass at least one Tensor")
    e = elements if _is_tensor(elements) else test_elements._operand(elements)
    t = test_elements if _is_tensor(test_elements) else e._operand(test_elements)
    e._check_backend(t)
    for name, value in (("elements", e), ("test_elements", t)):
        if value.dtype.kind == "b":
            raise DTypeError(f"isin() does not support bool tensors, got {name} of dtype bool (shape {value.shape}); "
                             "compare with == or cast with .int() first")
    dtype = dtypes.result_type(e, t)
    e, t = e.detach().cast(dtype), t.detach().reshape(-1).cast(dtype)
    n, m = e.numel(), t.numel()
    if n == 0 or m == 0:
        found = _all_false(e)
    elif n * m <= ISIN_MATRIX_MAX:
        found = (e.unsqueeze(-1) == t).any(-1)
    else:
        table = t.sort().values  # nan last
        at = searchsorted(table, e).clamp(max=m - 1)  # the first entry >= e (left), or the last entry
        found = F.Gather.apply(table, 0, at.reshape(n)).reshape(*e.shape) == e
    return ~found if invert else found


class CompareMethods:
    """Comparisons, logical and bitwise ops, selection and closeness (methods of Tensor)."""

    lt = less = lt
    gt = greater = gt
    le = less_equal = le
    ge = greater_equal = ge
    eq = eq
    ne = not_equal = ne
    logical_not = logical_not
    logical_and = logical_and
    logical_or = logical_or
    logical_xor = logical_xor
    bitwise_and = bitwise_and
    bitwise_or = bitwise_or
    bitwise_xor = bitwise_xor
    bitwise_not = bitwise_not
    where = where_method
    clamp = clip = clamp
    clamp_min = clamp_min
    clamp_max = clamp_max
    nan_to_num = nan_to_num
    isclose = isclose
    allclose = allclose
    equal = equal
    isposinf = isposinf
    isneginf = isneginf


clip = clamp
less, greater, less_equal, greater_equal, not_equal = lt, gt, le, ge, ne

__all__ = [
    "lt", "less", "gt", "greater", "le", "less_equal", "ge", "greater_equal", "eq", "ne", "not_equal",
    "logical_not", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    "where", "clamp", "clip", "clamp_min", "clamp_max", "nan_to_num", "isclose", "allclose", "equal",
    "isposinf", "isneginf", "isin",
]  # fmt: skip
