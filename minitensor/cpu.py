"""``minitensor.cpu`` (``torch.cpu``): the CPU device's module. It holds ``amp`` (the deprecated
``torch.cpu.amp.autocast``/``GradScaler``, :mod:`minitensor.amp.cpu_amp`), importable as ``minitensor.cpu.amp``, and
PyTorch's trivial queries: the CPU is always available and is one device."""

from __future__ import annotations

import sys

from .amp import cpu_amp as amp

sys.modules[f"{__name__}.amp"] = amp  # `from minitensor.cpu.amp import autocast` works as with torch.cpu.amp

__all__ = ["amp", "current_device", "device_count", "is_available", "synchronize"]


def is_available() -> bool:
    """Always True (``torch.cpu.is_available``)."""
    return True


def device_count() -> int:
    """One CPU device (``torch.cpu.device_count``)."""
    return 1


def current_device() -> str:
    """``"cpu"`` (``torch.cpu.current_device``)."""
    return "cpu"


def synchronize(device: object = None) -> None:
    """Nothing to wait for: CPU ops finish before they return (``torch.cpu.synchronize``)."""
