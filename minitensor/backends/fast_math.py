"""Branch-free ``exp``, ``log``, ``tanh`` and ``sigmoid`` that LLVM can vectorise, for the ``fast`` kernels.

Numba lowers ``math.exp`` and friends to scalar libm calls, which no loop vectoriser can widen (SVML would, but
PyPI's llvmlite is not built with it). These versions use only float arithmetic and the intrinsics of
:mod:`minitensor.backends.fast_intrinsics` (selects, fused multiply-adds, integer operations on the float's bits): all
plain LLVM instructions, so a kernel loop calling them (LLVM inlines them) becomes SIMD code; such kernels call
:func:`prefer_wide` for 512-bit vectors. :mod:`minitensor.operators` keeps the ``math``-module versions as the
readable reference (the ``simple`` backend uses them); :mod:`minitensor.backends.fast_kernels` rebinds its op table
to these, and stores to float32 outputs through the cheaper float32-accurate versions (:data:`FLOAT32_VERSIONS`).

Contract (checked by tests/test_fast_math.py against long double and mpmath): float64 results within 1 ulp of the
correctly rounded value (measured: at most 0.59 ulp from the exact value for normal results, 99.4% correctly rounded)
over the whole float64 line, subnormal inputs and results included; float32 results within 1 ulp of the correctly
rounded float32; and NumPy's special values: ``exp`` overflows to inf above 709.78 and underflows through the
subnormals to +0; ``log`` is -inf at +-0, nan below 0 and inf at inf; ``tanh`` keeps the sign of zero; nan in gives
nan out.

Method: small tables, which a vectorised loop reads with gathers (an index is a few bits of the argument, masked, so
it is always in range). ``exp`` reduces x = (64 k + j) ln2/64 + r with the 1.5 * 2^52 shift trick (no float-to-int
conversion of a nan or inf happens), takes 2^(j/64) as hi + lo parts from a 64-entry table and e^r - 1 as a degree-5
polynomial, and applies 2^k in one rounding (``vscalefpd``). ``log`` splits x = 2^k z by bit operations, takes
invc ~ 1/z (9 bits, so z invc - 1 is exact) and -log(invc) from a 256-entry table, and adds a degree-7 log1p
polynomial (Tang's method: no division). ``tanh`` and ``sigmoid`` are quotients of exp's parts kept as double-doubles
and refined by a Newton step; every division is a float32 estimate (twice the SIMD lanes of a float64 one) refined by
Newton steps. The tables come from :mod:`minitensor.backends.fast_math_tables` (exact, built at import).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit, types
from numba.core.extending import overload

from .fast_intrinsics import (  # LLVM instructions Numba has no spelling for
    as_bits,
    copysign,
    exp2_scale32,
    fdiv32,
    fma,
    from_bits,
    ldexp,
    log_split32,
    prefer_wide,  # noqa: F401
    recip_estimate,
    select,
)
from .fast_math_tables import exp2_table, log_table


@njit(inline="always")
def recip(d: float) -> float:
    """1 / d to about 2^-46 relative for 2^-126 < |d| < 2^127: the float32 estimate and one Newton step."""
    r = recip_estimate(d)
    return fma(r, fma(-d, r, 1.0), r)


@njit(inline="always")
def horner(x: Any, c: tuple[Any, ...]) -> Any:
    """c[0] x^(n-1) + c[1] x^(n-2) + ... + c[n-1] by Horner's rule, one fused multiply-add per step (LLVM unrolls
    the loop over the constant tuple, so it costs what the written-out chain does)."""
    p = c[0]
    for i in range(1, len(c)):
        p = fma(p, x, c[i])
    return p


# --- exp ------------------------------------------------------------------------------------------

INV_LN2 = 1.4426950408889634
LN2 = 0.6931471805599453
SHIFT = 6755399441055744.0  # 1.5 * 2^52: (y + SHIFT) - SHIFT rounds y to an integer, which sits in the low bits
SHIFT_BITS = 0x4338000000000000  # as_bits(SHIFT)
EXP_MAX = 710.0  # above ln(DBL_MAX) = 709.78: clamping here still overflows to inf
EXP_MIN = -746.0  # below ln(2^-1075): clamping here still underflows to 0
TWO_M64 = 5.421010862427522e-20  # 2^-64
INF = float("inf")
NAN = float("nan")
EXP_N = 64
"""exp's table size: x = (64 k + j) ln2 / 64 + r, |r| <= ln2 / 128, e^x = 2^k 2^(j/64) e^r."""


EXP_T_HI, EXP_T_LO = exp2_table(EXP_N)
EXP_INV = EXP_N / LN2  # the reduction's constants: ln2/64 in 36 bits (k EXP_L_HI exact for |k| < 2^17) and the rest
EXP_L_HI = 0.010830424696223417
EXP_L_LO = 2.572804622327669e-14
EXP_C = (0.008333339268642579, 0.0416667082138357, 0.16666666666664448, 0.4999999999998446)
"""(e^r - 1 - r) / r^2 on |r| <= ln2/128 (Chebyshev fit; e^r - 1 = r + r^2 Q(r) to 2^-57.8 relative to e^r)."""


@njit(inline="always")
def exp_parts(x: float) -> tuple[float, float, int]:
    """(hi, lo, k) with e^x = (hi + lo) 2^k to about 2^-57 relative, hi in [1, 2), |lo| < 0.006 hi, for |x| <= 746.

    A 64-entry table: with i = round(64 x / ln2) = 64 k + j and r = x - i ln2/64 (two fused multiply-adds, |r| <=
    0.0055, so r's rounding error is 2^-60 of the result), e^x = 2^k (T + T (e^r - 1)) with T = 2^(j/64) kept to
    2^-106 as hi and lo parts (two gathers in a vectorised loop) and e^r - 1 a degree-5 polynomial.
    """
    shifted = fma(x, EXP_INV, SHIFT)
    i = as_bits(shifted) - SHIFT_BITS  # round(64 x / ln2), |i| <= 68900
    kd = shifted - SHIFT
    r = fma(-kd, EXP_L_LO, fma(-kd, EXP_L_HI, x))
    j = i & (EXP_N - 1)  # a nan's garbage bits still index the table
    t_hi = EXP_T_HI[j]
    q = horner(r, EXP_C)
    return t_hi, fma(t_hi, fma(r * r, q, r), EXP_T_LO[j]), i >> 6


@njit(inline="always")
def pow2(k: int) -> float:
    """2^k for -1022 <= k <= 1023, from its bits."""
    return from_bits((k + 1023) << 52)


@njit
def exp(x: float) -> float:
    """e^x; inf above 709.78, subnormal then +0 below -708.4, nan for nan: :func:`exp_parts`, then 2^k applied in one
    rounding (:func:`ldexp`), so subnormal results round once."""
    x = float(x)  # integer data (int64 compute) too
    xc = select(x > EXP_MAX, EXP_MAX, x)  # nan compares false and flows through as nan
    xc = select(xc < EXP_MIN, EXP_MIN, xc)
    hi, lo, k = exp_parts(xc)
    return ldexp(hi + lo, k)


@njit(inline="always")
def recip_one_plus_exp(y: float) -> float:
    """1 / (1 + e^y) to within an ulp (0 for y >= 745.2, 1 for y <= -37.5, nan for nan).

    With e^y = (hi + lo) 2^k and t = 2^-k this is t / (t + hi + lo): the sums are kept as double-doubles and
    the quotient refined by one Newton step, so the only sizeable error is the final rounding.
    """
    yc = select(y < -40.0, -40.0, y)
    yc = select(yc > -EXP_MIN, -EXP_MIN, yc)
    hi, lo, k = exp_parts(yc)
    e_hi = hi + lo  # renormalised: |e_lo| <= ulp(e_hi) / 2 (fast two-sum: |lo| < |hi|)
    e_lo = lo - (e_hi - hi)
    k1 = k >> 1
    t = pow2(-k1) * pow2(k1 - k)  # 2^-k: a subnormal or 0 only where it no longer matters in t + e^y
    ts = pow2(-k1) * pow2(k1 - k + 64)  # t 2^64: the quotient is scaled up so its correction stays normal
    s = t + e_hi  # two-sum: s + err = t + e_hi exactly
    b = s - t
    d_lo = ((t - (s - b)) + (e_hi - b)) + e_lo
    inv = recip(s)  # to 2^-46: the Newton step below makes the quotient good to the last bit
    q = ts * inv
    residual = fma(-q, s, ts) - q * d_lo  # ts - q (s + d_lo)
    return fma(residual, inv, q) * TWO_M64  # exact, or one rounding into the subnormals


# --- log ------------------------------------------------------------------------------------------

TINY = 2.2250738585072014e-308  # smallest normal float64; subnormal inputs are scaled by 2^54 first
TWO54 = 18014398509481984.0
LOG_N = 256
LOG_OFF = 0x3FE6080000000000  # x = 2^k z, z in [0.6885, 1.377): 256 intervals by z's top mantissa bits, one centred on 1


LOG_INVC, LOG_C_HI, LOG_C_LO = log_table(LOG_N, LOG_OFF)
LN2_HI43 = 0.6931471805598903  # ln2 as a multiple of 2^-43: k LN2_HI43 + LOG_C_HI[i] is exact for |k| <= 1077
LN2_LO43 = 5.497923018708371e-14  # ln2 - LN2_HI43
LOG_P = (0.1428583558604866, -0.16666803129521168, 0.19999999999735155, -0.24999999999702047, 0.3333333333333333)
"""(log(1+r) - r + r^2/2) / r^3 on |r| <= 0.00293 (Chebyshev fit: log(1+r) to 2^-66 relative)."""


@njit
def log(x: float) -> float:
    """natural log; -inf at +-0, nan below 0 and for nan, inf at inf.

    x = 2^k z by bit operations (subnormals scaled by 2^54 first); z's interval gives invc ~ 1/z with 9 significant
    bits and -log(invc) = hi + lo from a 256-entry table; r = z invc - 1 is exact (one fused multiply-add, |r| <= 0.003)
    and log x = (k ln2 + hi) + r + (k ln2_lo + lo) + log1p(r) - r, the first sum exact, log1p(r) - r a degree-7
    polynomial. Where x is near 1 the table's entry is exactly 1, so log x = log1p(x - 1) with no cancellation.
    """
    x = float(x)  # integer data (int64 compute) too
    subnormal = x < TINY
    xs = select(subnormal, x * TWO54, x)
    tmp = as_bits(xs) - LOG_OFF
    k = (tmp >> 52) - select(subnormal, 54, 0)
    i = (tmp >> 44) & (LOG_N - 1)  # a nan's or negative's garbage bits still index the table
    invc = LOG_INVC[i]
    c_hi = LOG_C_HI[i]
    c_lo = LOG_C_LO[i]
    r = fma(from_bits(as_bits(xs) - ((tmp >> 52) << 52)), invc, -1.0)  # z invc - 1, exact
    p = horner(r, LOG_P)
    p = (r * r) * fma(r, p, -0.5)  # log1p(r) - r
    kd = float(k)
    w = fma(kd, LN2_HI43, c_hi)  # exact
    hi = w + r
    lo = (w - hi) + r  # exact: |w| >= |r| or w == 0
    result = hi + ((lo + fma(kd, LN2_LO43, c_lo)) + p)
    result = select(x == INF, INF, result)
    return select(x > 0.0, result, select(x == 0.0, -INF, NAN))


# --- tanh and sigmoid -----------------------------------------------------------------------------

@njit(inline="always")
def two_sum(a: float, b: float) -> tuple[float, float]:
    """(s, e) with s = a + b rounded and s + e = a + b exactly (Knuth's two-sum: any magnitudes)."""
    s = a + b
    v = s - a
    return s, (a - (s - v)) + (b - v)


EXPM1_C = (0.0013888898162809297, 0.008333340752470275, 0.04166666666665973, 0.16666666666661117, 0.5)
"""(e^r - 1 - r) / r^2 on |r| <= ln2/128 to 4.7e-17 (Chebyshev fit): accurate relative to e^r - 1 itself, as tanh needs."""


@njit
def tanh(x: float) -> float:
    """hyperbolic tangent: odd, +-1 at +-inf, nan for nan, -0 for -0.

    tanh|x| = T / (T + 2) with T = e^2|x| - 1 from :func:`exp`'s table: T = (2^k t_hi - 1) + 2^k t_hi (e^r - 1) +
    2^k t_lo, where 2^k t_hi - 1 is exact wherever T's rounding matters (k <= 52), the product 2^k t_hi r and r's own
    rounding error are kept, so T is a double-double good to about 2^-60 relative even where its parts cancel (small
    |x|); T + 2 likewise, and the quotient is refined by one Newton step. One formula for tiny and large |x|.
    """
    x = float(x)
    a = abs(x)
    y = select(a + a > 40.0, 40.0, a + a)  # tanh(20) = 1 - 8.5e-18 rounds to 1; nan passes
    shifted = fma(y, EXP_INV, SHIFT)
    i = as_bits(shifted) - SHIFT_BITS  # 64 k + j, k in [0, 57]
    kd = shifted - SHIFT
    u = fma(-kd, EXP_L_HI, y)  # exact
    r = fma(-kd, EXP_L_LO, u)
    r_lo = fma(-kd, EXP_L_LO, u - r)  # r's rounding error
    j = i & (EXP_N - 1)
    t_hi = EXP_T_HI[j]
    t_lo = EXP_T_LO[j]
    q = horner(r, EXPM1_C)
    scale = pow2(i >> 6)
    t_1 = fma(scale, t_hi, -1.0)  # 2^k t_hi - 1, exact
    m = scale * t_hi  # exact
    s0 = fma(m, r, t_1)
    c = m * fma(r * r, q, r_lo)
    s = s0 + c  # T = s + e
    e = fma(scale, t_lo, ((s0 - s) + c) + fma(m, r, t_1 - s0))
    d_hi, d_err = two_sum(s, 2.0)  # T + 2 = d_hi + d_lo
    d_lo = d_err + e
    inv = recip(d_hi)
    q0 = s * inv
    residual = fma(-q0, d_lo, fma(-q0, d_hi, s) + e)  # T - q0 (T + 2)
    return copysign(fma(residual, inv, q0), x)  # the sign bit, so tanh(-0) = -0


@njit
def sigmoid(x: float) -> float:
    """1 / (1 + e^-x): 0 (through the subnormals) far below 0, 1 above 37.5, nan for nan."""
    return recip_one_plus_exp(-float(x))


@njit
def sigmoid_back(x: float, d: float) -> float:
    """d * s(x) * (1 - s(x))"""
    s = sigmoid(x)
    return d * s * (1.0 - s)


@njit
def exp_back(x: float, d: float) -> float:
    """d * e^x"""
    return d * exp(x)


@njit
def tanh_back(x: float, d: float) -> float:
    """d * (1 - tanh(x)^2)"""
    t = tanh(x)
    return d * (1.0 - t * t)


# --- float32 outputs ------------------------------------------------------------------------------
# A float32 result needs only about 2^-30 relative accuracy to round to the correctly rounded float32 (or, rarely,
# its neighbour), so kernels storing to float32 use these: the same methods with shorter polynomials (Chebyshev fits,
# errors below 4e-10), no double-double corrections, and 2^k in one product (float32's range needs no split).
# They still compute in float64, so inputs read from float64 data (subnormals included) are handled too.

EXP32_Q = (0.0001989098115697468, 0.001393364129062974, 0.008333310934190145, 0.041666465003710317,
           0.16666666681614514, 0.500000001345796)
"""Q(r) ~ (e^r - 1 - r) / r^2 on |r| <= ln2/2 (error 1.7e-10 on e^r)."""


@njit
def exp32(x: float) -> float:
    """e^x to about 2^-32 relative (for float32 outputs: inf above 88.73 and 0 below -103.97 once stored)."""
    x = float(x)
    xc = select(x > 90.0, 90.0, x)  # nan compares false and flows through as nan
    xc = select(xc < -110.0, -110.0, xc)
    shifted = xc * INV_LN2 + SHIFT
    k = as_bits(shifted) - SHIFT_BITS  # in [-159, 130]: 2^k is a normal float64
    r = fma(-(shifted - SHIFT), LN2, xc)
    q = fma(EXP32_Q[0], r, EXP32_Q[1])
    q = fma(q, r, EXP32_Q[2])
    q = fma(q, r, EXP32_Q[3])
    q = fma(q, r, EXP32_Q[4])
    q = fma(q, r, EXP32_Q[5])
    return (1.0 + fma(r * r, q, r)) * pow2(k)


@njit
def tanh32(x: float) -> float:
    """tanh to about 2^-32 relative (for float32 outputs), with :func:`tanh`'s special values.

    tanh|x| = T / (T + 2) with T = e^2|x| - 1 = (2^k - 1) + 2^k p, p = e^r - 1 = r + r^2 Q(r): no cancellation
    anywhere (k >= 0), so one formula serves small and large |x|, and the loop has one short dependency chain.
    """
    x = float(x)
    y = 2.0 * abs(x)
    y = select(y > 40.0, 40.0, y)  # tanh(20) rounds to 1 even in float64; nan passes
    shifted = y * INV_LN2 + SHIFT
    k = as_bits(shifted) - SHIFT_BITS  # in [0, 58]
    r = fma(-(shifted - SHIFT), LN2, y)
    q = fma(EXP32_Q[0], r, EXP32_Q[1])
    q = fma(q, r, EXP32_Q[2])
    q = fma(q, r, EXP32_Q[3])
    q = fma(q, r, EXP32_Q[4])
    q = fma(q, r, EXP32_Q[5])
    scale = pow2(k)
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
    """e^x for float32 ``x`` in float32: :func:`exp_parts`' method (1 + r split exactly, the reduction's error kept)."""
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
    large = F_ONE - fdiv32(F_TWO, exp2_scale32(F_ONE + fma(r * r, q, r), shifted) + F_ONE)
    t = select(a < F_ONE, small, large)  # nan takes the large branch and stays nan
    return copysign(t, x)


OPS = ("exp", "log", "tanh", "sigmoid")
"""The kernel ops these functions implement (their map kernels ask for wide vectors)."""

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
