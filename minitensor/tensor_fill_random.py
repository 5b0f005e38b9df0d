"""In-place random fills of Tensor (the ``FillRandomMethods`` mixin): ``exponential_``, ``geometric_``,
``log_normal_``, ``cauchy_`` and ``random_``, with PyTorch's signatures, defaults and dtype rules.

Values are drawn on the host from minitensor's shared NumPy generator, or from ``generator=`` (random_state.py), then
written into self as ``normal_`` and ``uniform_`` are (tensor_inplace.py): views see the write, a leaf that requires
grad refuses it under grad mode, and a non-leaf is rebased on a node whose gradient is zero (PyTorch's
ExponentialBackward ...). The streams are NumPy's, so the values differ from PyTorch's; the distributions do not.

Bad parameters (lambd <= 0, p outside (0, 1), std or sigma <= 0, an empty or out-of-range ``random_`` interval) raise
:class:`RandomParameterError`, a ValueError as minitensor's other random functions raise and a RuntimeError as
PyTorch raises; a dtype a distribution cannot fill raises DTypeError.
"""

from __future__ import annotations

import operator
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from .errors import DTypeError, MinitensorError
from .random_state import RandomStream, rng_for
from .tensor_inplace import _replace

if TYPE_CHECKING:
    from .tensor import Tensor

GeneratorLike = RandomStream | np.random.Generator | None

FLOAT_DIGITS = {dtypes.float32: 24, dtypes.float64: 53}
"""Mantissa digits: floats hold every integer of [-2**digits, 2**digits], ``random_()``'s float range."""


class RandomParameterError(MinitensorError, ValueError, RuntimeError):
    """A distribution parameter out of its domain (ValueError, and RuntimeError as PyTorch raises)."""


def _number(value: Any, name: str, method: str) -> float:
    """A real parameter (a Python or NumPy number, or a one-element tensor) as a float."""
    if isinstance(value, (bool, np.bool_)) or not hasattr(value, "__float__"):
        raise TypeError(f"{method}(): argument '{name}' must be float, not {type(value).__name__}")
    return float(value)


def _float_only(self: Tensor, method: str, what: str) -> None:
    if self.dtype.kind != "f":
        raise DTypeError(f"{method}: the {what} distribution is a continuous probability distribution, so the tensor "
                         f"must have a floating point dtype, got {self.dtype} (shape {self.shape})")


def _fill(self: Tensor, values: np.ndarray) -> Tensor:
    """self overwritten by the host array ``values`` (of self's shape), cast to self's dtype."""
    return _replace(self, self._lift(np.asarray(values).astype(self.dtype), self.dtype))


def _bound(value: Any, name: str) -> int:
    """A ``random_`` bound: an int (or an integer tensor of one element) within int64."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"random_(): argument '{name}' must be int, not bool")
    try:
        bound = operator.index(value)
    except TypeError:
        raise TypeError(f"random_(): argument '{name}' must be int, not {type(value).__name__}") from None
    if not -(1 << 63) <= bound < 1 << 63:
        raise RandomParameterError(f"random_(): {name}={bound} does not fit in int64")
    return bound


def _limits(dtype: np.dtype) -> tuple[int, int]:
    """The integers ``dtype`` can hold exactly (for floats: [-2**digits, 2**digits])."""
    if dtype.kind == "f":
        top = 1 << FLOAT_DIGITS[dtype]
        return -top, top
    if dtype.kind == "b":
        return 0, 1
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _check_fits(dtype: np.dtype, value: int, what: str) -> None:
    """RandomParameterError (integers) or a UserWarning (floats, as PyTorch) for a bound ``dtype`` cannot hold."""
    low, high = _limits(dtype)
    if low <= value <= high:
        return
    if dtype.kind == "f":
        digits = FLOAT_DIGITS[dtype]
        warnings.warn(f"random_(): {what} is out of bounds [-(2^{digits}), 2^{digits}]; {dtype} holds only the integers "
                      "within this range exactly, so the draws are rounded", UserWarning, stacklevel=4)
        return
    raise RandomParameterError(f"random_(): {what} is out of bounds for {dtype} (values from {low} to {high})")


def _random_range(dtype: np.dtype, bounds: tuple[Any, ...], to: Any) -> tuple[int, int]:
    """The inclusive [low, high] of ``random_(*bounds, to=to)`` on a ``dtype`` tensor (PyTorch's three forms:
    ``()`` the dtype's whole range (floats: [0, 2**digits]), ``(to)`` [0, to), ``(from, to)`` [from, to) or, with
    ``to=None``, [from, the dtype's top])."""
    if len(bounds) > 2:
        raise TypeError(f"random_() takes at most 2 positional arguments (from, to), got {len(bounds)}")
    if len(bounds) == 2 and to is not None:
        raise TypeError("random_() got multiple values for argument 'to'")
    if not bounds:
        if to is None:
            return 0, _limits(dtype)[1]
        bounds = (0, to)
    elif len(bounds) == 1:
        if bounds[0] is None:
            raise TypeError("random_(): argument 'to' must be int, not NoneType")
        bounds = (0, bounds[0]) if to is None else (bounds[0], to)
    low = _bound(bounds[0], "from")
    if bounds[1] is None:
        _check_fits(dtype, low, "from")
        top = _limits(dtype)[1]
        if low > top:
            raise RandomParameterError(f"random_ expects 'from' to be at most the largest value of {dtype} ({top}), "
                                       f"but got from={low}")
        return low, top
    high = _bound(bounds[1], "to")
    if low >= high:
        raise RandomParameterError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    _check_fits(dtype, low, "from")
    _check_fits(dtype, high - 1, "to - 1")
    return low, high - 1


class FillRandomMethods:
    """In-place random fills of Tensor; each returns self."""

    def exponential_(self: Any, lambd: float = 1.0, *, generator: GeneratorLike = None) -> Tensor:
        """Fill with draws from the exponential distribution of rate ``lambd`` > 0 (density lambd * exp(-lambd x));
        float tensors only."""
        rate = _number(lambd, "lambd", "exponential_")
        if not rate > 0:
            raise RandomParameterError(f"exponential_ expects lambda > 0.0, but found lambda={rate}")
        _float_only(self, "exponential_", "exponential")
        return _fill(self, rng_for(generator).standard_exponential(self.shape) / rate)

    def geometric_(self: Any, p: float, *, generator: GeneratorLike = None) -> Tensor:
        """Fill with the number of Bernoulli(``p``) trials up to and including the first success (1, 2, ...), p in
        (0, 1); float or integer tensors."""
        prob = _number(p, "p", "geometric_")
        if not 0 < prob < 1:
            raise RandomParameterError(f"geometric_ expects p to be in (0, 1), but got p={prob}")
        if self.dtype.kind == "b":
            raise DTypeError(f"geometric_: not implemented for bool tensors (shape {self.shape}), as in PyTorch")
        return _fill(self, rng_for(generator).geometric(prob, self.shape))

    def log_normal_(self: Any, mean: float = 1.0, std: float = 2.0, *, generator: GeneratorLike = None) -> Tensor:
        """Fill with exp(N(``mean``, ``std``**2)) draws (the log of each is normal), std > 0; float tensors only."""
        mu, sigma = _number(mean, "mean", "log_normal_"), _number(std, "std", "log_normal_")
        if not sigma > 0:
            raise RandomParameterError(f"log_normal_ expects std > 0.0, but found std={sigma}")
        _float_only(self, "log_normal_", "log-normal")
        return _fill(self, rng_for(generator).lognormal(mu, sigma, self.shape))

    def cauchy_(self: Any, median: float = 0.0, sigma: float = 1.0, *, generator: GeneratorLike = None) -> Tensor:
        """Fill with draws from the Cauchy distribution of location ``median`` and scale ``sigma`` > 0; float
        tensors only."""
        location, scale = _number(median, "median", "cauchy_"), _number(sigma, "sigma", "cauchy_")
        if not scale > 0:
            raise RandomParameterError(f"cauchy_ expects sigma > 0.0, but found sigma={scale}")
        _float_only(self, "cauchy_", "Cauchy")
        return _fill(self, location + scale * rng_for(generator).standard_cauchy(self.shape))

    def random_(self: Any, *bounds: Any, to: Any = None, generator: GeneratorLike = None) -> Tensor:
        """Fill with integers drawn uniformly: ``random_()`` over the dtype's range ([0, max] for integers, [0, 1]
        for bool, [0, 2**24] for float32 and [0, 2**53] for float64), ``random_(to)`` over [0, to),
        ``random_(from, to)`` over [from, to) and ``random_(from, None)`` over [from, the dtype's top]. PyTorch's
        ``from`` is positional only (a Python keyword)."""
        low, high = _random_range(self.dtype, bounds, to)
        return _fill(self, rng_for(generator).integers(low, high, self.shape, dtype=np.int64, endpoint=True))


__all__: list[str] = []
