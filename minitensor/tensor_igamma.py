"""The regularized incomplete gamma functions (the ``IgammaMethods`` mixin) and the matching ``mt.`` functions:
igamma (``mt.special.gammainc``) and igammac (``mt.special.gammaincc``).

P(a, x) = gamma(a, x) / Gamma(a) = int_0^x t^(a-1) e^-t dt / Gamma(a) and Q(a, x) = 1 - P(a, x), each one binary
scalar kernel (``igamma``, ``igammac``: series and continued fraction, operators_special.py), so every backend runs
them. Float tensors of any float dtypes broadcast and promote (integer with integer raises, as torch); the gradient
is torch's: with respect to x, dP/dx = -dQ/dx = exp((a - 1) log x - x - lgamma(a)) (built from differentiable ops,
so it differentiates again); with respect to a, torch has none, and backward raises NotImplementedError here too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context
from .errors import DTypeError, NoDerivativeError
from .tensor_inplace import _inplace
from .tensor_math import _operands

if TYPE_CHECKING:
    from .tensor import Tensor


class _IncompleteGamma(F.TensorFunction):
    """out = P(a, x) (``sign`` 1) or Q(a, x) (``sign`` -1) by the kernel ``op``; d/dx = sign x^(a-1) e^-x / Gamma(a)."""

    higher_order = True
    op = "igamma"
    sign = 1.0

    @classmethod
    def forward(cls, ctx: Context, a: Tensor, x: Tensor) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(a, x)
        return a._zip(cls.op, x)

    @classmethod
    def backward(cls, ctx: Context, d: Tensor) -> tuple[None, Tensor]:  # type: ignore[override]
        a, x = ctx.saved_values
        if ctx.needs_input_grad[0]:
            raise NoDerivativeError(f"the derivative for '{cls.op}: input' (the a of {cls.op}(a, x), shape {a.shape}) "
                                    "is not implemented, as in PyTorch; detach a")
        density = ((a - 1.0) * x.log() - x - a.lgamma()).exp()
        return None, d * density * cls.sign


class _Igamma(_IncompleteGamma):
    op, sign = "igamma", 1.0


class _Igammac(_IncompleteGamma):
    op, sign = "igammac", -1.0


def _gamma_operands(name: str, input: Any, other: Any) -> tuple[Tensor, Tensor]:  # noqa: A002
    """Both as tensors of their promoted float dtype (DTypeError for two integer or bool operands, as torch)."""
    a, x = _operands(input, other)
    dtype = dtypes.result_type(a, x)
    if dtype.kind != "f":
        raise DTypeError(f"{name}(): not implemented for {a.dtype} and {x.dtype} operands (shapes {a.shape} and "
                         f"{x.shape}); pass a float tensor")
    return a.cast(dtype), x.cast(dtype)


def igamma(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """P(a, x), the regularized lower incomplete gamma function of a = ``input``, x = ``other`` (broadcast): nan for
    a < 0, x < 0, a = x = 0 and a = x = inf; 1 at a = 0 (x > 0) and x = inf, 0 at x = 0 (a > 0) and a = inf"""
    return _Igamma.apply(*_gamma_operands("igamma", input, other))


def igammac(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Q(a, x) = 1 - P(a, x), the regularized upper incomplete gamma function (without the cancellation of 1 - P)"""
    return _Igammac.apply(*_gamma_operands("igammac", input, other))


class IgammaMethods:
    """igamma and igammac methods of Tensor; the ``name_`` forms write in place and return self."""

    igamma = igamma
    igammac = igammac

    def igamma_(self: Any, other: Tensor) -> Any:
        return _inplace(self, lambda x: igamma(x, other))

    def igammac_(self: Any, other: Tensor) -> Any:
        return _inplace(self, lambda x: igammac(x, other))


__all__ = ["igamma", "igammac"]
