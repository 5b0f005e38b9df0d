"""Element-wise composites (the ``PointwiseMethods`` mixin) and the matching ``mt.`` functions: frac, sinc, deg2rad,
rad2deg, copysign, signbit, heaviside, float_power, logit, positive, fmax, fmin, nextafter, ldexp.

Each is built from the element-wise ops of tensor_math.py, tensor_arith.py and tensor_compare.py (where, comparisons,
abs, sin, log, pow), so gradients come from autodiff and every backend runs them without new kernels. Names,
signatures, result dtypes (float functions of integer or bool tensors give the default float dtype; ``float_power``
always float64; ``signbit`` bool) and broadcasting follow PyTorch. ``ldexp`` builds its powers of two from their
bit patterns, so integer exponents scale exactly. ``signbit`` (so ``copysign``) and ``nextafter``
read a float's bits through ``view(dtype)``: the sign of -0.0 and of a NaN counts, as in PyTorch.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context
from .errors import DTypeError
from .tensor_arith import pow as _pow
from .tensor_inplace import _inplace
from .tensor_math import _float_input, _float_operands, _is_tensor, _not_bool, _operands

if TYPE_CHECKING:
    from .tensor import Tensor

DEG_PER_RAD = 180.0 / math.pi
RAD_PER_DEG = math.pi / 180.0


def frac(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """x - trunc(x), the fractional part with x's sign (float tensors only, as PyTorch); the gradient is 1."""
    if input.dtype.kind != "f":
        raise DTypeError(f"frac() needs a float tensor, got {input.dtype} (shape {input.shape}); call .float() first")
    return input - input.detach().trunc()


SINC_SERIES_BELOW = 0.5
"""|pi x| under which sinc is its Taylor series: autodiff of sin(s) / s there would subtract cos(s) / s from
sin(s) / s^2, two nearly equal terms (1e-10 gave a gradient of -1.5e-6 instead of -3.3e-10)."""
SINC_SERIES = (1.0, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880, -1.0 / 39916800, 1.0 / 6227020800,
               -1.0 / 1307674368000)
"""sin(s) / s = sum of SINC_SERIES[k] s^(2k): the next term, and its derivative's, are below 1e-17 at |s| = 0.5."""


def sinc(input: Tensor) -> Tensor:  # noqa: A002
    """sin(pi x) / (pi x), and 1 at x = 0; integers and bools give the default float dtype. Below |pi x| = 0.5 its
    Taylor series, so the value and its derivatives (autodiff, any order) stay accurate near 0."""
    x = _float_input(input)
    scaled = x * math.pi
    small = scaled.abs() < SINC_SERIES_BELOW
    z = F.Where.apply(small, scaled, x._lift(0.0)) ** 2  # 0 outside: the unused branch stays finite
    series = x._lift(SINC_SERIES[-1])
    for c in reversed(SINC_SERIES[:-1]):
        series = series * z + c
    big = F.Where.apply(small, x._lift(1.0), scaled)  # 1 inside, so the division never sees 0
    return F.Where.apply(small, series, big.sin() / big)


def deg2rad(input: Tensor) -> Tensor:  # noqa: A002
    """x * pi / 180 (integers and bools give the default float dtype)."""
    return _float_input(input) * RAD_PER_DEG


def rad2deg(input: Tensor) -> Tensor:  # noqa: A002
    """x * 180 / pi (integers and bools give the default float dtype)."""
    return _float_input(input) * DEG_PER_RAD


_BITS: dict[np.dtype, np.dtype] = {dtypes.float32: dtypes.int32, dtypes.float64: dtypes.int64}
"""The integer dtype of each float dtype's bit pattern."""


def signbit(input: Tensor) -> Tensor:  # noqa: A002
    """True where the sign bit is set: x < 0 for integers, the float's sign bit (read through ``view`` as the integer
    of its bits, which is negative exactly then) for floats, so -0.0 and -nan count; False for bools. No gradient."""
    x = input.detach()
    if x.dtype.kind == "b":
        return x & False
    return (x.view(_BITS[x.dtype]) if x.dtype.kind == "f" else x) < 0


class CopySign(F.TensorFunction):
    """The precomputed ``value`` of copysign(input, other) with PyTorch's gradient to input: ``ratio`` = value /
    input, 0 where input is 0 (so NaN at a NaN or infinite input); none to other."""

    higher_order = True  # the backward is a product by a constant, differentiable under create_graph

    @staticmethod
    def forward(ctx: Context, input: Tensor, value: Tensor, ratio: Tensor) -> Tensor:  # noqa: A002
        ctx.save_for_backward(ratio)
        return value._view_of(value._data)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, None, None]:
        (ratio,) = ctx.saved_values
        return d * ratio, None, None


def copysign(input: Any, other: Any) -> Tensor:  # noqa: A002
    """|input| with the sign of ``other`` (a tensor or number; -0.0 counts as negative), broadcast, in the promoted
    float dtype (integers and bools give the default float dtype). The gradient to input is out / input, 0 where
    input is 0 (NaN at a NaN or infinite input), as PyTorch's; ``other`` gets none (PyTorch: zeros). A NaN
    ``other`` gives its sign bit, as PyTorch."""
    a, b = _float_operands(input, other)
    a = a.cast(dtypes.result_type(a, b))  # float32 input, float64 other: float64, as PyTorch
    magnitude = a.detach().abs()
    value = F.Where.apply(signbit(b), -magnitude, magnitude)
    if not a.requires_grad:
        return value
    ratio = F.Where.apply(a.detach() == 0, a._lift(0.0), value / a.detach())
    return CopySign.apply(a, value, ratio)


def heaviside(input: Tensor, values: Any) -> Tensor:  # noqa: A002
    """0 where input < 0 (or NaN), ``values`` where input == 0, 1 where input > 0, broadcast; input and values (a
    tensor, or a number lifted to input's dtype) need one dtype, as in PyTorch. The gradient reaches ``values``
    where input == 0 (PyTorch has no derivative)."""
    values = input._operand(values) if not _is_tensor(values) else values
    if values.dtype != input.dtype:
        raise DTypeError(f"heaviside(): input and values need one dtype, got {input.dtype} {input.shape} and "
                         f"{values.dtype} {values.shape}")
    input._check_backend(values)
    x = input.detach()
    step = (x > 0).cast(input.dtype)
    return F.Where.apply(x == 0, values, step)


def float_power(input: Any, exponent: Any) -> Tensor:  # noqa: A002
    """input ** exponent computed in float64 (the result is always float64, as PyTorch); either may be a number;
    gradients flow back to float inputs in their own dtype."""
    base, power = _operands(input, exponent)
    return _pow(base.cast(dtypes.float64), power.cast(dtypes.float64))


def logit(input: Tensor, eps: float | None = None) -> Tensor:  # noqa: A002
    """log(x / (1 - x)) with x clamped to [eps, 1 - eps] when ``eps`` is given (the gradient is then 0 outside);
    integers and bools give the default float dtype."""
    x = _float_input(input)
    if eps is not None:
        x = x.clamp(float(eps), 1.0 - float(eps))
    return (x / (1.0 - x)).log()


def positive(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` itself (``+x``); bool tensors raise DTypeError, as in PyTorch."""
    _not_bool(input, "positive", "the + operator is not defined for bool tensors")
    return input


def _nan_ignoring(input: Any, other: Any, op: str) -> Tensor:
    """fmax (op "ge") / fmin ("le"): input where it wins or ties or other is NaN, else other."""
    a, b = _operands(input, other)
    wins = getattr(a.detach(), op)(b.detach())
    if b.dtype.kind == "f":
        wins = wins | b.detach().isnan()
    return F.Where.apply(wins, a, b)


def fmax(input: Any, other: Any) -> Tensor:  # noqa: A002
    """Element-wise max that ignores NaN (the other operand where one is NaN; NaN only if both are), broadcast, in
    the promoted dtype; the gradient goes to input where input >= other or other is NaN, else to other (as PyTorch)."""
    return _nan_ignoring(input, other, "ge")


def fmin(input: Any, other: Any) -> Tensor:  # noqa: A002
    """Element-wise min that ignores NaN; as :func:`fmax` with input <= other."""
    return _nan_ignoring(input, other, "le")


class Nextafter(F.TensorFunction):
    """The precomputed ``value`` of nextafter(input, other) with PyTorch's gradient: the incoming one to input where
    it ``moved`` (input != other, NaNs included), 0 where input == other; zeros to other."""

    higher_order = True  # the backward is a where, differentiable under create_graph

    @staticmethod
    def forward(ctx: Context, input: Tensor, other: Tensor, value: Tensor, moved: Tensor) -> Tensor:  # noqa: A002
        ctx.save_for_backward(moved)
        return value._view_of(value._data)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, Tensor, None, None]:
        (moved,) = ctx.saved_values
        zero = d._lift(0.0)
        return F.Where.apply(moved, d, zero), d._zeros(d.shape), None, None


def nextafter(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The next representable value after ``input`` toward ``other`` (both tensors, broadcast) in their promoted
    dtype, which must be a float dtype (DTypeError otherwise; ``other`` as a number is a TypeError, as PyTorch):
    ``other`` where they are equal (so nextafter(0.0, -0.0) is -0.0), NaN where either is NaN, the smallest
    subnormal with other's side's sign from a zero, the largest finite value from an infinity. float32 results step
    float32's bits, computed on the bit pattern (``view(dtype)``, integer +-1, ``where``), so every backend gives
    the same bits. The gradient is 1 to input where input != other, else 0, and 0 to other (as PyTorch)."""
    if not _is_tensor(other):
        raise TypeError(f"nextafter(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    input._check_backend(other)
    dtype = dtypes.result_type(input, other)
    if dtype.kind != "f":
        raise DTypeError(f"nextafter() needs a float tensor, got {input.dtype} {input.shape} and {other.dtype} "
                         f"{other.shape} (promoted to {dtype}); call .float() first")
    ints = _BITS[dtype]
    x, y = input.detach().cast(dtype), other.detach().cast(dtype)
    nan, zero, moved = x.isnan() | y.isnan(), x == 0, x != y
    special = nan | zero | ~moved  # the bits of these are not stepped (-0.0 - 1 would overflow)
    bits = F.Where.apply(special, x._lift(0, ints), x.view(ints))
    away = (y > x) == (x > 0)  # away from zero: the magnitude, so the bit pattern (sign and magnitude), grows by 1
    stepped = bits + F.Where.apply(away, x._lift(1, ints), x._lift(-1, ints))
    info = np.iinfo(ints)
    tiny = F.Where.apply(y > 0, x._lift(1, ints), x._lift(int(info.min) + 1, ints))  # +- the smallest subnormal
    quiet_nan = x._lift(np.array(np.nan, dtype=dtype).view(ints).item(), ints)
    out = F.Where.apply(nan, quiet_nan, F.Where.apply(zero, tiny, stepped))
    value = F.Where.apply(moved, out.view(dtype), y)
    return Nextafter.apply(input, other, value, moved)


def _nextafter_(self: Tensor, other: Tensor) -> Tensor:
    """nextafter in place: computed in the promoted dtype and stored in self's (a float tensor; other broadcasts to
    self's shape), as PyTorch's ``nextafter_``."""
    return _inplace(self, lambda x: nextafter(x, other))


_EXPONENTS: dict[np.dtype, tuple[int, int, int]] = {dtypes.float32: (23, 127, 126), dtypes.float64: (52, 1023, 1022)}
"""Per float dtype: mantissa bits, exponent bias, and -(the smallest normal exponent)."""


def _power_of_two(k: Tensor, dtype: np.dtype) -> Tensor:
    """2**k exactly, in ``dtype``, for integer k of that dtype's normal exponent range, from the bit pattern
    (k + bias) << mantissa_bits read as ``dtype`` (``view``)."""
    mantissa, bias, _ = _EXPONENTS[dtype]
    return ((k.cast(_BITS[dtype]) + bias) * (1 << mantissa)).view(dtype)


def ldexp(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """input * 2**other, broadcast, in the promoted float dtype (integer or bool ``input`` with integer ``other``
    gives the default float dtype; ``other`` must be a Tensor, as PyTorch). A float ``other``: input * exp2(other),
    differentiable in both. An integer ``other`` scales exactly, as C's ldexp: the product of three exact powers of
    two of the normal range (the remainder steps first, so intermediates stay exact), rounded once, so results in
    the subnormal range and scalings past 2**±127 (float32) are right; exponents beyond any finite result are
    clamped. The gradient to input is 2**other (PyTorch's is 0 for negative integer exponents)."""
    if not _is_tensor(other):
        raise TypeError(f"ldexp(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    input._check_backend(other)
    dtype = dtypes.float_result(dtypes.result_type(input, other))
    x = input.cast(dtype)
    if other.dtype.kind == "f":
        return x * other.cast(dtype).exp2()
    _, bias, low = _EXPONENTS[dtype]
    e = other.detach().cast(dtypes.int64).clamp(-3 * low, 3 * bias)  # 3 steps of the normal range span every result
    last = e.clamp(-low, bias)
    rest = e - last
    middle = rest.clamp(-low, bias)
    return x * _power_of_two(rest - middle, dtype) * _power_of_two(middle, dtype) * _power_of_two(last, dtype)


class PointwiseMethods:
    """Element-wise composites (methods of Tensor)."""

    frac = frac
    sinc = sinc
    deg2rad = deg2rad
    rad2deg = rad2deg
    copysign = copysign
    signbit = signbit
    heaviside = heaviside
    float_power = float_power
    logit = logit
    positive = positive
    fmax = fmax
    fmin = fmin
    nextafter = nextafter
    nextafter_ = _nextafter_
    ldexp = ldexp


__all__ = [
    "frac", "sinc", "deg2rad", "rad2deg", "copysign", "signbit", "heaviside", "float_power", "logit", "positive",
    "fmax", "fmin", "nextafter", "ldexp",
]  # fmt: skip
