"""More activations and their Modules, torch's names, signatures, defaults and reprs: ``F.prelu rrelu threshold
hardshrink softshrink softmin gumbel_softmax``, the in-place forms ``F.relu_ elu_ leaky_relu_ hardtanh_ selu_ celu_ threshold_
rrelu_`` and ``nn.PReLU RReLU Threshold Hardshrink Softshrink Softmin Softmax2d``.

Everything is built from differentiable Tensor ops. The in-place forms compute the result out of place and write
it into ``input`` with ``copy_`` (so they return ``input`` itself; as in PyTorch, not on a leaf that requires grad).
``rrelu`` in training draws its slopes, and ``gumbel_softmax`` its Gumbel noise (:func:`gumbel_noise`), from the
shared generator (:mod:`minitensor.random_state`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..creation import empty, rand_like, zeros_like
from ..dtypes import get_default_dtype
from ..errors import ShapeError
from ..module import Module, Parameter
from ..tensor import Tensor
from ..tensor_softmax import softmax as _softmax
from . import init
from .activation import celu, elu, hardtanh, leaky_relu, relu, selu
from .common import check_sizes, factory, tensor_args

__all__ = [
    "prelu", "rrelu", "rrelu_", "threshold", "threshold_", "hardshrink", "softshrink", "softmin", "gumbel_softmax", "relu_", "elu_",
    "leaky_relu_", "hardtanh_", "selu_", "celu_",
    "PReLU", "RReLU", "Threshold", "Hardshrink", "Softshrink", "Softmin", "Softmax2d",
]


def _out(input: Tensor, result: Tensor, inplace: bool) -> Tensor:  # noqa: A002 - torch's name
    return input.copy_(result) if inplace else result


@tensor_args("input", "weight")
def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """x for x > 0, weight * x otherwise (the gradient at 0 is ``weight``, as PyTorch). ``weight`` holds one slope
    (any shape with one element) or one per channel (dim 1; a 1-D input has a single channel)."""
    if weight.dims > 1:
        raise ShapeError(f"prelu: weight must be a scalar or a 1-D tensor, got shape {weight.shape}")
    n = weight.numel()
    if n == 1:
        w = weight.reshape(*([1] * input.dims)) if input.dims else weight.reshape()
    else:
        if input.dims == 0:
            raise ShapeError(f"prelu: a 0-D input takes a single slope, got weight of shape {weight.shape}")
        channels = input.shape[1] if input.dims >= 2 else 1
        if n != channels:
            raise ShapeError(f"prelu: weight has {n} parameters but the input of shape {input.shape} has {channels} "
                             "channels (dim 1; a 1-D input has 1)")
        w = weight.view(*(n if d == 1 else 1 for d in range(input.dims)))
    return input.where(input > 0, input * w)


def _check_bounds(lower: float, upper: float) -> None:
    if lower > upper:
        raise ValueError(f"rrelu: the lower bound ({lower}) must be less than or equal to the upper bound ({upper})")


@tensor_args("input")
def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,  # noqa: A002
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: x for x > 0, a * x otherwise. Training: a ~ U(lower, upper) drawn per element (the
    gradient is the same a); eval: a = (lower + upper) / 2 (``leaky_relu``)."""
    _check_bounds(lower, upper)
    if not training:
        return leaky_relu(input, (lower + upper) / 2.0, inplace)
    x = input if input.dtype.kind == "f" else input.to(get_default_dtype())
    slope = rand_like(x) * (upper - lower) + lower
    noise = slope.where(x <= 0, 1.0).detach()
    return _out(input, x * noise, inplace)


@tensor_args("input")
def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:  # noqa: A002
    """In-place :func:`rrelu`: writes into and returns ``input``."""
    return rrelu(input, lower, upper, training, True)


@tensor_args("input")
def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:  # noqa: A002
    """x where x > threshold, else ``value`` (NaN stays NaN; the gradient passes only where x > threshold)."""
    return _out(input, input.masked_fill(input <= threshold, value), inplace)


_threshold = threshold  # the name `threshold` is the argument inside the functions below


@tensor_args("input")
def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    """In-place :func:`threshold`."""
    return _threshold(input, threshold, value, True)


@tensor_args("input")
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """x where |x| > lambd, else 0 (NaN stays NaN; gradient 1 outside [-lambd, lambd], 0 inside)."""
    return input.masked_fill((input >= -lambd) & (input <= lambd), 0.0)


@tensor_args("input")
def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """x - lambd for x > lambd, x + lambd for x < -lambd, 0 between; lambd must be >= 0."""
    if lambd < 0:
        raise ValueError(f"softshrink: lambd must be >= 0, got {lambd}")
    shifted = (input - lambd).where(input > lambd, input + lambd)  # NaN stays NaN
    return shifted.masked_fill((input >= -lambd) & (input <= lambd), 0.0)


@tensor_args("input")
def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:  # noqa: A002
    """softmax(-x) along ``dim`` (negated, then cast to ``dtype``)."""
    if dim is None:
        raise ValueError(f"softmin() needs dim= (PyTorch's implicit choice is deprecated); input has shape {input.shape}")
    return _softmax(-input, dim, dtype)


def gumbel_noise(like: Tensor) -> Tensor:
    """Standard Gumbel samples shaped like ``like``: ``-log(E)`` with ``E = -log1p(-U) ~ Exp(1)``, U from the shared
    generator (E kept >= the dtype's tiny, so no sample is infinite)."""
    exponential = -(-rand_like(like)).log1p()
    return -exponential.clamp(min=float(np.finfo(like.dtype).tiny)).log()


@tensor_args("logits")
def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """softmax((logits + g) / tau) along ``dim`` with g standard Gumbel noise (:func:`gumbel_noise`). ``hard``: the
    one-hot of the argmax in the forward pass with the soft sample's gradient (straight through:
    ``y_hard - y_soft.detach() + y_soft``). ``eps`` is deprecated and unused (a value other than 1e-10 warns)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", UserWarning, stacklevel=2)
    y_soft = _softmax((logits + gumbel_noise(logits)) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = zeros_like(logits).scatter(dim, index, value=1.0)
    return y_hard - y_soft.detach() + y_soft


# --- in-place forms of the activations in .activation (torch's F.relu_ ...) ---


@tensor_args("input")
def relu_(input: Tensor) -> Tensor:  # noqa: A002
    """In-place :func:`~minitensor.nn.functional.relu`."""
    return relu(input, True)


@tensor_args("input")
def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """In-place :func:`~minitensor.nn.functional.elu`."""
    return elu(input, alpha, True)


@tensor_args("input")
def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:  # noqa: A002
    """In-place :func:`~minitensor.nn.functional.leaky_relu`."""
    return leaky_relu(input, negative_slope, True)


@tensor_args("input")
def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:  # noqa: A002
    """In-place :func:`~minitensor.nn.functional.hardtanh`."""
    return hardtanh(input, min_val, max_val, True)


@tensor_args("input")
def selu_(input: Tensor) -> Tensor:  # noqa: A002
    """In-place :func:`~minitensor.nn.functional.selu`."""
    return selu(input, True)


@tensor_args("input")
def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """In-place :func:`~minitensor.nn.functional.celu`."""
    return celu(input, alpha, True)


# --- Modules ---


class PReLU(Module):
    """x for x > 0, a * x otherwise, with learnable slopes ``weight`` (``num_parameters`` of them, each ``init``):
    one shared slope, or one per channel (dim 1 of the input)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None, *,
                 backend: Any = None):
        super().__init__()
        check_sizes("PReLU", num_parameters=num_parameters)
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(empty(num_parameters, **factory(device, dtype, backend)))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomized leaky ReLU (:func:`rrelu`): random slopes in U(lower, upper) while training, their mean in eval."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class Threshold(Module):
    """x where x > threshold, else ``value`` (:func:`threshold`)."""

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class Hardshrink(Module):
    """x where |x| > lambd, else 0 (:func:`hardshrink`)."""

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """x shrunk towards 0 by lambd, 0 inside [-lambd, lambd] (:func:`softshrink`)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return softshrink(input, self.lambd)


class Softmin(Module):
    """softmax(-x) along ``dim`` (:func:`softmin`)."""

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return softmin(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels (dim -3) at each location of a (N, C, H, W) or (C, H, W) input."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.dims not in (3, 4):
            raise ShapeError(f"Softmax2d: expected a 3-D or 4-D input, got shape {input.shape}")
        return _softmax(input, -3)
