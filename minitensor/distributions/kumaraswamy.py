"""Kumaraswamy (``torch.distributions.kumaraswamy``): density a b x^(a - 1) (1 - x^a)^(b - 1) on [0, 1] for
concentration1 a and concentration0 b, built as (1 - U^(1/b))^(1/a) for U uniform on [0, 1] (so reparameterised,
with a closed-form cdf and icdf)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..tensor import Tensor
from ..tensor_compare import where
from . import constraints
from .continuous import Uniform
from .distribution import broadcast_all, full_like
from .transformed import EULER, TransformedDistribution
from .transforms_elementwise import AffineTransform, PowerTransform


def _moment(a: Tensor, b: Tensor, n: int) -> Tensor:
    """E X^n = b B(1 + n / a, b)."""
    shifted = 1 + n / a
    return b * (shifted.lgamma() + b.lgamma() - (shifted + b).lgamma()).exp()


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution with ``concentration1`` a and ``concentration0`` b."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(full_like(self.concentration0, 0.0), full_like(self.concentration0, 1.0),
                       validate_args=validate_args)
        chain = [PowerTransform(self.concentration0.reciprocal()), AffineTransform(1.0, -1.0),
                 PowerTransform(self.concentration1.reciprocal())]
        super().__init__(base, chain, validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Any:
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(*batch_shape)
        new.concentration0 = self.concentration0.expand(*batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return _moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        """((a - 1) / (a b - 1))^(1 / a) for a, b >= 1 (not both 1); nan otherwise."""
        a, b = self.concentration1, self.concentration0
        valid = (a >= 1) & (b >= 1) & ((a > 1) | (b > 1))
        a, b = where(valid, a, 2.0), where(valid, b, 2.0)
        return where(valid, ((a - 1) / (a * b - 1)).pow(a.reciprocal()), math.nan)

    @property
    def variance(self) -> Tensor:
        return _moment(self.concentration1, self.concentration0, 2) - self.mean.square()

    def entropy(self) -> Tensor:
        """(1 - 1/b) + (1 - 1/a) H_b - log a - log b, with H_b = digamma(b + 1) + Euler's gamma (the b-th harmonic
        number)."""
        a, b = self.concentration1, self.concentration0
        harmonic = (b + 1).digamma() + EULER
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic - a.log() - b.log()


__all__ = ["Kumaraswamy"]
