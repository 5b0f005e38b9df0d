"""Weight initializers drawing from :func:`minitensor.generator` (seed it with ``manual_seed``).

Each initializer returns a new tensor of ``shape`` on ``backend`` with ``dtype``. The ``name_``
variants (``xavier_uniform_(param)``) take a :class:`~minitensor.Parameter` (or a Module attribute
holding one) and replace its value with a fresh draw of the same shape, backend and dtype.
Fans follow PyTorch: for a weight of shape (out, in, *kernel), fan_in = in * prod(kernel) and
fan_out = out * prod(kernel).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..backends import get_backend
from ..creation import generator
from ..dtypes import as_dtype
from ..errors import ShapeError
from ..module import Parameter
from ..tensor import Tensor


def _make(array: np.ndarray, backend: Any, dtype: Any) -> Tensor:
    chosen = get_backend(backend)
    return Tensor(chosen.from_numpy(np.asarray(array, dtype=as_dtype(dtype))), chosen)


def _shape(shape: Sequence[int] | int) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)


def calculate_fans(shape: Sequence[int]) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of ``shape`` (at least 2 dims)."""
    shape = _shape(shape)
    if len(shape) < 2:
        raise ShapeError(f"fan in and fan out need a weight with at least 2 dims, got shape {shape}")
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """PyTorch's recommended gain for ``nonlinearity`` (linear, conv*, sigmoid, tanh, relu, leaky_relu, selu)."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "sigmoid", "identity"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3.0
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1.0 + slope * slope))
    if nonlinearity == "selu":
        return 3.0 / 4.0
    raise ValueError(f"unsupported nonlinearity {nonlinearity!r}")


def zeros(shape: Sequence[int] | int, backend: Any = None, dtype: Any = None) -> Tensor:
    return _make(np.zeros(_shape(shape)), backend, dtype)


def ones(shape: Sequence[int] | int, backend: Any = None, dtype: Any = None) -> Tensor:
    return _make(np.ones(_shape(shape)), backend, dtype)


def constant(shape: Sequence[int] | int, value: float, backend: Any = None, dtype: Any = None) -> Tensor:
    return _make(np.full(_shape(shape), float(value)), backend, dtype)


def uniform(shape: Sequence[int] | int, a: float = 0.0, b: float = 1.0, backend: Any = None, dtype: Any = None) -> Tensor:
    """Samples from U(a, b)."""
    return _make(generator().uniform(a, b, _shape(shape)), backend, dtype)


def normal(shape: Sequence[int] | int, mean: float = 0.0, std: float = 1.0, backend: Any = None, dtype: Any = None) -> Tensor:
    """Samples from N(mean, std^2)."""
    return _make(generator().normal(mean, std, _shape(shape)), backend, dtype)


def xavier_uniform(shape: Sequence[int], gain: float = 1.0, backend: Any = None, dtype: Any = None) -> Tensor:
    """U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)) (Glorot)."""
    fan_in, fan_out = calculate_fans(shape)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform(shape, -bound, bound, backend, dtype)


def xavier_normal(shape: Sequence[int], gain: float = 1.0, backend: Any = None, dtype: Any = None) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = calculate_fans(shape)
    return normal(shape, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), backend, dtype)


def _kaiming_std(shape: Sequence[int], a: float, mode: str, nonlinearity: str) -> float:
    fan_in, fan_out = calculate_fans(shape)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan = fan_in if mode == "fan_in" else fan_out
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform(
    shape: Sequence[int], a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
    backend: Any = None, dtype: Any = None,
) -> Tensor:
    """U(-b, b) with b = gain * sqrt(3 / fan) (He); ``a`` is the leaky-ReLU slope used in the gain."""
    bound = math.sqrt(3.0) * _kaiming_std(shape, a, mode, nonlinearity)
    return uniform(shape, -bound, bound, backend, dtype)


def kaiming_normal(
    shape: Sequence[int], a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
    backend: Any = None, dtype: Any = None,
) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan) (He)."""
    return normal(shape, 0.0, _kaiming_std(shape, a, mode, nonlinearity), backend, dtype)


def _in_place(fn: Callable[..., Tensor]) -> Callable[..., Parameter]:
    def apply(param: Parameter, *args: Any, **kwargs: Any) -> Parameter:
        old = param.value
        param.update(fn(old.shape, *args, backend=old.backend, dtype=old.dtype, **kwargs))
        return param

    apply.__name__ = fn.__name__ + "_"
    apply.__doc__ = f"Replace ``param``'s value with :func:`{fn.__name__}` of the same shape, backend and dtype."
    return apply


zeros_ = _in_place(zeros)
ones_ = _in_place(ones)
constant_ = _in_place(constant)
uniform_ = _in_place(uniform)
normal_ = _in_place(normal)
xavier_uniform_ = _in_place(xavier_uniform)
xavier_normal_ = _in_place(xavier_normal)
kaiming_uniform_ = _in_place(kaiming_uniform)
kaiming_normal_ = _in_place(kaiming_normal)
