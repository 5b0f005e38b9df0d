"""Element-wise math of Tensor (the ``MathMethods`` mixin) and the matching ``mt.`` functions.

Each function takes the tensor first, so it serves both as a method (``x.exp()``) and as a module-level
function (``mt.exp(x)``). Python numbers are lifted with PyTorch's type promotion (``Tensor._operand``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import dtypes
from . import tensor_functions as F
from .errors import DTypeError

if TYPE_CHECKING:
    from .tensor import Tensor


def _float_input(x: Tensor) -> Tensor:
    """Integer and bool tensors become the default float dtype (``exp`` of an int tensor is a float tensor)."""
    return x if x.dtype.kind == "f" else x.cast(dtypes.get_default_dtype())


def _integral(x: Tensor, name: str) -> None:
    if x.dtype.kind not in "iub":
        raise DTypeError(f"{name} needs integer or bool tensors, got {x.dtype} (shape {x.shape})")


# --- unary ---


def neg(self: Tensor) -> Tensor:
    """-x"""
    if self.dtype.kind == "b":
        raise DTypeError("negation of a bool tensor is not supported; use ~ or logical_not()")
    return F.Neg.apply(self)


def exp(self: Tensor) -> Tensor:
    """e^x"""
    return F.Exp.apply(_float_input(self))


def log(self: Tensor) -> Tensor:
    """natural log (-inf at 0, nan below)"""
    return F.Log.apply(_float_input(self))


def sigmoid(self: Tensor) -> Tensor:
    """1 / (1 + e^-x)"""
    return F.Sigmoid.apply(_float_input(self))


def relu(self: Tensor) -> Tensor:
    """max(x, 0)"""
    return F.ReLU.apply(self)


def tanh(self: Tensor) -> Tensor:
    """hyperbolic tangent"""
    return F.Tanh.apply(_float_input(self))


def abs(self: Tensor) -> Tensor:  # noqa: A001 - PyTorch's name
    """|x|"""
    return F.Abs.apply(self)


def sqrt(self: Tensor) -> Tensor:
    """square root (nan below 0)"""
    return F.Sqrt.apply(_float_input(self))


def reciprocal(self: Tensor) -> Tensor:
    """1 / x"""
    return F.Inv.apply(_float_input(self))


# --- binary ---


def add(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """self + alpha * other"""
    return F.Add.apply(self, self._operand(other if alpha == 1 else other * alpha))


def sub(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """self - alpha * other"""
    return F.Sub.apply(self, self._operand(other if alpha == 1 else other * alpha))


def mul(self: Tensor, other: Any) -> Tensor:
    """self * other"""
    return F.Mul.apply(self, self._operand(other))


def div(self: Tensor, other: Any) -> Tensor:
    """true division self / other (integers give the default float dtype)"""
    return F.Div.apply(self, self._operand(other))


def pow(self: Tensor, exponent: Any) -> Tensor:  # noqa: A001
    """self ** exponent (integer tensors to integer powers stay integers)"""
    return F.Pow.apply(self, self._operand(exponent))


def maximum(self: Tensor, other: Any) -> Tensor:
    """element-wise max (nan if either is nan); a tie splits the gradient evenly"""
    return F.Maximum.apply(self, self._operand(other))


def minimum(self: Tensor, other: Any) -> Tensor:
    """element-wise min (nan if either is nan); a tie splits the gradient evenly"""
    return -F.Maximum.apply(-self, -self._operand(other))


def floor_divide(self: Tensor, other: Any) -> Tensor:
    """floor(self / other), Python's // (integer division by zero raises ZeroDivisionError)"""
    other = self._operand(other)
    if self.dtype.kind in "iub" and other.dtype.kind in "iub" and bool((other == 0).any()):
        raise ZeroDivisionError(f"integer floor division by zero ({self.shape} // {other.shape})")
    return self._zip("floordiv", other)


def remainder(self: Tensor, other: Any) -> Tensor:
    """self - floor(self / other) * other, Python's % (the result has the sign of ``other``)"""
    other = self._operand(other)
    if self.dtype.kind in "iub" and other.dtype.kind in "iub" and bool((other == 0).any()):
        raise ZeroDivisionError(f"integer modulo by zero ({self.shape} % {other.shape})")
    return self._zip("remainder", other)


# --- comparisons: bool results, IEEE nan semantics ---


def lt(self: Tensor, other: Any) -> Tensor:
    return F.LT.apply(self, self._operand(other))


def gt(self: Tensor, other: Any) -> Tensor:
    return F.GT.apply(self, self._operand(other))


def le(self: Tensor, other: Any) -> Tensor:
    return F.LE.apply(self, self._operand(other))


def ge(self: Tensor, other: Any) -> Tensor:
    return F.GE.apply(self, self._operand(other))


def eq(self: Tensor, other: Any) -> Tensor:
    return F.EQ.apply(self, self._operand(other))


def ne(self: Tensor, other: Any) -> Tensor:
    return F.NE.apply(self, self._operand(other))


# --- bitwise (integers and bools) ---


def bitwise_and(self: Tensor, other: Any) -> Tensor:
    other = self._operand(other)
    _integral(self, "&")
    _integral(other, "&")
    return self._zip("bitwise_and", other)


def bitwise_or(self: Tensor, other: Any) -> Tensor:
    other = self._operand(other)
    _integral(self, "|")
    _integral(other, "|")
    return self._zip("bitwise_or", other)


def bitwise_xor(self: Tensor, other: Any) -> Tensor:
    other = self._operand(other)
    _integral(self, "^")
    _integral(other, "^")
    return self._zip("bitwise_xor", other)


def bitwise_not(self: Tensor) -> Tensor:
    """~x: logical not for bool tensors, two's complement not for integers"""
    _integral(self, "~")
    return self._map("logical_not" if self.dtype.kind == "b" else "bitwise_not")


class MathMethods:
    """Element-wise methods of Tensor."""

    neg = negative = neg
    exp = exp
    log = log
    sigmoid = sigmoid
    relu = relu
    tanh = tanh
    abs = absolute = abs
    sqrt = sqrt
    reciprocal = reciprocal
    add = add
    sub = subtract = sub
    mul = multiply = mul
    div = divide = true_divide = div
    pow = pow
    maximum = maximum
    minimum = minimum
    floor_divide = floor_divide
    remainder = remainder
    lt = less = lt
    gt = greater = gt
    le = less_equal = le
    ge = greater_equal = ge
    eq = eq
    ne = not_equal = ne
    bitwise_and = bitwise_and
    bitwise_or = bitwise_or
    bitwise_xor = bitwise_xor
    bitwise_not = bitwise_not


__all__ = [
    "neg", "exp", "log", "sigmoid", "relu", "tanh", "abs", "sqrt", "reciprocal", "add", "sub", "mul", "div", "pow",
    "maximum", "minimum", "floor_divide", "remainder", "lt", "gt", "le", "ge", "eq", "ne",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
]
