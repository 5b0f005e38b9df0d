"""The autocast switches PyTorch keeps per thread and device type, and its top-level functions that read and set them
(``torch.is_autocast_enabled``, ``get_autocast_dtype``, ``set_autocast_enabled``, ... and the deprecated
``*_cpu_*``/``*_gpu_*`` forms).

minitensor has no float16 or bfloat16, so the autocast dtype of every device type defaults to float32 (PyTorch's
defaults are float16 on cuda and bfloat16 on cpu) and is the only one an :class:`~minitensor.amp.autocast` region
accepts. The switches are recorded and reported; ops never read them (they run in their inputs' dtypes).
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

import numpy as np

from ..backends import get_backend
from ..backends.device_spec import BACKEND_TYPES
from ..dtypes import float32
from ..errors import BackendUnavailableError

__all__ = [
    "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
    "is_autocast_cpu_enabled", "set_autocast_cpu_enabled", "get_autocast_cpu_dtype", "set_autocast_cpu_dtype",
    "get_autocast_gpu_dtype", "set_autocast_gpu_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
    "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting",
]

TORCH_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                      "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
"""The device types PyTorch's device strings may start with (its error message lists them in this order)."""
AUTOCAST_DEVICE_TYPES = ("cpu", "cuda")
"""The device types minitensor has, so the ones an autocast region may name."""
AUTOCAST_DTYPES = (float32,)
"""The dtypes an autocast region accepts: float32, the lowest float precision minitensor computes in."""


class _Switches(threading.local):
    """One thread's autocast state: enabled flag and dtype per device type, the cache flag and the nesting depth."""

    def __init__(self) -> None:
        self.enabled: dict[str, bool] = {}
        self.dtype: dict[str, np.dtype] = {}
        self.cache_enabled = True
        self.nesting = 0


_switches = _Switches()


def device_kind(device_type: Any, caller: str) -> str:
    """The device type ``device_type`` names ("cuda:0" -> "cuda"; a backend name -> its type, "fast" -> "cpu").

    TypeError for a non-string (as PyTorch's argument parser), RuntimeError for an unknown type (PyTorch's message).
    """
    if not isinstance(device_type, str):
        raise TypeError(f"{caller}(): argument 'device_type' (position 1) must be str, not {type(device_type).__name__}")
    prefix = device_type.split(":", 1)[0]
    if prefix in BACKEND_TYPES:
        return BACKEND_TYPES[prefix]
    if prefix in TORCH_DEVICE_TYPES:
        return prefix
    raise RuntimeError(f"Expected one of {', '.join(TORCH_DEVICE_TYPES)} device type (or a minitensor backend name: "
                       f"{', '.join(BACKEND_TYPES)}) at start of device string: {device_type}")


def cuda_available() -> bool:
    """Whether the cuda backend can run here (numba-cuda and a GPU, or ``NUMBA_ENABLE_CUDASIM=1``)."""
    try:
        get_backend("cuda")
    except BackendUnavailableError:
        return False
    return True


def _check_bool(value: Any, caller: str, name: str, position: int) -> bool:
    """``value`` if it is a bool, else PyTorch's TypeError."""
    if not isinstance(value, bool):
        raise TypeError(f"{caller}(): argument '{name}' (position {position}) must be bool, not {type(value).__name__}")
    return value


def _check_dtype(value: Any, caller: str, position: int) -> np.dtype:
    """``value`` if it is a minitensor dtype (``mt.float32``, ...), else PyTorch's TypeError."""
    if not isinstance(value, np.dtype):
        raise TypeError(f"{caller}(): argument 'dtype' (position {position}) must be minitensor.dtype, "
                        f"not {type(value).__name__}")
    return value


def is_autocast_available(device_type: str) -> bool:
    """Whether an autocast region may name ``device_type`` (``torch.amp.is_autocast_available``): "cpu" and "cuda"
    (and "cuda:0", "fast", ...); False for PyTorch's other device types, which minitensor lacks."""
    return device_kind(device_type, "_is_autocast_available") in AUTOCAST_DEVICE_TYPES


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether an autocast region is active for ``device_type`` in this thread (None: "cuda", PyTorch's legacy form)."""
    kind = "cuda" if device_type is None else device_kind(device_type, "is_autocast_enabled")
    return _switches.enabled.get(kind, False)


def set_autocast_enabled(device_type: str | bool, enabled: bool | None = None) -> None:
    """Turn autocast on or off for ``device_type`` in this thread: ``set_autocast_enabled("cpu", True)``, or
    ``set_autocast_enabled(True)`` for "cuda" (PyTorch's legacy form)."""
    if enabled is None:
        kind, enabled = "cuda", _check_bool(device_type, "set_autocast_enabled", "enabled", 1)
    else:
        kind = device_kind(device_type, "set_autocast_enabled")
        _check_bool(enabled, "set_autocast_enabled", "enabled", 2)
    _switches.enabled[kind] = enabled


def get_autocast_dtype(device_type: str) -> np.dtype:
    """The dtype an autocast region for ``device_type`` uses when given none: float32 unless set otherwise."""
    return _switches.dtype.get(device_kind(device_type, "get_autocast_dtype"), float32)


def set_autocast_dtype(device_type: str, dtype: np.dtype) -> None:
    """Set :func:`get_autocast_dtype`'s answer for ``device_type`` in this thread."""
    kind = device_kind(device_type, "set_autocast_dtype")
    _switches.dtype[kind] = _check_dtype(dtype, "set_autocast_dtype", 2)


def _deprecated(old: str, new: str) -> None:
    """PyTorch's DeprecationWarning for the ``*_cpu_*``/``*_gpu_*`` autocast functions."""
    warnings.warn(f"minitensor.{old} is deprecated. Please use minitensor.{new} instead.", DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled() -> bool:
    """``is_autocast_enabled("cpu")`` (deprecated: warns)."""
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """``set_autocast_enabled("cpu", enabled)`` (deprecated: warns)."""
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", _check_bool(enabled, "set_autocast_cpu_enabled", "enabled", 1))


def get_autocast_cpu_dtype() -> np.dtype:
    """``get_autocast_dtype("cpu")`` (deprecated: warns)."""
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype: np.dtype) -> None:
    """``set_autocast_dtype("cpu", dtype)`` (deprecated: warns)."""
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", _check_dtype(dtype, "set_autocast_cpu_dtype", 1))


def get_autocast_gpu_dtype() -> np.dtype:
    """``get_autocast_dtype("cuda")`` (deprecated: warns)."""
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype: np.dtype) -> None:
    """``set_autocast_dtype("cuda", dtype)`` (deprecated: warns)."""
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", _check_dtype(dtype, "set_autocast_gpu_dtype", 1))


def is_autocast_cache_enabled() -> bool:
    """Whether autocast regions entered now keep a cast-weight cache (recorded only: minitensor never casts)."""
    return _switches.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Set :func:`is_autocast_cache_enabled` for this thread."""
    _switches.cache_enabled = _check_bool(enabled, "set_autocast_cache_enabled", "enabled", 1)


def clear_autocast_cache() -> None:
    """Empty the cast-weight cache: a no-op, as minitensor's autocast casts nothing and so caches nothing."""


def autocast_increment_nesting() -> int:
    """One autocast region deeper in this thread; returns the new depth."""
    _switches.nesting += 1
    return _switches.nesting


def autocast_decrement_nesting() -> int:
    """One autocast region shallower in this thread; returns the new depth (PyTorch's counter may go negative)."""
    _switches.nesting -= 1
    return _switches.nesting
