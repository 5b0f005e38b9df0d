"""``mt.special``'s modified Bessel functions: I_0, I_1 (the first kind), K_0, K_1 (the second kind) and the
exponentially scaled K_0(x) e^x, K_1(x) e^x.

- I_0 and I_1 are tensor_numeric.py's i0 and i1 (the ``ive`` kernel: power series, then the asymptotic expansion),
  here without a derivative, as PyTorch's ``modified_bessel_i0/i1`` (whose ``torch.i0`` twin has one).
- K for 0 < x <= 1 by the power series (Abramowitz & Stegun 9.6.13 and 9.6.11; y = x^2 / 4, H_k harmonic numbers,
  psi digamma): K_0 = -(log(x/2) + gamma) I_0(x) + sum_{k>=1} H_k y^k / k!^2 and
  K_1 = 1/x + log(x/2) I_1(x) - (x/4) sum_{k>=0} (psi(k+1) + psi(k+2)) y^k / (k! (k+1)!), coefficients computed
  at import (every term of K_0's positive there); beyond, K_nu(x) = e^-x G_nu(t) / sqrt(x) with a Chebyshev
  expansion G_nu in t = 2/x - 1 fitted here
  (node interpolants of 50-digit values of K_nu(x) e^x sqrt(x), truncated below 1e-18). A few ulps of float64.

Edges as PyTorch: K is +inf at +-0, nan below 0 and at -inf, 0 at +inf (and the scaled forms too); K_0(x) underflows
past x ~ 705 (to subnormals, then 0). Everything computes in float64 and rounds once to the input's float dtype.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .special_series import chebyshev_series, in_float64, no_derivative, power_series
from .tensor_math import _float_input
from .tensor_numeric import i0, special_i1

if TYPE_CHECKING:
    from .tensor import Tensor

SPLIT = 1.0
LN2 = math.log(2.0)
EULER_GAMMA = 0.5772156649015329
TERMS = 12  # y <= 1/4 below the split: the 12th term is below 1e-26 of the sum

K0_LARGE = (
    1.1944330762167386, -0.053855323307629495, 0.004362000068251702, -0.0005521270349863234, 8.959565555755952e-05,
    -1.7138726856421186e-05, 3.695146089045472e-06, -8.737284518980525e-07, 2.225046272255236e-07,
    -6.025216756376064e-08, 1.7186668629418083e-08, -5.1272057810909205e-09, 1.5907351467912106e-09,
    -5.10958325791419e-10, 1.6929517419961088e-10, -5.7683063818637606e-11, 2.0159542597761383e-11,
    -7.210940065346495e-12, 2.6349075982806445e-12, -9.819576891759296e-13, 3.72695818784577e-13,
    -1.4388149744180521e-13, 5.6436532735816866e-14, -2.2469288334596896e-14, 9.072046991627365e-15,
    -3.711589997838162e-15, 1.537582290719742e-15, -6.445464362724762e-16, 2.7324144482527955e-16,
    -1.1707837700385628e-16, 5.067869397943657e-17, -2.215087912714289e-17, 9.77208135793031e-18,
    -4.349519763540327e-18, 1.9525118377031567e-18,
)
K1_LARGE = (
    1.4532756675938414, 0.19051350202061165, -0.008406706460495654, 0.0008815363164514389, -0.000129995769583983,
    2.3441638979785087e-05, -4.853489413610226e-06, 1.1139969511197356e-06, -2.772707643805077e-07,
    7.37247184977708e-08, -2.0717892129028323e-08, 6.103966549420336e-09, -1.873778917957349e-09,
    5.963886884453419e-10, -1.96028004074301e-10, 6.632273899864202e-11, -2.3034250700407756e-11,
    8.193082518369976e-12, -2.9786645069974164e-12, 1.1049772078983365e-12, -4.1763277431648047e-13,
    1.6061141914625803e-13, -6.277632672531289e-14, 2.4911830875182032e-14, -1.002779686252293e-14,
    4.091059996919741e-15, -1.690331071434488e-15, 7.068360792264328e-16, -2.9895680121763374e-16,
    1.2781913900252084e-16, -5.521491188037584e-17, 2.4087033253210474e-17, -1.0606842599776099e-17,
    4.712904181351423e-18, -2.112162909518146e-18,
)


def _k0_series_coefficients() -> tuple[float, ...]:
    """H_k / k!^2 for k = 0..TERMS-1 (H_0 = 0)"""
    out, harmonic, factorial = [], 0.0, 1.0
    for k in range(TERMS):
        if k:
            harmonic += 1.0 / k
            factorial *= k
        out.append(harmonic / (factorial * factorial))
    return tuple(out)


def _k1_series_coefficients() -> tuple[float, ...]:
    """(psi(k+1) + psi(k+2)) / (k! (k+1)!) for k = 0..TERMS-1, psi(k+1) = H_k - gamma"""
    out, harmonic, factorial = [], 0.0, 1.0
    for k in range(TERMS):
        if k:
            harmonic += 1.0 / k
            factorial *= k
        out.append((2.0 * harmonic + 1.0 / (k + 1) - 2.0 * EULER_GAMMA) / (factorial * factorial * (k + 1)))
    return tuple(out)


K0_SERIES = _k0_series_coefficients()
K1_SERIES = _k1_series_coefficients()


def _small(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """(s, log(s/2), y = s^2/4) for s = x clamped to (0, 1] (log s - log 2: s/2 would round for subnormal s)"""
    s = x.clamp(max=SPLIT)
    return s, s.log() - LN2, s * s * 0.25


def _large(x: Tensor, table: tuple[float, ...]) -> Tensor:
    """K_nu(x) e^x = G(2/x - 1) / sqrt(x) for x clamped to >= 1"""
    b = x.clamp(min=SPLIT)
    return chebyshev_series(b.reciprocal() * 2.0 - 1.0, table) * b.rsqrt()


def _k0_small(x: Tensor) -> Tensor:
    s, log_half, y = _small(x)
    return power_series(y, K0_SERIES) - (log_half + EULER_GAMMA) * i0(s)


def _k1_small(x: Tensor) -> Tensor:
    s, log_half, y = _small(x)
    return s.reciprocal() + log_half * special_i1(s) - power_series(y, K1_SERIES) * s * 0.25


def _edges(x: Tensor, k: Tensor) -> Tensor:
    """k, with +inf at +-0 and nan below 0"""
    return k.where(x != 0, x._lift(math.inf)).where(~(x < 0), x._lift(math.nan))


def _k0(x: Tensor) -> Tensor:
    return _edges(x, _k0_small(x).where(x <= SPLIT, _large(x, K0_LARGE) * (-x).exp()))


def _k1(x: Tensor) -> Tensor:
    return _edges(x, _k1_small(x).where(x <= SPLIT, _large(x, K1_LARGE) * (-x).exp()))


def _k0e(x: Tensor) -> Tensor:
    return _edges(x, (_k0_small(x) * x.clamp(max=SPLIT).exp()).where(x <= SPLIT, _large(x, K0_LARGE)))


def _k1e(x: Tensor) -> Tensor:
    return _edges(x, (_k1_small(x) * x.clamp(max=SPLIT).exp()).where(x <= SPLIT, _large(x, K1_LARGE)))


def modified_bessel_i0(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """I_0(x), the modified Bessel function of the first kind of order 0 (``i0``'s values; nan at +-inf, as
    PyTorch's); integers and bools give the default float dtype. No derivative, as PyTorch."""
    return no_derivative("modified_bessel_i0", in_float64(i0), _float_input(input))


def modified_bessel_i1(input: Tensor) -> Tensor:  # noqa: A002
    """I_1(x), the modified Bessel function of the first kind of order 1 (odd; nan at +-inf)"""
    return no_derivative("modified_bessel_i1", in_float64(special_i1), _float_input(input))


def modified_bessel_k0(input: Tensor) -> Tensor:  # noqa: A002
    """K_0(x), the modified Bessel function of the second kind of order 0 (inf at 0, nan for x < 0, 0 at +inf)"""
    return no_derivative("modified_bessel_k0", in_float64(_k0), _float_input(input))


def modified_bessel_k1(input: Tensor) -> Tensor:  # noqa: A002
    """K_1(x), the modified Bessel function of the second kind of order 1 (inf at 0, nan for x < 0, 0 at +inf)"""
    return no_derivative("modified_bessel_k1", in_float64(_k1), _float_input(input))


def scaled_modified_bessel_k0(x: Tensor) -> Tensor:  # PyTorch names the argument x here
    """K_0(x) e^x (~ sqrt(pi / (2x)) for large x: no underflow)"""
    return no_derivative("scaled_modified_bessel_k0", in_float64(_k0e), _float_input(x))


def scaled_modified_bessel_k1(x: Tensor) -> Tensor:  # PyTorch names the argument x here
    """K_1(x) e^x (~ sqrt(pi / (2x)) for large x: no underflow)"""
    return no_derivative("scaled_modified_bessel_k1", in_float64(_k1e), _float_input(x))


SPECIAL = ["modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"]
"""``mt.special``'s names from this module."""
