"""The gamma family: Gamma, Beta, Dirichlet and StudentT.

Their draws come from standard-gamma variates of minitensor's shared generator. Unlike PyTorch they have no
``rsample`` (``has_rsample`` is False): PyTorch differentiates gamma draws through implicit reparameterisation
(the derivative of the regularised incomplete gamma function in its shape), which minitensor has no op for.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Number
from typing import Any

import numpy as np

from .. import creation
from ..autodiff import no_grad
from ..random_state import rng_for
from ..tensor import Tensor
from ..tensor_compare import where
from ..tensor_igamma import igamma
from ..tensor_join import stack
from ..type_info import finfo
from . import constraints
from .continuous import _batch, randn
from .distribution import Distribution, broadcast_all, expand_params, full_like
from .exp_family import ExponentialFamily


def standard_gamma(concentration: Tensor) -> Tensor:
    """Gamma(concentration, 1) draws of ``concentration``'s shape, outside the graph, at least the dtype's tiny."""
    alpha = concentration.detach().to_numpy().astype(np.float64)
    draws = rng_for(None).standard_gamma(alpha)
    tiny = finfo(concentration.dtype).tiny
    return creation.tensor(np.maximum(draws, tiny), dtype=concentration.dtype, backend=concentration.backend)


class Gamma(ExponentialFamily):
    """Density rate^c x^(c - 1) exp(-rate x) / Gamma(c) for concentration c; natural parameters (c - 1, -rate)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = False
    _mean_carrier_measure = 0

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(_batch(self.rate, concentration, rate), validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Gamma:
        return expand_params(self, Gamma, batch_shape, ("concentration", "rate"), _instance)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.square()

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            draws = standard_gamma(self.concentration.expand(*shape)) / self.rate.expand(*shape)
            return draws.clamp(min=finfo(draws.dtype).tiny)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return c.xlogy(r) + (c - 1).xlogy(value) - r * value - c.lgamma()

    def cdf(self, value: Tensor) -> Tensor:
        """The regularised lower incomplete gamma P(concentration, rate x) (no gradient to concentration, as in
        PyTorch)."""
        if self._validate_args:
            self._validate_sample(value)
        return igamma(self.concentration, self.rate * value)

    def entropy(self) -> Tensor:
        c = self.concentration
        return c - self.rate.log() + c.lgamma() + (1.0 - c) * c.digamma()

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:  # type: ignore[override]
        """lgamma(x + 1) - (x + 1) log(-y)."""
        return (x + 1).lgamma() - (x + 1) * (-y).log()


class Dirichlet(ExponentialFamily):
    """Density prod x_i^(c_i - 1) / B(c) on the simplex; natural parameter c."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = False

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Dirichlet:
        return expand_params(self, Dirichlet, batch_shape, ("concentration",), _instance)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        with no_grad():
            g = standard_gamma(self.concentration.expand(*self._extended_shape(sample_shape)))
            x = g / g.sum(-1, keepdim=True)
            info = finfo(x.dtype)
            return x.clamp(min=info.tiny, max=1 - info.eps)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (c - 1).xlogy(value).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        """(c - 1)+ normalised; where every c_i < 1, the first corner (PyTorch's argmax of that all-nan row)."""
        c = self.concentration
        shifted = (c - 1).clamp(min=0)
        interior = shifted / shifted.sum(-1, keepdim=True)
        corner = (creation.arange(c.shape[-1], backend=c.backend) == 0).cast(c.dtype)
        return where((c < 1).all(-1, keepdim=True), corner, interior)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        total = c.sum(-1, keepdim=True)
        return c * (total - c) / (total.square() * (total + 1))

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.shape[-1]
        total = c.sum(-1)
        return c.lgamma().sum(-1) - total.lgamma() - (k - total) * total.digamma() - ((c - 1.0) * c.digamma()).sum(-1)

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:  # type: ignore[override]
        """log B(x) = sum lgamma(x_i) - lgamma(sum x_i)."""
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()


class Beta(ExponentialFamily):
    """Density x^(c1 - 1) (1 - x)^(c0 - 1) / B(c1, c0) on [0, 1]: a two-category Dirichlet; natural parameters
    (c1, c0)."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = False

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        c1, c0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(stack([c1, c0], -1), validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Beta:
        new = self._get_checked_instance(Beta, _instance)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self) -> Tensor:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Tensor:
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.square() * (total + 1))

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        return self._dirichlet.sample(sample_shape)[..., 0]

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return self.concentration1, self.concentration0

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:  # type: ignore[override]
        return x.lgamma() + y.lgamma() - (x + y).lgamma()

    def __repr__(self) -> str:
        return f"Beta(concentration1: {tuple(self.concentration1.shape)}, concentration0: {tuple(self.concentration0.shape)})"


class StudentT(Distribution):
    """Student's t with ``df`` degrees of freedom, shifted by ``loc`` and scaled by ``scale``."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0, validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        numbers = all(isinstance(a, Number) for a in (df, loc, scale))
        super().__init__(() if numbers else tuple(self.df.shape), validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> StudentT:
        return expand_params(self, StudentT, batch_shape, ("df", "loc", "scale"), _instance)

    @property
    def mean(self) -> Tensor:
        return where(self.df > 1, self.loc, math.nan)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        df = self.df
        finite = self.scale.square() * df / (df - 2)
        return where(df > 2, finite, where(df > 1, full_like(df, math.inf), math.nan))

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            chi2 = 2 * standard_gamma((0.5 * self.df).expand(*shape))
            y = randn(shape, self.df) * (chi2 / self.df).rsqrt()
            return self.loc + self.scale * y

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi) + (0.5 * df).lgamma()
             - (0.5 * (df + 1.0)).lgamma())
        return -0.5 * (df + 1.0) * (y.square() / df).log1p() - z

    def entropy(self) -> Tensor:
        df = self.df
        half, half_up = 0.5 * df, 0.5 * (df + 1)
        lbeta = half.lgamma() + math.lgamma(0.5) - half_up.lgamma()
        return (self.scale.log() + half_up * (half_up.digamma() - half.digamma()) + 0.5 * df.log() + lbeta)


__all__ = ["Gamma", "Dirichlet", "Beta", "StudentT", "standard_gamma"]
