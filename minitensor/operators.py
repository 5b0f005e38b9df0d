"""Scalar math primitives.

Every function takes and returns Python floats, uses only ``math``, and is written so that Numba
can compile it unchanged (the ``fast`` and ``cuda`` backends jit these same functions).
Ops are registered by name in :data:`UNARY_OPS`, :data:`BINARY_OPS` and :data:`REDUCE_OPS`;
the backends receive those names, never Python callables.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any

# The elementary functions with IEEE edges and the special functions live in their own modules; the op tables below
# name them, and the backends compile every function of all three (JIT_MODULES).
from .operators_elementary import (  # noqa: F401 - re-exported for the op tables and the backends
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atanh,
    cos,
    cosh,
    erf,
    exp2,
    expm1,
    gcd,
    log1p,
    log2,
    log10,
    sin,
    sinh,
    tan,
)
from .operators_igamma import igamma, igammac  # noqa: F401 - re-exported for the op tables
from .operators_special import (  # noqa: F401 - re-exported for the op tables and the backends
    HUGE,
    LOG_MAX_FLOAT,
    OUT_OF_LINE,
    digamma,
    erfc,
    erfinv,
    ive,
    lgamma,
    polygamma,
)

JIT_MODULES = ("minitensor.operators_elementary", "minitensor.operators_special", "minitensor.operators_igamma",
               "minitensor.operators")
"""The modules whose functions the ``fast`` and ``cuda`` backends compile (``simple`` calls them as they are)."""

EPS = 1e-6
_builtin_abs = builtins.abs  # (``abs`` below is the operator; Numba compiles the builtin to fabs or integer abs)


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
    """|x|: the sign bit cleared for floats, so abs(-0.0) is +0.0 (and abs(-nan) a nan without it), as PyTorch"""
    return _builtin_abs(x)


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


def rsqrt(x: float) -> float:
    """1 / sqrt(x)"""
    return div(1.0, sqrt(x))


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
    "asin": asin,
    "acos": acos,
    "atan": atan,
    "sinh": sinh,
    "cosh": cosh,
    "asinh": asinh,
    "acosh": acosh,
    "atanh": atanh,
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
    "ive": ive,
    "igamma": igamma,
    "igammac": igammac,
    "gcd": gcd,
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
