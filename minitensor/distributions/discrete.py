"""Distributions over counts: Bernoulli, Binomial, Geometric and Poisson. Those given by ``probs`` or ``logits`` keep
the one given and compute the other lazily."""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Number
from typing import Any

import numpy as np

from .. import creation, tensor_random
from ..autodiff import no_grad
from ..random_state import rng_for
from ..tensor import Tensor
from ..tensor_compare import where
from ..type_info import finfo
from . import constraints
from .continuous import rand
from .distribution import (
    Distribution,
    broadcast_all,
    expand_params,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
    softplus,
)
from .exp_family import ExponentialFamily


def _one_of(probs: Any, logits: Any) -> None:
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def bce_with_logits(logits: Tensor, target: Tensor) -> Tensor:
    """-(target log sigmoid(logits) + (1 - target) log sigmoid(-logits)) = softplus(logits) - target logits,
    elementwise and stable."""
    return softplus(logits) - logits * target


def _index_grid(n: int, like: Tensor, batch_dims: int, dtype: Any = None) -> Tensor:
    """0..n-1 shaped (n, 1, ..., 1) with ``batch_dims`` ones."""
    values = creation.arange(n, dtype=like.dtype if dtype is None else dtype, backend=like.backend)
    return values.reshape((n,) + (1,) * batch_dims)


class _SuccessProbability(Distribution):
    """Distributions of Bernoulli trials given by ``probs`` or ``logits`` (log-odds): the other one is computed on
    first use."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        given = probs if probs is not None else logits
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(() if isinstance(given, Number) else tuple(self._param.shape), validate_args=validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)


class Bernoulli(_SuccessProbability, ExponentialFamily):
    """1 with probability ``probs`` (or ``sigmoid(logits)``), else 0; natural parameter logit(probs)."""

    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Bernoulli:
        new = expand_params(self, Bernoulli, batch_shape, ("probs", "logits"), _instance)
        new._param = new.__dict__["probs" if "probs" in self.__dict__ else "logits"]
        return new  # type: ignore[no-any-return]

    @property
    def param_shape(self) -> tuple[int, ...]:
        return tuple(self._param.shape)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        """1 where probs > 1/2, 0 where below, nan at 1/2."""
        p = self.probs
        return where(p == 0.5, math.nan, (p >= 0.5).cast(p.dtype))

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        with no_grad():
            return tensor_random.bernoulli(self.probs.expand(*self._extended_shape(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -bce_with_logits(logits, value)

    def entropy(self) -> Tensor:
        return bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = _index_grid(2, self._param, len(self.batch_shape))
        return values.expand(*((2,) + self.batch_shape)) if expand else values

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.probs.logit(),)

    def _log_normalizer(self, x: Tensor) -> Tensor:  # type: ignore[override]
        return x.exp().log1p()


class Binomial(_SuccessProbability):
    """The number of successes in ``total_count`` Bernoulli(``probs``) trials."""

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.cast(self.probs.dtype)
            self._param = self.probs
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.cast(self.logits.dtype)
            self._param = self.logits
        Distribution.__init__(self, tuple(self._param.shape), validate_args=validate_args)  # not the probs/logits one

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Binomial:
        new = expand_params(self, Binomial, batch_shape, ("total_count", "probs", "logits"), _instance)
        new._param = new.__dict__["probs" if "probs" in self.__dict__ else "logits"]
        return new  # type: ignore[no-any-return]

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self.total_count)

    @property
    def param_shape(self) -> tuple[int, ...]:
        return tuple(self._param.shape)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        n = np.broadcast_to(self.total_count.detach().to_numpy(), shape).astype(np.int64)
        p = np.broadcast_to(self.probs.detach().to_numpy(), shape).astype(np.float64)
        draws = rng_for(None).binomial(n, p)
        return creation.tensor(draws, dtype=self._param.dtype, backend=self._param.backend)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        normaliser = (n * (logits.clamp(min=0) + logits - logits.clamp(max=0)) / 2
                      + n * (-logits.abs()).exp().log1p() - (n + 1).lgamma())
        return value * logits - (value + 1).lgamma() - (n - value + 1).lgamma() - normaliser

    def _homogeneous_count(self, what: str) -> int:
        count = int(self.total_count.max().item())
        if not self.total_count.min().item() == count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return count

    def entropy(self) -> Tensor:
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        count = self._homogeneous_count("enumerate_support")
        values = _index_grid(1 + count, self._param, len(self.batch_shape))
        return values.expand(*((1 + count,) + self.batch_shape)) if expand else values


class Geometric(_SuccessProbability):
    """The number of failures before the first success of Bernoulli(``probs``) trials."""

    support = constraints.nonnegative_integer

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Geometric:
        return expand_params(self, Geometric, batch_shape, ("probs", "logits"), _instance)  # type: ignore[no-any-return]

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return self.probs * 0.0

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        with no_grad():
            u = rand(self._extended_shape(sample_shape), self.probs).clamp(min=finfo(self.probs.dtype).tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        p = where((probs == 1) & (value == 0), 0.0, probs)  # 0 * log(0) is 0 there
        return value * (-p).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        return bce_with_logits(self.logits, self.probs) / self.probs


class Poisson(ExponentialFamily):
    """Counts with mean ``rate``: P(k) = rate^k exp(-rate) / k!; natural parameter log(rate)."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(() if isinstance(rate, Number) else tuple(self.rate.shape), validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Poisson:
        return expand_params(self, Poisson, batch_shape, ("rate",), _instance)  # type: ignore[no-any-return]

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        with no_grad():
            return tensor_random.poisson(self.rate.expand(*self._extended_shape(sample_shape)).contiguous())

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.rate.log(),)

    def _log_normalizer(self, x: Tensor) -> Tensor:  # type: ignore[override]
        return x.exp()


__all__ = ["Bernoulli", "Binomial", "Geometric", "Poisson"]
