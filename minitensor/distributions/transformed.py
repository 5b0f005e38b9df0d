"""TransformedDistribution (Y = f(X) for X from a base distribution and f a chain of transforms) and the
distributions built on it: Gumbel, HalfNormal, HalfCauchy, Weibull, Pareto and LogisticNormal
(``torch.distributions``); the relaxed ones are in :mod:`.relaxed`, the KL divergences in :mod:`.kl_transformed`.

log p_Y(y) = log p_X(f^-1(y)) - log |det df/dx| at x = f^-1(y); ``cdf``/``icdf`` go through the base's when every
transform is monotone (a decreasing chain flips F to 1 - F)."""

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
from .continuous import Cauchy, Exponential, Normal, Uniform
from .distribution import Distribution, _size, broadcast_all, full_like, sum_rightmost
from .multivariate import Independent
from .transform_base import ComposeTransform, Transform
from .transforms_elementwise import AbsTransform, AffineTransform, ExpTransform, PowerTransform
from .transforms_vector import StickBreakingTransform

EULER = 0.57721566490153286060
"""The Euler-Mascheroni constant."""
LOG2 = math.log(2.0)


class TransformedDistribution(Distribution):
    """The law of f(X), X ~ ``base_distribution``, f = ``transforms`` applied in order. The base is expanded to the
    batch shape the transforms broadcast it to, and wrapped in Independent when the transforms need more event dims
    than it has; the event shape is the larger of what the transforms couple and what the base couples."""

    arg_constraints: dict[str, constraints.Constraint] = {}

    def __init__(self, base_distribution: Distribution, transforms: Transform | list[Transform],
                 validate_args: bool | None = None) -> None:
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        chain = ComposeTransform(self.transforms)
        domain_dim, codomain_dim = chain.domain.event_dim, chain.codomain.event_dim
        if len(base_shape) < domain_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least {domain_dim}, but got "
                             f"{base_shape}.")
        forward_shape = chain.forward_shape(base_shape)
        expanded = chain.inverse_shape(forward_shape)
        if expanded != base_shape:
            base_distribution = base_distribution.expand(expanded[: len(expanded) - base_event_dim])
        if domain_dim > base_event_dim:
            base_distribution = Independent(base_distribution, domain_dim - base_event_dim)
        self.base_dist = base_distribution
        event_dim = max(codomain_dim, base_event_dim + codomain_dim - domain_dim)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Any:
        new = self._get_checked_instance(TransformedDistribution, _instance)
        shape = _size(batch_shape) + self.event_shape
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        new.base_dist = self.base_dist.expand(shape[: len(shape) - len(self.base_dist.event_shape)])
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self) -> Any:
        if not self.transforms:
            return self.base_dist.support
        codomain = self.transforms[-1].codomain
        extra = len(self.event_shape) - codomain.event_dim
        return constraints.independent(codomain, extra) if extra > 0 else codomain

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        with no_grad():
            return self._push(self.base_dist.sample(sample_shape))

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        return self._push(self.base_dist.rsample(sample_shape))

    def _push(self, x: Tensor) -> Tensor:
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value: Tensor) -> Tensor:
        """Walk back through the transforms, subtracting each log |det J| summed over the event dims it does not
        treat as its own, then add the base's log-density."""
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        total: Any = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            total = total - sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
            y = x
        return total + sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))  # type: ignore[no-any-return]

    def _monotonize_cdf(self, value: Tensor) -> Tensor:
        """``value`` or 1 - ``value`` where the chain of transforms is decreasing."""
        sign: Any = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5  # type: ignore[no-any-return]

    def cdf(self, value: Tensor) -> Tensor:
        for t in reversed(self.transforms):
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value: Tensor) -> Tensor:
        return self._push(self.base_dist.icdf(self._monotonize_cdf(value)))


def _are_numbers(*values: Any) -> bool:
    return all(isinstance(v, Number) for v in values)


class Gumbel(TransformedDistribution):
    """Density exp(-(z + exp(-z))) / scale at z = (x - loc) / scale: loc - scale log(-log U) for U uniform."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real  # type: ignore[assignment]

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        info = finfo(self.loc.dtype)
        if _are_numbers(loc, scale):
            base = Uniform(info.tiny, 1 - info.eps, validate_args=validate_args)
        else:
            base = Uniform(full_like(self.loc, info.tiny), full_like(self.loc, 1 - info.eps), validate_args=validate_args)
        chain = [ExpTransform().inv, AffineTransform(0, -full_like(self.scale, 1.0)), ExpTransform().inv,
                 AffineTransform(loc, -self.scale)]
        super().__init__(base, chain, validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Any:
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc, new.scale = self.loc.expand(*batch_shape), self.scale.expand(*batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value: Tensor) -> Tensor:
        """z - exp(z) - log(scale) with z = (loc - x) / scale (directly, for precision)."""
        if self._validate_args:
            self._validate_sample(value)
        z = (self.loc - value) / self.scale
        return z - z.exp() - self.scale.log()

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * EULER

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.square()

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + EULER)


class _Folded(TransformedDistribution):
    """|X| for X symmetric about 0 with the given ``scale`` (HalfNormal, HalfCauchy): density 2 p_X(x) on x >= 0,
    cdf 2 F_X(x) - 1."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]
    base_family: Any = Normal

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(self.base_family(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Any:
        return super().expand(batch_shape, _instance=self._get_checked_instance(type(self), _instance))

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale  # type: ignore[attr-defined, no-any-return]

    @property
    def mode(self) -> Tensor:
        return full_like(self.scale, 0.0)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return where(value >= 0, self.base_dist.log_prob(value) + LOG2, -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - LOG2


class HalfNormal(_Folded):
    """|X| for X ~ N(0, scale**2)."""

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale.square() * (1 - 2 / math.pi)


class HalfCauchy(_Folded):
    """|X| for X ~ Cauchy(0, scale); its mean and variance are infinite."""

    base_family = Cauchy

    @property
    def mean(self) -> Tensor:
        return full_like(self.scale, math.inf, self._extended_shape())

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance


class Weibull(TransformedDistribution):
    """scale * E ** (1 / concentration) for E ~ Exponential(1): cdf 1 - exp(-(x / scale) ** concentration)."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive  # type: ignore[assignment]

    def __init__(self, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(full_like(self.scale, 1.0), validate_args=validate_args)
        chain: list[Transform] = [PowerTransform(self.concentration_reciprocal), AffineTransform(0, self.scale)]
        super().__init__(base, chain, validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Any:
        new = self._get_checked_instance(Weibull, _instance)
        new.scale, new.concentration = self.scale.expand(*batch_shape), self.concentration.expand(*batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        chain = [PowerTransform(new.concentration_reciprocal), AffineTransform(0, new.scale)]
        TransformedDistribution.__init__(new, self.base_dist.expand(batch_shape), chain, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.scale * (1 + self.concentration_reciprocal).lgamma().exp()

    @property
    def mode(self) -> Tensor:
        c = self.concentration
        return self.scale * ((c - 1) / c) ** c.reciprocal()

    @property
    def variance(self) -> Tensor:
        r = self.concentration_reciprocal
        return self.scale.square() * ((1 + 2 * r).lgamma().exp() - (2 * (1 + r).lgamma()).exp())

    def entropy(self) -> Tensor:
        r = self.concentration_reciprocal
        return EULER * (1 - r) + (self.scale * r).log() + 1


class Pareto(TransformedDistribution):
    """scale * exp(E) for E ~ Exponential(alpha): density alpha scale^alpha / x^(alpha + 1) on x >= scale."""

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale: Any, alpha: Any, validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        chain: list[Transform] = [ExpTransform(), AffineTransform(0, self.scale)]
        super().__init__(Exponential(self.alpha, validate_args=validate_args), chain, validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Any:
        new = self._get_checked_instance(Pareto, _instance)
        new.scale, new.alpha = self.scale.expand(*batch_shape), self.alpha.expand(*batch_shape)
        return super().expand(batch_shape, _instance=new)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> Any:
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self) -> Tensor:
        """alpha scale / (alpha - 1); inf for alpha <= 1."""
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        """scale^2 alpha / ((alpha - 1)^2 (alpha - 2)); inf for alpha <= 2."""
        a = self.alpha.clamp(min=2)
        return self.scale.square() * a / ((a - 1).square() * (a - 2))

    def entropy(self) -> Tensor:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class LogisticNormal(TransformedDistribution):
    """The stick-breaking image on the simplex of a Normal(loc, scale) vector (one dim longer than loc)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base: Distribution = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand((1,))
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Any:
        return super().expand(batch_shape, _instance=self._get_checked_instance(LogisticNormal, _instance))

    @property
    def loc(self) -> Tensor:
        return self.base_dist.base_dist.loc  # type: ignore[attr-defined, no-any-return]

    @property
    def scale(self) -> Tensor:
        return self.base_dist.base_dist.scale  # type: ignore[attr-defined, no-any-return]


__all__ = ["TransformedDistribution", "Gumbel", "HalfNormal", "HalfCauchy", "Weibull", "Pareto", "LogisticNormal"]
