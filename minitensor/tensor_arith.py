"""Arithmetic between tensors (the ``ArithMethods`` mixin) and the matching ``mt.`` functions: add, sub, mul,
div, pow, maximum/minimum, floor_divide, remainder, fmod, atan2, and the composites lerp, addcmul, addcdiv,
logaddexp, logaddexp2, hypot, xlogy (built from the ops above, so their gradients come from autodiff). Comparisons,
logical and bitwise ops, selection (where, clamp, nan_to_num) and closeness are in tensor_compare.py.

Operands broadcast, and Python numbers are lifted with PyTorch's type promotion (``Tensor._operand``).
Names, arguments, result dtypes and gradients (at ties, zeros and bounds too) follow PyTorch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context
from .errors import DTypeError
from .tensor_math import LN2, _check_divisor, _float_operands, _is_tensor, _operands, _pass

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
    """C's fmod: the ``fmod`` kernel op for floats (signed zeros as C's), sign(a) * (|a| mod |b|) for integers (on
    non-negative operands Python's % is exact and equals fmod)."""
    dtype = dtypes.result_type(a, b)
    if dtype.kind == "f":
        return a._zip("fmod", b, dtype=dtype)
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


# --- composites ---


def lerp(input: Tensor, end: Any, weight: Any) -> Tensor:  # noqa: A002 - PyTorch's names
    """input + weight * (end - input) (exact at weight 1: end - (end - input) * (1 - weight) for |weight| >= 0.5);
    float tensors of one dtype, ``weight`` a number or a tensor, all broadcast."""
    end = input._operand(end)
    for name, t in (("input", input), ("end", end), ("weight", weight)):
        if _is_tensor(t) and (t.dtype.kind != "f" or t.dtype != input.dtype):
            raise DTypeError(f"lerp(): {name} must be a float tensor of input's dtype {input.dtype}, got {t.dtype} (shape {t.shape})")
    span = end - input
    if not _is_tensor(weight):
        return input + span * weight if abs(weight) < 0.5 else end - span * (1.0 - weight)
    return F.Where.apply(weight.abs() < 0.5, input + span * weight, end - span * (1.0 - weight))


def _integral_value(name: str, value: Any, dtype: Any) -> None:
    if dtype.kind in "iu" and isinstance(value, float) and not value.is_integer():
        raise DTypeError(f"{name}(): value={value} would be truncated for {dtype} tensors; pass an int or float tensors")


def _check_tensors(name: str, **tensors: Any) -> None:
    for arg, t in tensors.items():
        if not _is_tensor(t):
            raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(t).__name__}")


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:  # noqa: A002
    """input + value * tensor1 * tensor2 (broadcast; the dtype promoted over the three tensors; not for bool)."""
    _check_tensors("addcmul", tensor1=tensor1, tensor2=tensor2)
    dtype = dtypes.result_type(input, tensor1, tensor2)
    if dtype.kind == "b":
        raise DTypeError(f"addcmul() does not support bool tensors ({input.shape}, {tensor1.shape}, {tensor2.shape})")
    _integral_value("addcmul", value, dtype)
    product = tensor1 * tensor2
    return input + (product if value == 1 else product * value)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:  # noqa: A002
    """input + value * tensor1 / tensor2 (true division; two integer divisor tensors are an error, as in PyTorch)."""
    _check_tensors("addcdiv", tensor1=tensor1, tensor2=tensor2)
    if tensor1.dtype.kind in "iub" and tensor2.dtype.kind in "iub":
        raise DTypeError(f"addcdiv() of integer tensors ({tensor1.dtype} {tensor1.shape} / {tensor2.dtype} {tensor2.shape}) "
                         "is not supported; cast tensor1 or tensor2 to float")
    quotient = tensor1 / tensor2
    return input + (quotient if value == 1 else quotient * value)


def logaddexp(input: Any, other: Any) -> Tensor:  # noqa: A002
    """log(exp(input) + exp(other)) as max + log1p(exp(-|input - other|)): no overflow; equal infinities give
    themselves. Integer and bool tensors compute in the default float dtype."""
    a, b = _float_operands(input, other)
    gap = F.Where.apply(a == b, a._lift(0.0), (a - b).abs())  # inf == inf would give inf - inf = nan
    return maximum(a, b) + (-gap).exp().log1p()


def logaddexp2(input: Any, other: Any) -> Tensor:  # noqa: A002
    """log2(2^input + 2^other) as max + log1p(2^-|input - other|) / ln 2, as :func:`logaddexp` in base 2: no
    overflow; equal infinities give themselves (their gradient is 1/2 each, where PyTorch's is nan). Integer and
    bool tensors compute in the default float dtype."""
    a, b = _float_operands(input, other)
    gap = F.Where.apply(a == b, a._lift(0.0), (a - b).abs())  # inf == inf would give inf - inf = nan
    return maximum(a, b) + (-gap).exp2().log1p() * (1.0 / LN2)


def hypot(input: Any, other: Any) -> Tensor:  # noqa: A002
    """sqrt(input^2 + other^2) without overflow or underflow (scaled by the larger magnitude); inf if either is inf."""
    a, b = _float_operands(input, other)
    scale = maximum(a.abs(), b.abs()).detach()
    scale = F.Where.apply((scale == 0) | scale.isinf(), scale._lift(1.0), scale)
    x, y = a / scale, b / scale
    out = (x * x + y * y).sqrt() * scale
    return F.Where.apply(a.isinf() | b.isinf(), out._lift(float("inf")), out)


def xlogy(input: Any, other: Any) -> Tensor:  # noqa: A002
    """input * log(other), and 0 where input == 0 unless other is nan (as PyTorch). Gradients as PyTorch's except at
    input == 0 with other == 0 or inf, where both are 0."""
    x, y = _float_operands(input, other)
    log_y = F.Where.apply((x == 0) & ((y <= 0) | y.isinf()), y._lift(0.0), y.log())
    product = x * log_y
    # +0.0 where input == 0 (PyTorch's exact zero; 0 * a negative log is -0.0), -0.0 elsewhere: adding -0.0 changes
    # nothing, so the sum keeps every other value's bits and the gradient is the product's.
    zero_sign = F.Where.apply((x == 0).detach(), product._lift(0.0), product._lift(-0.0))
    return product + zero_sign


class ArithMethods:
    """Arithmetic between tensors (methods of Tensor)."""

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
    lerp = lerp
    addcmul = addcmul
    addcdiv = addcdiv
    logaddexp = logaddexp
    logaddexp2 = logaddexp2
    hypot = hypot
    xlogy = xlogy


subtract, multiply, divide, true_divide, arctan2 = sub, mul, div, div, atan2

__all__ = [
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "pow", "maximum", "minimum",
    "floor_divide", "remainder", "fmod", "atan2", "arctan2", "lerp", "addcmul", "addcdiv", "logaddexp", "logaddexp2", "hypot",
    "xlogy",
]  # fmt: skip
