"""GeneralizedPareto (``torch.distributions.generalized_pareto``): survival function (1 + c z)^(-1/c) at
z = (x - loc) / scale for concentration c (exp(-z) at c = 0, tested with isclose as PyTorch), on x >= loc (and
x <= loc - scale / c when c < 0). Reparameterised: ``rsample`` is the icdf of uniform noise."""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Number
from typing import Any

from ..tensor import Tensor
from ..tensor_compare import where
from . import constraints
from .continuous import rand
from .distribution import Distribution, broadcast_all, expand_params


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution with ``loc``, ``scale`` and ``concentration``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        numbers = all(isinstance(a, Number) for a in (loc, scale, concentration))
        super().__init__(() if numbers else tuple(self.loc.shape), validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> GeneralizedPareto:
        return expand_params(self, GeneralizedPareto, batch_shape, ("loc", "scale", "concentration"),  # type: ignore[no-any-return]
                             _instance)

    def _zero_and_safe(self) -> tuple[Tensor, Tensor]:
        """(where concentration is 0, the concentration with 1 there): the c != 0 formulas run on the second."""
        c = self.concentration
        zero = c.abs() <= 1e-8  # isclose(c, 0)
        return zero, where(zero, 1.0, c)

    def _z(self, value: Tensor) -> Tensor:
        return (value - self.loc) / self.scale

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        return self.icdf(rand(self._extended_shape(sample_shape), self.loc))

    def log_prob(self, value: Tensor) -> Tensor:
        """-log scale - (1 + 1/c) log(1 + c z); -log scale - z at c = 0."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, c = self._zero_and_safe()
        power = 1 / c + 1
        nonzero = where(power == 0, 0.0, power * (c * z).log1p())
        return -self.scale.log() - where(zero, z, nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        """log P(X > x) = -log(1 + c z) / c; -z at c = 0."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, c = self._zero_and_safe()
        return where(zero, -z, -(c * z).log1p() / c)

    def log_cdf(self, value: Tensor) -> Tensor:
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        return self.log_cdf(value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        """loc + scale ((1 - u)^(-c) - 1) / c; loc - scale log(1 - u) at c = 0."""
        zero, c = self._zero_and_safe()
        log_rest = (-value).log1p()
        return where(zero, self.loc - self.scale * log_rest, self.loc + self.scale / c * (-c * log_rest).expm1())

    @property
    def mean(self) -> Tensor:
        """loc + scale / (1 - c); nan for c >= 1."""
        valid = self.concentration < 1
        c = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - c), math.nan)

    @property
    def variance(self) -> Tensor:
        """scale^2 / ((1 - c)^2 (1 - 2c)); nan for c >= 1/2."""
        valid = self.concentration < 0.5
        c = where(valid, self.concentration, 0.25)
        return where(valid, self.scale.square() / ((1 - c).square() * (1 - 2 * c)), math.nan)

    def entropy(self) -> Tensor:
        return (self.scale.log() + self.concentration + 1).expand(*self._batch_shape)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        """[loc, inf), or [loc, loc - scale / c] for c < 0."""
        c = self.concentration
        upper = where(c < 0, self.loc - self.scale / where(c < 0, c, -1.0), math.inf)
        return constraints.interval(self.loc, upper)


__all__ = ["GeneralizedPareto"]
