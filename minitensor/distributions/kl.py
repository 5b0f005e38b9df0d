"""KL(p || q) = E_p[log p(x) - log q(x)] in closed form, dispatched on the two distributions' types
(``torch.distributions.kl``). ``register_kl(P, Q)`` adds a formula; ``kl_divergence`` picks the most specific one
registered for the pair (the nearest base classes of p and of q)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

from ..tensor import Tensor
from ..tensor_compare import where
from .categorical import Categorical, OneHotCategorical
from .continuous import Exponential, Laplace, Normal, Uniform
from .discrete import Bernoulli, Binomial, Geometric, Poisson
from .distribution import Distribution, softplus, sum_rightmost
from .gamma import Beta, Dirichlet, Gamma
from .multivariate import Independent, MultivariateNormal, mahalanobis, solve_lower

KLFn = Callable[[Any, Any], Tensor]
_REGISTRY: dict[tuple[type, type], KLFn] = {}
_CACHE: dict[tuple[type, type], KLFn] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[KLFn], KLFn]:
    """A decorator registering ``fn(p, q)`` as KL(p || q) for p of ``type_p`` and q of ``type_q``."""
    for t in (type_p, type_q):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise TypeError(f"Expected a subclass of Distribution as type_p and type_q, but got {t}")

    def decorator(fn: KLFn) -> KLFn:
        _REGISTRY[type_p, type_q] = fn
        _CACHE.clear()
        return fn

    return decorator


def _dispatch(type_p: type, type_q: type) -> KLFn | None:
    """The formula of the most specific registered pair above (type_p, type_q); ties warn, as in PyTorch."""
    matches = [(type_p.__mro__.index(p), type_q.__mro__.index(q), p, q)
               for p, q in _REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return None
    best = min(matches, key=lambda m: (m[0], m[1]))
    other = min(matches, key=lambda m: (m[1], m[0]))
    if _REGISTRY[best[2], best[3]] is not _REGISTRY[other[2], other[3]]:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please register_kl"
                      f"({other[2].__name__}, {best[3].__name__})", RuntimeWarning, stacklevel=3)
    return _REGISTRY[best[2], best[3]]


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) over the batch shape; NotImplementedError when no formula is registered for the pair."""
    key = (type(p), type(q))
    fn = _CACHE.get(key)
    if fn is None:
        fn = _dispatch(*key)
        if fn is None:
            raise NotImplementedError(f"No KL(p || q) is implemented for p={type(p).__name__}, q={type(q).__name__}")
        _CACHE[key] = fn
    return fn(p, q)


def _infinite_where(cond: Tensor, value: Tensor) -> Tensor:
    return where(cond, math.inf, value)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale).square()
    t1 = ((p.loc - q.loc) / q.scale).square()
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = where(p.probs == 0, 0.0, _infinite_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = where(p.probs == 1, 0.0, _infinite_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    shape = tuple(t.shape)
    t = _infinite_where((q.probs == 0).expand(*shape), t)
    t = where((p.probs == 0).expand(*shape), 0.0, t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p: OneHotCategorical, q: OneHotCategorical) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p: Binomial, q: Binomial) -> Tensor:
    if bool((p.total_count < q.total_count).any().item()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _infinite_where(p.total_count > q.total_count, kl)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Geometric, q: Geometric) -> Tensor:
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _infinite_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    ratio = q.rate / p.rate
    return ratio - ratio.log() - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    scale_ratio = p.scale / q.scale
    distance = (p.loc - q.loc).abs()
    return -scale_ratio.log() + distance / q.scale + scale_ratio * (-distance / p.scale).exp() - 1


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Tensor:
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = q.concentration.lgamma() - p.concentration.lgamma()
    t3 = (p.concentration - q.concentration) * p.concentration.digamma()
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    p1, p0, q1, q0 = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    total_p, total_q = p1 + p0, q1 + q0
    t1 = q1.lgamma() + q0.lgamma() + total_p.lgamma()
    t2 = p1.lgamma() + p0.lgamma() + total_q.lgamma()
    t3 = (p1 - q1) * p1.digamma()
    t4 = (p0 - q0) * p0.digamma()
    t5 = (total_q - total_p) * total_p.digamma()
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    pc, qc = p.concentration, q.concentration
    total = pc.sum(-1)
    t1 = total.lgamma() - qc.sum(-1).lgamma()
    t2 = (pc.lgamma() - qc.lgamma()).sum(-1)
    t3 = pc - qc
    t4 = pc.digamma() - total.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    """log det L_q - log det L_p + (|L_q^-1 L_p|_F^2 + |L_q^-1 (mu_q - mu_p)|^2 - n) / 2."""
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be computed")
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = q._half_log_det() - p._half_log_det()
    term2 = solve_lower(lq, lp).square().sum((-2, -1))
    term3 = mahalanobis(lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - p.event_shape[0])


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


__all__ = ["kl_divergence", "register_kl"]
