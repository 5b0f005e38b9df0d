"""Element-wise functions of one tensor (the ``MathMethods`` mixin) and the matching ``mt.`` functions.

Arithmetic between tensors is in tensor_arith.py; comparisons, logical and bitwise ops and selection in tensor_compare.py.
``MathMethods`` also takes in the error and gamma functions (tensor_erf_gamma.py) and rounding, sign and the float
predicates (tensor_rounding.py), which this module re-exports with the helpers it shares with them
(tensor_unary_base.py); the inverse trigonometric and hyperbolic functions are in tensor_trig.py.

Each function takes the tensor first, so it serves both as a method (``x.exp()``) and as a module-level
function (``mt.exp(x)``). Python numbers are lifted with PyTorch's type promotion (``Tensor._operand``);
float functions of integer or bool tensors compute in the default float dtype. Names, arguments, result
dtypes and gradients (including the edges: abs'(0) = 0, sqrt'(0) = inf, clamp passes the gradient on
[min, max] inclusive) follow PyTorch.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, TypeGuard

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context, is_grad_enabled
from .errors import DivisionByZeroError

# Re-exported: what moved to these modules stays importable from here.
from .tensor_erf_gamma import (  # noqa: F401
    TWO_OVER_SQRT_PI,
    Digamma,
    Erf,
    Erfc,
    ErfGammaMethods,
    Erfinv,
    Lgamma,
    Polygamma,
    digamma,
    erf,
    erfc,
    erfinv,
    lgamma,
    polygamma,
)
from .tensor_rounding import (  # noqa: F401
    Ceil,
    Floor,
    Round,
    RoundingMethods,
    Sign,
    Trunc,
    ceil,
    fix,
    floor,
    isfinite,
    isinf,
    isnan,
    round,
    sgn,
    sign,
    trunc,
)
from .tensor_unary_base import _float_input, _integral, _not_bool, _Unary  # noqa: F401

if TYPE_CHECKING:
    from .tensor import Tensor

LN2, LN10 = math.log(2.0), math.log(10.0)


# --- helpers ---


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


class MathMethods(ErfGammaMethods, RoundingMethods):
    """Element-wise functions of one tensor (methods of Tensor); the error and gamma functions, rounding, sign and the
    float predicates come from the two mixins it extends."""

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


negative, absolute = neg, abs

__all__ = [
    "neg", "negative", "abs", "absolute", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "square", "reciprocal", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "erf", "erfc", "erfinv",
    "lgamma", "digamma", "polygamma",
    "floor", "ceil", "trunc", "fix", "round", "sign", "sgn", "isnan", "isinf", "isfinite",
]  # fmt: skip
