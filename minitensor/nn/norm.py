"""Batch normalization (PyTorch semantics: biased batch variance to normalize, unbiased for the running estimate)."""

from __future__ import annotations

from typing import Any

from ..autodiff import no_grad
from ..creation import ones, zeros
from ..errors import ShapeError
from ..module import Module, Parameter
from ..tensor import Tensor
from .linear import factory

__all__ = ["BatchNorm1d", "BatchNorm2d"]


class _BatchNorm(Module):
    """y = (x - mean) / sqrt(var + eps) * weight + bias over every dim but the channel dim (dim 1).

    Training uses the batch statistics and updates ``running_mean``/``running_var`` (buffers) as
    ``running = (1 - momentum) * running + momentum * batch_stat``; eval uses the running values.
    """

    dims_allowed: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = True,
                 backend: Any = None, dtype: Any = None):
        super().__init__()
        self.num_features, self.eps, self.momentum, self.affine = num_features, eps, momentum, affine
        kw = factory(None, dtype, backend)
        self.weight = Parameter(ones(num_features, **kw)) if affine else None
        self.bias = Parameter(zeros(num_features, **kw)) if affine else None
        self.register_buffer("running_mean", zeros(num_features, **kw))
        self.register_buffer("running_var", ones(num_features, **kw))

    def forward(self, x: Tensor) -> Tensor:
        if x.dims not in self.dims_allowed or x.shape[1] != self.num_features:
            raise ShapeError(
                f"{type(self).__name__}({self.num_features}) needs a {' or '.join(f'{d}-D' for d in self.dims_allowed)} "
                f"input with {self.num_features} channels in dim 1, got shape {x.shape}"
            )
        dims = tuple(d for d in range(x.dims) if d != 1)
        shape = tuple(self.num_features if d == 1 else 1 for d in range(x.dims))
        if self.training:
            count = x.numel() // self.num_features
            if count < 2:
                raise ShapeError(f"{type(self).__name__} needs more than one value per channel in training, got shape {x.shape}")
            mean = x.mean(dims, keepdim=True)
            centered = x - mean
            var = (centered * centered).mean(dims, keepdim=True)
            with no_grad():
                m = self.momentum
                batch_mean = mean.detach().view(self.num_features)
                batch_var = var.detach().view(self.num_features) * (count / (count - 1))
                self.running_mean.mul_(1.0 - m).add_(batch_mean * m)
                self.running_var.mul_(1.0 - m).add_(batch_var * m)
        else:
            centered = x - self.running_mean.view(*shape)
            var = self.running_var.view(*shape)
        out = centered / (var + self.eps).sqrt()
        if self.weight is not None and self.bias is not None:
            out = out * self.weight.view(*shape) + self.bias.view(*shape)
        return out

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}"


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) inputs."""

    dims_allowed = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) inputs."""

    dims_allowed = (4,)
