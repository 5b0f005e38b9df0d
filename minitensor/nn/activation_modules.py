"""Activation Modules (``nn.ReLU``, ``nn.GELU``, ``nn.Softmax`` ...): thin wrappers of the functions in
:mod:`minitensor.nn.activation`, with torch's constructor arguments, defaults and reprs."""

from __future__ import annotations

from typing import Any

from ..module import Module
from ..tensor import Tensor
from .activation import (
    celu,
    elu,
    gelu,
    glu,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    log_softmax,
    logsigmoid,
    mish,
    relu,
    selu,
    silu,
    softmax,
    softplus,
    softsign,
    tanhshrink,
)

__all__ = [
    "ReLU", "ReLU6", "Sigmoid", "Tanh", "GELU", "SiLU", "ELU", "CELU", "SELU", "LeakyReLU", "Softplus", "Softmax",
    "LogSoftmax", "Hardtanh", "Hardsigmoid", "Hardswish", "Mish", "Softsign", "LogSigmoid", "Tanhshrink", "GLU",
]


class _Inplace(Module):
    """An activation with torch's ``inplace`` flag (shown in the repr only when set)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return relu(input, self.inplace)


class SiLU(_Inplace):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return silu(input, self.inplace)


class SELU(_Inplace):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return selu(input, self.inplace)


class Mish(_Inplace):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return mish(input, self.inplace)


class Hardsigmoid(_Inplace):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return hardsigmoid(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class Hardswish(Hardsigmoid):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return hardswish(input, self.inplace)


class Hardtanh(Module):
    """Clamp to [min_val, max_val] (``min_value``/``max_value`` are torch's deprecated aliases)."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None):
        super().__init__()
        self.min_val = min_val if min_value is None else min_value
        self.max_val = max_val if max_value is None else max_value
        if self.min_val > self.max_val:
            raise ValueError(f"Hardtanh: min_val ({self.min_val}) cannot be greater than max_val ({self.max_val})")
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    def __init__(self, inplace: bool = False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class _Stateless(Module):
    """An activation without settings (extra constructor arguments are accepted and ignored, as in PyTorch)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__()


class Sigmoid(_Stateless):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input.sigmoid()


class Tanh(_Stateless):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input.tanh()


class Softsign(_Stateless):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return softsign(input)


class LogSigmoid(_Stateless):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return logsigmoid(input)


class Tanhshrink(_Stateless):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return tanhshrink(input)


class GELU(Module):
    """GELU, exact (erf) by default; ``approximate='tanh'`` for the tanh form."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return gelu(input, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return celu(input, self.alpha, self.inplace)


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmax(Module):
    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return log_softmax(input, self.dim)


class GLU(Module):
    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
