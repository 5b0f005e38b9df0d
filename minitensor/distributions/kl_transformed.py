"""KL divergences of the transformed families and between different families (``torch.distributions.kl``'s pairs
beyond the same-family ones in :mod:`.kl`), registered with :func:`.kl.register_kl`.

A cross pair is KL(p || q) = -H(p) + CE(p, q), the cross-entropy CE(p, q) = -E_p[log q(X)] written once per q family
from the few expectations under p it needs: E X and Var X (q Normal), E X (q Exponential), E X and E log X
(q Gamma), E X and E exp(-(X - loc) / scale) (q Gumbel), E log X (q Pareto), E log X and E log(1 - X) (q Beta),
nothing but the support (q Uniform). Where p puts mass outside q's support, or an expectation is infinite, the
divergence is infinite: everywhere for the pairs whose supports never nest (Normal-Exponential, Gamma-Uniform, ...),
and for the parameters that make it so in the others (Uniform-Gamma with low < 0, Pareto-Normal with alpha <= 2).
Infinite entries get zero gradients: the formula runs on harmless stand-in parameters there.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..tensor import Tensor
from ..tensor_broadcast import broadcast_shapes
from ..tensor_compare import where
from .continuous import Cauchy, Exponential, Laplace, LogNormal, Normal, Uniform
from .discrete import Bernoulli, Binomial, Poisson
from .distribution import HALF_LOG_2PI, Distribution, full_like
from .gamma import Beta, Gamma
from .kl import kl_divergence, register_kl
from .transformed import EULER, Gumbel, HalfNormal, Pareto, TransformedDistribution

KLFn = Callable[[Any, Any], Tensor]
CE = Callable[[Tensor, Tensor, Any], Tensor]
"""A cross-entropy from a family with two parameters, ``ce(param1, param2, q)``."""

# Same family, or the same map of two base distributions.


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: TransformedDistribution, q: TransformedDistribution) -> Tensor:
    """KL is invariant under a shared bijection: the base distributions' KL when the transforms are equal."""
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError("KL between TransformedDistributions needs equal transforms and event shapes")
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p: LogNormal, q: LogNormal) -> Tensor:
    """exp is a shared bijection: the KL of the Normals underneath (torch reaches it as two TransformedDistributions)."""
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p: Gumbel, q: Gumbel) -> Tensor:
    r, a, b = p.scale / q.scale, q.loc / q.scale, p.loc / q.scale
    return -r.log() - a + b + r * EULER + (a + (1 + r).lgamma() - b).exp() - (1 + EULER)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p: HalfNormal, q: HalfNormal) -> Tensor:
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p: Pareto, q: Pareto) -> Tensor:
    """q.alpha log(p.scale / q.scale) - log(q.alpha / p.alpha) + q.alpha / p.alpha - 1; inf where p's support
    starts below q's."""
    ratio = q.alpha / p.alpha
    kl = q.alpha * (p.scale / q.scale).log() - ratio.log() + ratio - 1
    return where(p.scale < q.scale, math.inf, kl)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p: Cauchy, q: Cauchy) -> Tensor:
    """log(((s_p + s_q)^2 + (loc_p - loc_q)^2) / (4 s_p s_q)) (Chyzak and Nielsen, 2019); symmetric in p and q."""
    return ((p.scale + q.scale).square() + (p.loc - q.loc).square()).log() - (4 * p.scale * q.scale).log()


# Disjoint supports: p puts mass where q has none, for every parameter.


def _register_infinite(type_p: type, param: str, *types_q: type) -> None:
    """KL(type_p || each of types_q) = inf over the pair's broadcast batch shape, in the dtype and backend of p's
    ``param``."""

    def kl(p: Distribution, q: Distribution) -> Tensor:
        return full_like(getattr(p, param), math.inf, broadcast_shapes(p.batch_shape, q.batch_shape))

    kl.__name__ = kl.__qualname__ = f"_kl_{type_p.__name__.lower()}_infinity"
    for type_q in types_q:
        register_kl(type_p, type_q)(kl)


_register_infinite(Beta, "concentration1", Pareto)
_register_infinite(Exponential, "rate", Beta, Pareto, Uniform)
_register_infinite(Gamma, "concentration", Beta, Pareto, Uniform)
_register_infinite(Gumbel, "loc", Beta, Exponential, Gamma, Pareto, Uniform)
_register_infinite(Laplace, "loc", Beta, Exponential, Gamma, Pareto, Uniform)
_register_infinite(Normal, "loc", Beta, Exponential, Gamma, Pareto, Uniform)
_register_infinite(Pareto, "scale", Beta, Uniform)
_register_infinite(Poisson, "rate", Bernoulli, Binomial)


def _infinite_where(outside: Tensor, kl: Tensor) -> Tensor:
    return where(outside, math.inf, kl)


# Cross-entropies -E_p[log q(X)] from p's expectations, for p's support inside q's.


def _ce_normal(mean: Tensor, var: Tensor, q: Normal) -> Tensor:
    """log(scale sqrt(2 pi)) + E(X - loc)^2 / (2 scale^2), with E(X - loc)^2 = Var X + (E X - loc)^2."""
    return q.scale.log() + HALF_LOG_2PI + (var + (mean - q.loc).square()) / (2 * q.scale.square())


def _ce_exponential(mean: Tensor, q: Exponential) -> Tensor:
    """rate E X - log rate."""
    return q.rate * mean - q.rate.log()


def _ce_gamma(mean: Tensor, mean_log: Tensor, q: Gamma) -> Tensor:
    """lgamma(c) - c log rate - (c - 1) E log X + rate E X for concentration c."""
    c = q.concentration
    return c.lgamma() - c * q.rate.log() - (c - 1) * mean_log + q.rate * mean


def _ce_gumbel(mean: Tensor, mean_exp: Tensor, q: Gumbel) -> Tensor:
    """log scale + E z + E exp(-z) for z = (X - loc) / scale; ``mean_exp`` is E exp(-z)."""
    return q.scale.log() + (mean - q.loc) / q.scale + mean_exp


def _ce_pareto(mean_log: Tensor, q: Pareto) -> Tensor:
    """(alpha + 1) E log X - log alpha - alpha log scale, for X >= scale."""
    return (q.alpha + 1) * mean_log - q.alpha.log() - q.alpha * q.scale.log()


def _ce_beta(mean_log: Tensor, mean_log1m: Tensor, q: Beta) -> Tensor:
    """log B(c1, c0) - (c1 - 1) E log X - (c0 - 1) E log(1 - X), for X in [0, 1]."""
    c1, c0 = q.concentration1, q.concentration0
    return c1.lgamma() + c0.lgamma() - (c1 + c0).lgamma() - (c1 - 1) * mean_log - (c0 - 1) * mean_log1m


def _uniform_ce(outside: Callable[[Any, Any], Tensor] | None = None) -> Callable[[CE], KLFn]:
    """Make ``ce(low, high, q)`` (the cross-entropy from Uniform(low, high)) a KL: ce - log(high - low), inf where
    ``outside(p, q)``; the formula sees (low, high) = (1/4, 3/4) there."""

    def decorator(ce: CE) -> KLFn:
        def kl(p: Uniform, q: Any) -> Tensor:
            low, high = p.low, p.high
            if outside is None:
                return ce(low, high, q) - (high - low).log()
            out = outside(p, q)
            low, high = where(out, 0.25, low), where(out, 0.75, high)
            return _infinite_where(out, ce(low, high, q) - (high - low).log())

        kl.__name__ = kl.__qualname__ = ce.__name__.replace("_ce_", "_kl_")
        return kl

    return decorator


def _uniform_mean_log(low: Tensor, high: Tensor) -> Tensor:
    """E log X for X ~ Uniform(low, high), 0 <= low: (high log high - low log low) / (high - low) - 1."""
    return (high.xlogy(high) - low.xlogy(low)) / (high - low) - 1


# p Uniform.


@register_kl(Uniform, Normal)
@_uniform_ce()
def _ce_uniform_normal(low: Tensor, high: Tensor, q: Normal) -> Tensor:
    return _ce_normal((low + high) / 2, (high - low).square() / 12, q)


@register_kl(Uniform, Gumbel)
@_uniform_ce()
def _ce_uniform_gumbel(low: Tensor, high: Tensor, q: Gumbel) -> Tensor:
    """E exp(-z) = scale (exp(-z_low) - exp(-z_high)) / (high - low)."""
    z_low, z_high = (low - q.loc) / q.scale, (high - q.loc) / q.scale
    return _ce_gumbel((low + high) / 2, q.scale * ((-z_low).exp() - (-z_high).exp()) / (high - low), q)


@register_kl(Uniform, Exponential)
@_uniform_ce(lambda p, q: p.low < 0)
def _ce_uniform_exponential(low: Tensor, high: Tensor, q: Exponential) -> Tensor:
    return _ce_exponential((low + high) / 2, q)


@register_kl(Uniform, Gamma)
@_uniform_ce(lambda p, q: p.low < 0)
def _ce_uniform_gamma(low: Tensor, high: Tensor, q: Gamma) -> Tensor:
    return _ce_gamma((low + high) / 2, _uniform_mean_log(low, high), q)


@register_kl(Uniform, Pareto)
@_uniform_ce(lambda p, q: p.low < q.scale)
def _ce_uniform_pareto(low: Tensor, high: Tensor, q: Pareto) -> Tensor:
    return _ce_pareto(_uniform_mean_log(low, high), q)


@register_kl(Uniform, Beta)
@_uniform_ce(lambda p, q: (p.low < 0) | (p.high > 1))
def _ce_uniform_beta(low: Tensor, high: Tensor, q: Beta) -> Tensor:
    """1 - X ~ Uniform(1 - high, 1 - low)."""
    return _ce_beta(_uniform_mean_log(low, high), _uniform_mean_log(1 - high, 1 - low), q)


# p Beta, Exponential, Gamma: supports inside [0, inf).


def _beta_mean_log(p: Beta) -> Tensor:
    """E log X = digamma(c1) - digamma(c1 + c0)."""
    return p.concentration1.digamma() - (p.concentration1 + p.concentration0).digamma()


@register_kl(Beta, Normal)
def _kl_beta_normal(p: Beta, q: Normal) -> Tensor:
    return -p.entropy() + _ce_normal(p.mean, p.variance, q)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p: Beta, q: Exponential) -> Tensor:
    return -p.entropy() + _ce_exponential(p.mean, q)


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p: Beta, q: Gamma) -> Tensor:
    return -p.entropy() + _ce_gamma(p.mean, _beta_mean_log(p), q)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p: Beta, q: Uniform) -> Tensor:
    """inf unless [0, 1] lies inside [low, high]."""
    return _infinite_where((q.low > 0) | (q.high < 1), (q.high - q.low).log() - p.entropy())


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p: Exponential, q: Normal) -> Tensor:
    """E X = 1 / rate, Var X = 1 / rate^2."""
    mean = p.rate.reciprocal()
    return -p.entropy() + _ce_normal(mean, mean.square(), q)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p: Exponential, q: Gamma) -> Tensor:
    """E log X = -(log rate + Euler's gamma)."""
    return -p.entropy() + _ce_gamma(p.rate.reciprocal(), -(p.rate.log() + EULER), q)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p: Exponential, q: Gumbel) -> Tensor:
    """E exp(-X / s) = rate s / (rate s + 1) (the Laplace transform), so E exp(-z) = exp(loc / s) rate s / (rate s + 1)."""
    rs = p.rate * q.scale
    return -p.entropy() + _ce_gumbel(p.rate.reciprocal(), (q.loc / q.scale).exp() * rs / (rs + 1), q)


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p: Gamma, q: Normal) -> Tensor:
    return -p.entropy() + _ce_normal(p.mean, p.variance, q)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p: Gamma, q: Exponential) -> Tensor:
    return -p.entropy() + _ce_exponential(p.mean, q)


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p: Gamma, q: Gumbel) -> Tensor:
    """E exp(-X / s) = (1 + 1 / (rate s))^-c, so E exp(-z) = exp(loc / s - c log(1 + 1 / (rate s)))."""
    log_mgf = -p.concentration * (p.rate * q.scale).reciprocal().log1p()
    return -p.entropy() + _ce_gumbel(p.mean, (q.loc / q.scale + log_mgf).exp(), q)


# p on the whole line (Gumbel, Laplace, Normal).


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p: Gumbel, q: Normal) -> Tensor:
    return -p.entropy() + _ce_normal(p.mean, p.variance, q)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p: Laplace, q: Normal) -> Tensor:
    return -p.entropy() + _ce_normal(p.loc, p.variance, q)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p: Normal, q: Gumbel) -> Tensor:
    """E exp(-z) = exp(-(loc_p - loc_q) / s + scale_p^2 / (2 s^2)) (the normal's moment generating function)."""
    log_mgf = (q.loc - p.loc) / q.scale + (p.scale / q.scale).square() / 2
    return -p.entropy() + _ce_gumbel(p.loc, log_mgf.exp(), q)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p: Normal, q: Laplace) -> Tensor:
    """CE = log(2 b) + E|X - loc_q| / b, with E|X - m| = s sqrt(2 / pi) exp(-d^2 / (2 s^2)) + d erf(d / (s sqrt 2))
    for d = loc_p - m (the folded normal's mean)."""
    d, s = p.loc - q.loc, p.scale
    mean_abs = s * math.sqrt(2 / math.pi) * (-(d / s).square() / 2).exp() + d * (d / (s * math.sqrt(2))).erf()
    return -p.entropy() + (2 * q.scale).log() + mean_abs / q.scale


# p Pareto: E X is infinite for alpha <= 1, E X^2 for alpha <= 2.


def _pareto_ce(min_alpha: float) -> Callable[[CE], KLFn]:
    """Make ``ce(scale, alpha, q)`` (the cross-entropy from Pareto(scale, alpha)) a KL: -H(p) + ce, with
    H(p) = log(scale / alpha) + 1 + 1 / alpha, inf where alpha <= ``min_alpha``; the formula sees
    alpha = min_alpha + 1 there."""

    def decorator(ce: CE) -> KLFn:
        def kl(p: Pareto, q: Any) -> Tensor:
            out = p.alpha <= min_alpha
            s, a = p.scale, where(out, min_alpha + 1.0, p.alpha)
            return _infinite_where(out, ce(s, a, q) - (s / a).log() - 1 - a.reciprocal())

        kl.__name__ = kl.__qualname__ = ce.__name__.replace("_ce_", "_kl_")
        return kl

    return decorator


@register_kl(Pareto, Exponential)
@_pareto_ce(1)
def _ce_pareto_exponential(scale: Tensor, alpha: Tensor, q: Exponential) -> Tensor:
    """E X = alpha scale / (alpha - 1)."""
    return _ce_exponential(alpha * scale / (alpha - 1), q)


@register_kl(Pareto, Gamma)
@_pareto_ce(1)
def _ce_pareto_gamma(scale: Tensor, alpha: Tensor, q: Gamma) -> Tensor:
    """E log X = log scale + 1 / alpha (log(X / scale) is exponential with rate alpha)."""
    return _ce_gamma(alpha * scale / (alpha - 1), scale.log() + alpha.reciprocal(), q)


@register_kl(Pareto, Normal)
@_pareto_ce(2)
def _ce_pareto_normal(scale: Tensor, alpha: Tensor, q: Normal) -> Tensor:
    """Var X = alpha scale^2 / ((alpha - 1)^2 (alpha - 2)) = (E X)^2 / (alpha (alpha - 2))."""
    mean = alpha * scale / (alpha - 1)
    return _ce_normal(mean, mean.square() / (alpha * (alpha - 2)), q)


# Discrete.


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p: Bernoulli, q: Poisson) -> Tensor:
    """CE = rate - P(X = 1) log rate (log 0! = log 1! = 0)."""
    return -p.entropy() + q.rate - p.probs.xlogy(q.rate)


__all__: list[str] = []
