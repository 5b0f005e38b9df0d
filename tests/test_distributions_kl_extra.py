"""minitensor.distributions.kl_transformed against torch.distributions.kl: every KL pair torch registers between two
families minitensor has, beyond the same-family ones of tests/test_distributions.py, by value and by gradient to
both distributions' parameters (float64, broadcast batch shapes), including the pairs that are infinite everywhere
and those infinite only for some parameters."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS
from distribution_inputs import Inputs
from torch_oracle import check

import minitensor as mt

INPUTS = Inputs(31)
normal, positive, between, unit = INPUTS.normal, INPUTS.positive, INPUTS.between, INPUTS.unit
TOL = {"rtol": 1e-10, "atol": 1e-10}
TRIGAMMA_TOL = {"rtol": 1e-8, "atol": 1e-8}
"""For gradients through digamma (a Beta's or a Gamma's entropy): torch's trigamma is off by up to ~1e-9 relative."""


ALPHA = np.array([[0.7, 0.97, 1.03], [1.5, 1.97, 2.5]])
"""Pareto alphas on both sides of 1 (E X finite above) and 2 (E X^2 finite above)."""
LOW = np.array([[-0.6, -0.02, 0.02], [0.4, -1.1, 0.9]])
"""Uniform lows on both sides of 0."""


# name: (make(D, *params) -> (p, q), params). p and q have different batch shapes that broadcast; where torch's
# formula marks infinite entries by indexing with a mask of one side's shape, that side has the full shape.
FINITE: dict[str, tuple[Any, list[np.ndarray]]] = {
    "bernoulli_poisson": (lambda D, a, b: (D.Bernoulli(a), D.Poisson(b)), [unit(2, 3), positive(3)]),
    "beta_normal": (lambda D, a, b, c, d: (D.Beta(a, b), D.Normal(c, d)),
                    [positive(3), positive(3), normal(2, 3), positive(2, 3)]),
    "beta_exponential": (lambda D, a, b, c: (D.Beta(a, b), D.Exponential(c)), [positive(2, 3), positive(2, 3), positive(3)]),
    "beta_gamma": (lambda D, a, b, c, d: (D.Beta(a, b), D.Gamma(c, d)),
                   [positive(2, 3), positive(2, 3), positive(3), positive(3)]),
    "beta_uniform_some_infinite": (lambda D, a, b, c, d: (D.Beta(a, b), D.Uniform(c, c + d)),
                                   [positive(3), positive(3), LOW, np.array([[0.2, 1.05, 1.0], [0.5, 2.2, 0.3]])]),
    "exponential_normal": (lambda D, a, c, d: (D.Exponential(a), D.Normal(c, d)), [positive(2, 3), normal(3), positive(3)]),
    "exponential_gamma": (lambda D, a, c, d: (D.Exponential(a), D.Gamma(c, d)), [positive(3), positive(2, 3), positive(2, 3)]),
    "exponential_gumbel": (lambda D, a, c, d: (D.Exponential(a), D.Gumbel(c, d)), [positive(2, 3), normal(3), positive(3)]),
    "gamma_normal": (lambda D, a, b, c, d: (D.Gamma(a, b), D.Normal(c, d)),
                     [positive(2, 3), positive(2, 3), normal(3), positive(3)]),
    "gamma_exponential": (lambda D, a, b, c: (D.Gamma(a, b), D.Exponential(c)), [positive(3), positive(3), positive(2, 3)]),
    "gamma_gumbel": (lambda D, a, b, c, d: (D.Gamma(a, b), D.Gumbel(c, d)),
                     [positive(2, 3), positive(2, 3), normal(3), positive(3)]),
    "gumbel_normal": (lambda D, a, b, c, d: (D.Gumbel(a, b), D.Normal(c, d)),
                      [normal(2, 3), positive(2, 3), normal(3), positive(3)]),
    "laplace_normal": (lambda D, a, b, c, d: (D.Laplace(a, b), D.Normal(c, d)),
                       [normal(3), positive(3), normal(2, 3), positive(2, 3)]),
    "normal_gumbel": (lambda D, a, b, c, d: (D.Normal(a, b), D.Gumbel(c, d)),
                      [normal(2, 3), positive(2, 3), normal(3), positive(3)]),
    "normal_laplace": (lambda D, a, b, c, d: (D.Normal(a, b), D.Laplace(c, d)),
                       [normal(2, 3), positive(2, 3), normal(3), positive(3)]),
    "pareto_exponential_some_infinite": (lambda D, a, b, c: (D.Pareto(a, b), D.Exponential(c)),
                                         [positive(2, 3), ALPHA, positive(3)]),
    "pareto_gamma_some_infinite": (lambda D, a, b, c, d: (D.Pareto(a, b), D.Gamma(c, d)),
                                   [positive(2, 3), ALPHA, positive(3), positive(3)]),
    "pareto_normal_some_infinite": (lambda D, a, b, c, d: (D.Pareto(a, b), D.Normal(c, d)),
                                    [positive(2, 3), ALPHA, normal(3), positive(3)]),
    "uniform_normal": (lambda D, a, b, c, d: (D.Uniform(a, a + b), D.Normal(c, d)),
                       [normal(3), positive(3), normal(2, 3), positive(2, 3)]),
    "uniform_gumbel": (lambda D, a, b, c, d: (D.Uniform(a, a + b), D.Gumbel(c, d)),
                       [normal(2, 3), positive(2, 3), normal(3), positive(3)]),
    "uniform_exponential_some_infinite": (lambda D, a, b, c: (D.Uniform(a, a + b), D.Exponential(c)),
                                          [LOW, positive(2, 3), positive(3)]),
    "uniform_gamma": (lambda D, a, b, c, d: (D.Uniform(a, a + b), D.Gamma(c, d)),
                      [positive(2, 3), positive(2, 3), positive(3), positive(3)]),
    "uniform_pareto_some_infinite": (lambda D, a, b, c, d: (D.Uniform(a, a + b), D.Pareto(c, d)),
                                     [np.array([[0.9, 1.6, 0.5], [1.1, 1.4, 1.0]]), positive(2, 3), np.array([1.0, 1.5, 0.55]),
                                      positive(3)]),
    "uniform_beta": (lambda D, a, b, c, d: (D.Uniform(a, a + b), D.Beta(c, d)),
                     [between(0.05, 0.4, 2, 3), between(0.05, 0.5, 2, 3), positive(3), positive(3)]),
    "cauchy_cauchy": (lambda D, a, b, c, d: (D.Cauchy(a, b), D.Cauchy(c, d)),
                      [normal(2, 3), positive(2, 3), normal(3), positive(3)]),
    "half_cauchy_half_cauchy": (lambda D, a, b: (D.HalfCauchy(a), D.HalfCauchy(b)), [positive(2, 3), positive(3)]),
    "lognormal_lognormal": (lambda D, a, b, c, d: (D.LogNormal(a, b), D.LogNormal(c, d)),
                            [normal(2, 3), positive(2, 3), normal(3), positive(3)]),
}
USES_DIGAMMA = ("beta_", "gamma_")

# A family and its parameters (batch (2, 3)), for the pairs that are infinite for every parameter.
FAMILIES: dict[str, tuple[Any, list[np.ndarray]]] = {
    "Beta": (lambda D, a, b: D.Beta(a, b), [positive(2, 3), positive(2, 3)]),
    "Exponential": (lambda D, a: D.Exponential(a), [positive(2, 3)]),
    "Gamma": (lambda D, a, b: D.Gamma(a, b), [positive(2, 3), positive(2, 3)]),
    "Gumbel": (lambda D, a, b: D.Gumbel(a, b), [normal(2, 3), positive(2, 3)]),
    "Laplace": (lambda D, a, b: D.Laplace(a, b), [normal(2, 3), positive(2, 3)]),
    "Normal": (lambda D, a, b: D.Normal(a, b), [normal(2, 3), positive(2, 3)]),
    "Pareto": (lambda D, a, b: D.Pareto(a, b), [positive(2, 3), positive(2, 3)]),
    "Poisson": (lambda D, a: D.Poisson(a), [positive(2, 3)]),
    "Uniform": (lambda D, a, b: D.Uniform(a, a + b), [normal(2, 3), positive(2, 3)]),
    "Bernoulli": (lambda D, a: D.Bernoulli(a), [unit(2, 3)]),
    "Binomial": (lambda D, a: D.Binomial(5, a), [unit(2, 3)]),
}
# KL(p || q) = inf for every parameter: p puts mass where q has none.
INFINITE = [
    ("Beta", "Pareto"), ("Exponential", "Beta"), ("Exponential", "Pareto"), ("Exponential", "Uniform"),
    ("Gamma", "Beta"), ("Gamma", "Pareto"), ("Gamma", "Uniform"), ("Pareto", "Beta"), ("Pareto", "Uniform"),
    ("Poisson", "Bernoulli"), ("Poisson", "Binomial"),
    *[(p, q) for p in ("Gumbel", "Laplace", "Normal") for q in ("Beta", "Exponential", "Gamma", "Pareto", "Uniform")],
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", list(FINITE))
def test_kl_matches_torch(backend, name):
    make, params = FINITE[name]
    tol = TRIGAMMA_TOL if name.startswith(USES_DIGAMMA) else TOL
    check(backend, lambda L, *a: L.distributions.kl_divergence(*make(L.distributions, *a)), *params, **tol)


def _pair(p_name: str, q_name: str) -> tuple[Any, list[np.ndarray]]:
    """KL(p || q) for p with batch (2, 3) and q with batch (3,) (a row of its parameters)."""
    (make_p, params_p), (make_q, params_q) = FAMILIES[p_name], FAMILIES[q_name]
    n = len(params_p)
    return lambda D, *a: (make_p(D, *a[:n]), make_q(D, *a[n:])), params_p + [a[1] for a in params_q]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("pair", INFINITE, ids="-".join)
def test_kl_between_disjoint_supports_is_infinite(backend, pair):
    make, params = _pair(*pair)
    (kl,) = check(backend, lambda L, *a: L.distributions.kl_divergence(*make(L.distributions, *a)), *params, **TOL)
    assert kl.shape == (2, 3) and np.isposinf(kl.to_numpy()).all()


def test_infinite_kl_takes_the_broadcast_batch_shape():
    """torch returns p's parameter shape when q's batch shape is the larger; minitensor the pair's batch shape."""
    p, q = mt.distributions.Normal(mt.zeros(3), 1.0), mt.distributions.Exponential(mt.ones(2, 3))
    kl = mt.distributions.kl_divergence(p, q)
    assert kl.shape == (2, 3) and kl.dtype == mt.float32 and np.isposinf(kl.to_numpy()).all()
    want = torch.distributions.kl_divergence(torch.distributions.Normal(torch.zeros(3), 1.0),
                                             torch.distributions.Exponential(torch.ones(2, 3)))
    assert tuple(want.shape) == (3,) and torch.isinf(want).all()


@pytest.mark.parametrize("name", ["uniform_gamma", "uniform_beta"])
def test_infinite_entries_get_zero_gradients(name):
    """Uniform-Gamma with low < 0 and Uniform-Beta outside [0, 1]: the same values as torch, and zero gradients at
    the infinite entries where torch's are nan (it evaluates x log x at negative x there)."""
    make = FINITE[name][0]
    low = np.array([[-0.1, 0.2, 0.3], [0.1, -0.01, 0.5]])
    width = np.array([[0.5, 0.85, 0.6], [0.5, 0.3, 0.55]])  # two highs of 1.05, just outside [0, 1]
    c, d = positive(3), positive(3)
    ours = [mt.tensor(a, requires_grad=True) for a in (low, width, c, d)]
    kl = mt.distributions.kl_divergence(*make(mt.distributions, *ours))
    want = torch.distributions.kl_divergence(*make(torch.distributions, *map(torch.tensor, (low, width, c, d))))
    np.testing.assert_allclose(kl.to_numpy(), want.numpy(), **TRIGAMMA_TOL)
    infinite = np.isinf(want.numpy())
    assert infinite.any() and not infinite.all()
    kl.sum().backward()
    for t in ours:
        assert t.grad is not None and np.isfinite(t.grad.to_numpy()).all()
    for t in ours[:2]:
        assert (t.grad.to_numpy()[infinite] == 0).all()


def test_every_torch_pair_is_registered():
    """torch's whole registry is inside minitensor's (minitensor now has every family torch registers a pair for);
    minitensor adds LogNormal-LogNormal (torch's LogNormal is a TransformedDistribution, so torch reaches that pair
    through TransformedDistribution-TransformedDistribution). The pairs of ContinuousBernoulli, LowRankMultivariateNormal
    and ExponentialFamily are tested in tests/test_distributions_kl_new.py."""
    from minitensor.distributions.kl import _REGISTRY

    ours = {(p.__name__, q.__name__) for p, q in _REGISTRY
            if all(t.__module__.startswith("minitensor.") for t in (p, q))}  # not other tests' subclasses
    theirs = {(p.__name__, q.__name__) for p, q in torch.distributions.kl._KL_REGISTRY}
    assert len(theirs) == 87 and theirs <= ours
    assert ours - theirs == {("LogNormal", "LogNormal")}


def test_kl_pairs_torch_does_not_register_still_raise():
    for L in (torch, mt):
        D = L.distributions
        for p, q in [(D.Normal(0.0, 1.0), D.Cauchy(0.0, 1.0)), (D.Pareto(1.0, 2.0), D.Gumbel(0.0, 1.0)),
                     (D.HalfNormal(1.0), D.Normal(0.0, 1.0)), (D.Exponential(1.0), D.Laplace(0.0, 1.0))]:
            with pytest.raises(NotImplementedError):
                D.kl_divergence(p, q)


def test_cuda_normal_gumbel_and_pareto_normal():
    if "cuda" not in BACKENDS:
        pytest.skip("no cuda backend")

    def fn(L: Any, m: Any, s: Any, a: Any) -> Any:
        D = L.distributions
        return D.kl_divergence(D.Normal(m, s), D.Gumbel(s, a)), D.kl_divergence(D.Pareto(s, a + 1.2), D.Normal(m, s))

    check("cuda", fn, normal(2), positive(2), between(0.5, 2.0, 2), **TOL)
