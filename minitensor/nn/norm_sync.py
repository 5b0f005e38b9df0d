"""``nn.SyncBatchNorm``: batch norm whose training statistics are taken over the batches of every MPI rank
(:mod:`minitensor.distributed`), with ``convert_sync_batchnorm`` to swap it in for a model's BatchNorm layers.

In an MPI job of two or more ranks a training-mode forward all-reduces (sums) the per-channel element counts and
sums, then the sums of squared deviations from the global mean: every rank normalizes with the mean and biased
variance of the global batch and updates its running statistics with them (unbiased variance, as BatchNorm). The
backward all-reduces the gradients of those sums, so each rank's input gradient accounts for every rank's loss
through the shared statistics (what PyTorch's SyncBatchNorm computes); ``weight``/``bias`` gradients stay per rank
(DistributedDataParallel averages them). Without a job (one process) it is BatchNorm, number for number.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import distributed as dist
from ..autodiff import Context, no_grad
from ..errors import ShapeError
from ..module import Module
from ..tensor import Tensor
from ..tensor_functions import TensorFunction
from .norm import _BatchNorm, batch_norm, channel_affine

__all__ = ["SyncBatchNorm"]


class AllReduceSum(TensorFunction):
    """y = the sum over ranks of x (every rank gets it); the gradient of x is the sum over ranks of y's gradient
    (each rank's loss depends on every rank's x through y)."""

    @staticmethod
    def forward(ctx: Context, x: Tensor) -> Tensor:  # type: ignore[override]
        return dist.all_reduce(x.detach().clone(), dist.ReduceOp.SUM)  # type: ignore[no-any-return]

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> Tensor:  # type: ignore[override]
        return dist.all_reduce(grad.detach().clone(), dist.ReduceOp.SUM)  # type: ignore[no-any-return]


def sync_batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,  # noqa: A002
                    weight: Tensor | None, bias: Tensor | None, momentum: float, eps: float) -> Tensor:
    """Training-mode batch norm of an (N, C, *) input over the batches of every rank: mean and biased variance per
    channel of the global batch (two all-reduces: sums, then squared deviations), running statistics updated in
    place with them (``running = (1 - momentum) running + momentum stat``, unbiased variance)."""
    c = input.shape[1]
    dims = tuple(d for d in range(input.dims) if d != 1)
    count = dist.all_reduce(np.array([input.numel() // c if c else 0], dtype=np.int64))
    total = int(count[0])
    if total < 2:
        raise ValueError(f"SyncBatchNorm: expected more than 1 value per channel over all ranks when training, got "
                         f"{total} (this rank's input shape {input.shape})")
    view = (1, c) + (1,) * (input.dims - 2)
    mean = AllReduceSum.apply(input.sum(dims)) / total
    centered = input - mean.view(*view)
    var = AllReduceSum.apply((centered * centered).sum(dims)) / total
    with no_grad():
        if running_mean is not None:
            running_mean.mul_(1.0 - momentum).add_(mean.detach() * momentum)
        if running_var is not None:
            running_var.mul_(1.0 - momentum).add_(var.detach() * (momentum * total / (total - 1)))
    return channel_affine(centered * (var + eps).rsqrt().view(*view), weight, bias)


class SyncBatchNorm(_BatchNorm):
    """Batch norm over (N, C, *) inputs (any number of dims from 2) whose training statistics span every rank of
    the MPI job (see the module docstring); BatchNorm in one process and in eval mode. ``process_group`` is accepted
    for PyTorch compatibility and kept: the MPI world is the only group."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group: Any = None, device: Any = None, dtype: Any = None,
                 *, bias: bool = True, backend: Any = None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias,
                         backend=backend)
        self.process_group = process_group

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.dims < 2:
            raise ValueError(f"expected at least 2D input (got {input.dims}D input)")
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        if input.shape[1] != self.num_features:
            raise ShapeError(f"SyncBatchNorm({self.num_features}): the input has {input.shape[1]} channels in dim 1 "
                             f"(shape {input.shape})")
        factor = self._momentum_step()
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        running_mean = self.running_mean if track else None
        running_var = self.running_var if track else None
        if self.training and dist.world_size() > 1:
            return sync_batch_norm(input, running_mean, running_var, self.weight, self.bias, factor, self.eps)
        return batch_norm(input, running_mean, running_var, self.weight, self.bias, use_batch, factor, self.eps)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every BatchNorm layer (any ``_BatchNorm``, at any depth) replaced by a SyncBatchNorm that
        shares its parameters, buffers and training flag; a BatchNorm ``module`` itself gives a new SyncBatchNorm."""
        converted = module
        if isinstance(module, _BatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                converted.weight, converted.bias = module.weight, module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
            if hasattr(module, "qconfig"):
                converted.qconfig = module.qconfig
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted
