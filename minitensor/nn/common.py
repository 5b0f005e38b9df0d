"""What the nn modules share: parameter-creation keywords, size checks and tensor-argument checks."""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import Any, TypeVar

from ..backends import get_backend
from ..dtypes import as_dtype
from ..tensor import Tensor

_F = TypeVar("_F", bound=Callable[..., Any])


def tensor_args(*names: str) -> Callable[[_F], _F]:
    """Decorator: a TypeError naming the function and argument when a named argument is not a Tensor
    (as PyTorch's argument parser: ``max_pool2d(): argument 'input' must be Tensor, not NoneType``)."""

    def decorate(fn: _F) -> _F:
        params = list(inspect.signature(fn).parameters)
        where = [(name, params.index(name)) for name in names]

        @functools.wraps(fn)
        def checked(*args: Any, **kwargs: Any) -> Any:
            for name, position in where:
                value = args[position] if position < len(args) else kwargs.get(name)
                if not isinstance(value, Tensor):
                    raise TypeError(f"{fn.__name__}(): argument '{name}' must be Tensor, not {type(value).__name__}")
            return fn(*args, **kwargs)

        return checked  # type: ignore[return-value]

    return decorate


def factory(device: Any, dtype: Any, backend: Any) -> dict[str, Any]:
    """The ``backend``/``dtype`` keywords for a layer's parameters (``device`` is PyTorch's name for the backend)."""
    if device is not None and backend is not None and get_backend(device) is not get_backend(backend):
        raise ValueError(f"device={device!r} and backend={backend!r} disagree")
    return {"backend": get_backend(backend if backend is not None else device), "dtype": as_dtype(dtype)}


def check_sizes(layer: str, **sizes: Any) -> None:
    """ValueError unless every size is a non-negative int (PyTorch allows 0, e.g. ``Linear(0, 3)``)."""
    for name, size in sizes.items():
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"{layer}: {name} must be a non-negative int, got {size!r}")


def bias_bound(fan_in: int) -> float:
    """PyTorch's default bias init bound, 1 / sqrt(fan_in) (0 for fan_in 0)."""
    return 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
