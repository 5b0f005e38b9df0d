"""Scalar elementary functions with IEEE results where Python's ``math`` raises: exp2, expm1, log2, log10, log1p,
sin, cos, tan, erf, and the inverse trigonometric and hyperbolic functions (asin ... atanh); and the integer gcd.

The same contract as :mod:`minitensor.operators` (which re-exports these and names them in its op tables): Python
floats in and out, only ``math``, written so that Numba compiles them unchanged for the ``fast`` and ``cuda``
backends, and IEEE results (inf, nan, signed zeros) where the ``simple`` backend's Python would raise.
"""

from __future__ import annotations

import math

from .operators_special import LOG_MAX_FLOAT


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


# --- inverse trigonometric and hyperbolic functions: nan outside the domain, inf at the poles (libm's) ---

SINH_MAX = 710.4758600739439  # the largest x with a finite cosh (ln(2 DBL_MAX)); beyond, Python's math raises


def asin(x: float) -> float:
    """arcsine in [-pi/2, pi/2]; nan outside [-1, 1]"""
    if not -1.0 <= x <= 1.0:
        return math.nan
    return math.asin(x)


def acos(x: float) -> float:
    """arccosine in [0, pi]; nan outside [-1, 1]"""
    if not -1.0 <= x <= 1.0:
        return math.nan
    return math.acos(x)


def atan(x: float) -> float:
    """arctangent in (-pi/2, pi/2) (+-pi/2 at +-inf)"""
    return math.atan(x)


def sinh(x: float) -> float:
    """hyperbolic sine (+-inf on overflow)"""
    if abs(x) > SINH_MAX:
        return math.copysign(math.inf, x)
    return math.sinh(x)


def cosh(x: float) -> float:
    """hyperbolic cosine (inf on overflow)"""
    if abs(x) > SINH_MAX:
        return math.inf
    return math.cosh(x)


def asinh(x: float) -> float:
    """inverse hyperbolic sine"""
    return math.asinh(x)


def acosh(x: float) -> float:
    """inverse hyperbolic cosine; nan below 1"""
    if not x >= 1.0:
        return math.nan
    return math.acosh(x)


def atanh(x: float) -> float:
    """inverse hyperbolic tangent; +-inf at +-1, nan outside [-1, 1]"""
    if not -1.0 < x < 1.0:
        return math.copysign(math.inf, x) if abs(x) == 1.0 else math.nan
    return math.atanh(x)


# --- integers ---

INT64_MIN = -9223372036854775807 - 1


def gcd(x: int, y: int) -> int:
    """the greatest common divisor of |x| and |y| (0 for gcd(0, 0)), by Euclid's algorithm on -|x| and -|y| (every
    int64 negates to a non-positive one, and Python's % by a negative is non-positive: no overflow); the one result
    int64 cannot hold, 2**63, comes back as -2**63, as torch's wraps. For integers; floats (which the tensor
    functions never pass) run the same loop, nan where either is inf or nan."""
    if x - x != x - x or y - y != y - y:  # never for integers
        return (x - x) + (y - y)
    a = -x if x > 0 else x
    b = -y if y > 0 else y
    while b != 0:
        a, b = b, a % b
    return a if a == INT64_MIN else -a
