"""Scalar arithmetic, comparisons, and logical and bitwise ops: + - * /, negation, abs, reciprocal, square, sign,
powers, floor division and remainders; < > == <= >= !=, max and min with IEEE 754-2019 zeros and nan; and, or, xor, not.

The same contract as :mod:`minitensor.operators` (which re-exports these and names them in its op tables): Python
floats in and out, only ``math``, written so that Numba compiles them unchanged for the ``fast`` and ``cuda``
backends, and IEEE results (inf, nan, signed zeros) where the ``simple`` backend's Python would raise.
"""

from __future__ import annotations

import builtins
import math

from .operators_special import LOG_MAX_FLOAT

_builtin_abs = builtins.abs  # (``abs`` below is the operator; Numba compiles the builtin to fabs or integer abs)


# --- arithmetic ---


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


def abs(x: float) -> float:  # noqa: A001
    """|x|: the sign bit cleared for floats, so abs(-0.0) is +0.0 (and abs(-nan) a nan without it), as PyTorch"""
    return _builtin_abs(x)


def inv(x: float) -> float:
    """1 / x"""
    return div(1.0, x)


def sq(x: float) -> float:
    """x * x"""
    return x * x


def sign(x: float) -> float:
    """-1, 0 or 1"""
    if x > 0.0:
        return 1.0
    if x < 0.0:
        return -1.0
    return 0.0


def pow(x: float, y: float) -> float:  # noqa: A001
    """x ** y with C99's (and PyTorch's) special values: nan for a finite negative base with a fractional exponent,
    +-inf for +-0 to a negative odd integer (+inf to other negatives), and Python's ** (C's pow) elsewhere"""
    if x < 0.0 and x - x == 0.0 and y - y == 0.0 and y != math.floor(y):
        return math.nan
    if x == 0.0 and y < 0.0:  # Python raises
        odd = y - y == 0.0 and y == math.floor(y) and 0.5 * y != math.floor(0.5 * y)
        return math.copysign(math.inf, x) if odd else math.inf
    if x != 0.0 and x - x == 0.0 and y - y == 0.0 and y * math.log(abs(x)) > LOG_MAX_FLOAT:
        # Overflow: Python raises, IEEE gives inf (-inf for a negative base to an odd power).
        odd = y - 2.0 * math.floor(y / 2.0) == 1.0
        return -math.inf if x < 0.0 and odd else math.inf
    return x**y


def floordiv(x: float, y: float) -> float:
    """floor(x / y) like Python's // (floats: +-inf or nan for y == 0; integer callers never pass 0)"""
    if y == 0:
        return div(x, y)
    return x // y


def remainder(x: float, y: float) -> float:
    """x - floor(x / y) * y like Python's % (sign of y; nan for y == 0), but a zero result has x's sign, as PyTorch's
    (which adds y to C's fmod where their signs differ; Python's % gives a zero y's sign)"""
    if y == 0:
        return div(x - x, y - y)
    r = x % y
    return r if r != 0 else x * 0


def fmod(x: float, y: float) -> float:
    """C's fmod: the remainder of x / y truncated toward zero (sign of x; nan for y == 0)"""
    if y == 0 or x != x or y != y or x - x != 0.0:
        return math.nan
    if y - y != 0.0:  # |y| is infinite
        return x
    return math.copysign(abs(x) % abs(y), x)  # % of non-negatives is exact; fmod has the sign of x


# --- comparisons ---


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


# --- logical and bitwise ---


def logical_not(x: float) -> float:
    """1.0 if x == 0"""
    return 1.0 if x == 0 else 0.0


def bitwise_not(x: int) -> int:
    """~x (integers only)"""
    return ~x


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
