"""Scalar exp, log, sqrt and rsqrt, tanh and atan2, and the activations built on them: sigmoid, relu and GELU
(exact and tanh-approximated).

The same contract as :mod:`minitensor.operators` (which re-exports these and names them in its op tables); their
derivatives for the fused backward kernels are in :mod:`minitensor.operators_backward`.
"""

from __future__ import annotations

import math

from .operators_arith import div
from .operators_special import LOG_MAX_FLOAT


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


def sqrt(x: float) -> float:
    """square root; nan below 0"""
    if x < 0.0:
        return math.nan
    return math.sqrt(x)


def rsqrt(x: float) -> float:
    """1 / sqrt(x)"""
    return div(1.0, sqrt(x))


def tanh(x: float) -> float:
    """hyperbolic tangent"""
    return math.tanh(x)


def atan2(x: float, y: float) -> float:
    """the angle of the point (y, x): atan(x / y) in the right quadrant"""
    return math.atan2(x, y)


def sigmoid(x: float) -> float:
    """1 / (1 + e^-x), computed without overflow for large |x|"""
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def relu(x: float) -> float:
    """x if x > 0 else 0 (nan stays nan)"""
    return x if x > 0.0 or x != x else 0.0


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
