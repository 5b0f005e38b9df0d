"""Element-wise ops between tensors (the ``ArithMethods`` mixin) and the matching ``mt.`` functions:
arithmetic, comparisons, logical and bitwise ops, and selection (where, clamp, nan_to_num, isclose).

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
from .tensor_math import _check_divisor, _float_operands, _integral, _is_tensor, _operands, _pass

if TYPE_CHECKING:
    from .tensor import Tensor



class Pow(F.TensorFunction):
    """a ** b; d/da = b a^(b-1) (0 where b == 0), d/db = a^b log a (0 where a == 0 and b >= 0), as in PyTorch."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        out = a._zip("pow", b)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b, out = ctx.saved_values
        need_a, need_b = ctx.needs_input_grad
        grad_a = _pass(b != 0, d * b * Pow.apply(a, b - 1.0)) if need_a else None
        grad_b = _pass((a != 0) | (b < 0), d * out * a.log()) if need_b else None
        return grad_a, grad_b


class _Extremum(F.TensorFunction):
    """maximum/minimum: the gradient goes to the winner, half to each on a tie, to both where one is nan."""

    op, loses = "max", "lt"

    @classmethod
    def forward(cls, ctx: Context, a: Tensor, b: Tensor) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(a, b)
        return a._zip(cls.op, b)

    @classmethod
    def backward(cls, ctx: Context, d: Tensor) -> tuple[Tensor | None, Tensor | None]:  # type: ignore[override]
        a, b = ctx.saved_values
        need_a, need_b = ctx.needs_input_grad

        def share(x: Tensor, y: Tensor) -> Tensor:  # 1 if x wins (or is nan), 1/2 on a tie, 0 if x loses
            return 1.0 - x._zip(cls.loses, y, dtype=d.dtype) - x._zip("eq", y, dtype=d.dtype) * 0.5

        return (d * share(a, b) if need_a else None), (d * share(b, a) if need_b else None)


class Maximum(_Extremum):
    op, loses = "max", "lt"


class Minimum(_Extremum):
    op, loses = "min", "gt"


class Atan2(F.TensorFunction):
    """atan2(a, b), the angle of the point (b, a); d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2) (0 at the origin)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        ctx.save_for_backward(a, b)
        return a._zip("atan2", b)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, Tensor]:
        a, b = ctx.saved_values
        r2 = a * a + b * b
        r2 = r2 + (r2 == 0)  # 1 at the origin, where both numerators are 0
        return d * b / r2, -d * a / r2


class _Modulo(F.TensorFunction):
    """a - q(a / b) * b for the rounding q of the subclass; d/da = 1, d/db = -q(a / b)."""

    @staticmethod
    def compute(a: Tensor, b: Tensor) -> Tensor:
        raise NotImplementedError

    @staticmethod
    def quotient(a: Tensor, b: Tensor) -> Tensor:
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx: Context, a: Tensor, b: Tensor) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(a, b)
        return cls.compute(a, b)

    @classmethod
    def backward(cls, ctx: Context, d: Tensor) -> tuple[Tensor, Tensor | None]:  # type: ignore[override]
        a, b = ctx.saved_values
        return d, (-d * cls.quotient(a, b) if ctx.needs_input_grad[1] else None)


class Remainder(_Modulo):
    compute = staticmethod(lambda a, b: a._zip("remainder", b))
    quotient = staticmethod(lambda a, b: a._zip("floordiv", b))


def _fmod(a: Tensor, b: Tensor) -> Tensor:
    """C's fmod as sign(a) * (|a| mod |b|): on non-negative operands Python's % is exact and equals fmod."""
    dtype = dtypes.result_type(a, b)
    return a._map("sign")._zip("mul", a._map("abs")._zip("remainder", b._map("abs"), dtype=dtype), dtype=dtype)


class Fmod(_Modulo):
    compute = staticmethod(_fmod)
    quotient = staticmethod(lambda a, b: a._zip("div", b).trunc())


class FloorDivide(F.TensorFunction):
    """floor(a / b); piecewise constant, so both gradients are zero (PyTorch has none; floor(a / b) has zero)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor) -> Tensor:
        return a._zip("floordiv", b)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, Tensor]:
        return d._zeros(d.shape), d._zeros(d.shape)


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


# --- binary ---


def add(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """self + alpha * other"""
    return F.Add.apply(self, self._operand(other if alpha == 1 else other * alpha))


def sub(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """self - alpha * other (not defined for two bool tensors, as in PyTorch)"""
    other = self._operand(other if alpha == 1 else other * alpha)
    if self.dtype.kind == "b" and other.dtype.kind == "b":
        raise DTypeError(f"subtraction of two bool tensors ({self.shape} - {other.shape}) is not supported; use ^ or logical_xor()")
    return F.Sub.apply(self, other)


def mul(self: Tensor, other: Any) -> Tensor:
    """self * other"""
    return F.Mul.apply(self, self._operand(other))


def div(self: Tensor, other: Any) -> Tensor:
    """true division self / other (integers give the default float dtype)"""
    return F.Div.apply(self, self._operand(other))


def pow(self: Any, exponent: Any) -> Tensor:  # noqa: A001
    """self ** exponent; either may be a Python number (integer tensors to integer powers stay integers)"""
    base, power = _operands(self, exponent)
    if isinstance(exponent, int) and exponent < 0 and base.dtype.kind in "iub" and power.dtype.kind in "iub":
        raise ValueError(f"integers to negative integer powers are not allowed ({base.dtype} {base.shape} ** {exponent})")
    if base.dtype.kind == "b" and power.dtype.kind == "b":
        raise DTypeError(f"pow of two bool operands is not supported ({base.shape} ** {power.shape}); cast one to int or float")
    return Pow.apply(base, power)


def maximum(self: Any, other: Any) -> Tensor:
    """element-wise max (nan if either is nan); a tie splits the gradient evenly"""
    return Maximum.apply(*_operands(self, other))


def minimum(self: Any, other: Any) -> Tensor:
    """element-wise min (nan if either is nan); a tie splits the gradient evenly"""
    return Minimum.apply(*_operands(self, other))


def floor_divide(self: Any, other: Any) -> Tensor:
    """floor(self / other), Python's // (integer division by zero raises ZeroDivisionError; zero gradient)"""
    a, b = _operands(self, other)
    _check_divisor(a, b, "//")
    return FloorDivide.apply(a, b)


def remainder(self: Any, other: Any) -> Tensor:
    """self - floor(self / other) * other, Python's % (the sign of ``other``; nan for a float 0)"""
    a, b = _operands(self, other)
    _check_divisor(a, b, "%")
    return Remainder.apply(a, b)


def fmod(self: Any, other: Any) -> Tensor:
    """self - trunc(self / other) * other, C's fmod (the sign of ``self``; nan for a float 0)"""
    a, b = _operands(self, other)
    _check_divisor(a, b, "fmod")
    return Fmod.apply(a, b)


def atan2(self: Any, other: Any) -> Tensor:
    """atan(self / other) in the quadrant of the point (other, self), in (-pi, pi]"""
    return Atan2.apply(*_float_operands(self, other))


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


class ArithMethods:
    """Element-wise ops between tensors, and selection (methods of Tensor)."""

    add = add
    sub = subtract = sub
    mul = multiply = mul
    div = divide = true_divide = div
    pow = pow
    maximum = maximum
    minimum = minimum
    floor_divide = floor_divide
    remainder = remainder
    fmod = fmod
    atan2 = arctan2 = atan2
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


subtract, multiply, divide, true_divide, arctan2, clip = sub, mul, div, div, atan2, clamp
less, greater, less_equal, greater_equal, not_equal = lt, gt, le, ge, ne

__all__ = [
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "pow", "maximum", "minimum",
    "floor_divide", "remainder", "fmod", "atan2", "arctan2",
    "lt", "less", "gt", "greater", "le", "less_equal", "ge", "greater_equal", "eq", "ne", "not_equal",
    "logical_not", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    "where", "clamp", "clip", "clamp_min", "clamp_max", "nan_to_num", "isclose", "allclose", "equal",
]  # fmt: skip
