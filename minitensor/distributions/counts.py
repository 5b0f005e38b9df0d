"""Distributions of counts beyond the Binomial: NegativeBinomial (successes before ``total_count`` failures) and
Multinomial (the category counts of ``total_count`` Categorical draws). Draws come from NumPy's samplers on
minitensor's shared generator."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import creation
from ..random_state import rng_for
from ..tensor import Tensor
from ..tensor_compare import where
from . import constraints
from .categorical import Categorical
from .discrete import Binomial, _one_of, _SuccessProbability
from .distribution import Distribution, broadcast_all, expand_params, softplus


def log_sigmoid(x: Tensor) -> Tensor:
    """log(1 / (1 + exp(-x))), stable."""
    return -softplus(-x)


class NegativeBinomial(_SuccessProbability):
    """The number of successes of Bernoulli(``probs``) trials before ``total_count`` failures (a real count >= 0)."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        name = "probs" if probs is not None else "logits"
        count, param = broadcast_all(total_count, probs if probs is not None else logits)
        self.total_count = count.cast(param.dtype)
        self.__dict__[name] = self._param = param
        Distribution.__init__(self, tuple(param.shape), validate_args=validate_args)  # not the probs/logits one

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> NegativeBinomial:
        new = expand_params(self, NegativeBinomial, batch_shape, ("total_count", "probs", "logits"), _instance)
        new._param = new.__dict__["probs" if "probs" in self.__dict__ else "logits"]
        return new  # type: ignore[no-any-return]

    @property
    def param_shape(self) -> tuple[int, ...]:
        return tuple(self._param.shape)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """Poisson(G) for G ~ Gamma(total_count, rate exp(-logits)), outside the graph."""
        shape = self._extended_shape(sample_shape)
        count = np.broadcast_to(self.total_count.detach().to_numpy().astype(np.float64), shape)
        odds = np.broadcast_to(np.exp(self.logits.detach().to_numpy().astype(np.float64)), shape)
        rng = rng_for(None)
        draws = rng.poisson(rng.standard_gamma(count) * odds)
        return creation.tensor(draws, dtype=self._param.dtype, backend=self._param.backend)

    def log_prob(self, value: Tensor) -> Tensor:
        """n log(1 - p) + k log p + lgamma(n + k) - lgamma(k + 1) - lgamma(n); the lgamma terms are 0 at
        n + k = 0."""
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        unnormalised = n * log_sigmoid(-logits) + value * log_sigmoid(logits)
        empty = (n + value) == 0
        safe_n = where(empty, 1.0, n)
        normaliser = (value + 1).lgamma() + safe_n.lgamma() - (safe_n + value).lgamma()
        return unnormalised - where(empty, 0.0, normaliser)


class Multinomial(Distribution):
    """The counts per category of ``total_count`` (an int) draws from Categorical(``probs`` or ``logits``)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count: int = 1, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        shape = self._categorical.param_shape
        super().__init__(self._categorical.batch_shape, shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Multinomial:
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new.probs, validate_args=False)
        Distribution.__init__(new, tuple(batch_shape), self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new  # type: ignore[no-any-return]

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> constraints.Constraint:
        return constraints.multinomial(self.total_count)

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def param_shape(self) -> tuple[int, ...]:
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """Counts of shape ``sample_shape + batch_shape + (K,)`` in the probabilities' dtype, outside the graph."""
        shape = self._extended_shape(sample_shape)
        probs = self.probs.detach().to_numpy().astype(np.float64)
        probs = np.broadcast_to(probs / probs.sum(-1, keepdims=True), shape)
        draws = rng_for(None).multinomial(self.total_count, probs)
        return creation.tensor(draws, dtype=self.probs.dtype, backend=self.probs.backend)

    def entropy(self) -> Tensor:
        """n H(Categorical) - log n! + sum_i E log X_i! with X_i ~ Binomial(n, p_i)."""
        n = float(self.total_count)
        support = self._binomial.enumerate_support(expand=False)[1:]  # 1..n, shaped to broadcast over the batch
        binomial_probs = self._binomial.log_prob(support).exp()
        weighted = (binomial_probs * (support + 1).lgamma()).sum(0).sum(-1)
        return n * self._categorical.entropy() - math.lgamma(n + 1) + weighted

    def log_prob(self, value: Tensor) -> Tensor:
        """log n! - sum log x_i! + sum x_i log p_i (a term with x_i = 0 and p_i = 0 counts 0)."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = where((value == 0) & (logits == -float("inf")), 0.0, logits)
        return (value.sum(-1) + 1).lgamma() - (value + 1).lgamma().sum(-1) + (logits * value).sum(-1)


__all__ = ["NegativeBinomial", "Multinomial"]
