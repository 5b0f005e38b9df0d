"""Scalar math primitives.

Every function takes and returns Python floats, uses only ``math``, and is written so that Numba
can compile it unchanged (the ``fast`` and ``cuda`` backends jit these same functions).
Ops are registered by name in :data:`UNARY_OPS`, :data:`BINARY_OPS` and :data:`REDUCE_OPS`;
the backends receive those names, never Python callables.

The functions live by concept in the ``operators_*`` modules (:data:`JIT_MODULES`): arithmetic, comparisons, logical
and bitwise ops (operators_arith.py), exp/log/sqrt/tanh and the activations (operators_activation.py), the backward
helpers ``*_back`` (operators_backward.py), rounding and float predicates (operators_rounding.py), the elementary
functions with IEEE edges (operators_elementary.py) and the special functions (operators_special.py,
operators_igamma.py). This module re-exports every one of them, names them in the op tables, and keeps the helpers
on Python lists that Scalar code uses.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

# The functions live in their own modules by concept; the op tables below name them, and the backends compile every
# function of all of them (JIT_MODULES).
from .operators_activation import (  # noqa: F401 - re-exported for the op tables and the backends
    GELU_TANH_C,
    GELU_TANH_K,
    INV_SQRT_2PI,
    SQRT1_2,
    atan2,
    exp,
    gelu,
    gelu_tanh,
    log,
    relu,
    rsqrt,
    sigmoid,
    sqrt,
    tanh,
)
from .operators_arith import (  # noqa: F401 - re-exported for the op tables and the backends
    abs,
    add,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    div,
    eq,
    floordiv,
    fmod,
    ge,
    gt,
    id,
    inv,
    is_close,
    le,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    max,
    min,
    mul,
    ne,
    neg,
    pow,
    remainder,
    sign,
    sq,
    sub,
)
from .operators_backward import (  # noqa: F401 - re-exported for the op tables and the backends
    abs_back,
    exp_back,
    gelu_back,
    gelu_tanh_back,
    inv_back,
    log_back,
    relu_back,
    sigmoid_back,
    sqrt_back,
    tanh_back,
)
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
from .operators_rounding import (  # noqa: F401 - re-exported for the op tables and the backends
    ceil,
    floor,
    isfinite,
    isinf,
    isnan,
    round,
    signed_zero,
    trunc,
)
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
               "minitensor.operators_arith", "minitensor.operators_activation", "minitensor.operators_backward",
               "minitensor.operators_rounding", "minitensor.operators")
"""The modules whose functions the ``fast`` and ``cuda`` backends compile (``simple`` calls them as they are)."""

EPS = 1e-6


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
