"""The regularized incomplete gamma functions igamma (P) and igammac (Q), scalar ops with the contract of
:mod:`minitensor.operators_special` (Python floats, only ``math``, compiled unchanged by Numba for ``fast`` and
``cuda``): the series for x < a + 1 and Legendre's continued fraction above, with a small-a form for Q, and Temme's
uniform asymptotic expansion for large a near x = a; relative error ~1e-14 against SciPy and mpmath.
"""

from __future__ import annotations

import math

from .operators_special import HALF_LOG_2PI, TWO_PI, _stirling_series, _zeta_pos, erfc, lgamma

IGAMMA_MAX_TERMS = 20000.0
"""Cap on the terms of igamma's series and continued fraction: each needs ~sqrt(74 a) near x = a, so both converge
to full precision for a up to ~5e6."""
EULER_GAMMA = 0.5772156649015329
# (-1)^k zeta(k) / k for k = 2..59: the Taylor coefficients of log Gamma(1 + a) (after -EULER_GAMMA a) about a = 0.
LGAMMA1P_TAYLOR = tuple((-1.0) ** k * _zeta_pos(float(k), 1.0) / k for k in range(2, 60))


def _log1pmx(t: float) -> float:
    """log(1 + t) - t without cancellation: its Taylor series -t^2/2 + t^3/3 - ... for |t| <= 0.2"""
    if t < -0.2 or t > 0.2:
        return math.log1p(t) - t
    term = t
    total = 0.0
    k = 2.0
    while k < 60.0:
        term *= -t
        piece = term / k
        total += piece
        if abs(piece) <= 1e-17 * abs(total):
            break
        k += 1.0
    return total


def _log_igamma_prefactor(a: float, x: float) -> float:
    """log(x^a e^-x / Gamma(a)) for a, x > 0: directly below a = 10; from there with Stirling's series for
    log Gamma(a), as a (log(1 + t) - t) + log(a / (2 pi)) / 2 - series(a), t = (x - a) / a, which keeps its digits
    where x is near a (the direct form cancels two terms of size a log a there)"""
    if a < 10.0:
        return a * math.log(x) - x - lgamma(a)
    t = (x - a) / a
    core = a * (math.log(x) - math.log(a) - t) if t < -0.2 else a * _log1pmx(t)  # x / a may underflow
    return core + 0.5 * math.log(a) - HALF_LOG_2PI - _stirling_series(a)


def _lgamma1p(a: float) -> float:
    """log Gamma(1 + a) for 0 < a, accurate in relative terms as a -> 0 (its Taylor series below a = 0.5)"""
    if a >= 0.5:
        return lgamma(1.0 + a)
    total = 0.0
    power = a
    for coefficient in LGAMMA1P_TAYLOR:
        power *= a
        total += coefficient * power
    return total - EULER_GAMMA * a


def _igamma_series(a: float, x: float) -> float:
    """P(a, x) = x^a e^-x / Gamma(a + 1) sum_n x^n / ((a + 1) ... (a + n)) (positive terms; used for x < a + 1)"""
    term = 1.0
    total = 1.0
    n = 1.0
    while n < IGAMMA_MAX_TERMS:
        term *= x / (a + n)
        total += term
        if term <= 1e-17 * total:
            break
        n += 1.0
    if a < 10.0:  # x^a e^-x / Gamma(a + 1) directly: no division by a, which may be tiny or subnormal
        return min(math.exp(a * math.log(x) - x - _lgamma1p(a)) * total, 1.0)
    return min(math.exp(_log_igamma_prefactor(a, x)) / a * total, 1.0)  # rounding may pass 1 by an ulp or two


def _igammac_fraction(a: float, x: float) -> float:
    """Q(a, x) = x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))) by the
    modified Lentz method (used for x >= a + 1)"""
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    n = 1.0
    while n < IGAMMA_MAX_TERMS:
        an = -n * (n - a)
        b += 2.0
        d = an * d + b
        if abs(d) < tiny:
            d = tiny
        c = b + an / c
        if abs(c) < tiny:
            c = tiny
        d = 1.0 / d
        step = d * c
        h *= step
        if abs(step - 1.0) <= 1e-16:
            break
        n += 1.0
    return math.exp(_log_igamma_prefactor(a, x)) * h


def _igammac_small_a(a: float, x: float) -> float:
    """Q(a, x) for a < 0.5, x < a + 1, where 1 - P would cancel: with u = a log x - log Gamma(1 + a),
    Q = -expm1(u) - e^u a sum_{n>=1} (-x)^n / (n! (a + n))"""
    total = 0.0
    term = 1.0
    n = 1.0
    while n < 60.0:
        term *= -x / n
        piece = term / (a + n)
        total += piece
        if abs(piece) <= 1e-17 * abs(total):
            break
        n += 1.0
    u = a * math.log(x) - _lgamma1p(a)
    return -math.expm1(u) - math.exp(u) * a * total


def _igamma_edge(a: float, x: float, lower: float) -> float:
    """torch's value of P (``lower`` 1) or Q (0) at the edges: nan for nan, a < 0, x < 0, a = x = 0 and a = x = inf;
    P = 1 at a = 0 or x = inf, P = 0 at x = 0 or a = inf (Q the complement); -1 where no edge applies"""
    if a != a or x != x or a < 0.0 or x < 0.0 or (a == 0.0 and x == 0.0) or (a == math.inf and x == math.inf):
        return math.nan
    if a == 0.0 or x == math.inf:
        return lower
    if x == 0.0 or a == math.inf:
        return 1.0 - lower
    return -1.0


IGAMMA_TEMME_FROM = 1e5
"""From this a on, x within 30% of a goes through Temme's expansion (:func:`_igamma_temme`): the series and the
continued fraction need ~sqrt(74 a) terms there and lose digits (1e-8 at a = 1e6, 24% at a = 1e8 before)."""
TEMME_C0 = (2.439318652220368e-11, -6.031117783475474e-11, -2.5518725091224063e-11, 9.151062094981602e-10,
            -4.38203563902592e-09, 1.0261779267119862e-08, 6.707853524284133e-09, -1.76659525752269e-07,
            8.296711340958846e-07, -1.8540622107654555e-06, -2.185448510680002e-06, 3.919263178522526e-05,
            -0.0001787551440329218, 0.00035273368606701937, 0.0011574074074074073, -0.014814814814814815,
            0.08333333333333333, -0.3333333333333333)
TEMME_C1 = (-1.1269383618993335e-12, -8.268175267998719e-11, 4.164796805494745e-10, -1.009656532503172e-09,
            -1.756147493565529e-11, 1.1951674434217438e-08, -5.752545506821575e-08, 1.3786334225651127e-07,
            4.647127772683912e-09, -1.6120900893804016e-06, 7.649160916081637e-06, -1.8098550334491308e-05,
            -4.018775720164655e-07, 0.000205761316872428, -0.0009902263374485596, 0.0026455026455026454,
            -0.003472222222222222, -0.001851851851851852)
"""Temme's C0(eta) = 1/(lambda - 1) - 1/eta and C1(eta) = 1/eta^3 - 1/(lambda-1)^3 - 1/(lambda-1)^2 - 1/(12 (lambda-1))
as polynomials in eta (highest power first) for |eta| < 0.3, where the closed forms cancel: fitted at 60 digits on
18 Chebyshev points (error below 3e-26; they start -1/3, 1/12, -2/135, 1/864 and -1/540, -1/288, as in DLMF 8.12)."""


def _temme_series(c: tuple[float, ...], eta: float) -> float:
    total = 0.0
    for coefficient in c:
        total = total * eta + coefficient
    return total


def _igamma_temme(a: float, x: float, lower: bool) -> float:
    """P(a, x) (``lower``) or Q(a, x) for large a by Temme's uniform asymptotic expansion (DLMF 8.12.3-8.12.4):
    Q = erfc(u) / 2 + R and P = erfc(-u) / 2 - R with u = eta sqrt(a / 2), R = exp(-a eta^2 / 2) / sqrt(2 pi a)
    (C0(eta) + C1(eta) / a), lambda = x / a and eta = sign(lambda - 1) sqrt(2 (lambda - 1 - log lambda)); the terms
    left out are O(a^-2) of R (below 1e-13 of it for a >= 1e5)"""
    t = (x - a) / a
    half_eta2 = -_log1pmx(t)  # lambda - 1 - log lambda, without cancellation near lambda = 1
    eta = math.copysign(math.sqrt(2.0 * half_eta2), t)
    if abs(eta) < 0.3:
        c0 = _temme_series(TEMME_C0, eta)
        c1 = _temme_series(TEMME_C1, eta)
    else:
        c0 = 1.0 / t - 1.0 / eta
        c1 = 1.0 / (eta * eta * eta) - 1.0 / (t * t * t) - 1.0 / (t * t) - 1.0 / (12.0 * t)
    r = math.exp(-a * half_eta2) / math.sqrt(TWO_PI * a) * (c0 + c1 / a)
    u = eta * math.sqrt(0.5 * a)
    return 0.5 * erfc(-u) - r if lower else 0.5 * erfc(u) + r


def _use_temme(a: float, x: float) -> bool:
    return a >= IGAMMA_TEMME_FROM and abs(x - a) < 0.3 * a



def igamma(a: float, x: float) -> float:
    """P(a, x) = gamma(a, x) / Gamma(a), the regularized lower incomplete gamma function (torch.igamma): its series
    for x < a + 1, else 1 - Q by the continued fraction; relative error ~1e-14 (more where the result is so small
    that its log, of size a log x - x, carries the rounding)"""
    a, x = float(a), float(x)
    edge = _igamma_edge(a, x, 1.0)
    if edge != -1.0:
        return edge
    if _use_temme(a, x):
        return _igamma_temme(a, x, True)
    if x < a + 1.0:
        return _igamma_series(a, x)
    return 1.0 - _igammac_fraction(a, x)


def igammac(a: float, x: float) -> float:
    """Q(a, x) = 1 - P(a, x), the regularized upper incomplete gamma function (torch.igammac): the continued fraction
    for x >= a + 1, else 1 - P by the series (a >= 0.5, where Q > 0.08) or the small-a form"""
    a, x = float(a), float(x)
    edge = _igamma_edge(a, x, 0.0)
    if edge != -1.0:
        return edge
    if _use_temme(a, x):
        return _igamma_temme(a, x, False)
    if x >= a + 1.0:
        return _igammac_fraction(a, x)
    if a < 0.5:
        return _igammac_small_a(a, x)
    return 1.0 - _igamma_series(a, x)
