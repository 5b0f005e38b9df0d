"""Distributions over K categories: Categorical (draws are indices) and OneHotCategorical (draws are one-hot
vectors), given by ``probs`` (normalised over the last dim) or ``logits``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import creation
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .discrete import _index_grid, _one_of
from .distribution import Distribution, expand_params, full_like, lazy_property, logits_to_probs, probs_to_logits


class Categorical(Distribution):
    """One of K categories (indices 0..K-1) with probabilities ``probs`` (normalised over the last dim) or
    ``softmax(logits)``."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            assert logits is not None
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        shape = tuple(self._param.shape)
        super().__init__(shape[:-1] if len(shape) > 1 else (), validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Categorical:
        new = expand_params(self, Categorical, batch_shape, ("probs", "logits"), _instance)
        new._param = new.__dict__["probs" if "probs" in self.__dict__ else "logits"]
        new._num_events = self._num_events
        return new  # type: ignore[no-any-return]

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> tuple[int, ...]:
        return tuple(self._param.shape)

    @property
    def mean(self) -> Tensor:
        return full_like(self._param, math.nan, self._extended_shape())

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return full_like(self._param, math.nan, self._extended_shape())

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        shape = tuple(sample_shape)
        count = int(np.prod(shape, dtype=np.int64))
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        draws = creation.multinomial(probs_2d, count, True).mT
        return draws.reshape(self._extended_shape(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        index = value.long().unsqueeze(-1)
        index, log_pmf = broadcast_tensors_keep(index, self.logits)
        return log_pmf.gather(-1, index[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = _index_grid(self._num_events, self._param, len(self.batch_shape), dtype="int64")
        return values.expand(*((self._num_events,) + self.batch_shape)) if expand else values


def broadcast_tensors_keep(index: Tensor, logits: Tensor) -> tuple[Tensor, Tensor]:
    """``index`` (int) and ``logits`` broadcast together, each keeping its dtype."""
    shape = np.broadcast_shapes(tuple(index.shape), tuple(logits.shape))
    return index.expand(*shape), logits.expand(*shape)


class OneHotCategorical(Distribution):
    """A Categorical whose draws are one-hot vectors of length K."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        shape = tuple(self._categorical.param_shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> OneHotCategorical:
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new  # type: ignore[no-any-return]

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def param_shape(self) -> tuple[int, ...]:
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        return self._one_hot(self.probs.argmax(-1))

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def _one_hot(self, index: Tensor) -> Tensor:
        k = self._categorical._num_events
        grid = creation.arange(k, backend=index.backend)
        return (index.unsqueeze(-1) == grid).cast(self._categorical._param.dtype)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        return self._one_hot(self._categorical.sample(sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        k = self.event_shape[0]
        values = creation.eye(k, dtype=self._categorical._param.dtype, backend=self._categorical._param.backend)
        values = values.reshape((k,) + (1,) * len(self.batch_shape) + (k,))
        return values.expand(*((k,) + self.batch_shape + (k,))) if expand else values

    def __repr__(self) -> str:
        return f"{type(self).__name__}(probs: {self.param_shape})"


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical with the straight-through gradient estimator (Bengio et al., 2013): ``rsample`` is a one-hot
    draw in value whose gradient is that of ``probs``."""

    has_rsample = True

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """draw + probs - probs.detach()."""
        probs = self._categorical.probs
        return self.sample(sample_shape) + (probs - probs.detach())


__all__ = ["Categorical", "OneHotCategorical", "OneHotCategoricalStraightThrough"]
