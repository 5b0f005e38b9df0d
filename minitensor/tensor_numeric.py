"""Number-theoretic and special element-wise functions (the ``NumericMethods`` mixin) and the matching ``mt.``
functions: gcd, lcm, frexp, i0 (with ``mt.special``'s i0e, i1, i1e) and mvlgamma (``mt.special.multigammaln``).

- ``gcd`` runs the scalar kernel ``gcd`` (Euclid's algorithm, operators_elementary.py); ``lcm`` is
  |a / gcd(a, b) * b| in the result dtype (wrapping on overflow, as torch).
- The Bessel functions run one scalar kernel, ``ive(n, x)`` = I_n(x) e^-|x| for n = 0, 1 (operators_special.py);
  i0 and i1 are ive(n, x) * exp(|x|), so they overflow where exp does, as torch's (float32: past |x| ~ 88.7), and
  are nan at +-inf (0 * inf), as torch's.
  Gradients are torch's formulas: i0' = i1, i0e' = i1e - sgn(x) i0e, i1' = i0 - i1 / x, i1e' = i0e - i1e (sgn(x) +
  1/x), the last two 0.5 for |x| <= eps; built from these functions, so they differentiate again.
- ``frexp`` reads each float's exponent field from its bits (``view(dtype)``; subnormals scaled into the normal
  range first) and writes the mantissa's exponent field to -1: exact on every backend, no new kernel.
- ``mvlgamma`` is p(p-1)/4 log(pi) + sum_j lgamma(x - j/2), so autodiff gives its gradient.

The counting and index functions (histogram, unique_consecutive, unravel_index, index_reduce) are in
tensor_counting.py; their Tensor methods are in this module's mixin. Names, signatures and dtypes follow PyTorch.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context
from .errors import DTypeError
from .operators_special import LOG_PI
from .tensor_counting import histogram, index_reduce, unique_consecutive
from .tensor_inplace import _inplace
from .tensor_math import _float_input, _is_tensor
from .tensor_pointwise import _BITS, _EXPONENTS

if TYPE_CHECKING:
    from .tensor import Tensor


class Frexp(NamedTuple):
    """(mantissa, exponent), as ``torch.return_types.frexp``."""

    mantissa: Tensor
    exponent: Tensor


# --- gcd and lcm ---


def _integer_operands(name: str, input: Any, other: Any) -> tuple[Tensor, Tensor]:  # noqa: A002 - PyTorch's names
    """Both tensors (TypeError otherwise, as torch), of integer dtypes (DTypeError naming both), on one backend, cast to
    their promoted dtype (so the gcd kernel compiles for int32 and int64 pairs only)."""
    if not _is_tensor(other):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    input._check_backend(other)
    for t in (input, other):
        if t.dtype.kind not in "iu":
            raise DTypeError(f"{name}() needs integer tensors, got {input.dtype} {input.shape} and {other.dtype} "
                             f"{other.shape}")
    dtype = dtypes.result_type(input, other)
    return input.cast(dtype), other.cast(dtype)


def gcd(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The greatest common divisor of |input| and |other|, broadcast, in their promoted integer dtype (gcd(0, 0) = 0;
    int64's gcd(-2**63, 0) wraps to -2**63, as torch). Integer tensors only."""
    a, b = _integer_operands("gcd", input, other)
    return a._zip("gcd", b)


def lcm(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The least common multiple |input / gcd * other|, broadcast, in their promoted integer dtype (0 when either is
    0; wraps on overflow, as torch). Integer tensors only."""
    a, b = _integer_operands("lcm", input, other)
    g = a._zip("gcd", b)
    g = F.Where.apply(g._zip("eq", g._lift(0), dtypes.bool_), g._lift(1), g)  # gcd 0: both 0, and so is the product
    return a._zip("floordiv", g)._zip("mul", b)._map("abs")


# --- frexp ---


class _Mantissa(F.TensorFunction):
    """The precomputed mantissa of ``a`` with torch's gradient d / 2**exponent."""

    higher_order = True  # the backward is a division by a constant

    @staticmethod
    def forward(ctx: Context, a: Tensor, mantissa: Tensor, exponent: Tensor) -> Tensor:
        ctx.save_for_backward(exponent)
        return mantissa._view_of(mantissa._data)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, None, None]:
        (exponent,) = ctx.saved_values
        return d / exponent.cast(d.dtype).exp2(), None, None


def frexp(input: Tensor) -> Frexp:  # noqa: A002
    """(mantissa, exponent) with input = mantissa * 2**exponent, |mantissa| in [0.5, 1) (input's float dtype) and an
    int32 exponent; zeros, infinities and nans give themselves and exponent 0, as torch. Float tensors only; the
    mantissa's gradient is d / 2**exponent."""
    if input.dtype.kind != "f":
        raise DTypeError(f"frexp() only supports floating-point dtypes, got {input.dtype} (shape {input.shape})")
    dtype, ints = input.dtype, _BITS[input.dtype]
    mantissa_bits, bias, low = _EXPONENTS[dtype]
    x = input.detach()
    scale = 64 if dtype == dtypes.float64 else 32  # lifts every subnormal into the normal range, exactly
    subnormal = x.abs() < float(2.0**-low)
    y = F.Where.apply(subnormal, x * float(2.0**scale), x)
    bits = y.view(ints)
    one = 1 << mantissa_bits
    field = bits._zip("floordiv", bits._lift(one))._zip("bitwise_and", bits._lift(2 * bias + 1))  # the biased exponent
    shift = field - (bias - 1)  # the exponent of y, and how far y's exponent field moves to make the mantissa
    keep = x.isfinite() & (x != 0)
    mantissa = F.Where.apply(keep, (bits - shift * one).view(dtype), x)
    exponent = F.Where.apply(keep, shift - F.Where.apply(subnormal, shift._lift(scale), shift._lift(0)), shift._lift(0))
    exponent = exponent.cast(dtypes.int32)
    return Frexp(_Mantissa.apply(input, mantissa, exponent), exponent)


# --- modified Bessel functions of the first kind ---


def _ive(n: int, a: Tensor) -> Tensor:
    """I_n(a) e^-|a| by the ``ive`` kernel (raw, no history)."""
    return a._lift(float(n))._zip("ive", a)


def _unscaled(n: int, a: Tensor) -> Tensor:
    """I_n(a) = ive(n, a) * exp(|a|) (raw; nan at +-inf, 0 * inf, as torch's i0 and i1)."""
    return _ive(n, a)._zip("mul", a._map("abs")._map("exp"))


def _small(a: Tensor) -> tuple[Tensor, Tensor]:
    """(|a| > eps, a with eps where it is not): torch's guard of i1's and i1e's gradients at 0."""
    eps = float(np.finfo(a.dtype).eps)
    big = a.detach().abs() > eps
    return big, F.Where.apply(big, a, a._lift(eps))


class _Bessel(F.TensorFunction):
    """out = one of i0, i0e, i1, i1e of ``a`` (float); the gradient is d * ``derivative(a)``."""

    higher_order = True  # derivative() is built from these differentiable functions

    @staticmethod
    def value(a: Tensor) -> Tensor:
        raise NotImplementedError

    @staticmethod
    def derivative(a: Tensor) -> Tensor:
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx: Context, a: Tensor) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(a)
        return cls.value(a)

    @classmethod
    def backward(cls, ctx: Context, d: Tensor) -> Tensor:  # type: ignore[override]
        (a,) = ctx.saved_values
        return d * cls.derivative(a)


class I0(_Bessel):
    value = staticmethod(lambda a: _unscaled(0, a))
    derivative = staticmethod(lambda a: special_i1(a))


class I0e(_Bessel):
    value = staticmethod(lambda a: _ive(0, a))
    derivative = staticmethod(lambda a: special_i1e(a) - a.sign() * special_i0e(a))


def _i1_derivative(a: Tensor) -> Tensor:
    big, safe = _small(a)
    return F.Where.apply(big, i0(safe) - special_i1(safe) / safe, a._lift(0.5))


def _i1e_derivative(a: Tensor) -> Tensor:
    big, safe = _small(a)
    return F.Where.apply(big, special_i0e(safe) - special_i1e(safe) * (safe.sign() + safe.reciprocal()), a._lift(0.5))


class I1(_Bessel):
    value = staticmethod(lambda a: _unscaled(1, a))
    derivative = staticmethod(_i1_derivative)


class I1e(_Bessel):
    value = staticmethod(lambda a: _ive(1, a))
    derivative = staticmethod(_i1e_derivative)


def i0(input: Tensor) -> Tensor:  # noqa: A002
    """I_0(x), the modified Bessel function of the first kind of order 0 (inf where exp(|x|) overflows; nan at +-inf,
    as torch); integers and bools give the default float dtype; the gradient is i1(x)"""
    return I0.apply(_float_input(input))


def special_i0e(input: Tensor) -> Tensor:  # noqa: A002
    """I_0(x) e^-|x|, the exponentially scaled i0 (finite everywhere: 0 at +-inf)"""
    return I0e.apply(_float_input(input))


def special_i1(input: Tensor) -> Tensor:  # noqa: A002
    """I_1(x), the modified Bessel function of the first kind of order 1 (odd; nan at +-inf, as torch)"""
    return I1.apply(_float_input(input))


def special_i1e(input: Tensor) -> Tensor:  # noqa: A002
    """I_1(x) e^-|x|, the exponentially scaled i1 (0 at +inf, -0.0 at -inf)"""
    return I1e.apply(_float_input(input))


# --- the multivariate log-gamma function ---


def mvlgamma(input: Tensor, p: int) -> Tensor:  # noqa: A002
    """log Gamma_p(x) = p(p-1)/4 log(pi) + sum_{j<p} lgamma(x - j/2), for every x > (p-1)/2 (ValueError otherwise,
    as torch documents; nan passes through) and an int p >= 1; integers give the default float dtype; the gradient
    is sum_j digamma(x - j/2)."""
    if input.dtype.kind == "b":
        raise DTypeError(f"mvlgamma(): the input tensor may not be a boolean tensor (shape {input.shape})")
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
        raise TypeError(f"mvlgamma(): argument 'p' (position 2) must be int, not {type(p).__name__}")
    if p < 1:
        raise ValueError(f"mvlgamma(): p has to be greater than or equal to 1, got {p}")
    x = _float_input(input)
    limit = (p - 1) / 2
    if x.numel() and bool((x.detach() <= limit).any()):
        raise ValueError(f"mvlgamma(): all elements must be greater than (p-1)/2 = {limit} for p = {p}; the smallest "
                         f"is {x.detach().nan_to_num(nan=math.inf).amin().item()}")
    offsets = x._lift(np.arange(-limit, 0.25, 0.5, dtype=x.dtype), x.dtype)  # -(p-1)/2, ..., 0, as torch sums them
    return (x.unsqueeze(-1) + offsets).lgamma().sum(-1) + p * (p - 1) / 4 * LOG_PI


def _mvlgamma_method(self: Tensor, p: int) -> Tensor:
    return mvlgamma(self, p)


class NumericMethods:
    """gcd, lcm, frexp, i0, mvlgamma and the counting methods (histogram, unique_consecutive, index_reduce) of Tensor;
    the ``name_`` forms write in place and return self."""

    gcd = gcd
    lcm = lcm
    frexp = frexp
    i0 = i0
    mvlgamma = _mvlgamma_method
    histogram = histogram
    unique_consecutive = unique_consecutive

    def gcd_(self: Any, other: Tensor) -> Any:
        return _inplace(self, lambda x: gcd(x, other))

    def lcm_(self: Any, other: Tensor) -> Any:
        return _inplace(self, lambda x: lcm(x, other))

    def i0_(self: Any) -> Any:
        return _inplace(self, i0)

    def mvlgamma_(self: Any, p: int) -> Any:
        return _inplace(self, lambda x: mvlgamma(x, p))

    def index_reduce(self, dim: int, index: Tensor, source: Tensor, reduce: str, *, include_self: bool = True) -> Tensor:
        return index_reduce(self, dim, index, source, reduce, include_self=include_self)  # type: ignore[arg-type]

    def index_reduce_(self: Any, dim: int, index: Tensor, source: Tensor, reduce: str, *, include_self: bool = True) -> Any:
        return _inplace(self, lambda x: index_reduce(x, dim, index, source, reduce, include_self=include_self))


SPECIAL = {"i0": i0, "i0e": special_i0e, "i1": special_i1, "i1e": special_i1e, "multigammaln": mvlgamma}
"""``mt.special``'s names of these functions."""

__all__ = ["gcd", "lcm", "frexp", "i0", "mvlgamma"]
