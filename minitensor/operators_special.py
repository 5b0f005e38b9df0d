"""Scalar special functions: the gamma family (lgamma, digamma, polygamma, the regularized incomplete gamma functions
igamma and igammac), erfc, erfinv and the exponentially scaled modified Bessel functions ive (orders 0 and 1).

The same contract as :mod:`minitensor.operators` (which re-exports these and names them in its op tables): Python
floats in and out, only ``math``, written so that Numba compiles them unchanged for the ``fast`` and ``cuda``
backends, and IEEE edges (inf, nan, the poles) as PyTorch has them.
"""

from __future__ import annotations

import math

LOG_MAX_FLOAT = 709.782712893384  # log of the largest float64
HUGE = 4503599627370496.0  # 2**52: every float at least this large is already an integer
HALF_LOG_2PI = 0.9189385332046728  # log(2 pi) / 2
SQRT_PI_2 = 0.886226925452758  # sqrt(pi) / 2
LOG_PI = 1.1447298858494002  # log(pi)
# B_2j / (2j)! for j = 1..10 (B the Bernoulli numbers): the Euler-Maclaurin coefficients of the Hurwitz zeta tail.
EULER_MACLAURIN = (1.0 / 12.0, -1.0 / 720.0, 1.0 / 30240.0, -1.0 / 1209600.0, 1.0 / 47900160.0,
                   -691.0 / 1307674368000.0, 1.0 / 74724249600.0, -3617.0 / 10670622842880000.0,
                   43867.0 / 5109094217170944000.0, -174611.0 / 802857662698291200000.0)


OUT_OF_LINE = frozenset({"lgamma", "digamma", "polygamma", "erfinv", "igamma", "igammac"})
"""Long series that compiled kernels call instead of inlining at every call site (inlining them multiplied a
kernel's compile time; the call costs nothing next to their loops)."""


def erfc(x: float) -> float:
    """1 - erf(x) without cancellation (libm's erfc: accurate far into the right tail)"""
    return math.erfc(float(x))


def _lgamma_pos(x: float) -> float:
    """log Gamma(x) for x > 0: log Gamma(x) = log Gamma(x + n) - log(x (x+1) ... (x+n-1)) up to x >= 10, then
    Stirling's series (x - 1/2) log x - x + log(2 pi)/2 + sum B_2k / (2k (2k-1) x^(2k-1)) to k = 8 (error < 1e-17
    there). Absolute error ~2e-15 for x < 10 (so relative error grows near the roots 1 and 2)."""
    if x == math.inf:
        return x
    shift = 0.0
    if x < 10.0:
        prod = 1.0
        while x < 10.0:
            prod *= x
            x += 1.0
        shift = -math.log(prod)
    return shift + ((x - 0.5) * math.log(x) - x + HALF_LOG_2PI + _stirling_series(x))


def _stirling_series(x: float) -> float:
    """log Gamma(x) - ((x - 1/2) log x - x + log(2 pi)/2) = sum_k B_2k / (2k (2k-1) x^(2k-1)), k <= 8, for x >= 10"""
    z = 1.0 / (x * x)
    tail = 1.0 / 1680 - z * (1.0 / 1188 - z * (691.0 / 360360 - z * (1.0 / 156 - z * 3617.0 / 122400)))
    return (1.0 / 12 - z * (1.0 / 360 - z * (1.0 / 1260 - z * tail))) / x


def lgamma(x: float) -> float:
    """log|Gamma(x)|, +inf at the poles 0, -1, -2, ... and at +-inf; negative x by reflection,
    log(pi / |sin(pi x)|) - log Gamma(1 - x) (sin of the exactly reduced argument). Written out (not libm's lgamma,
    which CPython replaces by its own), so every backend computes the same digits."""
    x = float(x)
    if x != x:
        return x
    if x <= 0.0 and (x <= -HUGE or x == math.floor(x)):
        return math.inf
    if x > 0.0:
        return _lgamma_pos(x)
    r = x - math.floor(x + 0.5)  # exact, in [-0.5, 0.5]: |sin(pi x)| = |sin(pi r)|
    return LOG_PI - math.log(abs(math.sin(math.pi * r))) - _lgamma_pos(1.0 - x)


def _digamma_pos(x: float) -> float:
    """psi(x) for x > 0: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic series
    log x - 1/(2x) - sum B_2k / (2k x^2k) to k = 7 (error below 1e-17 there)"""
    acc = 0.0
    while x < 10.0:
        acc -= 1.0 / x
        x += 1.0
    z = 1.0 / (x * x)
    tail = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760
                                                                                                   - z / 12.0))))))
    return acc + math.log(x) - 0.5 / x - tail


def digamma(x: float) -> float:
    """psi(x) = Gamma'(x) / Gamma(x), as torch: -inf at +0, +inf at -0, nan at negative integers and -inf.
    Negative x by reflection, psi(x) = psi(1 - x) - pi / tan(pi x) (tan of the exactly reduced argument).
    Absolute error ~1e-16; relative error grows near the roots (x ~ 1.4616, and each negative one)."""
    x = float(x)
    if x == 0.0:
        return -math.inf if math.copysign(1.0, x) > 0.0 else math.inf
    if x != x or x <= -HUGE or (x < 0.0 and x == math.floor(x)):
        return math.nan
    reflection = 0.0
    if x < 0.0:
        r = x - math.floor(x + 0.5)  # exact, in [-0.5, 0.5]: tan(pi x) = tan(pi r)
        reflection = -math.pi / math.tan(math.pi * r)
        x = 1.0 - x
    return _digamma_pos(x) + reflection


def _rpow(a: float, s: float) -> float:
    """a^-s for a > 0, +inf on overflow (Python's ** raises there)"""
    if -s * math.log(a) > LOG_MAX_FLOAT:
        return math.inf
    return a ** (-s)


def _zeta_pos(s: float, a: float) -> float:
    """Hurwitz zeta sum_k (a + k)^-s for a > 0, integer s >= 2: direct terms until b = a + N >= s + 10, then the
    Euler-Maclaurin tail b^(1-s)/(s-1) + b^-s/2 + sum_j B_2j/(2j)! s(s+1)...(s+2j-2) b^(1-s-2j), j <= 10"""
    if a == math.inf:
        return 0.0
    acc = 0.0
    top = 10.0 + (s if s < 200.0 else 200.0)
    while a < top:
        acc += _rpow(a, s)
        a += 1.0
    p = _rpow(a, s)
    acc += a * p / (s - 1.0) + 0.5 * p
    b2 = 1.0 / (a * a)
    rise = s * p / a  # s(s+1)...(s+2j-2) a^(1-s-2j) for j = 1, then each step multiplies in (s+2j-1)(s+2j) / a^2
    k = s
    for coefficient in EULER_MACLAURIN:
        acc += coefficient * rise
        rise *= (k + 1.0) * (k + 2.0) * b2
        k += 2.0
    return acc


def _zeta(s: float, x: float) -> float:
    """Hurwitz zeta sum_k (x + k)^-s for any x (integer s >= 2): +inf at 0, -1, -2, ...; negative x as
    (-x)^-s + zeta(s, x + 1) on (-1, 0), below as zeta(s, f) + (-1)^s (zeta(s, 1 - f) - zeta(s, m + 1 - f)) with
    x = f - m, 0 < f < 1 (bounded work). One call site of the series, so a compiled kernel inlines it once."""
    if x != x:
        return x
    if x <= -HUGE or (x <= 0.0 and x == math.floor(x)):
        return math.inf
    sign = -1.0 if s - 2.0 * math.floor(s / 2.0) == 1.0 else 1.0
    acc = 0.0
    parts = 1
    a0 = x
    m = 0.0
    if x < 0.0 and x > -1.0:
        acc = sign * _rpow(-x, s)
        a0 = x + 1.0
    elif x < 0.0:
        parts = 3
        m = float(math.ceil(-x))
        a0 = x + m  # exact: f
    a, weight = a0, 1.0
    for part in range(parts):  # (a, weight): (f, 1), then (1 - f, sign), then (m + 1 - f, -sign)
        if part == 1:
            a, weight = 1.0 - a0, sign
        elif part == 2:
            a, weight = m + 1.0 - a0, -sign
        acc += weight * _zeta_pos(s, a)
    return acc


def polygamma(n: float, x: float) -> float:
    """psi^(n)(x), the n-th derivative of digamma: digamma for n = 0, else (-1)^(n+1) n! zeta(n + 1, x)
    (trigamma, n = 1, is +inf at every pole; n >= 2 gives (-1)^(n+1) inf there, as torch). nan unless n is a
    non-negative integer; n! overflows float64 for n > 170 (inf or nan, as torch)."""
    n = float(n)
    if not (n >= 0.0 and n < HUGE) or n != math.floor(n):
        return math.nan
    if n == 0.0:
        return digamma(x)
    fact = 1.0
    k = 2.0
    while k <= n and fact < math.inf:
        fact *= k
        k += 1.0
    z = _zeta(n + 1.0, float(x))
    return fact * z if n - 2.0 * math.floor(n / 2.0) == 1.0 else -fact * z


def erfinv(x: float) -> float:
    """The inverse of erf: +-inf at +-1, nan outside [-1, 1]. Winitzki's closed-form estimate (a = 0.147, relative
    error < 2e-3) refined by three Halley steps on erf (|x| <= 0.5) or on erfc with the exact 1 - |x| (beyond, so
    the tails keep full relative accuracy): a few ulps of float64."""
    x = float(x)
    ax = x if x >= 0.0 else -x
    if not ax < 1.0:
        if ax == 1.0:
            return math.copysign(math.inf, x)
        return math.nan
    if ax == 0.0:
        return x
    c = 1.0 - ax  # exact for ax >= 0.5
    ln = math.log(c * (1.0 + ax)) if ax > 0.5 else math.log1p(-ax * ax)
    a = 0.147
    q = 2.0 / (math.pi * a) + 0.5 * ln
    b = -ln / a
    root = math.sqrt(q * q + b)
    y = math.sqrt(b / (root + q) if q > 0.0 else root - q)
    if y == 0.0:
        y = SQRT_PI_2 * ax
    for _ in range(3):
        if ax <= 0.5:
            u = (math.erf(y) - ax) * SQRT_PI_2 * math.exp(y * y)
        else:
            u = (c - math.erfc(y)) * SQRT_PI_2 * math.exp(y * y)
        y -= u / (1.0 + y * u)
    return y if x > 0.0 else -y


BESSEL_SERIES_MAX = 20.0
"""ive sums the power series below this |x| and the asymptotic expansion from it (whose smallest term, near the
(2|x|)-th, is ~e^(-2|x|) < 5e-18 of the sum there)."""
TWO_PI = 6.283185307179586


def ive(n: float, x: float) -> float:
    """I_n(x) e^-|x|, the exponentially scaled modified Bessel function of the first kind, for order n = 0 or 1 (nan
    for any other n; torch's i0e and i1e): nan at nan, 0 at +-inf (-0.0 at -inf for n = 1), odd in x for n = 1 (+0.0
    at -0.0, as torch). Below |x| = 20 the power series (x/2)^n sum_k (x^2/4)^k / (k! (k+n)!) of positive terms,
    in Horner form, times e^-|x|; from there the asymptotic expansion e^|x| / sqrt(2 pi |x|) sum_k (-1)^k
    prod_{j<=k} (4n^2 - (2j-1)^2) / (k! (8|x|)^k), summed until its terms fall below 1e-17 of the sum. A few ulps
    of float64 (at most ~6)."""
    n, x = float(n), float(x)
    if x != x or not (n == 0.0 or n == 1.0):
        return math.nan
    ax = abs(x)
    if ax == math.inf:
        r = 0.0
    elif ax < BESSEL_SERIES_MAX:
        q = 0.25 * ax * ax
        k = math.floor(1.6 * ax) + 12.0  # the terms after the k-th are below 1e-20 of the sum
        total = 1.0
        while k > 0.0:
            total = 1.0 + total * q / (k * (k + n))
            k -= 1.0
        r = total * math.exp(-ax) * (0.5 * ax if n == 1.0 else 1.0)
    else:
        mu = 4.0 * n * n
        z = 8.0 * ax
        term = 1.0
        total = 1.0
        k = 1.0
        while k < 60.0 and abs(term) >= 1e-17 * total:
            odd = 2.0 * k - 1.0
            term *= (odd * odd - mu) / (k * z)
            total += term
            k += 1.0
        r = total / math.sqrt(TWO_PI * ax)
    return -r if n == 1.0 and x < 0.0 else r
