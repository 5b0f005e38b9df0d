"""Distributions built from gamma variates: Chi2 (a Gamma), InverseGamma (1 / X for X ~ Gamma) and FisherSnedecor
(a ratio of two scaled chi-squared variates). Like Gamma they have no ``rsample`` here (see :mod:`.gamma`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Number
from typing import Any

from ..autodiff import no_grad
from ..tensor import Tensor
from ..tensor_compare import where
from ..type_info import finfo
from . import constraints
from .distribution import Distribution, broadcast_all, full_like
from .gamma import Gamma
from .transformed import TransformedDistribution
from .transforms_elementwise import PowerTransform


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom: Gamma(df / 2, 1 / 2)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Any, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Chi2:
        return super().expand(batch_shape, self._get_checked_instance(Chi2, _instance))  # type: ignore[return-value]

    @property
    def df(self) -> Tensor:
        return self.concentration * 2


class InverseGamma(TransformedDistribution):
    """1 / X for X ~ Gamma(concentration, rate): density rate^c x^(-c - 1) exp(-rate / x) / Gamma(c)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive  # type: ignore[assignment]

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(full_like(base.rate, -1.0, ())), validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Any:
        return super().expand(batch_shape, _instance=self._get_checked_instance(InverseGamma, _instance))

    @property
    def concentration(self) -> Tensor:
        return self.base_dist.concentration  # type: ignore[attr-defined, no-any-return]

    @property
    def rate(self) -> Tensor:
        return self.base_dist.rate  # type: ignore[attr-defined, no-any-return]

    @property
    def mean(self) -> Tensor:
        """rate / (c - 1); inf for c <= 1."""
        c = self.concentration
        return where(c > 1, self.rate / where(c > 1, c - 1, 1.0), math.inf)

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        """rate^2 / ((c - 1)^2 (c - 2)); inf for c <= 2."""
        c = self.concentration
        safe = where(c > 2, c, 3.0)
        return where(c > 2, self.rate.square() / ((safe - 1).square() * (safe - 2)), math.inf)

    def entropy(self) -> Tensor:
        c = self.concentration
        return c + self.rate.log() + c.lgamma() - (1 + c) * c.digamma()


class FisherSnedecor(Distribution):
    """F(df1, df2): (U1 / df1) / (U2 / df2) for independent chi-squared U1, U2 with df1 and df2 degrees of freedom."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = False

    def __init__(self, df1: Any, df2: Any, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        numbers = isinstance(df1, Number) and isinstance(df2, Number)
        super().__init__(() if numbers else tuple(self.df1.shape), validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> FisherSnedecor:
        new = self._get_checked_instance(FisherSnedecor, _instance)
        shape = tuple(batch_shape)
        new.df1, new.df2 = self.df1.expand(*shape), self.df2.expand(*shape)
        new._gamma1, new._gamma2 = self._gamma1.expand(shape), self._gamma2.expand(shape)
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new  # type: ignore[no-any-return]

    @property
    def mean(self) -> Tensor:
        """df2 / (df2 - 2); nan for df2 <= 2."""
        valid = self.df2 > 2
        df2 = where(valid, self.df2, 3.0)
        return where(valid, df2 / (df2 - 2), math.nan)

    @property
    def mode(self) -> Tensor:
        """(df1 - 2) / df1 * df2 / (df2 + 2); nan for df1 <= 2."""
        valid = self.df1 > 2
        df1 = where(valid, self.df1, 3.0)
        return where(valid, (df1 - 2) / df1 * self.df2 / (self.df2 + 2), math.nan)

    @property
    def variance(self) -> Tensor:
        """2 df2^2 (df1 + df2 - 2) / (df1 (df2 - 2)^2 (df2 - 4)); nan for df2 <= 4."""
        valid = self.df2 > 4
        df1, df2 = self.df1, where(valid, self.df2, 5.0)
        return where(valid, 2 * df2.square() * (df1 + df2 - 2) / (df1 * (df2 - 2).square() * (df2 - 4)), math.nan)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """The ratio of the two gammas' draws, each at least the dtype's tiny."""
        with no_grad():
            shape = self._extended_shape(sample_shape)
            x1 = self._gamma1.sample(sample_shape).reshape(shape)
            x2 = self._gamma2.sample(sample_shape).reshape(shape)
            tiny = finfo(x2.dtype).tiny
            return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value: Tensor) -> Tensor:
        """log B(d1/2, d2/2)^-1 + (d1/2) log(d1/d2) + (d1/2 - 1) log x - ((d1 + d2)/2) log(1 + d1 x / d2)."""
        if self._validate_args:
            self._validate_sample(value)
        h1, h2, ratio = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        t1 = (h1 + h2).lgamma() - h1.lgamma() - h2.lgamma()
        t2 = h1 * ratio.log() + (h1 - 1) * value.log()
        return t1 + t2 - (h1 + h2) * (ratio * value).log1p()


__all__ = ["Chi2", "InverseGamma", "FisherSnedecor"]
