"""Linear layers and shape helpers: ``F.linear``, ``nn.Linear``, ``nn.Identity``, ``nn.Flatten``, ``nn.Unflatten``."""

from __future__ import annotations

import math
from typing import Any

from ..creation import empty
from ..module import Module, Parameter
from ..tensor import Tensor
from . import init
from .common import bias_bound, check_sizes, factory, tensor_args

__all__ = ["linear", "Linear", "Identity", "Flatten", "Unflatten"]


@tensor_args("input", "weight")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002 - torch's name
    """``input @ weight.T + bias`` with ``weight`` of shape (out_features, in_features)."""
    out = input @ weight.transpose(0, 1)
    return out + bias if bias is not None else out


class Linear(Module):
    """y = x W^T + b with W of shape (out_features, in_features), PyTorch's layout and default init."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None,
                 *, backend: Any = None):
        super().__init__()
        check_sizes("Linear", in_features=in_features, out_features=out_features)
        self.in_features, self.out_features = in_features, out_features
        kw = factory(device, dtype, backend)
        self.weight = Parameter(empty(out_features, in_features, **kw))
        self.bias = Parameter(empty(out_features, **kw)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default init: kaiming_uniform_(a=sqrt(5)) weight, U(-1/sqrt(in), 1/sqrt(in)) bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = bias_bound(self.in_features)
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x: Tensor) -> Tensor:
        return linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Flatten(Module):
    """Merge dims ``start_dim``..``end_dim`` into one (default keeps the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size``."""

    def __init__(self, dim: int, unflattened_size: tuple[int, ...]):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, x: Tensor) -> Tensor:
        return x.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Identity(Module):
    """Returns its input (arguments to the constructor are accepted and ignored, as in PyTorch)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__()

    def forward(self, x: Tensor) -> Tensor:
        return x


