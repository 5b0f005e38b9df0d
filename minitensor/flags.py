"""PyTorch's global switches and queries: deterministic algorithms, anomaly detection, the float32 matmul precision,
flushing denormals and the inter-op thread count.

* Deterministic algorithms: every minitensor op gives the same bits on every run with the same inputs, thread count
  and backend, except the cuda backend's ``scatter_add`` (behind ``index_add``, ``scatter_add``, ``index_put``
  with ``accumulate``, gathers' and embeddings' gradients) into float32/float64, which adds with atomics in whatever
  order the threads run. With ``use_deterministic_algorithms(True)`` that kernel takes its race-free path (one thread
  adds a row's values in order; :func:`deterministic_algorithms_enabled` is read by ``backends/cuda.py``), as PyTorch
  switches to deterministic kernels where it has them, so nothing needs to warn or raise.
* Anomaly detection (``set_anomaly_enabled``, ``autograd.detect_anomaly``/``set_detect_anomaly``): backward checks
  each gradient a node returns and raises GradientError "Function 'XBackward0' returned nan values in its 0th
  output." (PyTorch's message) at the first NaN (:func:`check_gradients`, called by ``backward.py``). The traceback of
  the forward call is not recorded.
* ``set_float32_matmul_precision``: recorded; minitensor's float32 matmuls always run in full float32 (no TF32 or
  bfloat16 passes), which is what "highest" means. ``set_flush_denormal(True)`` returns False (not supported: the
  kernels keep denormals); ``set_num_interop_threads`` is recorded (minitensor has no inter-op pool).
"""

from __future__ import annotations

import functools
import math
import os
import warnings
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import numpy as np

from .errors import GradientError

_F = TypeVar("_F", bound=Callable[..., Any])


class _Flags:
    """The process-wide switches (PyTorch's are global too)."""

    deterministic = False
    warn_only = False
    anomaly = False
    anomaly_check_nan = True
    matmul_precision = "highest"
    interop_threads = max(1, os.cpu_count() or 1)


_flags = _Flags()
_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}
_PRECISIONS = ("highest", "high", "medium")


def _need_bool(value: Any, fn: str, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument '{name}' must be bool, not {type(value).__name__}")
    return bool(value)


# --- deterministic algorithms ---


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Make every op deterministic (the cuda ``scatter_add`` takes its race-free path); ``warn_only`` is recorded
    (no minitensor op lacks a deterministic form, so nothing warns)."""
    _flags.deterministic = _need_bool(mode, "use_deterministic_algorithms", "mode")
    _flags.warn_only = _need_bool(warn_only, "use_deterministic_algorithms", "warn_only")


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in effect."""
    return _flags.deterministic


deterministic_algorithms_enabled = are_deterministic_algorithms_enabled


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether ``use_deterministic_algorithms`` was given ``warn_only=True``."""
    return _flags.warn_only


def set_deterministic_debug_mode(debug_mode: int | str) -> None:
    """0/"default": off, 1/"warn": on with ``warn_only``, 2/"error": on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise ValueError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got {debug_mode}")
        level = _DEBUG_MODES[debug_mode]
    elif isinstance(debug_mode, int) and not isinstance(debug_mode, bool):
        if debug_mode not in (0, 1, 2):
            raise ValueError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
        level = debug_mode
    else:
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    use_deterministic_algorithms(level > 0, warn_only=level == 1)


def get_deterministic_debug_mode() -> int:
    """0 off, 1 on with ``warn_only``, 2 on."""
    if not _flags.deterministic:
        return 0
    return 1 if _flags.warn_only else 2


# --- anomaly detection ---


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off; with ``check_nan`` a NaN gradient from a backward node raises."""
    _flags.anomaly = _need_bool(enabled, "set_anomaly_enabled", "enabled")
    _flags.anomaly_check_nan = _need_bool(check_nan, "set_anomaly_enabled", "check_nan")


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return _flags.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks gradients for NaN (its ``check_nan``)."""
    return _flags.anomaly_check_nan


def nan_check_enabled() -> bool:
    """Whether backward must check each node's gradients (anomaly detection on, with ``check_nan``)."""
    return _flags.anomaly and _flags.anomaly_check_nan


def _has_nan(grad: Any) -> bool:
    values = grad.to_numpy() if hasattr(grad, "to_numpy") else grad
    if isinstance(values, float):
        return math.isnan(values)
    values = np.asarray(values)
    return values.dtype.kind == "f" and bool(np.isnan(values).any())


def check_gradients(fn_name: str, inputs: tuple[Any, ...], grads: Iterable[tuple[Any, Any]]) -> None:
    """GradientError naming the node and the input position when a gradient it returned holds a NaN."""
    for parent, grad in grads:
        if _has_nan(grad):
            position = next((i for i, x in enumerate(inputs) if x is parent), 0)
            raise GradientError(f"Function '{fn_name}Backward0' returned nan values in its {position}th output.")


class set_detect_anomaly:  # noqa: N801 - PyTorch's name
    """Set anomaly detection now (``mode``, ``check_nan``); as a context manager, restore the previous state on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._previous = (_flags.anomaly, _flags.anomaly_check_nan)
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _flags.anomaly, _flags.anomaly_check_nan = self._previous


class detect_anomaly:  # noqa: N801
    """Anomaly detection on for a block or a decorated function (``torch.autograd.detect_anomaly``), with PyTorch's
    warning that it slows backward down."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = _need_bool(check_nan, "detect_anomaly", "check_nan")
        self._previous: list[tuple[bool, bool]] = []
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        self._previous.append((_flags.anomaly, _flags.anomaly_check_nan))
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc: object) -> None:
        _flags.anomaly, _flags.anomaly_check_nan = self._previous.pop()

    def __call__(self, func: _F) -> _F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


# --- precision, denormals, threads ---


def get_float32_matmul_precision() -> str:
    """The precision last set: "highest" (the default), "high" or "medium" (float32 matmuls run in full float32
    whatever it is)."""
    return _flags.matmul_precision


def set_float32_matmul_precision(precision: str) -> None:
    """Record "highest", "high" or "medium"; any other value warns and changes nothing, as PyTorch's."""
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", UserWarning, stacklevel=2)
        return
    _flags.matmul_precision = precision


def set_flush_denormal(mode: bool) -> bool:
    """Whether the request took effect: True for ``False`` (denormals are kept), False for ``True`` (minitensor's
    kernels cannot flush denormals to zero)."""
    return not _need_bool(mode, "set_flush_denormal", "mode")


def get_num_interop_threads() -> int:
    """The inter-op thread count last set (default: the CPU count; minitensor runs ops one after another)."""
    return _flags.interop_threads


def set_num_interop_threads(num: int) -> None:
    """Record the inter-op thread count, a positive int."""
    if isinstance(num, bool) or not isinstance(num, int) or num <= 0:
        raise ValueError(f"set_num_interop_threads expects a positive integer, got {num!r}")
    _flags.interop_threads = num


__all__ = [
    "are_deterministic_algorithms_enabled", "get_deterministic_debug_mode", "get_float32_matmul_precision",
    "get_num_interop_threads", "is_anomaly_check_nan_enabled", "is_anomaly_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "set_anomaly_enabled", "set_deterministic_debug_mode",
    "set_float32_matmul_precision", "set_flush_denormal", "set_num_interop_threads", "use_deterministic_algorithms",
]  # fmt: skip
