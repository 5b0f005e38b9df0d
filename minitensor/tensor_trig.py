"""Inverse trigonometric and hyperbolic functions of one tensor (the ``TrigMethods`` mixin) and the matching ``mt.``
functions, with PyTorch's ``arc*`` aliases: ``asin acos atan sinh cosh asinh acosh atanh``.

As in tensor_math.py: integer and bool tensors compute in the default float dtype; values outside a function's domain
give nan and its poles +-inf (``asin(2)``, ``acosh(0.5)``: nan; ``atanh(1)``: inf), and the gradients are PyTorch's
formulas, inf or nan at the same points (asin'(1) = inf).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .tensor_math import _float_input, _Unary

if TYPE_CHECKING:
    from .tensor import Tensor


class Asin(_Unary):
    op = "asin"
    derivative = staticmethod(lambda a, out: (1.0 - a * a).rsqrt())


class Acos(_Unary):
    op = "acos"
    derivative = staticmethod(lambda a, out: -(1.0 - a * a).rsqrt())


class Atan(_Unary):
    op = "atan"
    derivative = staticmethod(lambda a, out: (a * a + 1.0).reciprocal())


class Sinh(_Unary):
    op = "sinh"
    derivative = staticmethod(lambda a, out: a.cosh())


class Cosh(_Unary):
    op = "cosh"
    derivative = staticmethod(lambda a, out: a.sinh())


class Asinh(_Unary):
    op = "asinh"
    derivative = staticmethod(lambda a, out: (a * a + 1.0).rsqrt())


class Acosh(_Unary):
    op = "acosh"
    derivative = staticmethod(lambda a, out: (a * a - 1.0).rsqrt())


class Atanh(_Unary):
    op = "atanh"
    derivative = staticmethod(lambda a, out: (1.0 - a * a).reciprocal())


def asin(self: Tensor) -> Tensor:
    """arcsine in [-pi/2, pi/2] (nan outside [-1, 1]); d/dx = 1 / sqrt(1 - x^2)"""
    return Asin.apply(_float_input(self))


def acos(self: Tensor) -> Tensor:
    """arccosine in [0, pi] (nan outside [-1, 1]); d/dx = -1 / sqrt(1 - x^2)"""
    return Acos.apply(_float_input(self))


def atan(self: Tensor) -> Tensor:
    """arctangent in (-pi/2, pi/2); d/dx = 1 / (1 + x^2) (``atan2`` takes two tensors)"""
    return Atan.apply(_float_input(self))


def sinh(self: Tensor) -> Tensor:
    """hyperbolic sine; d/dx = cosh(x)"""
    return Sinh.apply(_float_input(self))


def cosh(self: Tensor) -> Tensor:
    """hyperbolic cosine; d/dx = sinh(x)"""
    return Cosh.apply(_float_input(self))


def asinh(self: Tensor) -> Tensor:
    """inverse hyperbolic sine; d/dx = 1 / sqrt(x^2 + 1)"""
    return Asinh.apply(_float_input(self))


def acosh(self: Tensor) -> Tensor:
    """inverse hyperbolic cosine (nan below 1); d/dx = 1 / sqrt(x^2 - 1)"""
    return Acosh.apply(_float_input(self))


def atanh(self: Tensor) -> Tensor:
    """inverse hyperbolic tangent (+-inf at +-1, nan beyond); d/dx = 1 / (1 - x^2)"""
    return Atanh.apply(_float_input(self))


class TrigMethods:
    """Inverse trigonometric and hyperbolic functions (methods of Tensor)."""

    asin = arcsin = asin
    acos = arccos = acos
    atan = arctan = atan
    sinh = sinh
    cosh = cosh
    asinh = arcsinh = asinh
    acosh = arccosh = acosh
    atanh = arctanh = atanh


arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh

__all__ = [
    "asin", "arcsin", "acos", "arccos", "atan", "arctan", "sinh", "cosh", "asinh", "arcsinh", "acosh", "arccosh",
    "atanh", "arctanh",
]  # fmt: skip
