"""``torch.autocast`` (``torch.amp.autocast``) and the ``custom_fwd``/``custom_bwd`` decorators for custom Functions.

Deliberate difference: minitensor has no float16/bfloat16, so an autocast region casts nothing. Inside it every op
runs in its inputs' dtypes (float32 stays float32, float64 stays float64; PyTorch leaves float64 alone too), the
region's dtype is float32 and the switches are recorded, so ``is_autocast_enabled``/``get_autocast_dtype`` answer
as PyTorch's do inside the region. Results equal the same code without autocast.
"""

from __future__ import annotations

import collections.abc
import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..dtypes import float64
from ..tensor import Tensor
from .autocast_state import (
    AUTOCAST_DTYPES,
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    cuda_available,
    device_kind,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_cache_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)

__all__ = ["autocast", "autocast_decorator", "custom_bwd", "custom_fwd", "is_autocast_available"]


def _check_device_type(device_type: Any) -> None:
    """PyTorch's ValueError for a ``device_type`` that is not a string (autocast, custom_fwd, custom_bwd)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def autocast_decorator(autocast_instance: autocast, func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` run inside ``autocast_instance`` on every call."""

    @functools.wraps(func)
    def decorate_autocast(*args: Any, **kwargs: Any) -> Any:
        with autocast_instance:
            return func(*args, **kwargs)

    return decorate_autocast


class autocast:  # noqa: N801 - PyTorch's name
    """A region of "mixed precision" (``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``):
    a context manager or decorator that sets this thread's autocast switches for ``device_type`` on entry and restores
    them on exit; regions nest, and ``enabled=False`` turns autocast off inside an enabled one.

    minitensor has no float16/bfloat16, so ops inside run in their inputs' dtypes (a deliberate difference: the
    results equal the same code without autocast). ``dtype`` defaults to :func:`get_autocast_dtype` (float32); any
    other dtype, and "cuda" while the cuda backend is unavailable, warn and disable the region as PyTorch does for
    unsupported ones. ``device_type`` is "cpu" or "cuda" (with an index, or a backend name: "fast" is "cpu");
    PyTorch's other device types raise RuntimeError, a non-string ValueError.
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True, cache_enabled: bool | None = None):
        _check_device_type(device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        self._saved: list[tuple[bool, Any, bool]] = []
        if enabled:
            enabled = self._usable(device_kind(device_type, "autocast"))
        self._enabled = enabled

    def _usable(self, kind: str) -> bool:
        """Whether an enabled region can be one: warn (and answer False) without a cuda backend or for a dtype
        other than float32."""
        if kind == "cuda" and not cuda_available():
            warnings.warn("CUDA is not available. Disabling autocast.", stacklevel=3)
            return False
        if not (isinstance(self.fast_dtype, np.dtype) and self.fast_dtype in AUTOCAST_DTYPES):
            name = kind.upper()
            warnings.warn(f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n{name} "
                          f"Autocast only supports dtypes of {', '.join(map(str, AUTOCAST_DTYPES))} currently "
                          "(minitensor has no float16 or bfloat16).", stacklevel=3)
            return False
        return True

    def __enter__(self) -> autocast:
        saved = (is_autocast_enabled(self.device), get_autocast_dtype(self.device), is_autocast_cache_enabled())
        set_autocast_dtype(self.device, self.fast_dtype)  # first: a dtype that is not one raises before any change
        self._saved.append(saved)
        self.prev, self.prev_fastdtype, self.prev_cache_enabled = saved
        set_autocast_enabled(self.device, bool(self._enabled))
        autocast_increment_nesting()
        set_autocast_cache_enabled(bool(self._cache_enabled))
        return self

    def __exit__(self, *exc: object) -> None:
        enabled, dtype, cache_enabled = self._saved.pop()
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, enabled)
        set_autocast_dtype(self.device, dtype)
        set_autocast_cache_enabled(cache_enabled)

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(func):
            raise TypeError(f"autocast()(func) requires a callable, but got {type(func).__name__}. Did you mean to use "
                            "autocast as a context manager? For example:\n    with minitensor.autocast(device_type=...):\n"
                            "        output = model(input)")
        return autocast_decorator(self, func)


def _cast(value: Any, kind: str, dtype: Any) -> Any:
    """``value`` with every float tensor on a ``kind`` device (except float64 ones, as PyTorch) cast to ``dtype``,
    through dicts, lists, tuples and other iterables (which become generators); other values unchanged."""
    if isinstance(value, Tensor):
        eligible = value.is_floating_point() and value.device.type == kind and value.dtype != float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, kind, dtype): _cast(v, kind, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        items = (_cast(v, kind, dtype) for v in value)
        return type(value)(items) if isinstance(value, (list, tuple)) else items
    return value


def custom_fwd(fwd: Callable[..., Any] | None = None, *, device_type: str, cast_inputs: Any = None) -> Any:
    """Decorate a custom Function's ``forward(ctx, ...)`` (``torch.amp.custom_fwd``): it records the autocast state
    for :func:`custom_bwd`. With ``cast_inputs`` (a dtype) and autocast enabled for ``device_type``, float tensor
    arguments on that device (not float64 ones) are cast to it and forward runs with autocast off; outside an
    autocast region the decorator changes nothing."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    forward = fwd

    @functools.wraps(forward)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        active = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = active if cast_inputs is None else False
        if cast_inputs is None or not active:
            return forward(*args, **kwargs)
        kind = device_kind(device_type, "custom_fwd")
        with autocast(device_type=device_type, enabled=False):
            return forward(*_cast(args, kind, cast_inputs), **_cast(kwargs, kind, cast_inputs))

    return decorate_fwd


def custom_bwd(bwd: Callable[..., Any] | None = None, *, device_type: str) -> Any:
    """Decorate a custom Function's ``backward(ctx, ...)`` (``torch.amp.custom_bwd``): it runs under the autocast
    state (enabled flag and dtype) its :func:`custom_fwd` forward saw."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    backward = bwd

    @functools.wraps(backward)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return backward(*args, **kwargs)

    return decorate_bwd
