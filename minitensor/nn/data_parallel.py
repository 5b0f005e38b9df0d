"""``nn.DataParallel`` on one device: PyTorch's single-process wrapper, which splits a batch over several GPUs of one
machine, has one device to use here (a minitensor backend computes on one), so it runs the wrapped module on the
whole batch, as PyTorch does when no GPU is present. For several processes use
:class:`minitensor.nn.parallel.DistributedDataParallel`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Wraps ``module`` (the child named ``module``, so ``state_dict`` keys start with ``"module."`` as in PyTorch);
    ``forward`` is ``module(*inputs, **kwargs)``. ``device_ids`` is accepted and ignored (``self.device_ids`` is ``[]``,
    no replicas, as PyTorch's without a GPU); ``output_device`` and ``dim`` are kept."""

    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel needs an nn.Module, got {type(module).__name__}")
        self.module = module
        self.device_ids: list[Any] = []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
