"""Window functions for signal processing (``torch.hann_window`` ...) and ``scalar_tensor``.

Each window of ``window_length`` N is symmetric when ``periodic=False`` and, by default (``periodic=True``), the
first N values of the symmetric window of N + 1 (for spectral analysis). N = 0 gives an empty tensor and N = 1 the
tensor [1.]. Values are computed in float64 on the host, then cast to ``dtype`` (the default float dtype).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from . import dtypes
from .creation import BackendLike, tensor
from .errors import DTypeError
from .tensor import Tensor

__all__ = ["scalar_tensor", "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


def scalar_tensor(s: Any, *, dtype: Any = None, backend: BackendLike = None, device: BackendLike = None,
                  requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding the number ``s``, of ``dtype`` (the default float dtype, also for ints and bools)."""
    if isinstance(s, Tensor):
        if s.numel() != 1:
            raise TypeError(f"scalar_tensor(): argument 's' must be a number, got a tensor of shape {s.shape}")
        s = s.item()
    if not isinstance(s, (bool, int, float, np.number, np.bool_)):
        raise TypeError(f"scalar_tensor(): argument 's' must be a number, not {type(s).__name__}")
    return tensor(s, dtype=dtypes.as_dtype(dtype), backend=backend, device=device, requires_grad=requires_grad)


def _window(name: str, window_length: int, periodic: bool, dtype: Any, backend: BackendLike, device: BackendLike,
            requires_grad: bool, symmetric: Callable[[int], np.ndarray]) -> Tensor:
    """The window ``symmetric(M)`` (M > 1 points, float64) for PyTorch's window_length/periodic rules."""
    if isinstance(window_length, bool) or not isinstance(window_length, (int, np.integer)):
        raise TypeError(f"{name}(): argument 'window_length' must be int, not {type(window_length).__name__}")
    if window_length < 0:
        raise ValueError(f"{name} requires non-negative window_length, got window_length={window_length}")
    resolved = dtypes.as_dtype(dtype)
    if resolved.kind != "f":
        raise DTypeError(f"{name} expects a floating point dtype, got {resolved}")
    n = int(window_length)
    if n <= 1:
        values = np.ones(n)
    else:
        values = symmetric(n + 1)[:n] if periodic else symmetric(n)
    return tensor(values, dtype=resolved, backend=backend, device=device, requires_grad=requires_grad)


def _cosine_sum(*coefficients: float) -> Callable[[int], np.ndarray]:
    """sum_k (-1)^k a_k cos(2 pi k n / (M - 1)): the generalized cosine window of M points."""

    def window(m: int) -> np.ndarray:
        phase = 2.0 * math.pi * np.arange(m) / (m - 1)
        return sum(((-1) ** k) * a * np.cos(k * phase) for k, a in enumerate(coefficients))  # type: ignore[return-value]

    return window


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None, backend: BackendLike = None,
                device: BackendLike = None, requires_grad: bool = False) -> Tensor:
    """Hann window: 0.5 - 0.5 cos(2 pi n / (N - 1))."""
    return _window("hann_window", window_length, periodic, dtype, backend, device, requires_grad, _cosine_sum(0.5, 0.5))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype: Any = None, backend: BackendLike = None, device: BackendLike = None,
                   requires_grad: bool = False) -> Tensor:
    """Hamming window: alpha - beta cos(2 pi n / (N - 1))."""
    return _window("hamming_window", window_length, periodic, dtype, backend, device, requires_grad,
                   _cosine_sum(float(alpha), float(beta)))


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None, backend: BackendLike = None,
                    device: BackendLike = None, requires_grad: bool = False) -> Tensor:
    """Blackman window: 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, backend, device, requires_grad,
                   _cosine_sum(0.42, 0.5, 0.08))


def _bartlett(m: int) -> np.ndarray:
    return 1.0 - np.abs(2.0 * np.arange(m) / (m - 1) - 1.0)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None, backend: BackendLike = None,
                    device: BackendLike = None, requires_grad: bool = False) -> Tensor:
    """Bartlett (triangular) window: 1 - |2 n / (N - 1) - 1|."""
    return _window("bartlett_window", window_length, periodic, dtype, backend, device, requires_grad, _bartlett)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: Any = None,
                  backend: BackendLike = None, device: BackendLike = None, requires_grad: bool = False) -> Tensor:
    """Kaiser window: I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta), I0 the modified Bessel function."""
    return _window("kaiser_window", window_length, periodic, dtype, backend, device, requires_grad,
                   lambda m: np.kaiser(m, float(beta)))
