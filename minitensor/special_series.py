"""What the ``mt.special`` function modules (special_bessel.py, special_bessel_modified.py, special_airy.py,
special_normal.py, special_entropy.py, special_zeta.py, special_polynomials.py) share: series evaluation by tensor
ops, the float64 working precision, and the autodiff wrappers.

- ``chebyshev_series`` sums c_0 T_0(t) + c_1 T_1(t) + ... by Clenshaw's recurrence (stable: its rounding error is a
  few ulps of sum |c_k|), ``power_series`` sums c_0 + c_1 z + ... by Horner's rule. Both are element-wise tensor
  ops (multiply, add), so every backend runs them without new kernels.
- The special functions compute in float64 and round once to the input's dtype (``in_float64``: float32 inputs get
  float64's accuracy, rounded), from detached inputs: ``Evaluated`` (a Function with a derivative formula) and
  ``no_derivative`` (torch has none: backward raises) record one node, not the series' hundreds of ops.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context, is_grad_enabled
from .errors import NoDerivativeError

if TYPE_CHECKING:
    from .tensor import Tensor


def chebyshev_series(t: Tensor, coefficients: Sequence[float]) -> Tensor:
    """sum_k c_k T_k(t) (at least two coefficients) by Clenshaw: b_k = c_k + 2t b_(k+1) - b_(k+2), then
    c_0 + t b_1 - b_2"""
    two_t = t * 2.0
    later = two_t * coefficients[-1] + coefficients[-2]  # b_(n-1) (b_n = c_n is a number)
    latest: Tensor | float = coefficients[-1]
    for c in reversed(coefficients[1:-2]):
        later, latest = two_t * later - latest + c, later
    return t * later - latest + coefficients[0]


def power_series(z: Tensor, coefficients: Sequence[float]) -> Tensor:
    """c_0 + c_1 z + c_2 z^2 + ... (at least two coefficients) by Horner's rule"""
    total = z * coefficients[-1] + coefficients[-2]
    for c in reversed(coefficients[:-2]):
        total = total * z + c
    return total


def working(x: Tensor) -> Tensor:
    """x cut from the graph, in float64 (the precision the special functions compute in)"""
    return x.detach().cast(dtypes.float64)


def in_float64(value: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """value computed on float64 copies of its arguments and rounded once to the first argument's dtype"""

    def rounded(*inputs: Tensor) -> Tensor:
        return value(*[working(v) for v in inputs]).cast(inputs[0].dtype)

    return rounded


class _NoDerivative(F.TensorFunction):
    """out = value(*inputs) on the detached inputs; PyTorch has no derivative, so backward raises
    NoDerivativeError."""

    @staticmethod
    def forward(ctx: Context, name: str, value: Callable[..., Tensor], *inputs: Tensor) -> Tensor:  # type: ignore[override]
        ctx.name = name  # type: ignore[attr-defined]
        return value(*[v.detach() for v in inputs])

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Any:
        name = ctx.name  # type: ignore[attr-defined]
        raise NoDerivativeError(f"the derivative for 'special.{name}' is not implemented, as in PyTorch (whose "
                                f"{name} returns a tensor that does not require grad); detach its input")


def no_derivative(name: str, value: Callable[..., Tensor], *inputs: Tensor) -> Tensor:
    """value(*inputs) as one node whose backward raises NoDerivativeError naming torch.special's ``name`` (PyTorch
    has no derivative for it)"""
    return _NoDerivative.apply(name, value, *inputs)


class Evaluated(F.TensorFunction):
    """out = value(a) computed in float64 (rounded to a's dtype); the gradient is d * derivative(a, out), built from
    differentiable ops, so it differentiates again: under create_graph ``out`` is recomputed as this Function of
    ``a`` (a node of the new graph), otherwise it is the saved value. Subclasses set ``value`` and ``derivative``."""

    higher_order = True

    @staticmethod
    def value(a: Tensor, /) -> Tensor:
        raise NotImplementedError

    @staticmethod
    def derivative(a: Tensor, out: Tensor, /) -> Tensor:
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx: Context, a: Tensor) -> Tensor:  # type: ignore[override]
        out = cls.value(working(a)).cast(a.dtype)
        ctx.save_for_backward(a, out.detach())
        return out

    @classmethod
    def backward(cls, ctx: Context, d: Tensor) -> Tensor:  # type: ignore[override]
        a, out = ctx.saved_values
        if is_grad_enabled() and a.requires_grad:
            out = cls.apply(a)
        return d * cls.derivative(a, out)
