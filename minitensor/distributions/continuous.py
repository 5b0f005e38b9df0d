"""Univariate continuous distributions with a location and a scale: Normal, LogNormal, Uniform, Exponential,
Laplace and Cauchy. Each one's ``rsample`` moves base noise (standard normal, uniform, ...) drawn from minitensor's
shared generator through a differentiable map of the parameters."""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Number
from typing import Any

from .. import creation
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .distribution import HALF_LOG_2PI, Distribution, broadcast_all, expand_params, full_like
from .exp_family import ExponentialFamily

SQRT2 = math.sqrt(2.0)


def _batch(*args: Any) -> tuple[int, ...]:
    """The batch shape of parameters already broadcast: () when every argument was a number."""
    return () if all(isinstance(a, Number) for a in args[1:]) else tuple(args[0].shape)


def rand(shape: Sequence[int], like: Tensor) -> Tensor:
    """Uniform [0, 1) noise of ``shape`` with ``like``'s dtype and backend."""
    return creation.rand(*shape, dtype=like.dtype, backend=like.backend)


def randn(shape: Sequence[int], like: Tensor) -> Tensor:
    """Standard normal noise of ``shape`` with ``like``'s dtype and backend."""
    return creation.randn(*shape, dtype=like.dtype, backend=like.backend)


class _LocScale(Distribution):
    """The family of ``loc + scale * Z`` for a fixed standard Z (Normal, Laplace, Cauchy): their parameters,
    constraints, support, ``expand`` and mode (loc)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_batch(self.loc, loc, scale), validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Any:
        return expand_params(self, type(self), batch_shape, ("loc", "scale"), _instance)

    @property
    def mode(self) -> Tensor:
        return self.loc


class Normal(_LocScale, ExponentialFamily):
    """N(loc, scale**2); natural parameters (loc / scale^2, -1 / (2 scale^2))."""

    _mean_carrier_measure = 0

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale.square()

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        return self.loc + randn(self._extended_shape(sample_shape), self.loc) * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        """-(x - loc)^2 / (2 scale^2) - log(scale) - log(sqrt(2 pi))."""
        if self._validate_args:
            self._validate_sample(value)
        return -(value - self.loc).square() / (2 * self.scale.square()) - self.scale.log() - HALF_LOG_2PI

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) / (self.scale * SQRT2)).erf())

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc + self.scale * (2 * value - 1).erfinv() * SQRT2

    def entropy(self) -> Tensor:
        return 0.5 + HALF_LOG_2PI + self.scale.log()

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        precision = self.scale.square().reciprocal()
        return self.loc * precision, -0.5 * precision

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:  # type: ignore[override]
        """-x^2 / (4 y) + log(pi / -y) / 2."""
        return -0.25 * x.square() / y + 0.5 * (-math.pi / y).log()


class LogNormal(Distribution):
    """exp(X) for X ~ N(loc, scale**2); ``base_dist`` is that Normal."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(self.base_dist.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> LogNormal:
        new = self._get_checked_instance(LogNormal, _instance)
        new.base_dist = self.base_dist.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def loc(self) -> Tensor:
        return self.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale.square() / 2).exp()

    @property
    def mode(self) -> Tensor:
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self) -> Tensor:
        s2 = self.scale.square()
        return s2.expm1() * (2 * self.loc + s2).exp()

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        return self.base_dist.rsample(sample_shape).exp()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = value.log()
        return self.base_dist.log_prob(y) - y

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.base_dist.cdf(value.log())

    def icdf(self, value: Tensor) -> Tensor:
        return self.base_dist.icdf(value).exp()

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc

    def __repr__(self) -> str:
        return f"LogNormal(loc: {tuple(self.loc.shape)}, scale: {tuple(self.scale.shape)})"


class Uniform(Distribution):
    """Uniform on [low, high)."""

    arg_constraints = {"low": constraints.dependent(is_discrete=False, event_dim=0),
                       "high": constraints.dependent(is_discrete=False, event_dim=0)}
    has_rsample = True

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(_batch(self.low, low, high), validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Uniform:
        return expand_params(self, Uniform, batch_shape, ("low", "high"), _instance)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return self.high * math.nan

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).square() / 12

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        return self.low + rand(self._extended_shape(sample_shape), self.low) * (self.high - self.low)

    def log_prob(self, value: Tensor) -> Tensor:
        """-log(high - low) inside [low, high), -inf outside."""
        if self._validate_args:
            self._validate_sample(value)
        inside = ((self.low <= value) & (self.high > value)).cast(self.low.dtype)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value: Tensor) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()


class Exponential(ExponentialFamily):
    """Density rate * exp(-rate x) on x >= 0; natural parameter -rate."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(() if isinstance(rate, Number) else self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Exponential:
        return expand_params(self, Exponential, batch_shape, ("rate",), _instance)

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return self.rate * 0.0

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.square().reciprocal()

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        noise = -(-rand(self._extended_shape(sample_shape), self.rate)).log1p()  # standard exponential
        return noise / self.rate

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        return -(-value).log1p() / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (-self.rate,)

    def _log_normalizer(self, x: Tensor) -> Tensor:  # type: ignore[override]
        return -(-x).log()


class Laplace(_LocScale):
    """Density exp(-|x - loc| / scale) / (2 scale)."""

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return SQRT2 * self.scale

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.square()

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        eps = finfo(self.loc.dtype).eps
        u = rand(self._extended_shape(sample_shape), self.loc) * (2 - eps) + (eps - 1)  # in [eps - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        d = value - self.loc
        return 0.5 - 0.5 * d.sign() * (-d.abs() / self.scale).expm1()

    def icdf(self, value: Tensor) -> Tensor:
        t = value - 0.5
        return self.loc - self.scale * t.sign() * (-2 * t.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()


class Cauchy(_LocScale):
    """Density 1 / (pi scale (1 + ((x - loc) / scale)^2)); its mean is undefined (nan) and its variance infinite."""

    @property
    def mean(self) -> Tensor:
        return full_like(self.loc, math.nan, self._extended_shape())

    @property
    def variance(self) -> Tensor:
        return full_like(self.loc, math.inf, self._extended_shape())

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        noise = (math.pi * (rand(self._extended_shape(sample_shape), self.loc) - 0.5)).tan()
        return self.loc + noise * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - ((value - self.loc) / self.scale).square().log1p()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()


__all__ = ["Normal", "LogNormal", "Uniform", "Exponential", "Laplace", "Cauchy"]
