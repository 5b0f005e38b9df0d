"""Scalar math primitives.

Every function takes and returns Python floats, uses only ``math``, and is written so that Numba
can compile it unchanged (the ``fast`` and ``cuda`` backends jit these same functions).
Ops are registered by name in :data:`UNARY_OPS`, :data:`BINARY_OPS` and :data:`REDUCE_OPS`;
the backends receive those names, never Python callables.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

EPS = 1e-6
LOG_MAX_FLOAT = 709.782712893384  # log of the largest float64


def mul(x: float, y: float) -> float:
    """x * y"""
    return x * y


def id(x: float) -> float:  # noqa: A001 - the identity op keeps its mathematical name
    """x"""
    return x


def add(x: float, y: float) -> float:
    """x + y"""
    return x + y


def sub(x: float, y: float) -> float:
    """x - y"""
    return x - y


def div(x: float, y: float) -> float:
    """x / y (IEEE semantics: division by zero gives +-inf or nan, never raises)"""
    if y == 0.0:
        if x == 0.0 or x != x:
            return math.nan
        return math.inf if (x > 0.0) == (math.copysign(1.0, y) > 0.0) else -math.inf
    return x / y


def neg(x: float) -> float:
    """-x"""
    return -x


def lt(x: float, y: float) -> float:
    """1.0 if x < y else 0.0"""
    return 1.0 if x < y else 0.0


def gt(x: float, y: float) -> float:
    """1.0 if x > y else 0.0"""
    return 1.0 if x > y else 0.0


def eq(x: float, y: float) -> float:
    """1.0 if x == y else 0.0"""
    return 1.0 if x == y else 0.0


def max(x: float, y: float) -> float:  # noqa: A001
    """the larger of x and y (nan if either is nan; +0.0 above -0.0, so the result never depends on order, as
    IEEE 754-2019 maximum; integers stay integers)"""
    if x != x or y != y:
        return x + y
    if x == y:
        return x + y if x == 0 else x  # -0.0 + 0.0 is 0.0; -0.0 + -0.0 is -0.0
    return x if x > y else y


def min(x: float, y: float) -> float:  # noqa: A001
    """the smaller of x and y (nan if either is nan; -0.0 below +0.0, as IEEE 754-2019 minimum; integers stay
    integers)"""
    if x != x or y != y:
        return x + y
    if x == y:
        return -(-x - y) if x == 0 else x  # -0.0 if either zero is negative
    return x if x < y else y


def le(x: float, y: float) -> float:
    """1.0 if x <= y else 0.0 (0.0 when either is nan)"""
    return 1.0 if x <= y else 0.0


def ge(x: float, y: float) -> float:
    """1.0 if x >= y else 0.0 (0.0 when either is nan)"""
    return 1.0 if x >= y else 0.0


def ne(x: float, y: float) -> float:
    """1.0 if x != y else 0.0 (1.0 when either is nan)"""
    return 1.0 if x != y else 0.0


def is_close(x: float, y: float) -> float:
    """1.0 if |x - y| < 1e-2 else 0.0"""
    return 1.0 if abs(x - y) < 1e-2 else 0.0


def sigmoid(x: float) -> float:
    """1 / (1 + e^-x), computed without overflow for large |x|"""
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def relu(x: float) -> float:
    """x if x > 0 else 0 (nan stays nan)"""
    return x if x > 0.0 or x != x else 0.0


def log(x: float) -> float:
    """natural log; -inf at 0 and nan below 0 (no exception, as in NumPy)"""
    if x > 0.0:
        return math.log(x)
    if x == 0.0:
        return -math.inf
    return math.nan


def exp(x: float) -> float:
    """e^x, +inf on overflow"""
    if x > LOG_MAX_FLOAT:
        return math.inf
    return math.exp(x)


def tanh(x: float) -> float:
    """hyperbolic tangent"""
    return math.tanh(x)


def abs(x: float) -> float:  # noqa: A001
    """|x|"""
    return x if x >= 0.0 else -x


def inv(x: float) -> float:
    """1 / x"""
    return div(1.0, x)


def sq(x: float) -> float:
    """x * x"""
    return x * x


def sqrt(x: float) -> float:
    """square root; nan below 0"""
    if x < 0.0:
        return math.nan
    return math.sqrt(x)


def sign(x: float) -> float:
    """-1, 0 or 1"""
    if x > 0.0:
        return 1.0
    if x < 0.0:
        return -1.0
    return 0.0


def pow(x: float, y: float) -> float:  # noqa: A001
    """x ** y (nan for a negative base with a fractional exponent)"""
    if x < 0.0 and y - y == 0.0 and y != math.floor(y):
        return math.nan
    if x == 0.0 and y < 0.0:
        return math.inf
    if x != 0.0 and x - x == 0.0 and y - y == 0.0 and y * math.log(abs(x)) > LOG_MAX_FLOAT:
        # Overflow: Python raises, IEEE gives inf (-inf for a negative base to an odd power).
        odd = y - 2.0 * math.floor(y / 2.0) == 1.0
        return -math.inf if x < 0.0 and odd else math.inf
    return x**y


# --- more element-wise math: IEEE results (inf, nan) where Python's math module would raise ---

HUGE = 4503599627370496.0  # 2**52: every float at least this large is already an integer


def exp2(x: float) -> float:
    """2^x, +inf on overflow"""
    if x >= 1024.0:
        return math.inf
    return 2.0**x


def expm1(x: float) -> float:
    """e^x - 1, accurate near 0"""
    if x > LOG_MAX_FLOAT:
        return math.inf
    return math.expm1(x)


def log2(x: float) -> float:
    """base-2 log; -inf at 0 and nan below 0"""
    if x > 0.0:
        return math.log2(x)
    return -math.inf if x == 0.0 else math.nan


def log10(x: float) -> float:
    """base-10 log; -inf at 0 and nan below 0"""
    if x > 0.0:
        return math.log10(x)
    return -math.inf if x == 0.0 else math.nan


def log1p(x: float) -> float:
    """log(1 + x), accurate near 0; -inf at -1 and nan below"""
    if x > -1.0:
        return math.log1p(x)
    return -math.inf if x == -1.0 else math.nan


def rsqrt(x: float) -> float:
    """1 / sqrt(x)"""
    return div(1.0, sqrt(x))


def sin(x: float) -> float:
    """sine (nan for inf and nan)"""
    if x - x != 0.0:
        return math.nan
    return math.sin(x)


def cos(x: float) -> float:
    """cosine (nan for inf and nan)"""
    if x - x != 0.0:
        return math.nan
    return math.cos(x)


def tan(x: float) -> float:
    """tangent (nan for inf and nan)"""
    if x - x != 0.0:
        return math.nan
    return math.tan(x)


def erf(x: float) -> float:
    """the error function 2/sqrt(pi) * integral_0^x e^(-t^2) dt"""
    return math.erf(x)



# --- special functions (gamma family, erfc, erfinv): textbook series, IEEE edges as PyTorch ---

HALF_LOG_2PI = 0.9189385332046728  # log(2 pi) / 2
SQRT_PI_2 = 0.886226925452758  # sqrt(pi) / 2
LOG_PI = 1.1447298858494002  # log(pi)
# B_2j / (2j)! for j = 1..10 (B the Bernoulli numbers): the Euler-Maclaurin coefficients of the Hurwitz zeta tail.
EULER_MACLAURIN = (1.0 / 12.0, -1.0 / 720.0, 1.0 / 30240.0, -1.0 / 1209600.0, 1.0 / 47900160.0,
                   -691.0 / 1307674368000.0, 1.0 / 74724249600.0, -3617.0 / 10670622842880000.0,
                   43867.0 / 5109094217170944000.0, -174611.0 / 802857662698291200000.0)


OUT_OF_LINE = frozenset({"lgamma", "digamma", "polygamma", "erfinv"})
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
    z = 1.0 / (x * x)
    tail = 1.0 / 1680 - z * (1.0 / 1188 - z * (691.0 / 360360 - z * (1.0 / 156 - z * 3617.0 / 122400)))
    series = (1.0 / 12 - z * (1.0 / 360 - z * (1.0 / 1260 - z * tail))) / x
    return shift + ((x - 0.5) * math.log(x) - x + HALF_LOG_2PI + series)


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

SQRT1_2 = 0.7071067811865476  # 1 / sqrt(2)
INV_SQRT_2PI = 0.3989422804014327  # 1 / sqrt(2 pi)
GELU_TANH_C = 0.7978845608028654  # sqrt(2 / pi)
GELU_TANH_K = 0.044715


def gelu(x: float) -> float:
    """x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), the exact GELU (nan at -inf, as in PyTorch)"""
    return 0.5 * x * (1.0 + math.erf(x * SQRT1_2))


def gelu_tanh(x: float) -> float:
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), GELU's tanh approximation"""
    return 0.5 * x * (1.0 + math.tanh(GELU_TANH_C * (x + GELU_TANH_K * x * x * x)))


def floor(x: float) -> float:
    """largest integer <= x (inf and nan unchanged)"""
    if not abs(x) < HUGE:
        return x
    return float(math.floor(x))


def ceil(x: float) -> float:
    """smallest integer >= x (inf and nan unchanged)"""
    if not abs(x) < HUGE:
        return x
    return float(math.ceil(x))


def trunc(x: float) -> float:
    """x rounded toward zero (inf and nan unchanged)"""
    if not abs(x) < HUGE:
        return x
    return float(math.trunc(float(x)))  # float(): a float32 scalar (the CUDA simulator's) has no __trunc__


def round(x: float) -> float:  # noqa: A001
    """x rounded to the nearest integer, ties to even (as torch.round)"""
    if not abs(x) < HUGE:
        return x
    r = float(math.floor(x + 0.5))
    if r - x == 0.5 and r - 2.0 * float(math.floor(r / 2.0)) != 0.0:
        r -= 1.0
    return r


def isnan(x: float) -> float:
    """1.0 if x is nan"""
    return 1.0 if x != x else 0.0


def isinf(x: float) -> float:
    """1.0 if x is +inf or -inf"""
    return 1.0 if x == math.inf or x == -math.inf else 0.0


def isfinite(x: float) -> float:
    """1.0 if x is neither inf nor nan"""
    return 1.0 if x - x == 0.0 else 0.0


def logical_not(x: float) -> float:
    """1.0 if x == 0"""
    return 1.0 if x == 0 else 0.0


def bitwise_not(x: int) -> int:
    """~x (integers only)"""
    return ~x


def floordiv(x: float, y: float) -> float:
    """floor(x / y) like Python's // (floats: +-inf or nan for y == 0; integer callers never pass 0)"""
    if y == 0:
        return div(x, y)
    return x // y


def remainder(x: float, y: float) -> float:
    """x - floor(x / y) * y like Python's % (sign of y; nan for y == 0)"""
    if y == 0:
        return div(x - x, y - y)
    return x % y


def fmod(x: float, y: float) -> float:
    """C's fmod: the remainder of x / y truncated toward zero (sign of x; nan for y == 0)"""
    if y == 0 or x != x or y != y or x - x != 0.0:
        return math.nan
    if y - y != 0.0:  # |y| is infinite
        return x
    return math.copysign(abs(x) % abs(y), x)  # % of non-negatives is exact; fmod has the sign of x


def atan2(x: float, y: float) -> float:
    """the angle of the point (y, x): atan(x / y) in the right quadrant"""
    return math.atan2(x, y)


def bitwise_and(x: int, y: int) -> int:
    """x & y (integers and bools)"""
    return x & y


def bitwise_or(x: int, y: int) -> int:
    """x | y (integers and bools)"""
    return x | y


def bitwise_xor(x: int, y: int) -> int:
    """x ^ y (integers and bools)"""
    return x ^ y


def logical_and(x: float, y: float) -> float:
    """1.0 if both are nonzero"""
    return 1.0 if x != 0 and y != 0 else 0.0


def logical_or(x: float, y: float) -> float:
    """1.0 if either is nonzero"""
    return 1.0 if x != 0 or y != 0 else 0.0


def logical_xor(x: float, y: float) -> float:
    """1.0 if exactly one is nonzero"""
    return 1.0 if (x != 0) != (y != 0) else 0.0


# Backward helpers: d * f'(x) for the unary function f.


def log_back(x: float, d: float) -> float:
    """d * d/dx log(x) = d / x"""
    return div(d, x)


def inv_back(x: float, d: float) -> float:
    """d * d/dx (1/x) = -d / x^2"""
    return div(-d, x * x)


def relu_back(x: float, d: float) -> float:
    """d * d/dx relu(x) = d if x > 0 else 0"""
    return d if x > 0.0 else 0.0


def sigmoid_back(x: float, d: float) -> float:
    """d * s(x) * (1 - s(x))"""
    s = sigmoid(x)
    return d * s * (1.0 - s)


def exp_back(x: float, d: float) -> float:
    """d * e^x"""
    return d * exp(x)


def tanh_back(x: float, d: float) -> float:
    """d * (1 - tanh(x)^2)"""
    t = math.tanh(x)
    return d * (1.0 - t * t)


def abs_back(x: float, d: float) -> float:
    """d * sign(x)"""
    return d * sign(x)


def sqrt_back(x: float, d: float) -> float:
    """d / (2 sqrt(x))"""
    return div(d, 2.0 * sqrt(x))


def gelu_back(x: float, d: float) -> float:
    """d * (Phi(x) + x phi(x)), the exact GELU's derivative (phi the standard normal density)"""
    return d * (0.5 * (1.0 + math.erf(x * SQRT1_2)) + x * INV_SQRT_2PI * math.exp(-0.5 * x * x))


def gelu_tanh_back(x: float, d: float) -> float:
    """d * (0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)), t = tanh(sqrt(2/pi) (x + 0.044715 x^3))"""
    t = math.tanh(GELU_TANH_C * (x + GELU_TANH_K * x * x * x))
    return d * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * GELU_TANH_C * (1.0 + 3.0 * GELU_TANH_K * x * x))


UNARY_OPS: dict[str, Callable[..., Any]] = {
    "id": id,
    "neg": neg,
    "inv": inv,
    "relu": relu,
    "sigmoid": sigmoid,
    "log": log,
    "exp": exp,
    "tanh": tanh,
    "abs": abs,
    "sq": sq,
    "sqrt": sqrt,
    "sign": sign,
    "exp2": exp2,
    "expm1": expm1,
    "log2": log2,
    "log10": log10,
    "log1p": log1p,
    "rsqrt": rsqrt,
    "sin": sin,
    "cos": cos,
    "tan": tan,
    "erf": erf,
    "erfc": erfc,
    "erfinv": erfinv,
    "lgamma": lgamma,
    "digamma": digamma,
    "gelu": gelu,
    "gelu_tanh": gelu_tanh,
    "floor": floor,
    "ceil": ceil,
    "trunc": trunc,
    "round": round,
    "isnan": isnan,
    "isinf": isinf,
    "isfinite": isfinite,
    "logical_not": logical_not,
    "bitwise_not": bitwise_not,
}
"""Element-wise functions a backend's ``map`` must support, by name."""

BINARY_OPS: dict[str, Callable[..., Any]] = {
    "add": add,
    "sub": sub,
    "mul": mul,
    "div": div,
    "lt": lt,
    "gt": gt,
    "eq": eq,
    "le": le,
    "ge": ge,
    "ne": ne,
    "max": max,
    "min": min,
    "pow": pow,
    "is_close": is_close,
    "floordiv": floordiv,
    "remainder": remainder,
    "fmod": fmod,
    "atan2": atan2,
    "polygamma": polygamma,
    "bitwise_and": bitwise_and,
    "bitwise_or": bitwise_or,
    "bitwise_xor": bitwise_xor,
    "logical_and": logical_and,
    "logical_or": logical_or,
    "logical_xor": logical_xor,
    "log_back": log_back,
    "inv_back": inv_back,
    "relu_back": relu_back,
    "sigmoid_back": sigmoid_back,
    "exp_back": exp_back,
    "tanh_back": tanh_back,
    "abs_back": abs_back,
    "sqrt_back": sqrt_back,
    "gelu_back": gelu_back,
    "gelu_tanh_back": gelu_tanh_back,
}
"""Element-wise binary functions a backend's ``zip`` must support, by name."""

REDUCE_OPS: dict[str, tuple[Callable[[float, float], float], float]] = {
    "sum": (add, 0.0),
    "max": (max, -math.inf),
    "min": (min, math.inf),
    "prod": (mul, 1.0),
}
"""Reductions a backend's ``reduce`` must support: name -> (binary function, start value)."""

INT_REDUCE_START: dict[str, int] = {"sum": 0, "prod": 1, "max": -(2**63), "min": 2**63 - 1}
"""Start values of the reductions when a kernel computes in int64 (see :func:`reduce_start`)."""


def reduce_start(op: str, integer: bool) -> float | int:
    """The start value of reduction ``op``: an int64 one when the kernel computes on integers, else a float."""
    return INT_REDUCE_START[op] if integer else REDUCE_OPS[op][1]


INTEGER_KINDS = "iub"
"""NumPy dtype kinds that kernels read as int64 (signed, unsigned, bool); everything else is read as float64."""


# Higher-order helpers on Python iterables (used by Scalar code and tests).


def map_list(fn: Callable[[float], float], xs: list[float]) -> list[float]:
    """[fn(x) for x in xs]"""
    return [fn(x) for x in xs]


def zip_with(fn: Callable[[float, float], float], xs: list[float], ys: list[float]) -> list[float]:
    """[fn(x, y) for x, y in zip(xs, ys)]"""
    return [fn(x, y) for x, y in zip(xs, ys, strict=True)]


def reduce_list(fn: Callable[[float, float], float], start: float, xs: list[float]) -> float:
    """fn(...fn(fn(start, x0), x1)..., xn)"""
    acc = start
    for x in xs:
        acc = fn(acc, x)
    return acc
