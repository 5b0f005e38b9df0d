"""Element-wise functions of one tensor (the ``MathMethods`` mixin) and the matching ``mt.`` functions.

Arithmetic between tensors is in tensor_arith.py; comparisons, logical and bitwise ops and selection in tensor_compare.py.

Each function takes the tensor first, so it serves both as a method (``x.exp()``) and as a module-level
function (``mt.exp(x)``). Python numbers are lifted with PyTorch's type promotion (``Tensor._operand``);
float functions of integer or bool tensors compute in the default float dtype. Names, arguments, result
dtypes and gradients (including the edges: abs'(0) = 0, sqrt'(0) = inf, clamp passes the gradient on
[min, max] inclusive) follow PyTorch.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, TypeGuard

from . import dtypes, operators_special
from . import tensor_functions as F
from .autodiff import Context, is_grad_enabled
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
    if a.dtype.kind in "iub" and b.dtype.kind in "iub" and (b.item() == 0 if b.numel() == 1 else bool((b == 0).any())):
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


class Erfc(_Unary):
    op = "erfc"
    derivative = staticmethod(lambda a, out: (-(a * a)).exp() * -TWO_OVER_SQRT_PI)


class Erfinv(_Unary):
    op = "erfinv"
    derivative = staticmethod(lambda a, out: (out * out).exp() * operators_special.SQRT_PI_2)


class Lgamma(_Unary):
    op = "lgamma"
    derivative = staticmethod(lambda a, out: digamma(a))


class Digamma(_Unary):
    op = "digamma"
    derivative = staticmethod(lambda a, out: polygamma(1, a))


class Polygamma(F.TensorFunction):
    """out = psi^(n)(a) by the binary kernel ``polygamma`` (n a constant operand); the gradient is psi^(n+1)(a)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, n: int) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(a)
        ctx.n = n  # type: ignore[attr-defined]
        return a._lift(float(n))._zip("polygamma", a)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, None]:  # type: ignore[override]
        (a,) = ctx.saved_values
        return d * polygamma(ctx.n + 1, a), None  # type: ignore[attr-defined]


class ReLU(F.TensorFunction):
    """max(x, 0) (nan stays nan); the gradient is d where x > 0, else 0 (0 at 0, as in PyTorch)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor) -> Tensor:
        ctx.save_for_backward(a)
        return a._map("relu")

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        (a,) = ctx.saved_values
        if is_grad_enabled():  # create_graph: differentiable in d
            return _pass(a > 0, d)
        return a._zip("relu_back", d)


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


def erfc(self: Tensor) -> Tensor:
    """1 - erf(x), accurate in the right tail (libm's erfc)"""
    return Erfc.apply(_float_input(self))


def erfinv(self: Tensor) -> Tensor:
    """the inverse error function: +-inf at +-1, nan outside [-1, 1] (a few ulps in float64)"""
    return Erfinv.apply(_float_input(self))


def lgamma(self: Tensor) -> Tensor:
    """log|Gamma(x)| (+inf at 0, -1, -2, ... and +-inf); the gradient is digamma(x)"""
    return Lgamma.apply(_float_input(self))


def digamma(self: Tensor) -> Tensor:
    """psi(x) = d/dx log Gamma(x) (as torch: -inf at +0, +inf at -0, nan at negative integers); the gradient is
    polygamma(1, x)"""
    return Digamma.apply(_float_input(self))


def polygamma(n: int, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """psi^(n)(x), the n-th derivative of digamma, for an integer n >= 0 (to ~1e-15 relative in float64 for x > 0);
    the gradient is polygamma(n + 1, x)"""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise ValueError(f"polygamma(n, x) does not support negative n, got {n}")
    if not _is_tensor(input):
        raise TypeError(f"polygamma(): argument 'input' (position 2) must be Tensor, not {type(input).__name__}")
    return Polygamma.apply(_float_input(input), n)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    """x.polygamma(n) = polygamma(n, x)"""
    return polygamma(n, self)


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
    """-1, 0 or 1 in the input's dtype (bool stays bool; zero gradient; 0 at nan, as in PyTorch). ``sgn`` is the same
    function (PyTorch's sgn differs from sign only for complex tensors, which minitensor does not have)"""
    return Sign.apply(self) if self.dtype.kind == "f" else self._map("sign")


def isnan(self: Tensor) -> Tensor:
    """True where x is nan"""
    return self._map("isnan", dtype=dtypes.bool_)


def isinf(self: Tensor) -> Tensor:
    """True where x is +inf or -inf"""
    return self._map("isinf", dtype=dtypes.bool_)


def isfinite(self: Tensor) -> Tensor:
    """True where x is neither inf nor nan"""
    return self._map("isfinite", dtype=dtypes.bool_)


class MathMethods:
    """Element-wise functions of one tensor (methods of Tensor)."""

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
    erfc = erfc
    erfinv = erfinv
    lgamma = lgamma
    digamma = digamma
    polygamma = _polygamma_method
    floor = floor
    ceil = ceil
    trunc = fix = trunc
    round = round
    sign = sgn = sign
    isnan = isnan
    isinf = isinf
    isfinite = isfinite


negative, absolute, fix, sgn = neg, abs, trunc, sign

__all__ = [
    "neg", "negative", "abs", "absolute", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "square", "reciprocal", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "erf", "erfc", "erfinv",
    "lgamma", "digamma", "polygamma",
    "floor", "ceil", "trunc", "fix", "round", "sign", "sgn", "isnan", "isinf", "isfinite",
]  # fmt: skip
