"""Activation functions (``F.relu``, ``F.gelu``, ``F.softmax`` ...), torch's names, signatures and defaults (their
Modules are in :mod:`minitensor.nn.activation_modules`). Each is built from differentiable Tensor ops or a fused
backend entry point with a Function of its own, so it runs on every backend.

``inplace=True`` computes the result and writes it into ``input`` with ``copy_`` (PyTorch's in-place rules apply:
not on a leaf that requires grad); the gradient is the same as out of place.
"""

from __future__ import annotations

import math
from typing import Any

from ..autodiff import Context, is_grad_enabled
from ..dtypes import get_default_dtype
from ..errors import ShapeError
from ..tensor import Tensor
from ..tensor_functions import TensorFunction
from ..tensor_softmax import log_softmax as _log_softmax
from ..tensor_softmax import softmax as _softmax
from .common import tensor_args

__all__ = [
    "relu", "relu6", "sigmoid", "tanh", "softmax", "log_softmax", "logsigmoid", "gelu", "silu", "elu", "selu", "celu",
    "softplus", "leaky_relu", "hardtanh", "hardsigmoid", "hardswish", "mish", "softsign", "tanhshrink", "glu",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_SQRT1_2 = math.sqrt(0.5)
_GELU_C = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _out(input: Tensor, result: Tensor, inplace: bool) -> Tensor:  # noqa: A002 - torch's name
    return input.copy_(result) if inplace else result


# --- softmax family (the computation is minitensor.tensor_softmax's, shared with Tensor.softmax) ---


@tensor_args("input")
def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:  # noqa: A002
    """exp(x) / sum(exp(x)) along ``dim`` (cast to ``dtype`` first), with the row max subtracted so huge logits do
    not overflow; -inf entries give 0, and a row of only -inf gives NaN, as in PyTorch. One fused kernel each way
    for float input (:func:`~minitensor.tensor_softmax.fused_softmax`)."""
    return _softmax(input, dim, dtype)


@tensor_args("input")
def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:  # noqa: A002
    """x - logsumexp(x) along ``dim`` computed as z - log(sum(exp(z))) with z = x - max(x) (exact for huge logits;
    -inf entries stay -inf with gradient passing; an all -inf row gives NaN, as in PyTorch). Fused like softmax."""
    return _log_softmax(input, dim, dtype)


@tensor_args("input")
def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """log(1 / (1 + exp(-x))) = min(x, 0) - log1p(exp(-|x|)): finite for huge |x|, -inf at -inf (gradient 1/2 at 0).

    Each sign gets its own branch with the input clamped to that side, so no exp overflows and no kink shows."""
    neg, pos = input.clamp(max=0.0), input.clamp(min=0.0)
    return (neg - neg.exp().log1p()).where(input < 0, -(-pos).exp().log1p())


def _expm1(x: Tensor) -> Tensor:
    """exp(x) - 1 valued by ``expm1`` (exact near 0) with gradient ``exp(x)`` (exact far below 0), as torch's ELUs."""
    e = x.exp()
    return x.expm1().detach() + (e - e.detach())


@tensor_args("input")
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    """log1p(exp(beta x)) / beta, and x itself where beta x > threshold (the exp never sees those values)."""
    linear = input * beta > threshold
    safe = input.masked_fill(linear, 0.0)
    return input.where(linear, (safe * beta).exp().log1p() / beta)


# --- rectifiers and smooth variants ---


@tensor_args("input")
def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """max(x, 0) (gradient 0 at 0)."""
    return _out(input, input.relu(), inplace)


@tensor_args("input")
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """x clamped to [min_val, max_val]; the gradient passes only strictly inside, as in PyTorch."""
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})")
    inside = (input > min_val) & (input < max_val)
    return _out(input, input.where(inside, input.clamp(min_val, max_val).detach()), inplace)


@tensor_args("input")
def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """min(max(x, 0), 6) (``hardtanh(x, 0, 6)``)."""
    return hardtanh(input, 0.0, 6.0, inplace)


@tensor_args("input")
def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """1 / (1 + exp(-x))."""
    return input.sigmoid()


@tensor_args("input")
def tanh(input: Tensor) -> Tensor:  # noqa: A002
    """Hyperbolic tangent."""
    return input.tanh()


@tensor_args("input")
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:  # noqa: A002
    """x for x > 0, negative_slope * x otherwise."""
    return _out(input, input.where(input > 0, input * negative_slope), inplace)


class Gelu(TensorFunction):
    """GELU as one backend call (``Backend.gelu``: by default the element-wise ``gelu`` / ``gelu_tanh`` op) that also
    writes the derivative when a gradient is needed, so the backward is one multiply; under
    ``create_graph`` the derivative is built from differentiable ops (erf/exp, or tanh)."""

    higher_order = True

    @staticmethod
    def forward(ctx: Context, x: Tensor, tanh: bool) -> Tensor:  # type: ignore[override]
        be = x.backend
        out, slope = be.empty(x.shape, x.dtype), be.empty(x.shape, x.dtype) if ctx.needs_input_grad[0] else None
        be.gelu(x._data, out, "tanh" if tanh else "none", slope)
        ctx.save_for_backward(x, tanh, None if slope is None else Tensor(slope, be))
        return Tensor(out, be)

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> Tensor:  # type: ignore[override]
        x, tanh, slope = ctx.saved_values
        if not is_grad_enabled():
            return grad._zip("mul", slope)  # GELU'(x), computed in the forward pass
        if tanh:
            t = ((x + x * x * x * 0.044715) * _GELU_C).tanh()
            slope = (t + 1.0) * 0.5 + x * 0.5 * (1.0 - t * t) * _GELU_C * (x * x * (3 * 0.044715) + 1.0)
        else:
            slope = ((x * _SQRT1_2).erf() + 1.0) * 0.5 + x * (x * x * -0.5).exp() * _INV_SQRT_2PI
        return grad * slope


@tensor_args("input")
def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """GELU. ``approximate='none'`` (default, exact): x Phi(x) = 0.5 x (1 + erf(x / sqrt 2));
    ``'tanh'``: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). One fused kernel each way for float input."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    x = input if input.dtype.kind == "f" else input.to(get_default_dtype())
    return Gelu.apply(x, approximate == "tanh")


@tensor_args("input")
def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * sigmoid(x) (swish)."""
    return _out(input, input * input.sigmoid(), inplace)


@tensor_args("input")
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """x for x > 0, alpha (exp(x) - 1) otherwise."""
    return _out(input, input.where(input > 0, _expm1(input.clamp(max=0.0)) * alpha), inplace)


@tensor_args("input")
def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """scale * elu(x, alpha) with the self-normalizing constants (alpha ~ 1.6733, scale ~ 1.0507)."""
    return _out(input, elu(input, _SELU_ALPHA) * _SELU_SCALE, inplace)


@tensor_args("input")
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise ValueError("celu: alpha must not be 0")
    return _out(input, input.where(input > 0, _expm1(input.clamp(max=0.0) / alpha) * alpha), inplace)


@tensor_args("input")
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """relu6(x + 3) / 6: 0 below -3, 1 above 3, linear between (gradient 1/6 strictly inside)."""
    return _out(input, relu6(input + 3.0) / 6.0, inplace)


@tensor_args("input")
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * relu6(x + 3) / 6."""
    return _out(input, input * (relu6(input + 3.0) / 6.0), inplace)


@tensor_args("input")
def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * tanh(softplus(x))."""
    return _out(input, input * softplus(input).tanh(), inplace)


@tensor_args("input")
def softsign(input: Tensor) -> Tensor:  # noqa: A002
    """x / (1 + |x|)."""
    return input / (input.abs() + 1.0)


@tensor_args("input")
def tanhshrink(input: Tensor) -> Tensor:  # noqa: A002
    """x - tanh(x)."""
    return input - input.tanh()


@tensor_args("input")
def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    """Gated linear unit: split ``dim`` in halves a, b and return a * sigmoid(b)."""
    if input.dims == 0:
        raise ShapeError("glu does not support 0-D (scalar) tensors")
    size = input.shape[dim]
    if size % 2:
        raise ShapeError(f"glu: halving dim {dim} needs an even size, got {size} (input shape {input.shape})")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()
