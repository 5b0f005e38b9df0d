"""Scalar math primitives.

Every function takes and returns Python floats, uses only ``math``, and is written so that Numba
can compile it unchanged (the ``fast`` and ``cuda`` backends jit these same functions).
Ops are registered by name in :data:`UNARY_OPS`, :data:`BINARY_OPS` and :data:`REDUCE_OPS`;
the backends receive those names, never Python callables.
"""

from __future__ import annotations

import math
from collections.abc import Callable

EPS = 1e-6


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
    """the larger of x and y (nan if either is nan)"""
    if x != x or y != y:
        return math.nan
    return x if x > y else y


def min(x: float, y: float) -> float:  # noqa: A001
    """the smaller of x and y (nan if either is nan)"""
    if x != x or y != y:
        return math.nan
    return x if x < y else y


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
    """x if x > 0 else 0"""
    return x if x > 0.0 else 0.0


def log(x: float) -> float:
    """natural log; -inf at 0 and nan below 0 (no exception, as in NumPy)"""
    if x > 0.0:
        return math.log(x)
    if x == 0.0:
        return -math.inf
    return math.nan


def exp(x: float) -> float:
    """e^x, +inf on overflow"""
    if x > 709.0:
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
    if x < 0.0 and y != math.floor(y):
        return math.nan
    if x == 0.0 and y < 0.0:
        return math.inf
    return x**y


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


UNARY_OPS: dict[str, Callable[[float], float]] = {
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
}
"""Element-wise functions a backend's ``map`` must support, by name."""

BINARY_OPS: dict[str, Callable[[float, float], float]] = {
    "add": add,
    "sub": sub,
    "mul": mul,
    "div": div,
    "lt": lt,
    "gt": gt,
    "eq": eq,
    "max": max,
    "min": min,
    "pow": pow,
    "is_close": is_close,
    "log_back": log_back,
    "inv_back": inv_back,
    "relu_back": relu_back,
    "sigmoid_back": sigmoid_back,
    "exp_back": exp_back,
    "tanh_back": tanh_back,
    "abs_back": abs_back,
    "sqrt_back": sqrt_back,
}
"""Element-wise binary functions a backend's ``zip`` must support, by name."""

REDUCE_OPS: dict[str, tuple[Callable[[float, float], float], float]] = {
    "sum": (add, 0.0),
    "max": (max, -math.inf),
    "min": (min, math.inf),
    "prod": (mul, 1.0),
}
"""Reductions a backend's ``reduce`` must support: name -> (binary function, start value)."""


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
