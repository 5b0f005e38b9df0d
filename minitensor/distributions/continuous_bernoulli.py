"""ContinuousBernoulli (``torch.distributions.continuous_bernoulli``): the density C(p) p^x (1 - p)^(1 - x) on [0, 1]
(Loaiza-Ganem and Cunningham, 2019), given by ``probs`` p or ``logits`` log(p / (1 - p)); p is not a probability
here, only the Bernoulli's parameter the density shares.

The normalizer C(p) = 2 atanh(1 - 2p) / (1 - 2p), the mean, the variance, the cdf and the icdf are ratios of two
vanishing terms at p = 1/2: inside ``lims`` (default (0.499, 0.501)) each uses its Taylor series in p - 1/2 instead,
and the exact formula runs at ``lims[0]`` there so that no nan reaches a gradient.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Number
from typing import Any

from ..tensor import Tensor
from ..tensor_compare import where
from . import constraints
from .continuous import rand
from .discrete import _one_of, bce_with_logits
from .distribution import Distribution, broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits
from .exp_family import ExponentialFamily

LOG2 = math.log(2.0)


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli on [0, 1]; natural parameter ``logits``. ``probs`` are clamped into
    [eps, 1 - eps]."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs: Any = None, logits: Any = None, lims: tuple[float, float] = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        given = probs if probs is not None else logits
        if probs is not None:
            (raw,) = broadcast_all(probs)
            checking = self._validate_args if validate_args is None else validate_args
            if checking and not bool(constraints.unit_interval.check(raw).all().item()):
                raise ValueError(f"Expected parameter probs ({type(raw).__name__} of shape {tuple(raw.shape)}) of "
                                 f"distribution ContinuousBernoulli to satisfy the constraint "
                                 f"{constraints.unit_interval!r}, but found invalid values:\n{raw}")
            self.probs = clamp_probs(raw)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(() if isinstance(given, Number) else tuple(self._param.shape), validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> ContinuousBernoulli:
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        shape = tuple(batch_shape)
        for name in ("probs", "logits"):
            if name in self.__dict__:
                new.__dict__[name] = new._param = self.__dict__[name].expand(*shape)
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new  # type: ignore[no-any-return]

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> tuple[int, ...]:
        return tuple(self._param.shape)

    def _outside_unstable_region(self) -> Tensor:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        """probs where the exact formulas are stable, lims[0] elsewhere."""
        return where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self) -> Tensor:
        """log C(p) = log |log(1 - p) - log p| - log |1 - 2p|; near 1/2: log 2 + (4/3 + 104/45 x) x, x = (p - 1/2)^2."""
        p = self._cut_probs()
        exact = ((-p).log1p() - p.log()).abs().log() - (1.0 - 2.0 * p).abs().log()
        x = (self.probs - 0.5).square()
        taylor = LOG2 + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), exact, taylor)

    @property
    def mean(self) -> Tensor:
        """p / (2p - 1) + 1 / (log(1 - p) - log p); near 1/2: 1/2 + (1/3 + 16/45 x^2) x, x = p - 1/2."""
        p = self._cut_probs()
        exact = p / (2.0 * p - 1.0) + ((-p).log1p() - p.log()).reciprocal()
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.square()) * x
        return where(self._outside_unstable_region(), exact, taylor)

    @property
    def variance(self) -> Tensor:
        """p (p - 1) / (1 - 2p)^2 + 1 / (log(1 - p) - log p)^2; near 1/2: 1/12 - (1/15 - 128/945 x) x,
        x = (p - 1/2)^2."""
        p = self._cut_probs()
        exact = p * (p - 1.0) / (1.0 - 2.0 * p).square() + ((-p).log1p() - p.log()).square().reciprocal()
        x = (self.probs - 0.5).square()
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), exact, taylor)

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """icdf of uniform noise (differentiable in the parameters)."""
        return self.icdf(rand(self._extended_shape(sample_shape), self.probs))

    def log_prob(self, value: Tensor) -> Tensor:
        """x log p + (1 - x) log(1 - p) + log C(p)."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -bce_with_logits(logits, value) + self._cont_bern_log_norm()

    def cdf(self, value: Tensor) -> Tensor:
        """(p^x (1 - p)^(1 - x) + p - 1) / (2p - 1), x near 1/2; 0 at x <= 0 and 1 at x >= 1."""
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        exact = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inside = where(self._outside_unstable_region(), exact, value)
        return where(value <= 0.0, 0.0, where(value >= 1.0, 1.0, inside))

    def icdf(self, value: Tensor) -> Tensor:
        """(log1p(-p + u (2p - 1)) - log1p(-p)) / (log p - log1p(-p)); u itself near 1/2."""
        p = self._cut_probs()
        exact = (((2.0 * p - 1.0) * value - p).log1p() - (-p).log1p()) / (p.log() - (-p).log1p())
        return where(self._outside_unstable_region(), exact, value)

    def entropy(self) -> Tensor:
        """-E log p(X) = E X (log(1 - p) - log p) - log C(p) - log(1 - p)."""
        log_q, log_p = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_q - log_p) - self._cont_bern_log_norm() - log_q

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.logits,)

    def _log_normalizer(self, x: Tensor) -> Tensor:  # type: ignore[override]
        """log |expm1(x) / x| for logits x; near 0 (inside lims - 1/2, as PyTorch): x/2 + x^2/24 - x^4/2880."""
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = where(outside, x, self._lims[0] - 0.5)
        exact = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.square() / 24.0 - x.square().square() / 2880.0
        return where(outside, exact, taylor)


__all__ = ["ContinuousBernoulli"]
