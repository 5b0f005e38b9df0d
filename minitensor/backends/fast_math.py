"""Branch-free ``exp``, ``log``, ``tanh`` and ``sigmoid`` that LLVM can vectorise, for the ``fast`` kernels.

Numba lowers ``math.exp`` and friends to scalar libm calls, which no loop vectoriser can widen (SVML would, but
PyPI's llvmlite is not built with it). These versions use only float arithmetic and the intrinsics of
:mod:`minitensor.backends.fast_intrinsics` (selects, fused multiply-adds, integer operations on the float's bits): all
plain LLVM instructions, so a kernel loop calling them (LLVM inlines them) becomes SIMD code; such kernels call
:func:`prefer_wide` for 512-bit vectors. :mod:`minitensor.operators` keeps the ``math``-module versions as the
readable reference (the ``simple`` backend uses them); :mod:`minitensor.backends.fast_kernels` rebinds its op table
to these, and stores to float32 outputs through the cheaper float32-accurate versions in
:mod:`minitensor.backends.fast_math32`.

Contract (checked by tests/test_fast_math.py against long double and mpmath): float64 results within 1 ulp of the
correctly rounded value (measured: at most 0.60 (exp, sigmoid), 0.72 (tanh) and 0.76 (log) ulp from the exact value
for normal results; 97-99% correctly rounded) over the whole float64 line, subnormal inputs and results included;
float32 results within 1 ulp of the correctly rounded float32; and NumPy's special values: ``exp`` overflows to inf
above 709.78 and underflows through the subnormals to +0; ``log`` is -inf at +-0, nan below 0 and inf at inf; ``tanh``
keeps the sign of zero; nan in gives nan out.

Method: no tables. A vectorised loop reads a table with gathers, and on some CPUs those cost more than the rest of the
function (an Ice Lake Xeon ran a 64-entry-table exp at half NumPy's speed; the same exp without the lookup ran at
NumPy's). So the reductions are the classic table-free ones, with longer polynomials (near-minimax fits, checked by
the tests). ``exp`` reduces x = k ln2 + r with the 1.5 * 2^52 shift trick (no float-to-int conversion of a nan or
inf happens; |r| <= ln2/2, its rounding error kept), takes e^r - 1 - r from a degree-10 polynomial, and applies 2^k in
one rounding (``vscalefpd``). ``log`` splits x = 2^k z by bit operations, z in [sqrt(1/2), sqrt(2)), and uses
fdlibm's identity log z = f - f^2/2 + s (f^2/2 + R(s^2)), f = z - 1, s = f / (2 + f), R of degree 7 in s^2. ``tanh``
is T / (T + 2), T = e^2|x| - 1 from exp's parts, and ``sigmoid`` 2^-k / (2^-k + m) with e^-x = 2^k m, the sums kept
as double-doubles and the quotient corrected by its residual. log's and tanh's one division is a ``vdivpd`` (measured
faster there than a float32 estimate and the Newton steps it needs: log 1.29 -> 1.01 ns per element in cache);
sigmoid's is that estimate (twice the SIMD lanes of a float64 division) refined by Newton steps.
"""

from __future__ import annotations

from typing import Any

from numba import njit

from .fast_intrinsics import (  # LLVM instructions Numba has no spelling for
    as_bits,
    copysign,
    fdiv,
    fma,
    from_bits,
    ldexp,
    prefer_wide,  # noqa: F401
    recip_estimate,
    select,
)


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


@njit(inline="always")
def two_sum(a: float, b: float) -> tuple[float, float]:
    """(s, e) with s = a + b rounded and s + e = a + b exactly (Knuth's two-sum: any magnitudes)."""
    s = a + b
    v = s - a
    return s, (a - (s - v)) + (b - v)


# --- exp ------------------------------------------------------------------------------------------

INV_LN2 = 1.4426950408889634
LN2 = 0.6931471805599453
LN2_HI43 = 0.6931471805598903  # ln2 as a multiple of 2^-43: k LN2_HI43 is exact for |k| <= 1077, and so is x - k LN2_HI43
LN2_LO43 = 5.497923018708371e-14  # ln2 - LN2_HI43
SHIFT = 6755399441056767.0  # 1.5 * 2^52 + 1023: (y + SHIFT) - SHIFT rounds y to an integer k, and y + SHIFT's low
SHIFT_BITS = 0x43380000000003FF  # bits hold k + 1023 (as_bits(y + SHIFT) - SHIFT_BITS = k), so its bits << 52 are 2^k
EXP_MAX = 710.0  # above ln(DBL_MAX) = 709.78: clamping here still overflows to inf
EXP_MIN = -746.0  # below ln(2^-1075): clamping here still underflows to 0
TWO_M64 = 5.421010862427522e-20  # 2^-64
INF = float("inf")
NAN = float("nan")
EXP_Q = (2.082662294046847e-09, 2.51120347243638e-08, 2.7557581849032313e-07, 2.755723486755752e-06,
         2.4801586926648188e-05, 0.00019841269896378713, 0.0013888888889115611, 0.008333333333317035,
         0.041666666666666095, 0.16666666666666682, 0.5)
"""Q(r) ~ (e^r - 1 - r) / r^2 on |r| <= ln2/2, degree 10 (near-minimax fit: r^2 Q(r) within 2^-60 of e^r - 1 - r,
relative to e^r)."""


@njit(inline="always")
def expm1_parts(x: float) -> tuple[float, float, float]:
    """(r, tail, shifted) with e^x = 2^k (1 + r + tail) to about 2^-60 relative, |r| <= 0.3466, |tail| <= |r| / 5,
    and k = round(x / ln2) held in ``shifted``'s low bits (:func:`shift_exponent`, :func:`shift_pow2`), for |x| <= 746
    (nan passes).

    k comes from the shift trick (no float-to-int conversion of a nan); x - k LN2_HI43 is exact and r is it minus k
    LN2_LO43, rounded, with the rounding error r_lo kept: e^(r + r_lo) - 1 - r = r^2 Q(r) + r_lo (1 + r), Q a
    degree-10 polynomial. No table: a vectorised loop reads one with gathers, which are slow on some CPUs (they
    doubled the whole exp on an Ice Lake Xeon).
    """
    shifted = fma(x, INV_LN2, SHIFT)
    kd = shifted - SHIFT
    u = fma(-kd, LN2_HI43, x)  # exact
    r = fma(-kd, LN2_LO43, u)
    r_lo = fma(-kd, LN2_LO43, u - r)  # r's rounding error (u - r is exact, or rounds far below r_lo)
    return r, fma(r * r, horner(r, EXP_Q), fma(r_lo, r, r_lo)), shifted


@njit(inline="always")
def shift_exponent(shifted: float) -> int:
    """The integer k that :func:`expm1_parts` left in ``shifted``'s low bits."""
    return as_bits(shifted) - SHIFT_BITS


@njit(inline="always")
def shift_pow2(shifted: float) -> float:
    """2^k for the k in ``shifted``'s low bits (-1022 <= k <= 1023): one shift of its bits."""
    return from_bits(as_bits(shifted) << 52)


@njit(inline="always")
def exp_parts(x: float) -> tuple[float, float, int]:
    """(hi, lo, k) with e^x = (hi + lo) 2^k to about 2^-60 relative, hi = 1 + r rounded in [0.65, 1.35] and |lo| <
    0.08, for |x| <= 746: :func:`expm1_parts`, with 1 + r split exactly (|r| < 1)."""
    r, tail, shifted = expm1_parts(x)
    hi = 1.0 + r
    return hi, (r - (hi - 1.0)) + tail, shift_exponent(shifted)


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
    s, err = two_sum(t, e_hi)
    d_lo = err + e_lo
    inv = recip(s)  # to 2^-46: the Newton step below makes the quotient good to the last bit
    q = ts * inv
    residual = fma(-q, s, ts) - q * d_lo  # ts - q (s + d_lo)
    return fma(residual, inv, q) * TWO_M64  # exact, or one rounding into the subnormals


# --- log ------------------------------------------------------------------------------------------

TINY = 2.2250738585072014e-308  # smallest normal float64; subnormal inputs are scaled by 2^54 first
TWO54 = 18014398509481984.0
SQRT_HALF_BITS = 0x3FE6A09E667F3BCD  # as_bits(sqrt(1/2)): x = 2^k z with z in [sqrt(1/2), sqrt(2))
LOG_P = (0.13251323782174, 0.13250118565625088, 0.1538709074665868, 0.18181775665519181, 0.2222222264680057,
         0.2857142856908582, 0.4000000000000625, 0.6666666666666666)
"""P(z) ~ (2 atanh(s) - 2 s) / s^3 at z = s^2 <= 0.0295 (|s| <= 3 - 2 sqrt(2)), degree 7 (near-minimax fit: s^3 P
within 2^-60 of 2 atanh(s) - 2 s, relative to s)."""


@njit
def log(x: float) -> float:
    """natural log; -inf at +-0, nan below 0 and for nan, inf at inf.

    x = 2^k z by bit operations (subnormals scaled by 2^54 first), z in [sqrt(1/2), sqrt(2)), f = z - 1 exact, and
    log z = 2 atanh(s) with s = f / (2 + f): log z = f - f^2/2 + s (f^2/2 + s^2 P(s^2)) (fdlibm's identity; |s| <=
    0.172, P of degree 7). f^2/2's rounding error is kept and k ln2_hi + f is summed exactly, so the one sizeable
    error is the final rounding (s's own rounding weighs at most 0.1 ulp: it only enters through s (f^2/2 + R)). No
    table (see :func:`expm1_parts`).
    """
    x = float(x)  # integer data (int64 compute) too
    subnormal = x < TINY
    xs = select(subnormal, x * TWO54, x)
    tmp = as_bits(xs) - SQRT_HALF_BITS
    kd = float((tmp >> 52) - select(subnormal, 54, 0))
    f = from_bits(as_bits(xs) - ((tmp >> 52) << 52)) - 1.0  # exact (a negative's or nan's garbage bits pass)
    s = fdiv(f, 2.0 + f)  # one vdivpd: cheaper here than a float32 estimate and the Newton steps s needs after it
    z = s * s
    half_f = 0.5 * f
    hfsq = half_f * f
    hfsq_lo = fma(half_f, f, -hfsq)  # exact: f^2/2 = hfsq + hfsq_lo
    w = kd * LN2_HI43  # exact
    hi = w + f  # fast two-sum (|w| >= 0.69 > |f|, or w = 0): hi + lo = w + f exactly
    lo = f - (hi - w)
    tail = fma(s, fma(z, horner(z, LOG_P), hfsq), fma(kd, LN2_LO43, -hfsq_lo)) - hfsq
    result = hi + (lo + tail)
    result = select(x == INF, INF, result)
    return select(x > 0.0, result, select(x == 0.0, -INF, NAN))


# --- tanh and sigmoid -----------------------------------------------------------------------------

@njit
def tanh(x: float) -> float:
    """hyperbolic tangent: odd, +-1 at +-inf, nan for nan, -0 for -0.

    tanh|x| = T / (T + 2) with T = e^2|x| - 1 = (2^k - 1) + 2^k v, v = r + tail of :func:`expm1_parts` kept as a
    double-double (k in [0, 58]; 2^k - 1 exact, and |2^k - 1| >= |2^k v| or k = 0, so one fast two-sum adds them
    exactly): T is good to about 2^-60 relative even for tiny |x| (k = 0: T = v). T + 2 likewise. The quotient is T
    times 1 / (T + 2) (one division), corrected by its residual. One formula for tiny and large |x|.
    """
    x = float(x)
    a = abs(x)
    y = select(a + a > 40.0, 40.0, a + a)  # tanh(20) = 1 - 8.5e-18 rounds to 1; nan passes
    r, tail, shifted = expm1_parts(y)
    scale = shift_pow2(shifted)
    v = r + tail  # v + v_lo = e^y / 2^k - 1 (fast two-sum: |tail| <= |r| / 5)
    v_lo = tail - (v - r)
    t_1 = scale - 1.0
    big = scale * v
    s = t_1 + big  # T = s + e
    e = fma(scale, v_lo, big - (s - t_1))
    d_hi, d_err = two_sum(s, 2.0)  # T + 2 = d_hi + d_lo
    d_lo = d_err + e
    inv = fdiv(1.0, d_hi)
    q0 = s * inv  # within an ulp or so
    residual = fma(-q0, d_lo, fma(-q0, d_hi, s) + e)  # T - q0 (T + 2), about an ulp of T
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


OPS = ("exp", "log", "tanh", "sigmoid")
"""The kernel ops these functions implement (their map kernels ask for wide vectors)."""
