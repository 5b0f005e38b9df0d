"""The error and gamma functions of one tensor (the ``ErfGammaMethods`` mixin, which ``MathMethods`` extends) and the
matching ``mt.`` functions: ``erf erfc erfinv lgamma digamma polygamma``.

As in tensor_math.py: integer and bool tensors compute in the default float dtype; values, edges (poles, erfinv's
+-inf at +-1) and gradients follow PyTorch. The scalar kernels are in operators_special.py.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from . import operators_special
from . import tensor_functions as F
from .autodiff import Context
from .tensor_unary_base import _float_input, _Unary

if TYPE_CHECKING:
    from .tensor import Tensor

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


class Erf(_Unary):
    op = "erf"
    derivative = staticmethod(lambda a, out: (-(a * a)).exp() * TWO_OVER_SQRT_PI)


class Erfc(_Unary):
    op = "erfc"
    derivative = staticmethod(lambda a, out: (-(a * a)).exp() * -TWO_OVER_SQRT_PI)


class Erfinv(_Unary):
    op = "erfinv"
    derivative = staticmethod(lambda a, out: (out * out).exp() * operators_special.SQRT_PI_2)


class Lgamma(_Unary):
    op = "lgamma"
    derivative = staticmethod(lambda a, out: digamma(a))


class Digamma(_Unary):
    op = "digamma"
    derivative = staticmethod(lambda a, out: polygamma(1, a))


class Polygamma(F.TensorFunction):
    """out = psi^(n)(a) by the binary kernel ``polygamma`` (n a constant operand); the gradient is psi^(n+1)(a)."""

    higher_order = True  # the backward is d times Polygamma of order n + 1: differentiable

    @staticmethod
    def forward(ctx: Context, a: Tensor, n: int) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(a)
        ctx.n = n  # type: ignore[attr-defined]
        return a._lift(float(n))._zip("polygamma", a)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, None]:  # type: ignore[override]
        (a,) = ctx.saved_values
        return d * polygamma(ctx.n + 1, a), None  # type: ignore[attr-defined]


def erf(self: Tensor) -> Tensor:
    """the error function 2/sqrt(pi) * integral_0^x e^(-t^2) dt"""
    return Erf.apply(_float_input(self))


def erfc(self: Tensor) -> Tensor:
    """1 - erf(x), accurate in the right tail (libm's erfc)"""
    return Erfc.apply(_float_input(self))


def erfinv(self: Tensor) -> Tensor:
    """the inverse error function: +-inf at +-1, nan outside [-1, 1] (a few ulps in float64)"""
    return Erfinv.apply(_float_input(self))


def lgamma(self: Tensor) -> Tensor:
    """log|Gamma(x)| (+inf at 0, -1, -2, ... and +-inf); the gradient is digamma(x)"""
    return Lgamma.apply(_float_input(self))


def digamma(self: Tensor) -> Tensor:
    """psi(x) = d/dx log Gamma(x) (as torch: -inf at +0, +inf at -0, nan at negative integers); the gradient is
    polygamma(1, x)"""
    return Digamma.apply(_float_input(self))


def polygamma(n: int, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """psi^(n)(x), the n-th derivative of digamma, for an integer n >= 0 (to ~1e-15 relative in float64 for x > 0);
    the gradient is polygamma(n + 1, x)"""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise ValueError(f"polygamma(n, x) does not support negative n, got {n}")
    if not isinstance(input, ErfGammaMethods):  # every Tensor is one
        raise TypeError(f"polygamma(): argument 'input' (position 2) must be Tensor, not {type(input).__name__}")
    return Polygamma.apply(_float_input(input), n)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    """x.polygamma(n) = polygamma(n, x)"""
    return polygamma(n, self)


class ErfGammaMethods:
    """The error and gamma functions of one tensor (methods of Tensor, through MathMethods)."""

    erf = erf
    erfc = erfc
    erfinv = erfinv
    lgamma = lgamma
    digamma = digamma
    polygamma = _polygamma_method


__all__ = ["erf", "erfc", "erfinv", "lgamma", "digamma", "polygamma"]
