"""``mt.special``'s entr and xlog1py: the x log x terms of entropies and log-likelihoods, with PyTorch's zero
conventions and derivatives.

- entr(x) = -x log x for x > 0, 0 at x = 0, -inf for x < 0 (nan stays nan); the derivative is -(1 + log x) (inf at
  0, nan below it), as PyTorch's.
- xlog1py(x, y) = x log1p(y), and 0 where x == 0 unless y is nan (so 0 * log1p(-1) = 0); either argument may be a
  Python number. The derivatives are PyTorch's: log1p(y) for x, except 0 where x == 0 and y <= -1 (where log1p is
  -inf or nan), and x / (1 + y) for y (nan at x = 0, y = -1).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context
from .special_series import Evaluated
from .tensor_math import _float_input, _float_operands, _is_tensor

if TYPE_CHECKING:
    from .tensor import Tensor


def _entr(x: Tensor) -> Tensor:
    value = (x * x.log()).neg().where(x > 0, x._lift(0.0).where(x == 0, x._lift(-math.inf)))
    return value.where(~x.isnan(), x)


class _Entr(Evaluated):
    value = staticmethod(_entr)
    derivative = staticmethod(lambda a, out: -(a.log() + 1.0))


def entr(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """-x log x (0 at 0, -inf for x < 0), element-wise; integers and bools give the default float dtype; the
    gradient is -(1 + log x)"""
    return _Entr.apply(_float_input(input))


class _Xlog1py(F.TensorFunction):
    """out = x log1p(y), 0 where x == 0 and y is not nan; PyTorch's derivatives (module docstring)."""

    higher_order = True

    @staticmethod
    def forward(ctx: Context, x: Tensor, y: Tensor) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(x, y)
        a, b = x.detach(), y.detach()
        return (a * b.log1p()).where(~((a == 0) & ~b.isnan()), a._lift(0.0))

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor | None, Tensor | None]:  # type: ignore[override]
        x, y = ctx.saved_values
        dx = dy = None
        if ctx.needs_input_grad[0]:
            dx = d * y.log1p().where(~((x.detach() == 0) & (y.detach() <= -1)), y._lift(0.0))
        if ctx.needs_input_grad[1]:
            dy = d * x / (y + 1.0)
        return dx, dy


def xlog1py(input: Any, other: Any) -> Tensor:  # noqa: A002
    """input * log1p(other), broadcast, and 0 where input == 0 unless other is nan; a Python number on either side
    is lifted with PyTorch's promotion (integer and bool tensors give the default float dtype)"""
    if not (_is_tensor(input) or _is_tensor(other)):
        raise TypeError(f"xlog1py(): expected a Tensor for input or other, got {type(input).__name__} and "
                        f"{type(other).__name__}")
    x, y = _float_operands(input, other)
    dtype = dtypes.result_type(x, y)
    return _Xlog1py.apply(x.cast(dtype), y.cast(dtype))


SPECIAL = ["entr", "xlog1py"]
"""``mt.special``'s names from this module."""
