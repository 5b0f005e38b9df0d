"""``mt.special.zeta``: the Hurwitz zeta function zeta(x, q) = sum_{k>=0} (q + k)^-x for real x > 1.

For q > 0: nine terms directly, then the Euler-Maclaurin tail at b = q + 9 >= 9,
b^(1-x) / (x-1) + b^-x / 2 + sum_{j<=10} B_2j / (2j)! x (x+1) ... (x+2j-2) b^(1-x-2j) (B the Bernoulli numbers; the
rising products built a factor at a time, so none overflows), in float64 by tensor ops. For q < 0 (defined for
integer x only), with q = f - m (0 < f < 1, g = 1 - f computed exactly as -q - floor(-q)):
zeta(x, f) + (-1)^x (zeta(x, g) - zeta(x, g + m)), bounded work however negative q is. A few ulps.

Edges as PyTorch: inf at x = 1 and at q = 0, -1, -2, ... (and -inf); nan for x < 1, and for q < 0 with x not an
integer. Deliberate differences: PyTorch's series gives nan where the limit is 0: at q = +inf, at x = +inf with
q > 1, and where b^-x underflows while the rising product overflows (x ~ 1e300); here those are 0 (at x = +inf:
inf for q < 1, 1 at q = 1), as ``polygamma(n, inf)`` here is 0. The derivative in q is -x zeta(x + 1, q); in x
PyTorch has none, and backward raises NoDerivativeError.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context
from .errors import NoDerivativeError
from .operators_special import EULER_MACLAURIN
from .special_series import in_float64
from .tensor_math import _float_operands, _is_tensor

if TYPE_CHECKING:
    from .tensor import Tensor

DIRECT_TERMS = 9


def _zeta_positive(s: Tensor, a: Tensor) -> Tensor:
    """sum_k (a + k)^-s for a > 0, s > 1: direct terms, then the Euler-Maclaurin tail at b = a + 9"""
    total = a ** -s
    for k in range(1, DIRECT_TERMS):
        total = total + (a + float(k)) ** -s
    b = a + float(DIRECT_TERMS)
    power = b ** -s
    total = total + power * b / (s - 1.0) + power * 0.5
    rise = power * s / b  # x (x+1) ... (x+2j-2) b^(1-x-2j) for j = 1
    for j, coefficient in enumerate(EULER_MACLAURIN):
        total = total + rise * coefficient
        rise = rise * ((s + float(2 * j + 1)) / b) * ((s + float(2 * j + 2)) / b)
    return total


def _zeta(s: Tensor, q: Tensor) -> Tensor:
    negative = (q < 0) & (q != q.floor())
    whole = (-q).floor()
    gap = -q - whole  # g = 1 - f in (0, 1) for a negative non-integer q = f - m (exact: no rounded 1 - f)
    value = _zeta_positive(s, q.where(q > 0, -gap + 1.0))
    if bool(negative.any()):
        sign = (s - (s * 0.5).floor() * 2.0) * -2.0 + 1.0  # (-1)^x for an integer x
        reflected = _zeta_positive(s, gap) - _zeta_positive(s, gap + whole + 1.0)  # sum_{j<m} (g + j)^-x
        value = value + (reflected * sign).where(negative, q._lift(0.0))
    inf, nan = q._lift(math.inf), q._lift(math.nan)
    value = value.where(~(q == math.inf), q._lift(0.0))
    value = value.where(~(negative & (s != s.floor())), nan)
    value = value.where(~((q <= 0) & (q == q.floor())), inf)
    at_inf = inf.where(q < 1, q._lift(1.0).where(q == 1, q._lift(0.0)))
    value = value.where(~((s == math.inf) & ~q.isnan()), at_inf)
    return value.where(~(s < 1), nan).where(s != 1, inf)


class _Zeta(F.TensorFunction):
    """out = zeta(x, q) (float64, rounded); d/dq = -x zeta(x + 1, q), d/dx raises (PyTorch has none)."""

    higher_order = True

    @staticmethod
    def forward(ctx: Context, x: Tensor, q: Tensor) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(x, q)
        return in_float64(_zeta)(x, q)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[None, Tensor]:  # type: ignore[override]
        x, q = ctx.saved_values
        if ctx.needs_input_grad[0]:
            raise NoDerivativeError(f"the derivative for 'zeta' in its first argument x (shape {x.shape}) is not "
                                    "implemented, as in PyTorch; detach x")
        return None, d * _Zeta.apply(x.detach() + 1.0, q) * -x.detach()


def zeta(input: Any, other: Any) -> Tensor:  # noqa: A002 - PyTorch's names
    """The Hurwitz zeta function sum_k (other + k)^-input, broadcast (input = 2, other = 1 is pi^2 / 6); a Python
    number on either side is lifted with PyTorch's promotion (integers give the default float dtype); the gradient
    in other is -input * zeta(input + 1, other)"""
    if not (_is_tensor(input) or _is_tensor(other)):
        raise TypeError(f"zeta(): expected a Tensor for input or other, got {type(input).__name__} and "
                        f"{type(other).__name__}")
    x, q = _float_operands(input, other)
    dtype = dtypes.result_type(x, q)
    return _Zeta.apply(x.cast(dtype), q.cast(dtype))


SPECIAL = ["zeta"]
"""``mt.special``'s names from this module."""
