"""``make_tensor``: a random tensor of a given shape, dtype and device for tests, as ``torch.testing.make_tensor``.

Values are drawn uniformly from ``[low, high)`` (integers and bools from ``randint``), from minitensor's global
random stream. Defaults per dtype: bool ``[0, 2)``, integers ``[-9, 10)``, floats ``[-9, 9)``; bounds outside the
dtype's finite range are clamped to it, and integer bounds are rounded up.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from ..creation import empty, randint
from ..dtypes import as_dtype
from ..tensor import Tensor
from ..type_info import finfo, iinfo

__all__ = ["make_tensor"]

_DEFAULT_BOUNDS = {"b": (0, 2), "i": (-9, 10), "f": (-9, 9)}


def _dtype_range(dtype: Any) -> tuple[float, float]:
    """[lowest, highest) a draw of ``dtype`` may cover (randint cannot reach int64's maximum, so that one is open)."""
    if dtype.kind == "b":
        return 0, 2
    if dtype.kind == "i":
        info = iinfo(dtype)
        return info.min, info.max + (0 if dtype.itemsize == 8 else 1)
    info_f = finfo(dtype)
    return info_f.min, info_f.max


def _bounds(low: float | None, high: float | None, dtype: Any) -> tuple[float, float]:
    """The checked, clamped ``[low, high)`` for ``dtype`` (ValueError naming the bad bounds)."""
    default_low, default_high = _DEFAULT_BOUNDS[dtype.kind]
    low = default_low if low is None else low
    high = default_high if high is None else high
    lowest, highest = _dtype_range(dtype)
    if any(isinstance(value, float) and math.isnan(value) for value in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype.kind == "f":
        warnings.warn("Passing `low==high` to `make_tensor` for floating types is deprecated (as in torch since 2.1); "
                      "use `minitensor.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} only "
                         f"supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if dtype.kind in "bi":
        return math.ceil(low), math.ceil(high)
    return low, high


def _shape(shape: tuple[Any, ...]) -> tuple[int, ...]:
    """``make_tensor(2, 3)`` and ``make_tensor((2, 3))`` alike."""
    if len(shape) == 1 and isinstance(shape[0], Sequence):
        return tuple(shape[0])
    return tuple(shape)


def make_tensor(*shape: int | Sequence[int], dtype: Any, device: Any, low: float | None = None,
                high: float | None = None, requires_grad: bool = False, noncontiguous: bool = False,
                exclude_zero: bool = False, memory_format: Any = None) -> Tensor:
    """A tensor of ``shape`` on ``device`` with values drawn uniformly from ``[low, high)`` (see the module docstring
    for the defaults); ``noncontiguous`` gives a strided view (tensors of 2 or more elements), ``exclude_zero``
    replaces zeros by 1 (bool, integers) or the dtype's smallest normal number."""
    size = _shape(shape)
    resolved = as_dtype(dtype)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")
    if requires_grad and resolved.kind in "bi":
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={resolved}")
    noncontiguous = noncontiguous and math.prod(size) > 1
    if noncontiguous:  # twice the last dim, then every second element from 1: a strided view of distinct draws
        size = (*size[:-1], 2 * size[-1])
    lo, hi = _bounds(low, high, resolved)
    if resolved.kind in "bi":
        result = randint(int(lo), int(hi), size, dtype=resolved, device=device)
    elif hi - lo >= finfo(resolved).max:  # the draw's width must be finite: draw half the range, then double
        result = empty(size, dtype=resolved, device=device).uniform_(lo / 2, hi / 2).mul_(2)
    else:
        result = empty(size, dtype=resolved, device=device).uniform_(lo, hi)
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if resolved.kind in "bi" else finfo(resolved).tiny
    if resolved.kind == "f":
        result.requires_grad_(requires_grad)
    return result
