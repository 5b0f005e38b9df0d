"""The trapezoidal rule (``mt.`` functions only, as in PyTorch): trapezoid, its older name trapz, and
cumulative_trapezoid, with sample points ``x`` or a constant spacing ``dx``, PyTorch's shape rules for ``x`` and its
dtypes. Compositions of slicing, broadcast arithmetic, sum and cumsum, so gradients come from autodiff.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .errors import DTypeError, ShapeError
from .tensor_data import normalize_dim, shape_broadcast
from .tensor_math import _is_tensor

if TYPE_CHECKING:
    from .tensor import Tensor


def _check_tensor(name: str, arg: str, position: int, x: Any) -> None:
    """PyTorch's TypeError for a non-tensor argument (the wrapped ``mt.`` forms check only the first)."""
    if not _is_tensor(x):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not {type(x).__name__}")


def _along(t: Tensor, dim: int, start: int | None, stop: int | None) -> Tensor:
    """The view t[..., start:stop] with the slice on ``dim`` (a non-negative dim)."""
    return t[(slice(None),) * dim + (slice(start, stop),)]


def _integrand(name: str, y: Any, x: Any, dx: Any, dim: int) -> tuple[Tensor, int]:
    """Check the arguments of the trapezoid functions (y a tensor, x a tensor or None, not both x and dx); y and dim
    made non-negative."""
    _check_tensor(name, "y", 1, y)
    if x is not None and dx is not None:
        raise TypeError(f"{name}(): pass either the sample points x or their constant spacing dx, not both")
    if x is not None and not _is_tensor(x):
        raise TypeError(f"{name}(): argument 'x' (position 2) must be Tensor, not {type(x).__name__}; pass a constant "
                        f"spacing as dx=")
    return y, normalize_dim(dim, y.dims)


def _no_bool(name: str, *tensors: Tensor) -> None:
    for t in tensors:
        if t.dtype.kind == "b":
            raise DTypeError(f"{name}: received a bool tensor (shape {t.shape}), but bool is not supported; cast with "
                             f".float() first")


def _spacing_value(name: str, dx: Any) -> int | float:
    """The constant spacing: a real number (a one-element tensor gives its value), 1 when None."""
    if dx is None:
        return 1
    if _is_tensor(dx):
        t = cast("Tensor", dx)
        if t.numel() != 1:
            raise TypeError(f"{name}(): dx must be a real number, got a tensor of shape {t.shape}")
        dx = t.item()
    if isinstance(dx, (bool, np.bool_)) or not isinstance(dx, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}(): dx must be a real number, got {type(dx).__name__} {dx!r}")
    return int(dx) if isinstance(dx, (int, np.integer)) else float(dx)  # Python numbers: they never widen float32


def _sample_spacing(name: str, y: Tensor, x: Tensor, d: int) -> Tensor:
    """The spacings x[i+1] - x[i] along dim d, as PyTorch shapes them to broadcast against y's intervals: a 1-D x
    (one value per sample of y along d) lies along d, an x of fewer dims gets leading 1s, and then the differences are
    taken along d, of x as it is when x has more dims than y."""
    y._check_backend(x)
    _no_bool(name, y, x)
    if x.dims == 1:
        if x.shape[0] != y.shape[d]:
            raise ShapeError(f"{name}: There must be one `x` value for each sample point: x has shape {x.shape}, y has "
                             f"shape {y.shape} with {y.shape[d]} samples along dim {d}")
        x = x.reshape(*[x.shape[0] if i == d else 1 for i in range(y.dims)])
    elif x.dims < y.dims:
        x = x.reshape(*(1,) * (y.dims - x.dims), *x.shape)
    spacing = _along(x, d, 1, None) - _along(x, d, 0, -1)
    intervals = y.shape[:d] + (max(y.shape[d] - 1, 0),) + y.shape[d + 1:]
    try:
        shape_broadcast(spacing.shape, intervals)
    except ShapeError:
        raise ShapeError(f"{name}: the spacings of x (shape {x.shape}, differences {spacing.shape} along dim {d}) and the "
                         f"intervals of y (shape {y.shape}, {intervals} along dim {d}) cannot be broadcast together") from None
    return spacing


def _trapezoid(name: str, y: Any, x: Any, dx: Any, dim: int) -> Tensor:
    y, d = _integrand(name, y, x, dx, dim)
    if y.shape[d] == 0:  # no samples: zeros of y's dtype, before any other check (as PyTorch)
        return y._zeros(y.shape[:d] + y.shape[d + 1:])
    if x is None:
        step = _spacing_value(name, dx)
        _no_bool(name, y)
        return (y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5) * step
    spacing = _sample_spacing(name, y, x, d)
    return (spacing * (_along(y, d, 0, -1) + _along(y, d, 1, None))).sum(d) / 2.0


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The integral of y along ``dim`` by the trapezoidal rule: the sum over the intervals of spacing * (y[i] +
    y[i+1]) / 2, the spacing the constant ``dx`` (a number, default 1; computed as (sum(y) - (y[0] + y[-1]) / 2) * dx,
    as PyTorch) or the differences of the sample points ``x`` (1-D with one value per sample, or broadcasting against
    y). Integer y gives the default float dtype; y with no samples along ``dim`` gives zeros of y's dtype."""
    return _trapezoid("trapezoid", y, x, dx, dim)


def trapz(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """PyTorch's older name of :func:`trapezoid`: ``trapz(y, x, *, dim=-1)`` or ``trapz(y, *, dx=1, dim=-1)``."""
    return _trapezoid("trapz", y, x, dx, dim)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The running integral of y along ``dim`` by the trapezoidal rule: entry i is the integral over the first i + 1
    intervals (cumsum of spacing * (y[i] + y[i+1]) / 2), so ``dim`` shrinks by one (to 0 for fewer than 2 samples).
    Spacing, dtypes and x's shapes as :func:`trapezoid`."""
    y, d = _integrand("cumulative_trapezoid", y, x, dx, dim)
    _no_bool("cumulative_trapezoid", y)
    pairs = _along(y, d, 0, -1) + _along(y, d, 1, None)
    if x is None:
        return (pairs * (_spacing_value("cumulative_trapezoid", dx) / 2.0)).cumsum(d)
    return (_sample_spacing("cumulative_trapezoid", y, x, d) * pairs / 2.0).cumsum(d)


__all__ = ["trapezoid", "trapz", "cumulative_trapezoid"]
