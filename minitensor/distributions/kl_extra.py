"""KL divergences of the exponential families in general (the Bregman divergence of the log normalizer), of
ContinuousBernoulli and of LowRankMultivariateNormal (``torch.distributions.kl``'s pairs for those families),
registered with :func:`.kl.register_kl`.

The Bregman route, as PyTorch's, differentiates p's log normalizer at a detached copy of p's natural parameters: it
carries gradients to q's parameters only. Each inner product sums over its parameter's non-batch dims (PyTorch sums
over ``len(event_shape)`` rightmost dims, which for a batch of Wishart distributions also sums the df term over the
batch).
"""

from __future__ import annotations

import math

from ..tensor import Tensor
from ..tensor_broadcast import broadcast_shapes
from ..tensor_compare import where
from .continuous import Exponential, Laplace, Normal, Uniform
from .continuous_bernoulli import ContinuousBernoulli
from .distribution import sum_rightmost
from .exp_family import ExponentialFamily, log_normalizer_and_gradients
from .gamma import Beta, Gamma
from .kl import register_kl
from .kl_transformed import _ce_exponential, _ce_normal, _register_infinite, _uniform_ce
from .lowrank import LowRankMultivariateNormal, lowrank_logdet, lowrank_mahalanobis, woodbury_factor
from .multivariate import MultivariateNormal, mahalanobis, solve_lower
from .transformed import Gumbel, Pareto


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p: ExponentialFamily, q: ExponentialFamily) -> Tensor:
    """F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F(theta_p)> for p and q of one family."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot be computed "
                                  "using Bregman divergences")
    q_params = q._natural_params
    value, p_params, gradients = log_normalizer_and_gradients(p, p._natural_params)
    result = q._log_normalizer(*q_params) - value
    batch_dims = len(broadcast_shapes(p.batch_shape, q.batch_shape))
    for theta_p, theta_q, g in zip(p_params, q_params, gradients):
        term = (theta_q - theta_p) * g
        result = result - sum_rightmost(term, max(term.dim() - batch_dims, 0))
    return result


# ContinuousBernoulli: log q(x) = x logits_q + log(1 - probs_q) + log C(probs_q), linear in x.


def _ce_continuous_bernoulli(mean: Tensor, q: ContinuousBernoulli) -> Tensor:
    """-E log q(X) = -(E X logits + log(1 - probs) + log C(probs))."""
    return -(mean * q.logits + (-q.probs).log1p() + q._cont_bern_log_norm())


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p: ContinuousBernoulli, q: ContinuousBernoulli) -> Tensor:
    return -p.entropy() + _ce_continuous_bernoulli(p.mean, q)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p: Beta, q: ContinuousBernoulli) -> Tensor:
    return -p.entropy() + _ce_continuous_bernoulli(p.mean, q)


@register_kl(Uniform, ContinuousBernoulli)
@_uniform_ce(lambda p, q: (p.low < 0) | (p.high > 1))
def _ce_uniform_continuous_bernoulli(low: Tensor, high: Tensor, q: ContinuousBernoulli) -> Tensor:
    """inf unless [low, high] lies inside [0, 1]."""
    return _ce_continuous_bernoulli((low + high) / 2, q)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p: ContinuousBernoulli, q: Exponential) -> Tensor:
    return -p.entropy() + _ce_exponential(p.mean, q)


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p: ContinuousBernoulli, q: Normal) -> Tensor:
    return -p.entropy() + _ce_normal(p.mean, p.variance, q)


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p: ContinuousBernoulli, q: Uniform) -> Tensor:
    """inf unless [0, 1] lies inside [low, high]."""
    return where((q.low > 0) | (q.high < 1), math.inf, (q.high - q.low).log() - p.entropy())


_register_infinite(ContinuousBernoulli, "probs", Pareto)
for _family, _param in ((Exponential, "rate"), (Gamma, "concentration"), (Gumbel, "loc"), (Laplace, "loc"),
                        (Normal, "loc"), (Pareto, "scale")):
    _register_infinite(_family, _param, ContinuousBernoulli)


# Gaussians with a low-rank-plus-diagonal covariance: tr(Sigma_q^-1 Sigma_p) through Sigma_q^-1 = D^-1 - A^T A.


def trace_xxt(x: Tensor) -> Tensor:
    """tr(X X^T): the sum of squares over the last two dims."""
    return x.square().sum((-2, -1))


def _check_event_shapes(p: object, q: object, what: str) -> None:
    if p.event_shape != q.event_shape:  # type: ignore[attr-defined]
        raise ValueError(f"KL-divergence between two {what} with different event shapes cannot be computed: "
                         f"{p.event_shape} vs {q.event_shape}")  # type: ignore[attr-defined]


def _lowrank_terms(q: LowRankMultivariateNormal, p_loc: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """(log det Sigma_q, (mu_q - mu_p)^T Sigma_q^-1 (mu_q - mu_p), A = L_C^-1 W_q^T D_q^-1)."""
    W, D, C = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q._capacitance_tril  # noqa: N806
    return lowrank_logdet(D, C), lowrank_mahalanobis(W, D, q.loc - p_loc, C), woodbury_factor(W, D, C)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p: LowRankMultivariateNormal, q: LowRankMultivariateNormal) -> Tensor:
    _check_event_shapes(p, q, "Low Rank Multivariate Normals")
    logdet_q, distance, A = _lowrank_terms(q, p.loc)  # noqa: N806
    pW, pD, qD = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, q._unbroadcasted_cov_diag  # noqa: N806
    trace = ((pD / qD).sum(-1) + trace_xxt(pW * qD.rsqrt().unsqueeze(-1))
             - trace_xxt(A * pD.sqrt().unsqueeze(-2)) - trace_xxt(A @ pW))
    return 0.5 * (logdet_q - p._logdet() + trace + distance - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p: MultivariateNormal, q: LowRankMultivariateNormal) -> Tensor:
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    logdet_q, distance, A = _lowrank_terms(q, p.loc)  # noqa: N806
    pL, qD = p._unbroadcasted_scale_tril, q._unbroadcasted_cov_diag  # noqa: N806
    trace = trace_xxt(pL * qD.rsqrt().unsqueeze(-1)) - trace_xxt(A @ pL)
    return 0.5 * (logdet_q - 2 * p._half_log_det() + trace + distance - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p: LowRankMultivariateNormal, q: MultivariateNormal) -> Tensor:
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    qL, pW, pD = q._unbroadcasted_scale_tril, p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag  # noqa: N806
    n = p.event_shape[0]
    batch = tuple(broadcast_shapes(tuple(qL.shape[:-2]), tuple(pW.shape[:-2]), tuple(pD.shape[:-1])))
    qL = qL.expand(*(batch + (n, n)))  # noqa: N806
    trace = (trace_xxt(solve_lower(qL, pW.expand(*(batch + tuple(pW.shape[-2:])))))
             + trace_xxt(solve_lower(qL, pD.sqrt().diag_embed().expand(*(batch + (n, n))))))
    distance = mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return 0.5 * (2 * q._half_log_det() - p._logdet() + trace + distance - n)


__all__: list[str] = []
