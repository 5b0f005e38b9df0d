"""The Concrete / Gumbel-softmax relaxations of Bernoulli and OneHotCategorical (``torch.distributions``'
``relaxed_bernoulli`` and ``relaxed_categorical``): RelaxedBernoulli, the sigmoid of a LogitRelaxedBernoulli, and
RelaxedOneHotCategorical, the exp of an ExpRelaxedCategorical. All four are reparameterised (``rsample``), and
``temperature`` may be a Python number or a tensor."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..tensor import Tensor
from . import constraints
from .categorical import Categorical
from .continuous import rand
from .discrete import _SuccessProbability
from .distribution import (
    Distribution,
    broadcast_all,
    clamp_probs,
    full_like,
)
from .transformed import TransformedDistribution
from .transforms_elementwise import ExpTransform, SigmoidTransform


def _log(t: Any) -> Any:
    return t.log() if isinstance(t, Tensor) else math.log(t)


class LogitRelaxedBernoulli(_SuccessProbability):
    """The logit of a RelaxedBernoulli: (logit(U) + logits) / temperature for U uniform; density
    t e^(l - t x) / (1 + e^(l - t x))^2."""

    support = constraints.real

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self.temperature = temperature
        super().__init__(probs, logits, validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Any:
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        new.temperature = self.temperature
        for name in ("probs", "logits"):
            if name in self.__dict__:
                new.__dict__[name] = new._param = self.__dict__[name].expand(*batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self) -> tuple[int, ...]:
        return tuple(self._param.shape)

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        p = clamp_probs(self.probs.expand(*shape))
        u = clamp_probs(rand(shape, p))
        return (u.log() - (-u).log1p() + p.log() - (-p).log1p()) / self.temperature  # type: ignore[no-any-return]

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return _log(self.temperature) + diff - 2 * diff.exp().log1p()  # type: ignore[no-any-return]


class _RelaxedParameters:
    """``temperature``, ``logits`` and ``probs`` of a relaxed distribution: its base distribution's."""

    temperature = property(lambda self: self.base_dist.temperature)
    logits = property(lambda self: self.base_dist.logits)
    probs = property(lambda self: self.base_dist.probs)


class RelaxedBernoulli(_RelaxedParameters, TransformedDistribution):
    """The Concrete / Gumbel-softmax relaxation of Bernoulli(probs or logits) at ``temperature``: values in (0, 1),
    reparameterised (sigmoid of a LogitRelaxedBernoulli)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Any:
        return super().expand(batch_shape, _instance=self._get_checked_instance(RelaxedBernoulli, _instance))


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical draw: log_softmax((logits + G) / temperature) for Gumbel noise G."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector  # the draws lie on a submanifold of it
    has_rsample = True

    def __init__(self, temperature: Any, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Any:
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self) -> tuple[int, ...]:
        return self._categorical.param_shape

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        u = clamp_probs(rand(self._extended_shape(sample_shape), self.logits))
        scores = (self.logits - (-u.log()).log()) / self.temperature
        return scores - scores.logsumexp(-1, keepdim=True)  # type: ignore[no-any-return]

    def log_prob(self, value: Tensor) -> Tensor:
        """log((K-1)!) + (K-1) log t + sum_k (l_k - t x_k) - K logsumexp_k(l_k - t x_k)."""
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        t = self.temperature
        log_scale = (full_like(t, float(k)).lgamma() if isinstance(t, Tensor) else math.lgamma(k)) + _log(t) * (k - 1)
        score = logits - value * t
        return (score - score.logsumexp(-1, keepdim=True)).sum(-1) + log_scale  # type: ignore[no-any-return]


class RelaxedOneHotCategorical(_RelaxedParameters, TransformedDistribution):
    """The Concrete / Gumbel-softmax relaxation of OneHotCategorical(probs or logits) at ``temperature``: points
    of the simplex, reparameterised (exp of an ExpRelaxedCategorical)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]

    def __init__(self, temperature: Any, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Any:
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)


__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli", "ExpRelaxedCategorical", "RelaxedOneHotCategorical"]
