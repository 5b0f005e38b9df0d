"""``minitensor.cuda.amp`` (``torch.cuda.amp``): the deprecated cuda forms of autocast, GradScaler and the
custom-Function decorators. Each warns (FutureWarning, PyTorch's) and forwards to :mod:`minitensor.amp` with
``device_type="cuda"``."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from ..dtypes import float32
from . import autocast_mode, grad_scaler
from .autocast_state import cuda_available

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler"]


def _deprecated(old: str, new: str) -> None:
    """PyTorch's FutureWarning for a ``torch.cuda.amp`` name, pointing at the caller's caller."""
    warnings.warn(f"`minitensor.cuda.amp.{old}(args...)` is deprecated. Please use `minitensor.amp.{new}` instead.",
                  FutureWarning, stacklevel=3)


def amp_definitely_not_available() -> bool:
    """True when the cuda backend cannot run here (no numba-cuda or GPU, and no simulator)."""
    return not cuda_available()


class autocast(autocast_mode.autocast):  # noqa: N801 - PyTorch's name
    """``minitensor.amp.autocast("cuda", ...)`` (deprecated: warns). ``dtype`` defaults to float32 (PyTorch's to
    float16, which minitensor lacks)."""

    def __init__(self, enabled: bool = True, dtype: Any = float32, cache_enabled: bool = True):
        _deprecated("autocast", "autocast('cuda', args...)")
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


def custom_fwd(fwd: Callable[..., Any] | None = None, *, cast_inputs: Any = None) -> Any:
    """``minitensor.amp.custom_fwd(..., device_type="cuda")`` (deprecated: warns)."""
    _deprecated("custom_fwd", "custom_fwd(args..., device_type='cuda')")
    return autocast_mode.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd: Callable[..., Any]) -> Any:
    """``minitensor.amp.custom_bwd(..., device_type="cuda")`` (deprecated: warns)."""
    _deprecated("custom_bwd", "custom_bwd(args..., device_type='cuda')")
    return autocast_mode.custom_bwd(bwd, device_type="cuda")


class GradScaler(grad_scaler.GradScaler):
    """``minitensor.amp.GradScaler("cuda", ...)`` (deprecated: warns)."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        _deprecated("GradScaler", "GradScaler('cuda', args...)")
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)
