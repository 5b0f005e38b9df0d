"""Scalar rounding (floor, ceil, trunc, round half to even) with IEEE signed zeros, and the float predicates isnan,
isinf and isfinite.

The same contract as :mod:`minitensor.operators` (which re-exports these and names them in its op tables).
"""

from __future__ import annotations

import math

from .operators_arith import abs  # the |x| operator (Numba compiles it to fabs), shadowing the builtin as in operators
from .operators_special import HUGE


def signed_zero(r: float, x: float) -> float:
    """r, or a zero with x's sign where r is zero: IEEE rounding keeps the sign (floor(-0.0) and ceil(-0.5) are -0.0,
    as in NumPy and PyTorch), where Python's math.floor and friends return the integer 0"""
    return r if r != 0.0 else math.copysign(0.0, x)


def floor(x: float) -> float:
    """largest integer <= x (inf and nan unchanged; -0.0 stays -0.0)"""
    if not abs(x) < HUGE:
        return x
    return signed_zero(float(math.floor(x)), x)


def ceil(x: float) -> float:
    """smallest integer >= x (inf and nan unchanged; -0.0 for -1 < x <= -0.0)"""
    if not abs(x) < HUGE:
        return x
    return signed_zero(float(math.ceil(x)), x)


def trunc(x: float) -> float:
    """x rounded toward zero (inf and nan unchanged; a zero keeps x's sign)"""
    if not abs(x) < HUGE:
        return x
    return signed_zero(float(math.trunc(float(x))), x)  # float(): a float32 scalar (the CUDA simulator's) has no __trunc__


def round(x: float) -> float:  # noqa: A001
    """x rounded to the nearest integer, ties to even (as torch.round; a zero keeps x's sign)"""
    if not abs(x) < HUGE:
        return x
    r = float(math.floor(x + 0.5))
    if r - x == 0.5 and r - 2.0 * float(math.floor(r / 2.0)) != 0.0:
        r -= 1.0
    return signed_zero(r, x)


def isnan(x: float) -> float:
    """1.0 if x is nan"""
    return 1.0 if x != x else 0.0


def isinf(x: float) -> float:
    """1.0 if x is +inf or -inf"""
    return 1.0 if x == math.inf or x == -math.inf else 0.0


def isfinite(x: float) -> float:
    """1.0 if x is neither inf nor nan"""
    return 1.0 if x - x == 0.0 else 0.0
