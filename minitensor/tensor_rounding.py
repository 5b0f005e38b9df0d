"""Rounding, sign and the float predicates of one tensor (the ``RoundingMethods`` mixin, which ``MathMethods``
extends) and the matching ``mt.`` functions: ``floor ceil trunc fix round sign sgn isnan isinf isfinite``.

As in PyTorch: rounding and sign are piecewise constant, so their gradient is zero; rounding an integer tensor gives
an unchanged copy and a bool tensor is an error; the predicates give bool tensors. The scalar kernels are in
operators_rounding.py (and ``sign`` in operators_arith.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context
from .errors import DTypeError
from .tensor_unary_base import _not_bool

if TYPE_CHECKING:
    from .tensor import Tensor


class _Step(F.TensorFunction):
    """A piecewise-constant op (floor, sign, ...): out = op(a); the gradient is zero, as in PyTorch."""

    op = "id"
    higher_order = True  # the backward is zeros

    @classmethod
    def forward(cls, ctx: Context, a: Tensor) -> Tensor:  # type: ignore[override]
        return a._map(cls.op)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        return d._zeros(d.shape)


class Floor(_Step):
    op = "floor"


class Ceil(_Step):
    op = "ceil"


class Round(_Step):
    op = "round"


class Trunc(_Step):
    op = "trunc"


class Sign(_Step):
    op = "sign"


def _rounded(self: Tensor, fn: type[_Step], name: str) -> Tensor:
    """A rounding op: integer tensors come back as an unchanged copy of their dtype; bool is an error."""
    _not_bool(self, name)
    return fn.apply(self) if self.dtype.kind == "f" else self._map("id")


def floor(self: Tensor) -> Tensor:
    """largest integer <= x (zero gradient)"""
    return _rounded(self, Floor, "floor")


def ceil(self: Tensor) -> Tensor:
    """smallest integer >= x (zero gradient)"""
    return _rounded(self, Ceil, "ceil")


def trunc(self: Tensor) -> Tensor:
    """x rounded toward zero (zero gradient)"""
    return _rounded(self, Trunc, "trunc")


def round(self: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001
    """x rounded to ``decimals`` decimal places, ties to even (zero gradient)"""
    if decimals == 0 or self.dtype.kind != "f":
        if decimals != 0:
            raise DTypeError(f"round(decimals={decimals}) needs a float tensor, got {self.dtype} (shape {self.shape})")
        return _rounded(self, Round, "round")
    scale = 10.0 ** (decimals if decimals > 0 else -decimals)
    return Round.apply(self * scale) / scale if decimals > 0 else Round.apply(self / scale) * scale


def sign(self: Tensor) -> Tensor:
    """-1, 0 or 1 in the input's dtype (bool stays bool; zero gradient; 0 at nan, as in PyTorch). ``sgn`` is the same
    function (PyTorch's sgn differs from sign only for complex tensors, which minitensor does not have)"""
    return Sign.apply(self) if self.dtype.kind == "f" else self._map("sign")


def isnan(self: Tensor) -> Tensor:
    """True where x is nan"""
    return self._map("isnan", dtype=dtypes.bool_)


def isinf(self: Tensor) -> Tensor:
    """True where x is +inf or -inf"""
    return self._map("isinf", dtype=dtypes.bool_)


def isfinite(self: Tensor) -> Tensor:
    """True where x is neither inf nor nan"""
    return self._map("isfinite", dtype=dtypes.bool_)


class RoundingMethods:
    """Rounding, sign and the float predicates of one tensor (methods of Tensor, through MathMethods)."""

    floor = floor
    ceil = ceil
    trunc = fix = trunc
    round = round
    sign = sgn = sign
    isnan = isnan
    isinf = isinf
    isfinite = isfinite


fix, sgn = trunc, sign

__all__ = ["floor", "ceil", "trunc", "fix", "round", "sign", "sgn", "isnan", "isinf", "isfinite"]
