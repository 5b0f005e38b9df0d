"""Stateless neural-network functions (``minitensor.nn.functional``, usually imported as ``F``).

Everything here is built from differentiable Tensor ops or the Functions in :mod:`.conv`, so it
runs on every backend and supports autodiff.
"""

from __future__ import annotations

import math

import numpy as np

from ..creation import generator
from ..errors import ShapeError
from ..tensor import Tensor
from ..tensor_data import normalize_dim
from .conv import conv1d, conv2d, pad, unfold
from .losses import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    l1_loss,
    mse_loss,
    nll_loss,
    one_hot,
)
from .pooling import avgpool2d, maxpool2d

__all__ = [
    "softmax", "logsoftmax", "log_softmax", "max", "argmax", "dropout", "flatten",
    "relu", "sigmoid", "tanh", "leaky_relu", "gelu",
    "conv1d", "conv2d", "pad", "unfold", "avgpool2d", "maxpool2d",
    "mse_loss", "l1_loss", "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "cross_entropy", "nll_loss", "one_hot",
]


def softmax(x: Tensor, dim: int = -1) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim``, with the max subtracted first so large logits do not overflow."""
    z = x - x.amax(dim, keepdim=True).detach()
    e = z.exp()
    return e / e.sum(dim, keepdim=True)


def logsoftmax(x: Tensor, dim: int = -1) -> Tensor:
    """log(softmax(x)) along ``dim`` computed stably as ``z - log(sum(exp(z)))`` with ``z = x - max(x)``."""
    z = x - x.amax(dim, keepdim=True).detach()
    return z - z.exp().sum(dim, keepdim=True).log()


log_softmax = logsoftmax


def max(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:  # noqa: A001 - the torch name
    """Largest value along ``dim`` (differentiable; tied maxima share the gradient). See :func:`argmax`."""
    return x.amax(dim, keepdim)


def argmax(x: Tensor, dim: int | None = None, keepdim: bool = False) -> np.ndarray:
    """Index of the largest value along ``dim`` (the first on ties) as a NumPy int64 array on the host.

    With ``dim=None`` the index is into the flattened tensor (a 0-d array). Indices are not
    differentiable, so they are returned as host integers, ready for comparison with targets.
    """
    values = x.to_numpy()
    if dim is None:
        return np.asarray(np.argmax(values))
    dim = normalize_dim(dim, x.dims)
    out = np.argmax(values, axis=dim)
    return np.expand_dims(out, dim) if keepdim else out


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p); identity when not training.

    The mask is drawn on the host from :func:`minitensor.generator` (seed with ``manual_seed``).
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    keep = (generator().random(x.shape) >= p).astype(x.dtype) / (1.0 - p)
    return x * Tensor(x.backend.from_numpy(keep.astype(x.dtype)), x.backend)


def flatten(x: Tensor, start_dim: int = 1) -> Tensor:
    """Merge dims ``start_dim`` onward into one (default keeps the batch dim)."""
    if x.dims == 0:
        raise ShapeError("cannot flatten a 0-d tensor")
    return x.flatten(start_dim)


# --- activations ---


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
