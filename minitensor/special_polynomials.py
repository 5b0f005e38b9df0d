"""``mt.special``'s orthogonal polynomials of degree n: Hermite (physicists' H_n and probabilists' He_n), Laguerre
L_n and Legendre P_n, and the machinery the Chebyshev families (special_chebyshev.py) share.

PyTorch's conventions, exactly: x and n broadcast (either may be a Python number, not both); the result dtype is
their promoted dtype, the default float for integers and bools, and the work is done in it (as PyTorch's
float32 kernels compute in float32). n is truncated toward zero as a C cast to int64 would (2.7 -> 2, -0.5 -> 0;
nan, +-inf and |n| >= 2^63 count as negative), and n < 0 gives 0. Special values come first, in PyTorch's order
(e.g. P_n(+-1) = (+-1)^n, L_n(0) = 1, H_n and He_n nan for n > 512, or 128 in float32), then the three-term
recurrence from p_0 = 1 and p_1, one step at a time for all elements (each stops at its own n):

- H_(j+1) = 2x H_j - 2j H_(j-1),     He_(j+1) = x He_j - j He_(j-1),
- L_(j+1) = ((2j + 1 - x) L_j - j L_(j-1)) / (j + 1),     P_(j+1) = ((2j + 1) x P_j - j P_(j-1)) / (j + 1).

The loop runs to the largest n among the elements that need it (stopping early once they are all nan, as PyTorch's
loop does on overflow), so its cost grows with n. Deliberate difference: at x = nan (n >= 2) PyTorch returns an
uninitialized value for some families (Laguerre, Legendre, Chebyshev U and W...); here it is nan. PyTorch has no
derivatives for these polynomials (backward raises NoDerivativeError).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from . import dtypes
from .special_series import no_derivative
from .tensor_broadcast import broadcast_tensors
from .tensor_math import _is_tensor, _operands

if TYPE_CHECKING:
    from .tensor import Tensor

Override = tuple["Tensor", "Tensor | float"]
"""(mask, value): where mask holds the result is value (a special case, PyTorch's order: first wins)."""
Step = Callable[[float, "Tensor", "Tensor"], "Tensor"]
"""step(j, p_j, p_(j-1)) -> p_(j+1)"""
NAN_CHECK_EVERY = 32  # the recurrence asks whether every remaining element is nan this often (a host sync)
INT64_LIMIT = 2.0**63
HERMITE_LIMIT = {dtypes.float32: 128.0, dtypes.float64: 512.0}


def polynomial_operands(name: str, x: Any, n: Any) -> tuple[Tensor, Tensor]:
    """(x, n) as tensors of their promoted float dtype (the default float for integers and bools), broadcast"""
    if not (_is_tensor(x) or _is_tensor(n)):
        raise TypeError(f"{name}(): expected a Tensor for x or n, got {type(x).__name__} and {type(n).__name__}")
    a, b = _operands(x, n)
    dtype = dtypes.float_result(dtypes.result_type(a, b))
    return broadcast_tensors(a.cast(dtype), b.cast(dtype))  # type: ignore[return-value]


def degree(n: Tensor) -> Tensor:
    """n as PyTorch's cast to int64 reads it, as a float tensor: trunc(n), and -1 for nan, +-inf and |n| >= 2^63"""
    return n.trunc().where(n.abs() < INT64_LIMIT, n._lift(-1.0))


def is_even(n: Tensor) -> Tensor:
    """n % 2 == 0 for integer-valued n"""
    return (n * 0.5).floor() * 2.0 == n


def plus_minus(positive: Tensor, value: Tensor) -> Tensor:
    """value where ``positive`` holds, else -value"""
    return value.where(positive, -value)


def _recurrence(n: Tensor, first: Tensor, step: Step, needs: Tensor) -> Tensor:
    """p_n for every element's degree n (where ``needs``: n >= 2), from p_0 = 1 and p_1 = first"""
    top = int(n.where(needs, n._lift(0.0)).amax().item()) if n.numel() else 0
    previous: Tensor = first._lift(1.0)
    current = first
    for j in range(1, top):
        following = step(float(j), current, previous)
        active = n > j
        previous, current = current.where(active, previous), following.where(active, current)
        if j % NAN_CHECK_EVERY == 0 and not bool((needs & (n > j + 1) & ~current.isnan()).any()):
            break  # every element with steps left is nan, and stays nan
    return current


def evaluate_polynomial(n: Tensor, first: Tensor, step: Step, overrides: Sequence[Override]) -> Tensor:
    """The recurrence's p_n (n a degree) where no override holds, the first holding override's value elsewhere"""
    special = n < 2
    for mask, _ in overrides:
        special = special | mask
    result = _recurrence(n, first, step, ~special)
    for mask, value in reversed(overrides):
        result = (result._lift(value) if isinstance(value, float) else value).where(mask, result)
    return result


def polynomial(name: str, family: Callable[[Tensor, Tensor], Tensor], x: Any, n: Any) -> Tensor:
    """torch.special's ``name``(x, n) by ``family``(x, degree(n)) on the prepared operands (no derivative)"""
    return no_derivative(name, lambda a, b: family(a, degree(b)), *polynomial_operands(name, x, n))


def _hermite_h(x: Tensor, n: Tensor) -> Tensor:
    two_x = x + x
    overrides: list[Override] = [(n < 0, 0.0), (n == 0, 1.0), (n == 1, two_x),
                                 (n > HERMITE_LIMIT[x.dtype], math.nan)]
    return evaluate_polynomial(n, two_x, lambda j, q, p: two_x * q - p * (2.0 * j), overrides)


def _hermite_he(x: Tensor, n: Tensor) -> Tensor:
    overrides: list[Override] = [(n < 0, 0.0), (n == 0, 1.0), (n == 1, x), (n > HERMITE_LIMIT[x.dtype], math.nan)]
    return evaluate_polynomial(n, x, lambda j, q, p: x * q - p * j, overrides)


def _laguerre_l(x: Tensor, n: Tensor) -> Tensor:
    one_minus_x = 1.0 - x
    overrides: list[Override] = [(n < 0, 0.0), (x == 0, 1.0), (n == 0, 1.0), (n == 1, one_minus_x)]
    return evaluate_polynomial(n, one_minus_x, lambda j, q, p: ((one_minus_x + 2.0 * j) * q - p * j) / (j + 1.0),
                               overrides)


def _legendre_p(x: Tensor, n: Tensor) -> Tensor:
    ends = plus_minus((x > 0) | is_even(n), x._lift(1.0))
    overrides: list[Override] = [(n < 0, 0.0), (x.abs() == 1, ends), (n == 0, 1.0), (n == 1, x)]
    return evaluate_polynomial(n, x, lambda j, q, p: (x * (2.0 * j + 1.0) * q - p * j) / (j + 1.0), overrides)


def hermite_polynomial_h(x: Any, n: Any) -> Tensor:
    """H_n(x), the physicists' Hermite polynomial (H_(n+1) = 2x H_n - 2n H_(n-1)); nan for n > 512 (float32:
    128), 0 for n < 0, as PyTorch. No derivative, as PyTorch."""
    return polynomial("hermite_polynomial_h", _hermite_h, x, n)


def hermite_polynomial_he(x: Any, n: Any) -> Tensor:
    """He_n(x), the probabilists' Hermite polynomial (He_(n+1) = x He_n - n He_(n-1)); nan for n > 512 (float32:
    128), 0 for n < 0"""
    return polynomial("hermite_polynomial_he", _hermite_he, x, n)


def laguerre_polynomial_l(x: Any, n: Any) -> Tensor:
    """L_n(x), the Laguerre polynomial ((n+1) L_(n+1) = (2n + 1 - x) L_n - n L_(n-1)); 1 at x = 0, 0 for n < 0"""
    return polynomial("laguerre_polynomial_l", _laguerre_l, x, n)


def legendre_polynomial_p(x: Any, n: Any) -> Tensor:
    """P_n(x), the Legendre polynomial ((n+1) P_(n+1) = (2n+1) x P_n - n P_(n-1)); (+-1)^n at x = +-1, 0 for n < 0"""
    return polynomial("legendre_polynomial_p", _legendre_p, x, n)


SPECIAL = ["hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]
"""``mt.special``'s names from this module."""
