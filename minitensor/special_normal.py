"""``mt.special``'s scaled complementary error function erfcx and the normal quantile ndtri, in float64 by tensor
ops (rounded once to the input's float dtype), with PyTorch's derivatives.

- erfcx(x) = e^(x^2) erfc(x): for 0 <= x < 10, e^(x^2) times libm's erfc (accurate far into the tail), with x^2
  split into an exact head h^2 (h = x truncated to 12 fractional bits) and a small tail (x - h)(x + h), so e^(x^2)
  keeps full relative accuracy; from 10 on, the asymptotic series (1 / (x sqrt pi)) sum_k (-1)^k (2k-1)!! / (2x^2)^k
  to k = 13 (the omitted terms below 1e-17); for x < 0, 2 e^(x^2) - erfcx(-x) (inf below x ~ -26.6).
  A few ulps. Derivative 2x erfcx(x) - 2/sqrt(pi).
- ndtri(p) = Phi^-1(p): for p >= 1/4, sqrt(2) erfinv(2p - 1) (2p - 1 is exact there, and erfinv keeps the upper
  tail's digits); below, the rational estimate of Abramowitz & Stegun 26.2.23 (error < 4.5e-4) refined by three
  Halley steps on Phi(x) = p, with the residual scaled by e^(x^2/2) (Phi(x) e^(x^2/2) = erfcx(-x/sqrt 2) / 2): exact
  to a few ulps down to p = 5e-324 (x ~ -38.5). -inf at 0, inf at 1, nan outside [0, 1]. Derivative
  sqrt(2 pi) e^(ndtri(p)^2 / 2).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .special_series import Evaluated, power_series
from .tensor_math import _float_input, erfinv

if TYPE_CHECKING:
    from .tensor import Tensor

SQRT_PI = math.sqrt(math.pi)
SQRT_2PI = math.sqrt(2.0 * math.pi)
SQRT2 = math.sqrt(2.0)
ASYMPTOTIC_FROM = 10.0
SQUARE_MAX = 40.0  # beyond ndtri's range (|x| < 38.5), and e^(x^2) overflows float64 from 26.7 on
HEAD_SCALE = 4096.0  # h = floor(4096 |x|) / 4096 has at most 18 bits below 40, so h^2 is exact
# (-1)^k (2k-1)!! for k = 0..13: erfcx's asymptotic series in 1 / (2x^2)
ERFCX_ASYMPTOTIC = tuple((-1.0) ** k * math.prod(range(1, 2 * k, 2)) for k in range(14))
# Abramowitz & Stegun 26.2.23: t - (c0 + c1 t + c2 t^2) / (1 + d1 t + d2 t^2 + d3 t^3), t = sqrt(-2 log p)
AS_NUMERATOR = (2.515517, 0.802853, 0.010328)
AS_DENOMINATOR = (1.0, 1.432788, 0.189269, 0.001308)
HALLEY_STEPS = 3


def _square_parts(a: Tensor) -> tuple[Tensor, Tensor]:
    """(h^2, (a - h)(a + h)) for a >= 0 clamped to 40, h = a truncated to 12 fractional bits: h^2 is exact and the
    two sum to a^2 with the rounding of the small second part only"""
    a = a.clamp(max=SQUARE_MAX)
    head = (a * HEAD_SCALE).floor() * (1.0 / HEAD_SCALE)
    return head * head, (a - head) * (a + head)


def _exp_square(a: Tensor, scale: float = 1.0) -> Tensor:
    """e^(scale a^2) for a >= 0 (scale 1 or 1/2: exact multiples), to a few ulps"""
    head, tail = _square_parts(a)
    return (head * scale).exp() * (tail * scale).exp()


def _erfcx_nonnegative(a: Tensor) -> Tensor:
    """erfcx(a) for a >= 0 (and nan)"""
    moderate = _exp_square(a) * a.clamp(max=ASYMPTOTIC_FROM).erfc()
    big = a.clamp(min=ASYMPTOTIC_FROM)
    series = power_series((big * big * 2.0).reciprocal(), ERFCX_ASYMPTOTIC) / (big * SQRT_PI)
    return moderate.where(a < ASYMPTOTIC_FROM, series)


def _erfcx(x: Tensor) -> Tensor:
    a = x.abs()
    positive = _erfcx_nonnegative(a)
    return positive.where(~(x < 0), _exp_square(a) * 2.0 - positive)


def _ndtri_lower(p: Tensor) -> Tensor:
    """Phi^-1(p) for 0 < p < 1/4 (p clamped there): A&S 26.2.23, then Halley steps x -= u / (1 + x u / 2) with
    u = (Phi(x) - p) / phi(x) = sqrt(2 pi) (erfcx(-x / sqrt 2) / 2 - e^(log p + x^2 / 2))"""
    p = p.clamp(5e-324, 0.25)
    log_p = p.log()
    t = (log_p * -2.0).sqrt()
    x = (power_series(t, AS_NUMERATOR) / power_series(t, AS_DENOMINATOR) - t)
    for _ in range(HALLEY_STEPS):
        head, tail = _square_parts(-x)
        scaled_p = (log_p + head * 0.5).exp() * (tail * 0.5).exp()
        u = (_erfcx_nonnegative(x * -(1.0 / SQRT2)) * 0.5 - scaled_p) * SQRT_2PI
        x = x - u / (x * u * 0.5 + 1.0)
    return x


def _ndtri(p: Tensor) -> Tensor:
    upper = erfinv(p.clamp(min=0.25) * 2.0 - 1.0) * SQRT2
    value = upper.where(p >= 0.25, _ndtri_lower(p))
    value = value.where(p != 0, p._lift(-math.inf))
    return value.where((p >= 0) & (p <= 1), p._lift(math.nan))


class _Erfcx(Evaluated):
    value = staticmethod(_erfcx)
    derivative = staticmethod(lambda a, out: a * out * 2.0 - 2.0 / SQRT_PI)


class _Ndtri(Evaluated):
    value = staticmethod(_ndtri)
    derivative = staticmethod(lambda a, out: (out * out * 0.5).exp() * SQRT_2PI)


def erfcx(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """e^(x^2) erfc(x), the scaled complementary error function (0 at +inf, inf below ~-26.6); integers and bools give
    the default float dtype; the gradient is 2x erfcx(x) - 2/sqrt(pi)"""
    return _Erfcx.apply(_float_input(input))


def ndtri(input: Tensor) -> Tensor:  # noqa: A002
    """Phi^-1(p), the standard normal quantile (-inf at 0, inf at 1, nan outside [0, 1]); the gradient is
    sqrt(2 pi) e^(ndtri(p)^2 / 2)"""
    return _Ndtri.apply(_float_input(input))


SPECIAL = ["erfcx", "ndtri"]
"""``mt.special``'s names from this module."""
