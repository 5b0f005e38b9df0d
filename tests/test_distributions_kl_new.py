"""ExponentialFamily (which families derive from it, the entropy from the log normalizer, the Bregman KL) and the KL
pairs of ContinuousBernoulli and LowRankMultivariateNormal against torch.distributions: values and gradients to both
distributions' parameters (float64, broadcast batch shapes), the pairs infinite everywhere, and where minitensor
deliberately differs (support boundaries, batched Wishart, a low-rank p with a batched diagonal)."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS
from distribution_inputs import TRIGAMMA_TOL, Inputs, spd_of
from torch_oracle import check

import minitensor as mt

INPUTS = Inputs(53)
normal, positive, unit, spd = INPUTS.normal, INPUTS.positive, INPUTS.unit, INPUTS.spd
TOL = {"rtol": 1e-10, "atol": 1e-10}
D = mt.distributions


def test_the_exponential_families_are_torchs():
    classes = [getattr(torch.distributions, n) for n in torch.distributions.__all__]
    families = [c for c in classes if inspect.isclass(c) and issubclass(c, torch.distributions.Distribution)]
    assert len(families) > 40
    for theirs in families:
        ours = getattr(D, theirs.__name__)
        assert issubclass(ours, D.ExponentialFamily) == issubclass(theirs, torch.distributions.ExponentialFamily), ours


FAMILIES = {  # name: make(D, *params), params; every one an exponential family with a carrier measure
    "normal": (lambda D, m, s: D.Normal(m, s), [normal(2, 3), positive(2, 3)]),
    "exponential": (lambda D, r: D.Exponential(r), [positive(3)]),
    "gamma": (lambda D, c, r: D.Gamma(c, r), [positive(3), positive(3)]),
    "chi2": (lambda D, df: D.Chi2(df), [positive(3)]),
    "bernoulli": (lambda D, p: D.Bernoulli(p), [unit(2, 3)]),
    "continuous_bernoulli": (lambda D, p: D.ContinuousBernoulli(p), [np.array([0.2, 0.4995, 0.9])]),
    "continuous_bernoulli_logits": (lambda D, lg: D.ContinuousBernoulli(logits=lg), [np.array([-1.0, 0.0005, 2.0])]),
    "wishart": (lambda D, df, s: D.Wishart(df, covariance_matrix=s), [np.array(4.5), spd(3, 3)]),
    "wishart_batched": (lambda D, df, s: D.Wishart(df, precision_matrix=s), [np.array([4.5, 6.0]), spd(2, 2, 2)]),
}


@pytest.mark.parametrize("name", list(FAMILIES))
def test_entropy_from_the_log_normalizer_matches_torch_and_the_closed_form(name):
    """ExponentialFamily.entropy (F - <theta, grad F> - E k) against torch's: the same values, and, as torch's, no
    gradient to the parameters."""
    make, params = FAMILIES[name]
    (got,) = check("fast", lambda L, *a: L.distributions.ExponentialFamily.entropy(make(L.distributions, *a)),
                   *params, **TRIGAMMA_TOL)
    closed = make(D, *[mt.tensor(p) for p in params]).entropy()
    np.testing.assert_allclose(got.to_numpy(), closed.to_numpy(), rtol=1e-9, atol=1e-12)


def test_families_without_a_carrier_measure_raise_like_torch():
    for L in (torch, mt):
        for d in (L.distributions.Beta(L.tensor(2.0), L.tensor(3.0)), L.distributions.Poisson(L.tensor(2.0)),
                  L.distributions.Dirichlet(L.ones(3))):
            with pytest.raises(NotImplementedError):
                L.distributions.ExponentialFamily.entropy(d)
        with pytest.raises(NotImplementedError, match=r"cannot\s+be computed using Bregman divergences"):
            L.distributions.kl_divergence(L.distributions.Normal(0.0, 1.0), L.distributions.Poisson(L.tensor(1.0)))


def _lowrank(D: Any, loc: Any, w: Any, d: Any) -> Any:
    return D.LowRankMultivariateNormal(loc, w, d)


# name: (make(D, *params) -> (p, q), params)
PAIRS: dict[str, tuple[Any, list[np.ndarray]]] = {
    "cb_cb": (lambda D, a, b: (D.ContinuousBernoulli(a), D.ContinuousBernoulli(logits=b)),
              [np.array([[0.2, 0.4995, 0.9], [0.6, 0.1, 0.5]]), normal(3)]),
    "cb_exponential": (lambda D, a, r: (D.ContinuousBernoulli(a), D.Exponential(r)), [unit(2, 3), positive(3)]),
    "cb_normal": (lambda D, a, m, s: (D.ContinuousBernoulli(a), D.Normal(m, s)), [unit(3), normal(2, 3), positive(2, 3)]),
    "cb_uniform_some_infinite": (lambda D, a, lo, w: (D.ContinuousBernoulli(a), D.Uniform(lo, lo + w)),
                                 [unit(2, 3), np.array([-0.5, 0.2, -0.1]), np.array([2.0, 2.0, 0.8])]),
    "uniform_cb_some_infinite": (lambda D, lo, w, a: (D.Uniform(lo, lo + w), D.ContinuousBernoulli(a)),
                                 [np.array([[0.1, -0.1, 0.3], [0.5, 0.2, 0.05]]),
                                  np.array([[0.5, 0.5, 0.9], [0.3, 0.3, 0.9]]), unit(3)]),
    "beta_cb": (lambda D, a, b, c: (D.Beta(a, b), D.ContinuousBernoulli(c)), [positive(2, 3), positive(2, 3), unit(3)]),
    "chi2_chi2": (lambda D, a, b: (D.Chi2(a), D.Chi2(b)), [positive(2, 3), positive(3)]),
    "lowrank_lowrank": (lambda D, m, w, d, n, v, e: (_lowrank(D, m, w, d), _lowrank(D, n, v, e)),
                        [normal(2, 3), normal(3, 2), positive(2, 3), normal(3), normal(2, 3, 1), positive(3)]),
    "mvn_lowrank": (lambda D, m, s, n, v, e: (D.MultivariateNormal(m, covariance_matrix=spd_of(m, s)),
                                              _lowrank(D, n, v, e)),
                    [normal(2, 3), normal(3, 3), normal(3), normal(2, 3, 2), positive(3)]),
    "lowrank_mvn": (lambda D, m, w, d, n, s: (_lowrank(D, m, w, d), D.MultivariateNormal(n, scale_tril=s.tril(-1) + s.diagonal(
        dim1=-2, dim2=-1).exp().diag_embed())), [normal(2, 3), normal(2, 3, 2), positive(2, 3), normal(3), normal(3, 3)]),
    "wishart_wishart": (lambda D, a, s, b, t: (D.Wishart(a, covariance_matrix=s), D.Wishart(b, precision_matrix=t)),
                        [np.array(4.5), spd(3, 3), np.array(6.0), spd(3, 3) / 3]),
}
DIGAMMA = ("beta_", "chi2_", "wishart_")


@pytest.mark.parametrize("backend, name", [(b, n) for n in PAIRS for b in CPU_BACKENDS])
def test_kl_matches_torch(backend, name):
    make, params = PAIRS[name]
    tol = TRIGAMMA_TOL if name.startswith(DIGAMMA) else TOL
    check(backend, lambda L, *a: L.distributions.kl_divergence(*make(L.distributions, *a)), *params, **tol)


FAMILY_OF = {  # one member of each family paired with ContinuousBernoulli, batch (2, 3)
    "Exponential": (lambda D, a: D.Exponential(a), [positive(2, 3)]),
    "Gamma": (lambda D, a, b: D.Gamma(a, b), [positive(2, 3), positive(2, 3)]),
    "Gumbel": (lambda D, a, b: D.Gumbel(a, b), [normal(2, 3), positive(2, 3)]),
    "Laplace": (lambda D, a, b: D.Laplace(a, b), [normal(2, 3), positive(2, 3)]),
    "Normal": (lambda D, a, b: D.Normal(a, b), [normal(2, 3), positive(2, 3)]),
    "Pareto": (lambda D, a, b: D.Pareto(a, b), [positive(2, 3), positive(2, 3)]),
}


@pytest.mark.parametrize("family", list(FAMILY_OF))
def test_kl_between_disjoint_supports_is_infinite(family):
    make, params = FAMILY_OF[family]
    n = len(params)

    def fn(L: Any, *a: Any) -> Any:
        D = L.distributions
        other, cb = make(D, *a[:n]), D.ContinuousBernoulli(a[n])
        return D.kl_divergence(other, cb), *((D.kl_divergence(cb, other),) if family == "Pareto" else ())

    for kl in check("fast", fn, *params, unit(2, 3), **TOL):
        assert kl.shape == (2, 3) and np.isposinf(kl.to_numpy()).all()


def test_support_boundaries_give_finite_kl_where_torch_says_inf():
    """CB puts its mass on [0, 1]: KL(CB || Uniform(0, 1)) = -H(CB) and KL(Uniform(0, 1) || CB) = the integral of
    -log q over [0, 1] are finite (torch tests the supports with >= and <=, and gives inf)."""
    cb, uniform = D.ContinuousBernoulli(mt.tensor([0.3], dtype=mt.float64)), D.Uniform(0.0, 1.0)
    tcb, tuniform = torch.distributions.ContinuousBernoulli(torch.tensor([0.3])), torch.distributions.Uniform(0.0, 1.0)
    np.testing.assert_allclose(D.kl_divergence(cb, uniform).to_numpy(), -cb.entropy().to_numpy(), rtol=1e-12)
    x = np.linspace(0, 1, 200001)
    integral = np.trapezoid(-cb.log_prob(mt.tensor(x)).to_numpy(), x)
    np.testing.assert_allclose(D.kl_divergence(uniform, cb).to_numpy(), [integral], rtol=1e-8)
    for pair in ((tcb, tuniform), (tuniform, tcb)):
        assert torch.isinf(torch.distributions.kl_divergence(*pair)).all()


def test_batched_wishart_kl_is_per_matrix():
    """torch's Bregman KL sums the df term over len(event_shape) = 2 rightmost dims, which for a batch of Wisharts
    sums it over the batch too; minitensor's KL of a batch is the KL of each member."""
    df_p, df_q, s, t = np.array([4.5, 6.0]), np.array([5.0, 3.5]), spd(2, 3, 3), spd(2, 3, 3)
    ours = D.kl_divergence(D.Wishart(mt.tensor(df_p), covariance_matrix=mt.tensor(s)),
                           D.Wishart(mt.tensor(df_q), covariance_matrix=mt.tensor(t))).to_numpy()
    each = [torch.distributions.kl_divergence(torch.distributions.Wishart(torch.tensor(df_p[i]), torch.tensor(s[i])),
                                              torch.distributions.Wishart(torch.tensor(df_q[i]), torch.tensor(t[i])))
            for i in range(2)]
    np.testing.assert_allclose(ours, [e.item() for e in each], rtol=1e-9)
    batched = torch.distributions.kl_divergence(torch.distributions.Wishart(torch.tensor(df_p), torch.tensor(s)),
                                                torch.distributions.Wishart(torch.tensor(df_q), torch.tensor(t)))
    assert not np.allclose(batched.detach().numpy(), ours)


def test_lowrank_mvn_kl_with_a_batched_diagonal_only():
    """p's cov_factor unbatched and cov_diag batched: torch's formula fails to expand; minitensor's equals the full
    MultivariateNormal KL."""
    loc, w, diag, m, s = normal(2, 3), normal(3, 2), positive(2, 3), normal(3), spd(3, 3)
    p = D.LowRankMultivariateNormal(mt.tensor(loc), mt.tensor(w), mt.tensor(diag))
    q = D.MultivariateNormal(mt.tensor(m), covariance_matrix=mt.tensor(s))
    full = D.MultivariateNormal(mt.tensor(loc), covariance_matrix=p.covariance_matrix)
    np.testing.assert_allclose(D.kl_divergence(p, q).to_numpy(), D.kl_divergence(full, q).to_numpy(), rtol=1e-10)
    tp = torch.distributions.LowRankMultivariateNormal(torch.tensor(loc), torch.tensor(w), torch.tensor(diag))
    with pytest.raises(RuntimeError):
        torch.distributions.kl_divergence(tp, torch.distributions.MultivariateNormal(torch.tensor(m), torch.tensor(s)))


def test_kl_event_shape_errors_match_torch():
    for L in (torch, mt):
        D_ = L.distributions
        p = D_.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), L.ones(2))
        for q in (D_.LowRankMultivariateNormal(L.zeros(3), L.ones(3, 1), L.ones(3)), D_.MultivariateNormal(L.zeros(3), L.eye(3))):
            with pytest.raises(ValueError, match="different event shapes"):
                D_.kl_divergence(p, q)
            with pytest.raises(ValueError, match="different event shapes"):
                D_.kl_divergence(q, p)


def test_cuda_continuous_bernoulli_and_low_rank_kl():
    if "cuda" not in BACKENDS:
        pytest.skip("no cuda backend")

    def fn(L: Any, a: Any, b: Any, m: Any, w: Any) -> Any:
        D = L.distributions
        return (D.kl_divergence(D.ContinuousBernoulli(a), D.ContinuousBernoulli(b)),
                D.kl_divergence(D.LowRankMultivariateNormal(m, w, a + 1), D.LowRankMultivariateNormal(m * 0, w, b + 1)))

    check("cuda", fn, np.array([0.2, 0.7]), np.array([0.6, 0.3]), normal(2), normal(2, 1), **TOL)
