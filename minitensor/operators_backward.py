"""Scalar backward helpers: ``f_back(x, d) = d * f'(x)`` for the unary ops whose gradient a backend computes in one
``zip`` (log, inv, relu, sigmoid, exp, tanh, abs, sqrt, gelu, gelu_tanh).

The same contract as :mod:`minitensor.operators` (which re-exports these and names them in its op tables).
"""

from __future__ import annotations

import math

from .operators_activation import GELU_TANH_C, GELU_TANH_K, INV_SQRT_2PI, SQRT1_2, exp, sigmoid, sqrt
from .operators_arith import div, sign

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
