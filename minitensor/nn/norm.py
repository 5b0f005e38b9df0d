"""Normalization: ``F.batch_norm layer_norm group_norm rms_norm normalize cosine_similarity`` and ``nn.BatchNorm1d
BatchNorm2d BatchNorm3d LayerNorm GroupNorm RMSNorm``, PyTorch's semantics (biased variance to normalize, unbiased for the
running estimate), names and defaults. Parameters are named ``weight``/``bias`` and buffers ``running_mean``,
``running_var``, ``num_batches_tracked`` as in PyTorch, so torch state dicts load by name."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..autodiff import Context, is_grad_enabled, no_grad
from ..creation import empty, tensor, zeros
from ..errors import ShapeError
from ..module import Module, Parameter
from ..tensor import Tensor
from ..tensor_functions import TensorFunction
from . import init
from .common import check_sizes, factory, tensor_args

__all__ = [
    "batch_norm", "layer_norm", "group_norm", "rms_norm", "normalize", "cosine_similarity",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "RMSNorm",
]


def _shape_tuple(normalized_shape: int | Sequence[int]) -> tuple[int, ...]:
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(int(s) for s in normalized_shape)


def _check_trailing(name: str, input: Tensor, shape: tuple[int, ...]) -> tuple[int, ...]:  # noqa: A002
    """The dims normalized over: the last len(shape) dims, which must equal ``shape``."""
    if not shape or input.shape[input.dims - len(shape):] != shape or input.dims < len(shape):
        raise ShapeError(f"{name}: normalized_shape {list(shape)} must be non-empty and match the trailing dims "
                         f"of the input, got input shape {input.shape}")
    return tuple(range(input.dims - len(shape), input.dims))


def _check_param(name: str, what: str, p: Tensor | None, shape: tuple[int, ...]) -> None:
    if p is not None and p.shape != shape:
        raise ShapeError(f"{name}: {what} must have shape {shape}, got {p.shape}")


class FusedLayerNorm(TensorFunction):
    """layer_norm over the last dim in one backend kernel each way (``Backend.layer_norm`` and its backward), saving
    the per-row mean and rstd. Under ``create_graph`` the backward is built from differentiable ops on the saved
    input: with xhat = (x - mean) rstd and h = g w, dx = rstd (h - mean(h) - xhat mean(h xhat)), dw = sum g xhat,
    db = sum g (sums over the rows)."""

    higher_order = True

    @staticmethod
    def forward(ctx: Context, x: Tensor, weight: Tensor | None, bias: Tensor | None, eps: float) -> Tensor:  # type: ignore[override]
        be = x.backend
        out, keep = be.empty(x.shape, x.dtype), x.shape[:-1] + (1,)
        mean, rstd = be.empty(keep, x.dtype), be.empty(keep, x.dtype)
        be.layer_norm(x._data, None if weight is None else weight._data, None if bias is None else bias._data, eps,
                      out, mean, rstd)
        ctx.save_for_backward(x, weight, mean, rstd, eps)
        return Tensor(out, be)

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:  # type: ignore[override]
        x, weight, mean, rstd, eps = ctx.saved_values
        need_x, need_w, need_b = ctx.needs_input_grad[:3]
        n = x.shape[-1]
        if is_grad_enabled():
            centered = x - x.mean(-1, keepdim=True)
            r = ((centered * centered).mean(-1, keepdim=True) + eps).rsqrt()
            xhat = centered * r
            h = grad * weight if weight is not None else grad
            gx = (h - h.mean(-1, keepdim=True) - xhat * (h * xhat).mean(-1, keepdim=True)) * r
            gw = (grad * xhat).reshape(-1, n).sum(0) if need_w else None
            return gx if need_x else None, gw, grad.reshape(-1, n).sum(0) if need_b else None
        be = x.backend
        gx_d = be.empty(x.shape, x.dtype) if need_x else None
        gw_d = be.empty((n,), weight.dtype) if need_w else None
        gb_d = be.empty((n,), x.dtype) if need_b else None
        be.layer_norm_backward(grad._data, x._data, mean, rstd, None if weight is None else weight._data, gx_d, gw_d, gb_d)
        return tuple(None if d is None else Tensor(d, be) for d in (gx_d, gw_d, gb_d))  # type: ignore[return-value]


def _fusable(x: Tensor, *params: Tensor | None) -> bool:
    """Float x with >= 1 dim, and parameters of its backend and dtype: the fused kernels' domain."""
    return x.dims > 0 and x.dtype.kind == "f" and all(
        p is None or (p.backend is x.backend and p.dtype == x.dtype) for p in params)


@tensor_args("input")
def layer_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """(x - mean) / sqrt(var + eps) * weight + bias, mean and biased var over the trailing ``normalized_shape``.
    Float input runs one fused kernel each way (:class:`FusedLayerNorm`, the trailing dims viewed as one)."""
    shape = _shape_tuple(normalized_shape)
    dims = _check_trailing("layer_norm", input, shape)
    _check_param("layer_norm", "weight", weight, shape)
    _check_param("layer_norm", "bias", bias, shape)
    if _fusable(input, weight, bias):
        if len(shape) == 1:
            return FusedLayerNorm.apply(input, weight, bias, float(eps))
        n = int(np.prod(shape))
        flat = [None if p is None else p.reshape(n) for p in (weight, bias)]
        out = FusedLayerNorm.apply(input.reshape(*input.shape[: input.dims - len(shape)], n), *flat, float(eps))
        return out.reshape(*input.shape)
    mean = input.mean(dims, keepdim=True)
    centered = input - mean
    out = centered * ((centered * centered).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is not None:
        out = out * weight
    return out + bias if bias is not None else out


@tensor_args("input")
def rms_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,  # noqa: A002
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x^2) + eps) * weight over the trailing ``normalized_shape``; eps None is the dtype's
    machine epsilon (torch.finfo(dtype).eps)."""
    shape = _shape_tuple(normalized_shape)
    dims = _check_trailing("rms_norm", input, shape)
    _check_param("rms_norm", "weight", weight, shape)
    e = float(np.finfo(input.dtype).eps) if eps is None else eps
    out = input * ((input * input).mean(dims, keepdim=True) + e).rsqrt()
    return out * weight if weight is not None else out


def _channel_view(p: Tensor, dims: int) -> Tensor:
    """A per-channel (C,) tensor viewed as (1, C, 1, ...) to broadcast over an input with ``dims`` dims."""
    return p.view(*(p.shape[0] if d == 1 else 1 for d in range(dims)))


def channel_affine(x: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    """x * weight + bias per channel (dim 1) of x, each factor skipped when None."""
    out = x * _channel_view(weight, x.dims) if weight is not None else x
    return out + _channel_view(bias, x.dims) if bias is not None else out


@tensor_args("input")
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,  # noqa: A002
               eps: float = 1e-5) -> Tensor:
    """Split the C channels of an (N, C, *) input into ``num_groups`` groups and layer-normalize each group of each
    sample, then scale and shift per channel."""
    if input.dims < 2:
        raise ShapeError(f"group_norm needs an (N, C, *) input, got shape {input.shape}")
    n, c = input.shape[0], input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise ShapeError(f"group_norm: {c} channels cannot be split into {num_groups} groups (input shape {input.shape})")
    for what, p in (("weight", weight), ("bias", bias)):
        _check_param("group_norm", what, p, (c,))
    grouped = input.reshape(n, num_groups, -1)
    mean = grouped.mean(2, keepdim=True)
    centered = grouped - mean
    out = (centered * ((centered * centered).mean(2, keepdim=True) + eps).rsqrt()).view(*input.shape)
    return channel_affine(out, weight, bias)


@tensor_args("input")
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,  # noqa: A002
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each channel (dim 1) of an (N, C, *) input over every other dim. ``training``: batch mean and
    biased variance, and the running stats (when given) are updated in place as
    ``running = (1 - momentum) * running + momentum * stat`` with the unbiased variance; otherwise the running
    stats are used."""
    if input.dims < 2:
        raise ShapeError(f"batch_norm needs an (N, C, *) input, got shape {input.shape}")
    c = input.shape[1]
    for what, p in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        _check_param("batch_norm", what, p, (c,))
    dims = tuple(d for d in range(input.dims) if d != 1)
    if training:
        count = input.numel() // c if c else 0
        if count < 2:
            raise ValueError(f"batch_norm: expected more than 1 value per channel when training, got input shape {input.shape}")
        mean = input.mean(dims, keepdim=True)
        centered = input - mean
        var = (centered * centered).mean(dims, keepdim=True)
        with no_grad():
            if running_mean is not None:
                running_mean.mul_(1.0 - momentum).add_(mean.detach().view(c) * momentum)
            if running_var is not None:
                running_var.mul_(1.0 - momentum).add_(var.detach().view(c) * (momentum * count / (count - 1)))
    else:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: running_mean and running_var must be given when training=False")
        centered = input - _channel_view(running_mean, input.dims)
        var = _channel_view(running_var, input.dims)
    return channel_affine(centered * (var + eps).rsqrt(), weight, bias)


@tensor_args("input")
def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,  # noqa: A002
              out: Tensor | None = None) -> Tensor:
    """x / max(||x||_p, eps) along ``dim`` (``out``, if given, receives the result)."""
    result = input / input.norm(p, dim, keepdim=True).clamp_min(eps)
    return out.copy_(result) if out is not None else result


@tensor_args("x1", "x2")
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum((x1 / max(||x1||, eps)) * (x2 / max(||x2||, eps))) along ``dim`` after broadcasting (PyTorch's current
    formula: each input is divided by its clamped norm first; the clamp passes the gradient as identity)."""
    a, b = (x1, x2) if x1.shape == x2.shape else (x1.expand(*_broadcast(x1, x2)), x2.expand(*_broadcast(x1, x2)))

    def unit(x: Tensor) -> Tensor:
        n = x.norm(2, dim, keepdim=True)
        return x / n.where(n >= eps, (n - n.detach()) + eps)

    return (unit(a) * unit(b)).sum(dim)


def _broadcast(x1: Tensor, x2: Tensor) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(x1.shape, x2.shape))
    except ValueError:
        raise ShapeError(f"cosine_similarity: shapes {x1.shape} and {x2.shape} do not broadcast") from None


# --- Modules ---


class _NormBase(Module):
    """Holds ``weight`` (ones) and ``bias`` (zeros) of ``shape`` when ``affine``; None otherwise."""

    def _affine(self, shape: tuple[int, ...], affine: bool, bias: bool, kw: dict[str, Any]) -> None:
        self.weight = Parameter(empty(*shape, **kw)) if affine else None
        self.bias = Parameter(empty(*shape, **kw)) if affine and bias else None

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)


class _RunningStatsNorm(_NormBase):
    """What batch and instance norm share: ``num_features`` channels, their affine parameters and, when
    ``track_running_stats``, the ``running_mean``/``running_var``/``num_batches_tracked`` buffers (else None)."""

    def _build(self, num_features: int, eps: float, momentum: float | None, affine: bool, track_running_stats: bool,
               kw: dict[str, Any], bias: bool) -> None:
        check_sizes(type(self).__name__, num_features=num_features)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self._affine((num_features,), affine, bias, kw)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, **kw))
            self.register_buffer("running_var", zeros(num_features, **kw))
            self.register_buffer("num_batches_tracked", tensor(0, dtype="int64", backend=kw["backend"]))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """running_mean = 0, running_var = 1, num_batches_tracked = 0."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1.0)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        super().reset_parameters()


class _BatchNorm(_RunningStatsNorm):
    """Batch norm over every dim but the channel dim (dim 1). Training normalizes with the batch statistics and, when
    ``track_running_stats``, updates the running ones (``momentum=None``: cumulative average over
    ``num_batches_tracked`` batches); eval uses the running statistics (the batch ones if not tracked)."""

    dims_allowed: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *, bias: bool = True,
                 backend: Any = None):
        super().__init__()
        self._build(num_features, eps, momentum, affine, track_running_stats, factory(device, dtype, backend), bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.dims not in self.dims_allowed:
            raise ShapeError(f"{type(self).__name__}: expected {' or '.join(f'{d}D' for d in self.dims_allowed)} "
                             f"input, got shape {input.shape}")
        if input.shape[1] != self.num_features:
            raise ShapeError(f"{type(self).__name__}({self.num_features}): the input has {input.shape[1]} channels "
                             f"in dim 1 (shape {input.shape})")
        factor = self._momentum_step()
        use_batch = self.training or self.running_mean is None
        track = not self.training or self.track_running_stats
        return batch_norm(input, self.running_mean if track else None, self.running_var if track else None,
                          self.weight, self.bias, use_batch, factor, self.eps)

    def _momentum_step(self) -> float:
        """The running statistics' update factor for this call: ``momentum``, or 1 / batches seen when it is None; a
        training call with tracked statistics counts one more batch first."""
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / int(self.num_batches_tracked.item())
        return factor

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) inputs."""

    dims_allowed = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) inputs."""

    dims_allowed = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W) inputs."""

    dims_allowed = (5,)


class LayerNorm(_NormBase):
    """Layer norm over the trailing ``normalized_shape`` with per-element ``weight``/``bias`` (see :func:`layer_norm`)."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: Any = None, dtype: Any = None, *, backend: Any = None):
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        check_sizes("LayerNorm", **{f"normalized_shape[{i}]": s for i, s in enumerate(self.normalized_shape)})
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self._affine(self.normalized_shape, elementwise_affine, bias, factory(device, dtype, backend))
        self.reset_parameters()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(_NormBase):
    """Group norm of (N, C, *) inputs with per-channel ``weight``/``bias`` (see :func:`group_norm`)."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True, backend: Any = None):
        super().__init__()
        check_sizes("GroupNorm", num_groups=num_groups, num_channels=num_channels)
        if num_groups == 0 or num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self._affine((num_channels,), affine, bias, factory(device, dtype, backend))
        self.reset_parameters()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.dims < 2 or input.shape[1] != self.num_channels:
            raise ShapeError(f"GroupNorm({self.num_groups}, {self.num_channels}): expected an (N, {self.num_channels}, *) "
                             f"input, got shape {input.shape}")
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, bias={self.bias is not None}"


class RMSNorm(_NormBase):
    """RMS norm over the trailing ``normalized_shape`` with a per-element ``weight`` (see :func:`rms_norm`)."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float | None = None, elementwise_affine: bool = True,
                 device: Any = None, dtype: Any = None, *, backend: Any = None):
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        check_sizes("RMSNorm", **{f"normalized_shape[{i}]": s for i, s in enumerate(self.normalized_shape)})
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self._affine(self.normalized_shape, elementwise_affine, False, factory(device, dtype, backend))
        self.reset_parameters()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
