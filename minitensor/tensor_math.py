"""Element-wise math of Tensor (the ``MathMethods`` mixin) and the matching ``mt.`` functions.

Each function takes the tensor first, so it serves both as a method (``x.exp()``) and as a module-level
function (``mt.exp(x)``). Python numbers are lifted with PyTorch's type promotion (``Tensor._operand``);
float functions of integer or bool tensors compute in the default float dtype. Names, arguments, result
dtypes and gradients (including the edges: abs'(0) = 0, sqrt'(0) = inf, clamp passes the gradient on
[min, max] inclusive) follow PyTorch.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context
from .errors import DivisionByZeroError, DTypeError

if TYPE_CHECKING:
    from .tensor import Tensor

LN2, LN10 = math.log(2.0), math.log(10.0)
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# --- helpers ---


def _float_input(x: Tensor) -> Tensor:
    """Integer and bool tensors become the default float dtype (``exp`` of an int tensor is a float tensor)."""
    return x if x.dtype.kind == "f" else x.cast(dtypes.get_default_dtype())


def _integral(x: Tensor, name: str) -> None:
    if x.dtype.kind not in "iub":
        raise DTypeError(f"{name} needs integer or bool tensors, got {x.dtype} (shape {x.shape})")


def _not_bool(x: Tensor, name: str, hint: str = "cast with .int() or .float() first") -> None:
    if x.dtype.kind == "b":
        raise DTypeError(f"{name}() is not supported for bool tensors (shape {x.shape}); {hint}")


def _is_tensor(x: Any) -> TypeGuard[Tensor]:
    """Every Tensor is a MathMethods (tensor.py imports this module, so Tensor itself is not importable here)."""
    return isinstance(x, MathMethods)


def _operands(a: Any, b: Any) -> tuple[Tensor, Tensor]:
    """Both operands as tensors; a Python number on either side is lifted with PyTorch's promotion."""
    if _is_tensor(a):
        return a, a._operand(b)
    return b._operand(a), b


def _float_operands(a: Any, b: Any) -> tuple[Tensor, Tensor]:
    """Operands of a float function (atan2): integer and bool tensors become the promoted float dtype."""
    a, b = _operands(a, b)
    dtype = dtypes.float_result(dtypes.result_type(a, b))
    return (a if a.dtype.kind == "f" else a.cast(dtype)), (b if b.dtype.kind == "f" else b.cast(dtype))


def _check_divisor(a: Tensor, b: Tensor, symbol: str) -> None:
    """Integer division by zero has no integer result: raise (as PyTorch does) instead of storing garbage."""
    if a.dtype.kind in "iub" and b.dtype.kind in "iub" and bool((b == 0).any()):
        raise DivisionByZeroError(f"integer division by zero in {a.dtype} {a.shape} {symbol} {b.dtype} {b.shape}")


def _pass(mask: Tensor, d: Tensor) -> Tensor:
    """d where ``mask`` holds, else 0 (a 0 that stays 0 even where d is inf or nan)."""
    return F.Where.apply(mask, d, d._lift(0.0))


# --- Function classes for the ops tensor_functions.py does not have ---


class _Unary(F.TensorFunction):
    """out = op(a); the gradient is d * ``derivative(a, out)``."""

    op = "id"

    @staticmethod
    def derivative(a: Tensor, out: Tensor) -> Tensor:
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx: Context, a: Tensor) -> Tensor:  # type: ignore[override]
        out = a._map(cls.op)
        ctx.save_for_backward(a, out)
        return out

    @classmethod
    def backward(cls, ctx: Context, d: Tensor) -> Tensor:  # type: ignore[override]
        a, out = ctx.saved_values
        return d * cls.derivative(a, out)


class Exp2(_Unary):
    op = "exp2"
    derivative = staticmethod(lambda a, out: out * LN2)


class Expm1(_Unary):
    op = "expm1"
    derivative = staticmethod(lambda a, out: out + 1.0)


class Log2(_Unary):
    op = "log2"
    derivative = staticmethod(lambda a, out: (a * LN2).reciprocal())


class Log10(_Unary):
    op = "log10"
    derivative = staticmethod(lambda a, out: (a * LN10).reciprocal())


class Log1p(_Unary):
    op = "log1p"
    derivative = staticmethod(lambda a, out: (a + 1.0).reciprocal())


class Rsqrt(_Unary):
    op = "rsqrt"
    derivative = staticmethod(lambda a, out: out * out * out * -0.5)


class Sin(_Unary):
    op = "sin"
    derivative = staticmethod(lambda a, out: a.cos())


class Cos(_Unary):
    op = "cos"
    derivative = staticmethod(lambda a, out: -a.sin())


class Tan(_Unary):
    op = "tan"
    derivative = staticmethod(lambda a, out: out * out + 1.0)


class Erf(_Unary):
    op = "erf"
    derivative = staticmethod(lambda a, out: (-(a * a)).exp() * TWO_OVER_SQRT_PI)


class ReLU(F.TensorFunction):
    """max(x, 0) (nan stays nan); the gradient is d where x > 0, else 0 (0 at 0, as in PyTorch)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        ctx.save_for_backward(a)
        return a._map("relu")

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        return ctx.saved_values[0]._zip("relu_back", d)


class _Step(F.TensorFunction):
    """A piecewise-constant op (floor, sign, ...): out = op(a); the gradient is zero, as in PyTorch."""

    op = "id"

    @classmethod
    def forward(cls, ctx: Context, a: Tensor) -> Tensor:  # type: ignore[override]
        return a._map(cls.op)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        return d._zeros(d.shape)


class Floor(_Step):
    op = "floor"


class Ceil(_Step):
    op = "ceil"


class Round(_Step):
    op = "round"


class Trunc(_Step):
    op = "trunc"


class Sign(_Step):
    op = "sign"


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
        grad_a = _pass(b != 0, d * b * a._zip("pow", b - 1.0)) if need_a else None
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


# --- unary ---


def neg(self: Tensor) -> Tensor:
    """-x"""
    _not_bool(self, "neg", "use ~ or logical_not() to invert a mask")
    return F.Neg.apply(self)


def abs(self: Tensor) -> Tensor:  # noqa: A001 - PyTorch's name
    """|x|; the gradient is sign(x) (0 at 0)"""
    _not_bool(self, "abs")
    return F.Abs.apply(self)


def exp(self: Tensor) -> Tensor:
    """e^x"""
    return F.Exp.apply(_float_input(self))


def exp2(self: Tensor) -> Tensor:
    """2^x"""
    return Exp2.apply(_float_input(self))


def expm1(self: Tensor) -> Tensor:
    """e^x - 1, accurate near 0"""
    return Expm1.apply(_float_input(self))


def log(self: Tensor) -> Tensor:
    """natural log (-inf at 0, nan below)"""
    return F.Log.apply(_float_input(self))


def log2(self: Tensor) -> Tensor:
    """base-2 log (-inf at 0, nan below)"""
    return Log2.apply(_float_input(self))


def log10(self: Tensor) -> Tensor:
    """base-10 log (-inf at 0, nan below)"""
    return Log10.apply(_float_input(self))


def log1p(self: Tensor) -> Tensor:
    """log(1 + x), accurate near 0 (-inf at -1, nan below)"""
    return Log1p.apply(_float_input(self))


def sqrt(self: Tensor) -> Tensor:
    """square root (nan below 0; the gradient at 0 is inf)"""
    return F.Sqrt.apply(_float_input(self))


def rsqrt(self: Tensor) -> Tensor:
    """1 / sqrt(x) (inf at 0, nan below)"""
    return Rsqrt.apply(_float_input(self))


def square(self: Tensor) -> Tensor:
    """x * x (bool tensors give int64, as in PyTorch)"""
    x = self.cast(dtypes.int64) if self.dtype.kind == "b" else self
    return x * x


def reciprocal(self: Tensor) -> Tensor:
    """1 / x (inf at 0)"""
    return F.Inv.apply(_float_input(self))


def sin(self: Tensor) -> Tensor:
    """sine"""
    return Sin.apply(_float_input(self))


def cos(self: Tensor) -> Tensor:
    """cosine"""
    return Cos.apply(_float_input(self))


def tan(self: Tensor) -> Tensor:
    """tangent"""
    return Tan.apply(_float_input(self))


def tanh(self: Tensor) -> Tensor:
    """hyperbolic tangent"""
    return F.Tanh.apply(_float_input(self))


def sigmoid(self: Tensor) -> Tensor:
    """1 / (1 + e^-x)"""
    return F.Sigmoid.apply(_float_input(self))


def relu(self: Tensor) -> Tensor:
    """max(x, 0); the gradient at 0 is 0 (integer tensors stay integers)"""
    _not_bool(self, "relu")
    return ReLU.apply(self)


def erf(self: Tensor) -> Tensor:
    """the error function 2/sqrt(pi) * integral_0^x e^(-t^2) dt"""
    return Erf.apply(_float_input(self))


def _rounded(self: Tensor, fn: type[_Step], name: str) -> Tensor:
    """A rounding op: integer tensors come back as an unchanged copy of their dtype; bool is an error."""
    _not_bool(self, name)
    return fn.apply(self) if self.dtype.kind == "f" else self._map("id")


def floor(self: Tensor) -> Tensor:
    """largest integer <= x (zero gradient)"""
    return _rounded(self, Floor, "floor")


def ceil(self: Tensor) -> Tensor:
    """smallest integer >= x (zero gradient)"""
    return _rounded(self, Ceil, "ceil")


def trunc(self: Tensor) -> Tensor:
    """x rounded toward zero (zero gradient)"""
    return _rounded(self, Trunc, "trunc")


def round(self: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001
    """x rounded to ``decimals`` decimal places, ties to even (zero gradient)"""
    if decimals == 0 or self.dtype.kind != "f":
        if decimals != 0:
            raise DTypeError(f"round(decimals={decimals}) needs a float tensor, got {self.dtype} (shape {self.shape})")
        return _rounded(self, Round, "round")
    scale = 10.0 ** (decimals if decimals > 0 else -decimals)
    return Round.apply(self * scale) / scale if decimals > 0 else Round.apply(self / scale) * scale


def sign(self: Tensor) -> Tensor:
    """-1, 0 or 1 in the input's dtype (bool stays bool; zero gradient)"""
    return Sign.apply(self) if self.dtype.kind == "f" else self._map("sign")


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


def isnan(self: Tensor) -> Tensor:
    """True where x is nan"""
    return self._map("isnan", dtype=dtypes.bool_)


def isinf(self: Tensor) -> Tensor:
    """True where x is +inf or -inf"""
    return self._map("isinf", dtype=dtypes.bool_)


def isfinite(self: Tensor) -> Tensor:
    """True where x is neither inf nor nan"""
    return self._map("isfinite", dtype=dtypes.bool_)


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


class MathMethods:
    """Element-wise methods of Tensor."""

    neg = negative = neg
    abs = absolute = abs
    exp = exp
    exp2 = exp2
    expm1 = expm1
    log = log
    log2 = log2
    log10 = log10
    log1p = log1p
    sqrt = sqrt
    rsqrt = rsqrt
    square = square
    reciprocal = reciprocal
    sin = sin
    cos = cos
    tan = tan
    tanh = tanh
    sigmoid = sigmoid
    relu = relu
    erf = erf
    floor = floor
    ceil = ceil
    trunc = fix = trunc
    round = round
    sign = sign
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
    isnan = isnan
    isinf = isinf
    isfinite = isfinite
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


negative, absolute, fix, subtract, multiply, divide, true_divide, arctan2, clip = (
    neg, abs, trunc, sub, mul, div, div, atan2, clamp,
)  # fmt: skip
less, greater, less_equal, greater_equal, not_equal = lt, gt, le, ge, ne

__all__ = [
    "neg", "negative", "abs", "absolute", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "square", "reciprocal", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "erf",
    "floor", "ceil", "trunc", "fix", "round", "sign",
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "pow", "maximum", "minimum",
    "floor_divide", "remainder", "fmod", "atan2", "arctan2",
    "lt", "less", "gt", "greater", "le", "less_equal", "ge", "greater_equal", "eq", "ne", "not_equal",
    "isnan", "isinf", "isfinite", "logical_not", "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    "where", "clamp", "clip", "clamp_min", "clamp_max", "nan_to_num", "isclose", "allclose", "equal",
]  # fmt: skip
