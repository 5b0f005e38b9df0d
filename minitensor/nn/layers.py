"""Layers: Modules with parameters created on a chosen ``backend`` and ``dtype``.

:class:`Layer` is :class:`~minitensor.Module`, which already has ``to``, ``state_dict`` and
``load_state_dict``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..backends import get_backend
from ..dtypes import as_dtype
from ..module import Module, Parameter
from ..tensor import Tensor
from . import functional as F
from . import init
from .conv import _pair


def to(module: Module, target: Any) -> Module:
    """Move every parameter and buffer of ``module`` to a backend or dtype (same as ``module.to(target)``)."""
    return module.to(target)


Layer = Module
"""The nn layers' base class: Module itself (it has ``to``, ``state_dict`` and ``load_state_dict``)."""


def _bias_bound(fan_in: int) -> float:
    return 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0


class Linear(Layer):
    """y = x W^T + b with W of shape (out_features, in_features), PyTorch's layout and default init."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, backend: Any = None, dtype: Any = None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        backend, dtype = get_backend(backend), as_dtype(dtype)
        self.weight = Parameter(init.kaiming_uniform((out_features, in_features), a=math.sqrt(5), backend=backend, dtype=dtype))
        bound = _bias_bound(in_features)
        self.bias = Parameter(init.uniform(out_features, -bound, bound, backend, dtype)) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        out = x @ self.weight.value.transpose(0, 1)
        return out + self.bias.value if self.bias is not None else out

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class _ConvNd(Layer):
    def __init__(self, in_channels: int, out_channels: int, kernel: tuple[int, ...], stride: Any, padding: Any,
                 bias: bool, backend: Any, dtype: Any):
        super().__init__()
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, kernel
        self.stride, self.padding = stride, padding
        backend, dtype = get_backend(backend), as_dtype(dtype)
        shape = (out_channels, in_channels, *kernel)
        self.weight = Parameter(init.kaiming_uniform(shape, a=math.sqrt(5), backend=backend, dtype=dtype))
        bound = _bias_bound(in_channels * math.prod(kernel))
        self.bias = Parameter(init.uniform(out_channels, -bound, bound, backend, dtype)) if bias else None

    def _bias(self) -> Tensor | None:
        return self.bias.value if self.bias is not None else None

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, bias={self.bias is not None}")


class Conv1d(_ConvNd):
    """1-D convolution over (B, C, L) inputs; weight (out_channels, in_channels, kernel_size)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 bias: bool = True, backend: Any = None, dtype: Any = None):
        super().__init__(in_channels, out_channels, (int(kernel_size),), int(stride), int(padding), bias, backend, dtype)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv1d(x, self.weight.value, self._bias(), self.stride, self.padding)


class Conv2d(_ConvNd):
    """2-D convolution over (B, C, H, W) inputs; weight (out_channels, in_channels, kh, kw)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 bias: bool = True, backend: Any = None, dtype: Any = None):
        super().__init__(in_channels, out_channels, _pair(kernel_size, "kernel_size"), _pair(stride, "stride"),
                         _pair(padding, "padding"), bias, backend, dtype)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv2d(x, self.weight.value, self._bias(), self.stride, self.padding)


class MaxPool2d(Layer):
    def __init__(self, kernel_size: Any, stride: Any = None):
        super().__init__()
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.stride = self.kernel_size if stride is None else _pair(stride, "stride")

    def forward(self, x: Tensor) -> Tensor:
        return F.maxpool2d(x, self.kernel_size, self.stride)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}"


class AvgPool2d(MaxPool2d):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0):
        super().__init__(kernel_size, stride)
        self.padding = _pair(padding, "padding")

    def forward(self, x: Tensor) -> Tensor:
        return F.avgpool2d(x, self.kernel_size, self.stride, self.padding)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class Dropout(Layer):
    """Zeroes elements with probability ``p`` while training (scaling the rest by 1/(1-p)); identity in eval."""

    def __init__(self, p: float = 0.5):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability must be in [0, 1], got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Flatten(Layer):
    def __init__(self, start_dim: int = 1):
        super().__init__()
        self.start_dim = start_dim

    def forward(self, x: Tensor) -> Tensor:
        return F.flatten(x, self.start_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}"


class Identity(Layer):
    def forward(self, x: Tensor) -> Tensor:
        return x


class ReLU(Layer):
    def forward(self, x: Tensor) -> Tensor:
        return x.relu()


class Sigmoid(Layer):
    def forward(self, x: Tensor) -> Tensor:
        return x.sigmoid()


class Tanh(Layer):
    def forward(self, x: Tensor) -> Tensor:
        return x.tanh()


class LeakyReLU(Layer):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: Tensor) -> Tensor:
        return F.leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class GELU(Layer):
    """GELU with the tanh approximation (PyTorch's ``GELU(approximate="tanh")``)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x)

    def extra_repr(self) -> str:
        return "approximate='tanh'"


class Softmax(Layer):
    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.softmax(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, x: Tensor) -> Tensor:
        return F.logsoftmax(x, self.dim)


class Embedding(Layer):
    """Rows of ``weight`` (num_embeddings, embedding_dim) picked by integer indices of any shape.

    The lookup is a one-hot (built on the host) times ``weight`` matmul, so its backward is a
    scatter-add of the output gradient into the picked rows; it costs O(indices * num_embeddings * dim).
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, backend: Any = None, dtype: Any = None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = Parameter(init.normal((num_embeddings, embedding_dim), 0.0, 1.0, backend, dtype))

    def forward(self, indices: Any) -> Tensor:
        weight = self.weight.value
        array = indices.to_numpy() if isinstance(indices, Tensor) else np.asarray(indices)
        shape = array.shape
        onehot = F.one_hot(array.reshape(-1), self.num_embeddings, weight)
        return (onehot @ weight).view(*shape, self.embedding_dim)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"


class Sequential(Layer):
    """Applies its layers in order; they are registered as children named "0", "1", ..."""

    def __init__(self, *layers: Module):
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], (list, tuple)):
            layers = tuple(layers[0])
        for layer in layers:
            self.append(layer)

    def append(self, layer: Module) -> Sequential:
        setattr(self, str(len(self._modules)), layer)
        return self

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, index: int | slice) -> Any:
        layers = list(self._modules.values())
        return Sequential(*layers[index]) if isinstance(index, slice) else layers[index]

    def forward(self, x: Any) -> Any:
        for layer in self._modules.values():
            x = layer(x)
        return x
