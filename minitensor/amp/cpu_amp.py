"""``minitensor.cpu.amp`` (``torch.cpu.amp``): the deprecated cpu forms of autocast and GradScaler. Each warns
(FutureWarning, PyTorch's) and forwards to :mod:`minitensor.amp` with ``device_type="cpu"``."""

from __future__ import annotations

import warnings
from typing import Any

from ..dtypes import float32
from . import autocast_mode, grad_scaler

__all__ = ["autocast", "GradScaler"]


def _deprecated(old: str, new: str) -> None:
    """PyTorch's FutureWarning for a ``torch.cpu.amp`` name, pointing at the caller's caller."""
    warnings.warn(f"`minitensor.cpu.amp.{old}(args...)` is deprecated. Please use `minitensor.amp.{new}` instead.",
                  FutureWarning, stacklevel=3)


class autocast(autocast_mode.autocast):  # noqa: N801 - PyTorch's name
    """``minitensor.amp.autocast("cpu", ...)`` (deprecated: warns). ``dtype`` defaults to float32 (PyTorch's to
    bfloat16, which minitensor lacks)."""

    def __init__(self, enabled: bool = True, dtype: Any = float32, cache_enabled: bool = True):
        _deprecated("autocast", "autocast('cpu', args...)")
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(grad_scaler.GradScaler):
    """``minitensor.amp.GradScaler("cpu", ...)`` (deprecated: warns)."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        _deprecated("GradScaler", "GradScaler('cpu', args...)")
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)
