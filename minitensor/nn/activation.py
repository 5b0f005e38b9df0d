"""Activation functions (``F.relu``, ``F.gelu``, ``F.softmax`` ...) and their Modules (``nn.ReLU`` ...)."""

from __future__ import annotations

import math

from ..module import Module
from ..tensor import Tensor

__all__ = [
    "relu", "sigmoid", "tanh", "leaky_relu", "gelu", "softmax", "log_softmax",
    "ReLU", "Sigmoid", "Tanh", "LeakyReLU", "GELU", "Softmax", "LogSoftmax",
]


def softmax(x: Tensor, dim: int = -1) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim``, with the max subtracted first so large logits do not overflow."""
    z = x - x.amax(dim, keepdim=True).detach()
    e = z.exp()
    return e / e.sum(dim, keepdim=True)


def log_softmax(x: Tensor, dim: int = -1) -> Tensor:
    """log(softmax(x)) along ``dim`` computed stably as ``z - log(sum(exp(z)))`` with ``z = x - max(x)``."""
    z = x - x.amax(dim, keepdim=True).detach()
    return z - z.exp().sum(dim, keepdim=True).log()




def relu(x: Tensor) -> Tensor:
    return x.relu()


def sigmoid(x: Tensor) -> Tensor:
    return x.sigmoid()


def tanh(x: Tensor) -> Tensor:
    return x.tanh()


def leaky_relu(x: Tensor, negative_slope: float = 0.01) -> Tensor:
    """x for x > 0, negative_slope * x otherwise."""
    return x.relu() - (-x).relu() * negative_slope


_GELU_C = math.sqrt(2.0 / math.pi)


def gelu(x: Tensor) -> Tensor:
    """GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (torch's approximate="tanh")."""
    inner = (x + x * x * x * 0.044715) * _GELU_C
    return x * 0.5 * (inner.tanh() + 1.0)


class ReLU(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.relu()


class Sigmoid(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.sigmoid()


class Tanh(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.tanh()


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: Tensor) -> Tensor:
        return leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class GELU(Module):
    """GELU with the tanh approximation (PyTorch's ``GELU(approximate="tanh")``)."""

    def forward(self, x: Tensor) -> Tensor:
        return gelu(x)

    def extra_repr(self) -> str:
        return "approximate='tanh'"


class Softmax(Module):
    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return softmax(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, x: Tensor) -> Tensor:
        return log_softmax(x, self.dim)


