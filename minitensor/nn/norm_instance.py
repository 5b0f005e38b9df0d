"""Instance and local response normalization: ``F.instance_norm local_response_norm`` and ``nn.InstanceNorm1d
InstanceNorm2d InstanceNorm3d LocalResponseNorm`` with PyTorch's semantics, defaults, reprs and state-dict names (``weight``,
``bias``, ``running_mean``, ``running_var``, ``num_batches_tracked``), built from differentiable Tensor ops."""

from __future__ import annotations

import math
import warnings
from typing import Any

from ..autodiff import no_grad
from ..errors import ShapeError
from ..module import Module
from ..tensor import Tensor
from .common import factory, tensor_args
from .conv import pad
from .norm import _channel_view, _check_param, _RunningStatsNorm, channel_affine

__all__ = ["instance_norm", "local_response_norm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
           "LocalResponseNorm"]


@tensor_args("input")
def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,  # noqa: A002
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each channel of each sample of an (N, C, *) input over its spatial dims:
    (x - mean) / sqrt(var + eps) * weight + bias (biased var). ``use_input_stats``: those per-instance statistics,
    and the running stats (when given) are updated in place with the batch average of them,
    ``running = (1 - momentum) * running + momentum * mean_n(stat)`` (unbiased var); otherwise the running stats
    normalize."""
    if input.dims < 2:
        raise ShapeError(f"instance_norm needs an (N, C, *) input, got shape {input.shape}")
    n, c = input.shape[0], input.shape[1]
    for what, p in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        _check_param("instance_norm", what, p, (c,))
    dims = tuple(range(2, input.dims))
    if use_input_stats:
        count = math.prod(input.shape[2:])
        if count == 1:
            raise ValueError(f"instance_norm: expected more than 1 spatial element when training, got input shape "
                             f"{input.shape}")
        mean = input.mean(dims, keepdim=True)
        centered = input - mean
        var = (centered * centered).mean(dims, keepdim=True)
        with no_grad():
            if running_mean is not None:
                running_mean.mul_(1.0 - momentum).add_(mean.detach().reshape(n, c).mean(0) * momentum)
            if running_var is not None:
                unbiased = var.detach().reshape(n, c).mean(0) * (count / (count - 1))
                running_var.mul_(1.0 - momentum).add_(unbiased * momentum)
    else:
        if running_mean is None or running_var is None:
            raise ValueError("instance_norm: running_mean and running_var must be given when use_input_stats=False")
        centered = input - _channel_view(running_mean, input.dims)
        var = _channel_view(running_var, input.dims)
    return channel_affine(centered * (var + eps).rsqrt(), weight, bias)


@tensor_args("input")
def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,  # noqa: A002
                        k: float = 1.0) -> Tensor:
    """x / (k + alpha / size * sum of x^2 over a window of ``size`` channels)^beta for an (N, C, *) input with >= 3
    dims; the window around channel c spans c - size//2 .. c + (size-1)//2, zero-padded at the ends."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"local_response_norm: size must be a positive int, got {size!r}")
    if input.dims < 3:
        raise ShapeError(f"local_response_norm: expected an input with 3 or more dims (N, C, *), got shape {input.shape}")
    if input.numel() == 0:
        return input
    c = input.shape[1]
    padded = pad(input * input, [0, 0] * (input.dims - 2) + [size // 2, (size - 1) // 2])
    total = padded.narrow(1, 0, c)
    for i in range(1, size):
        total = total + padded.narrow(1, i, c)
    return input / (total * (alpha / size) + k) ** beta


# --- Modules ---


class _InstanceNorm(_RunningStatsNorm):
    """Instance norm of (N, C, *spatial) or unbatched (C, *spatial) input. Uses the input's statistics in training
    and, unless ``track_running_stats``, in eval too; tracked running stats are updated while training (momentum
    None counts as 0, as PyTorch) and normalize in eval. ``num_batches_tracked`` is kept but not counted."""

    spatial = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None, *, bias: bool = True,
                 backend: Any = None):
        super().__init__()
        self._build(num_features, eps, momentum, affine, track_running_stats, factory(device, dtype, backend), bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        name, unbatched = type(self).__name__, self.spatial + 1
        if input.dims not in (unbatched, unbatched + 1):
            raise ShapeError(f"{name}: expected a {unbatched}-D (unbatched) or {unbatched + 1}-D input, got shape "
                             f"{input.shape}")
        channel = input.dims - unbatched
        if input.shape[channel] != self.num_features:
            if self.affine:
                raise ShapeError(f"{name}({self.num_features}): expected the input's size at dim={channel} to match "
                                 f"num_features ({self.num_features}), got input shape {input.shape}")
            warnings.warn(f"input's size at dim={channel} does not match num_features. You can silence this warning "
                          "by not passing in num_features, which is not used because affine=False", stacklevel=2)
        x = input.unsqueeze(0) if input.dims == unbatched else input
        out = instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training or not self.track_running_stats,
                            0.0 if self.momentum is None else self.momentum, self.eps)
        return out.squeeze(0) if input.dims == unbatched else out

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """Instance norm of (N, C, L) or (C, L) inputs (affine=False, track_running_stats=False by default)."""


class InstanceNorm2d(_InstanceNorm):
    """Instance norm of (N, C, H, W) or (C, H, W) inputs (affine=False, track_running_stats=False by default)."""

    spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance norm of (N, C, D, H, W) or (C, D, H, W) inputs (affine=False, track_running_stats=False by default)."""

    spatial = 3


class LocalResponseNorm(Module):
    """:func:`local_response_norm` across channels with fixed ``size, alpha, beta, k``."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
