"""The float32 side of :mod:`minitensor.backends.fast_math`: ``exp``, ``log``, ``tanh``, ``sigmoid`` for kernels that
store to float32, and :func:`by_output`, which picks a version by the output's dtype while Numba compiles.

A float32 result needs only about 2^-30 relative accuracy to round to the correctly rounded float32 (or, rarely, its
neighbour), so kernels storing to float32 use these: the float64 module's methods with shorter polynomials
(Chebyshev fits, errors below 4e-10), no double-double corrections, and 2^k in one product (float32's range needs no
split). The ``*32`` versions still compute in float64, so inputs read from float64 data (subnormals included) are
handled too; the ``*_f32`` versions compute float32 data in float32 (twice the SIMD lanes). Same contract as
:mod:`minitensor.backends.fast_math` (checked by tests/test_fast_math.py): within 1 ulp of the correctly rounded
float32, and NumPy's special values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit, types
from numba.core.extending import overload

from .fast_intrinsics import as_bits, copysign, exp2_scale32, fdiv, fma, log_split32, select
from .fast_math import INF, INV_LN2, LN2, NAN, SHIFT, horner, recip, shift_pow2

EXP32_Q = (0.0001989098115697468, 0.001393364129062974, 0.008333310934190145, 0.041666465003710317,
           0.16666666681614514, 0.500000001345796)
"""Q(r) ~ (e^r - 1 - r) / r^2 on |r| <= ln2/2 (error 1.7e-10 on e^r)."""


@njit
def exp32(x: float) -> float:
    """e^x to about 2^-32 relative (for float32 outputs: inf above 88.73 and 0 below -103.97 once stored)."""
    x = float(x)
    xc = select(x > 90.0, 90.0, x)  # nan compares false and flows through as nan
    xc = select(xc < -110.0, -110.0, xc)
    shifted = xc * INV_LN2 + SHIFT  # k in [-159, 130]: 2^k is a normal float64
    r = fma(-(shifted - SHIFT), LN2, xc)
    q = fma(EXP32_Q[0], r, EXP32_Q[1])
    q = fma(q, r, EXP32_Q[2])
    q = fma(q, r, EXP32_Q[3])
    q = fma(q, r, EXP32_Q[4])
    q = fma(q, r, EXP32_Q[5])
    return (1.0 + fma(r * r, q, r)) * shift_pow2(shifted)


@njit
def tanh32(x: float) -> float:
    """tanh to about 2^-32 relative (for float32 outputs), with :func:`tanh`'s special values.

    tanh|x| = T / (T + 2) with T = e^2|x| - 1 = (2^k - 1) + 2^k p, p = e^r - 1 = r + r^2 Q(r): no cancellation
    anywhere (k >= 0), so one formula serves small and large |x|, and the loop has one short dependency chain.
    """
    x = float(x)
    y = 2.0 * abs(x)
    y = select(y > 40.0, 40.0, y)  # tanh(20) rounds to 1 even in float64; nan passes
    shifted = y * INV_LN2 + SHIFT  # k in [0, 58]
    r = fma(-(shifted - SHIFT), LN2, y)
    q = fma(EXP32_Q[0], r, EXP32_Q[1])
    q = fma(q, r, EXP32_Q[2])
    q = fma(q, r, EXP32_Q[3])
    q = fma(q, r, EXP32_Q[4])
    q = fma(q, r, EXP32_Q[5])
    scale = shift_pow2(shifted)
    big_t = fma(scale, fma(r * r, q, r), scale - 1.0)
    t = big_t * recip(big_t + 2.0)
    return select(as_bits(x) < 0, -t, t)


@njit
def sigmoid32(x: float) -> float:
    """1 / (1 + e^-x) to about 2^-31 relative (for float32 outputs), as e / (1 + e) below 0."""
    x = float(x)
    e = exp32(-abs(x))
    return select(x >= 0.0, 1.0, e) * recip(1.0 + e)


# Float32 data into float32 outputs is computed in float32 (twice the SIMD lanes): the same methods with float32
# constants (np.float32 globals: Numba keeps them float32) and the bit work in int32 intrinsics.

F_ONE, F_TWO, F_ZERO = np.float32(1.0), np.float32(2.0), np.float32(0.0)
F_INF, F_NAN = np.float32(INF), np.float32(NAN)
F_EXP_MAX, F_EXP_MIN = np.float32(89.0), np.float32(-104.0)  # e^89 overflows float32, e^-104 rounds to 0
F_INV_LN2, F_SHIFT = np.float32(1.442695), np.float32(12582912.0)  # 1.5 * 2^23
F_LN2_HI, F_LN2_LO = np.float32(0.693145751953125), np.float32(1.4286068e-06)  # k F_LN2_HI exact for |k| < 2^15
F_Q = tuple(np.float32(c) for c in (0.0013926176335399584, 0.008363173246999926,
                                                       0.04166655466075674, 0.16666577024562307, 0.5))
"""(e^r - 1 - r) / r^2 on |r| <= ln2/2 (Chebyshev fit, error 1e-9 on e^r)."""
F_TINY, F_TWO23, F_23 = np.float32(1.1754944e-38), np.float32(8388608.0), np.float32(23.0)
F_LOG_LN2_HI, F_LOG_LN2_LO = np.float32(6.9313812256e-01), np.float32(9.0580006145e-06)
F_LOG_P = tuple(np.float32(c) for c in (0.0698070228099823, -0.11494546383619308, 0.11689071357250214,
                                        -0.12424037605524063, 0.14248551428318024, -0.1666785031557083,
                                        0.20000730454921722, -0.2499999701976776, 0.3333333134651184))
"""(log(1+f) - f + f^2/2) / f^3 on sqrt(1/2) - 1 <= f <= sqrt(2) - 1 (Chebyshev fit in float32 coefficients: the
f^3 term to 2^-28 of log(1+f))."""
F_MINUS_HALF = np.float32(-0.5)


@njit
def exp_f32(x: float) -> float:
    """e^x for float32 ``x`` in float32: :func:`expm1_parts`' method (1 + r split exactly, the reduction's error kept)."""
    xc = select(x > F_EXP_MAX, F_EXP_MAX, x)  # nan passes
    xc = select(xc < F_EXP_MIN, F_EXP_MIN, xc)
    shifted = fma(xc, F_INV_LN2, F_SHIFT)
    kd = shifted - F_SHIFT
    t = fma(-kd, F_LN2_HI, xc)  # exact
    r = fma(-kd, F_LN2_LO, t)
    r_lo = fma(-kd, F_LN2_LO, t - r)
    q = horner(r, F_Q)
    hi = F_ONE + r
    lo = fma(r * r, q, (r - (hi - F_ONE)) + fma(r_lo, r, r_lo))
    return exp2_scale32(hi + lo, shifted)


@njit
def log_f32(x: float) -> float:
    """log x for float32 ``x`` in float32, with :func:`log`'s special values: x = 2^k z, z in [sqrt(1/2), sqrt(2))
    (musl's ``logf`` reduction), log z = f - f^2/2 + f^3 P(f) with f = z - 1 and P of degree 8 (no division), and
    k ln2 added in two parts, the large one last."""
    subnormal = x < F_TINY
    z, k = log_split32(select(subnormal, x * F_TWO23, x))
    k = k - select(subnormal, F_23, F_ZERO)
    f = z - F_ONE
    p = horner(f, F_LOG_P)
    result = fma(k, F_LOG_LN2_HI, fma(k, F_LOG_LN2_LO, (f * f) * fma(f, p, F_MINUS_HALF)) + f)
    result = select(x == F_INF, F_INF, result)
    return select(x > F_ZERO, result, select(x == F_ZERO, -F_INF, F_NAN))


F_TANH_P = tuple(np.float32(c) for c in (0.00014279318799621565, -0.0009235008463481761, 0.003206803386846565,
                                         -0.008697847592814879, 0.02182954884305937, -0.05396341475443884,
                                         0.133333106555451, -0.3333333315672231))
"""(tanh(x) - x) / x^3 at z = x^2 on |x| <= 1 (Chebyshev fit, relative error 2.3e-9 on tanh)."""
F_TANH_CLAMP = np.float32(20.0)  # tanh(10) rounds to 1 in float32


@njit
def tanh_f32(x: float) -> float:
    """tanh for float32 ``x`` in float32: x + x^3 P(x^2) below |x| = 1, else 1 - 2 / (e^2|x| + 1), whose quotient
    is under 0.24 there, so its rounding errors weigh a quarter of an ulp of the result: e^2|x| needs no error terms
    (0.94 ulp at most above 1 either way). 1.09 ulp at most in all, near |x| = 1; 94% correctly rounded; NumPy's
    float32 tanh: 62%."""
    a = abs(x)
    z = a * a
    p = horner(z, F_TANH_P)
    small = fma(a * z, p, a)
    y = select(a + a > F_TANH_CLAMP, F_TANH_CLAMP, a + a)  # nan passes
    shifted = fma(y, F_INV_LN2, F_SHIFT)  # e^y as exp_f32 without its clamps and error terms (see above)
    kd = shifted - F_SHIFT
    r = fma(-kd, F_LN2_LO, fma(-kd, F_LN2_HI, y))
    q = horner(r, F_Q)
    large = F_ONE - fdiv(F_TWO, exp2_scale32(F_ONE + fma(r * r, q, r), shifted) + F_ONE)
    t = select(a < F_ONE, small, large)  # nan takes the large branch and stays nan
    return copysign(t, x)


FLOAT32_NATIVE = {"exp": exp_f32, "log": log_f32, "tanh": tanh_f32}
"""Versions computing float32 data into float32 outputs in float32, by op name (measured: exp 0.68, log 0.89,
tanh 1.10 ulp at most from the exact value, always within 1 ulp of the correctly rounded float32; NumPy's float32
exp and log: 2-3 ulp). sigmoid stays with sigmoid32, computed in float64: it is not the bottleneck there."""

FLOAT32_VERSIONS = {"exp": exp32, "tanh": tanh32, "sigmoid": sigmoid32}
"""The cheaper versions a kernel uses when it stores to float32, by op name."""


def by_output(f64: Callable[..., Any], f32: Callable[..., Any], native: Callable[..., Any] | None,
              compute: Callable[..., Any]) -> Callable[..., Any]:
    """A function ``g(x, dtype)`` for jitted code, ``x`` a raw element and ``dtype`` the output array's: ``native(x)``
    for float32 into float32 (when there is one), ``f32(compute(x))`` for other data into float32, else
    ``f64(compute(x))``; chosen while Numba compiles (no test per element)."""

    def pick(x: float, dtype: Any) -> float:
        return f64(compute(x))

    def typed(x, dtype):  # type: ignore[no-untyped-def]  # (Numba wants the implementation's signature unannotated)
        to_float32 = isinstance(dtype, types.DType) and dtype.dtype == types.float32
        if to_float32 and x == types.float32 and native is not None:
            return lambda x, dtype: native(x)
        fn = f32 if to_float32 else f64
        return lambda x, dtype: fn(compute(x))

    overload(pick, inline="always")(typed)
    return pick
