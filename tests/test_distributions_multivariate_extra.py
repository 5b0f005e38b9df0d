"""Multinomial, OneHotCategoricalStraightThrough, LowRankMultivariateNormal, Wishart and LKJCholesky against
torch.distributions: log_prob, entropy, moments and matrix properties with their gradients (1e-10 in float64 through
tests/torch_oracle.py's check), shapes, constraints, expand and errors; sampling by shapes, support and moments, and
rsample's gradients given the same noise."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS
from distribution_inputs import TRIGAMMA_TOL, Inputs, Spec, arrays, outputs, within_sampling_error
from scipy import stats
from torch_oracle import check

import minitensor as mt

INPUTS = Inputs(43)
normal, positive, simplex, spd = INPUTS.normal, INPUTS.positive, INPUTS.simplex, INPUTS.spd
D = mt.distributions
MATRIX = ("covariance_matrix", "precision_matrix", "scale_tril")


def counts(total: int, *shape: int) -> np.ndarray:
    """Multinomial count vectors of ``total`` over the last dim."""
    k = shape[-1]
    return INPUTS.rng.multinomial(total, np.ones(k) / k, shape[:-1]).astype(float)


def lkj_factors(dim: int, *batch: int) -> np.ndarray:
    """Cholesky factors of correlation matrices (torch's float64 LKJ draws)."""
    torch.manual_seed(int(INPUTS.rng.integers(1 << 30)))
    return torch.distributions.LKJCholesky(dim, torch.tensor(1.5, dtype=torch.float64)).sample(batch).numpy()


SPECS = {
    "multinomial": Spec(lambda D, p: D.Multinomial(6, p), [simplex(2, 3)], counts(6, 4, 2, 3),
                        props=("mean", "variance", "probs", "logits"), methods=("log_prob",)),
    "multinomial_logits": Spec(lambda D, lg: D.Multinomial(3, logits=lg), [normal(4)], counts(3, 2, 4),
                               props=("mean", "variance", "probs"), methods=("log_prob",)),
    "one_hot_straight_through": Spec(lambda D, p: D.OneHotCategoricalStraightThrough(p), [simplex(2, 3)],
                                     np.eye(3)[INPUTS.rng.integers(0, 3, (4, 2))],
                                     props=("mean", "variance", "mode", "probs"), methods=("log_prob", "entropy")),
    "low_rank": Spec(lambda D, m, w, d: D.LowRankMultivariateNormal(m, w, d), [normal(2, 3), normal(3, 2), positive(2, 3)],
                     normal(4, 2, 3), props=("mean", "variance", "stddev", "mode") + MATRIX,
                     methods=("log_prob", "entropy")),
    "low_rank_batched_factor": Spec(lambda D, m, w, d: D.LowRankMultivariateNormal(m, w, d),
                                    [normal(3), normal(2, 3, 1), positive(3)], normal(2, 3),
                                    props=("variance",) + MATRIX, methods=("log_prob", "entropy")),
    "wishart_covariance": Spec(lambda D, df, s: D.Wishart(df, covariance_matrix=s), [np.array([4.5, 6.0]), spd(3, 3)],
                               spd(4, 2, 3, 3) / 3, props=("mean", "variance", "mode") + MATRIX,
                               methods=("log_prob", "entropy"), tol=TRIGAMMA_TOL),
    "wishart_precision": Spec(lambda D, df, s: D.Wishart(df, precision_matrix=s), [np.array([5.0, 7.0]),
                                                                                    spd(2, 3, 3) / 3], spd(3, 3),
                              props=("mean", "variance") + MATRIX, methods=("log_prob", "entropy"), tol=TRIGAMMA_TOL),
    "wishart_scale_tril": Spec(lambda D, df, raw: D.Wishart(df, scale_tril=raw.tril(-1) + raw.diagonal(
        dim1=-2, dim2=-1).exp().diag_embed()), [np.array(2.5), normal(2, 2)], spd(3, 2, 2), props=("mean", "variance"),
        methods=("log_prob", "entropy"), tol=TRIGAMMA_TOL),
    "wishart_undefined_mode": Spec(lambda D, df, s: D.Wishart(df, covariance_matrix=s), [np.array([3.5, 4.0]), spd(3, 3)],
                                   None, props=("mode",), methods=(), grad=False),
    "lkj_cholesky": Spec(lambda D, c: D.LKJCholesky(3, c), [positive(2)], lkj_factors(3, 4, 2), props=(),
                         methods=("log_prob",)),
    "lkj_cholesky_dim4": Spec(lambda D, c: D.LKJCholesky(4, c), [positive()], lkj_factors(4, 3), props=(),
                              methods=("log_prob",)),
}


@pytest.mark.parametrize("backend, name", [(b, n) for n in SPECS for b in CPU_BACKENDS])
def test_values_and_gradients_match_torch(backend, name):
    spec = SPECS[name]
    check(backend, outputs(spec), *arrays(spec), grad=spec.grad, **spec.tol)


def _both(name: str) -> tuple[Any, Any]:
    spec = SPECS[name]
    return (spec.make(D, *[mt.tensor(p) for p in spec.params]),
            spec.make(torch.distributions, *[torch.tensor(p) for p in spec.params]))


@pytest.mark.parametrize("name", list(SPECS))
def test_shapes_flags_constraints_and_expand_match_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Wishart's low-df warning
        ours, theirs = _both(name)
    assert ours.batch_shape == tuple(theirs.batch_shape) and ours.event_shape == tuple(theirs.event_shape)
    assert ours.has_rsample == (theirs.has_rsample and not name.startswith("wishart"))
    assert isinstance(ours, D.ExponentialFamily) == isinstance(theirs, torch.distributions.ExponentialFamily)
    assert sorted(ours.arg_constraints) == sorted(theirs.arg_constraints)
    for key, c in ours.arg_constraints.items():
        assert repr(c) == repr(theirs.arg_constraints[key])
    assert repr(ours.support) == repr(theirs.support)
    assert ours.support.is_discrete == theirs.support.is_discrete and ours.support.event_dim == theirs.support.event_dim
    shape = (2,) + ours.batch_shape
    big, tbig = ours.expand(shape), theirs.expand(torch.Size(shape))
    assert type(big) is type(ours) and big.batch_shape == tuple(tbig.batch_shape) == shape
    assert big.event_shape == ours.event_shape
    mt.manual_seed(3)
    draws = big.sample((3,))
    assert draws.shape == (3,) + shape + ours.event_shape and not draws.requires_grad
    assert bool(big.support.check(draws).all().item())
    if "lkj" not in name:
        np.testing.assert_allclose(big.mean.to_numpy(), tbig.mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(big.log_prob(draws).to_numpy(), tbig.log_prob(torch.tensor(draws.to_numpy())).numpy(),
                               rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("total, k", [(4, 3), (2, 4)])
def test_multinomial_entropy_is_exact(total, k):
    """Against the sum over every count vector (torch's differs by ~1e-7: it takes log n! in float32)."""
    p = simplex(2, k)
    d = D.Multinomial(total, mt.tensor(p))
    support = np.array([c for c in itertools.product(range(total + 1), repeat=k) if sum(c) == total])
    want = [-(np.exp(logp) * logp).sum() for logp in (stats.multinomial.logpmf(support, total, row) for row in p)]
    np.testing.assert_allclose(d.entropy().to_numpy(), want, rtol=1e-12)
    check("fast", lambda L, q: L.distributions.Multinomial(total, q).entropy(), p, rtol=1e-6, atol=1e-6)


def test_wishart_with_a_number_df_and_a_batch_of_matrices():
    """torch keeps a number df 0-d and its moments then fail on a batch of matrices; minitensor broadcasts it."""
    precision = mt.tensor(spd(2, 3, 3))
    ours = D.Wishart(5.0, precision_matrix=precision)
    same = D.Wishart(mt.tensor([5.0, 5.0], dtype=mt.float64), precision_matrix=precision)
    assert ours.df.shape == (2,) and ours.batch_shape == (2,)
    for name in ("mean", "variance", "mode"):
        np.testing.assert_array_equal(getattr(ours, name).to_numpy(), getattr(same, name).to_numpy())
    with pytest.raises(RuntimeError):
        _ = torch.distributions.Wishart(5.0, precision_matrix=torch.tensor(precision.to_numpy())).mean


def test_wishart_draws_singular_samples_again(monkeypatch):
    """A draw that is not positive-definite is drawn again, with torch's warning."""
    d = D.Wishart(mt.tensor(4.0, dtype=mt.float64), covariance_matrix=mt.tensor(spd(3, 3)))
    bartlett, calls = D.Wishart._bartlett, []

    def first_singular(self: Any, shape: Any) -> Any:
        calls.append(shape)
        draws = bartlett(self, shape)
        return draws * 0 if len(calls) == 1 else draws

    monkeypatch.setattr(D.Wishart, "_bartlett", first_singular)
    with pytest.warns(UserWarning, match="Singular sample detected"):
        x = d.sample((4,))
    assert len(calls) == 2 and bool(d.support.check(x).all().item())


def test_lkj_density_integrates_to_one_in_two_dims():
    """For dim 2 the factor is [[1, 0], [r, sqrt(1 - r^2)]]: the density in r integrates to 1."""
    r = np.linspace(-1, 1, 20001)[1:-1]
    factors = np.zeros((r.size, 2, 2))
    factors[:, 0, 0], factors[:, 1, 0], factors[:, 1, 1] = 1.0, r, np.sqrt(1 - r**2)
    for c in (0.7, 1.0, 3.0):
        density = np.exp(D.LKJCholesky(2, c).log_prob(mt.tensor(factors)).to_numpy())
        np.testing.assert_allclose(np.trapezoid(density, r), 1.0, rtol=2e-3)


N = 4000


def _moment_case(name: str, d: Any, t: Any) -> None:
    mt.manual_seed(13)
    x = d.sample((N,))
    assert x.shape == (N,) + d.batch_shape + d.event_shape and x.dtype == mt.float64
    assert bool(d.support.check(x).all().item())
    flat = x.to_numpy().reshape(N, -1)
    within_sampling_error(flat, t.mean.numpy().reshape(-1), t.variance.numpy().reshape(-1))


def test_multinomial_and_straight_through_samples_have_torchs_moments():
    p = torch.tensor([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], dtype=torch.float64)
    _moment_case("multinomial", D.Multinomial(5, mt.tensor(p.numpy())), torch.distributions.Multinomial(5, p))
    _moment_case("one_hot", D.OneHotCategoricalStraightThrough(mt.tensor(p.numpy())),
                 torch.distributions.OneHotCategoricalStraightThrough(p))


def test_low_rank_samples_have_the_covariance():
    loc, w, diag = np.array([1.0, -1.0, 0.5]), np.array([[1.0], [0.5], [-0.8]]), np.array([0.5, 1.0, 0.2])
    d = D.LowRankMultivariateNormal(mt.tensor(loc), mt.tensor(w), mt.tensor(diag))
    t = torch.distributions.LowRankMultivariateNormal(torch.tensor(loc), torch.tensor(w), torch.tensor(diag))
    _moment_case("low_rank", d, t)
    mt.manual_seed(2)
    np.testing.assert_allclose(np.cov(d.rsample((N,)).to_numpy().T), t.covariance_matrix.numpy(), atol=0.12)


def test_wishart_samples_have_torchs_moments():
    cov = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
    df = np.array([3.5, 8.0])
    _moment_case("wishart", D.Wishart(mt.tensor(df), covariance_matrix=mt.tensor(cov)),
                 torch.distributions.Wishart(torch.tensor(df), covariance_matrix=torch.tensor(cov)))


def test_lkj_samples_have_the_marginal_correlation_law():
    """Off-diagonal correlations of L L^T are (2 Beta(a, a) - 1) with a = c - 1 + dim / 2: mean 0, variance
    1 / (2 c + dim - 1)."""
    c, dim = np.array([0.5, 1.0, 4.0]), 4
    mt.manual_seed(17)
    factors = D.LKJCholesky(dim, mt.tensor(c)).sample((N,)).to_numpy()
    corr = factors @ np.swapaxes(factors, -1, -2)
    np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, rtol=1e-12)
    rows, cols = np.tril_indices(dim, -1)
    off = corr[..., rows, cols]  # (N, 3, 6)
    var = np.repeat((1 / (2 * c + dim - 1))[:, None], len(rows), 1)
    within_sampling_error(off.reshape(N, -1), np.zeros(var.size), var.reshape(-1))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_low_rank_rsample_gradients_match_torch_for_the_same_noise(backend, monkeypatch):
    loc, w, diag = normal(2, 3), normal(3, 2), positive(2, 3)
    ours = [mt.tensor(a, backend=backend, requires_grad=True) for a in (loc, w, diag)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (loc, w, diag)]
    mt.manual_seed(8)
    x = D.LowRankMultivariateNormal(*ours).rsample((5,))
    mt.manual_seed(8)
    noise = [torch.tensor(mt.randn(*s, dtype=mt.float64).to_numpy()) for s in ((5, 2, 2), (5, 2, 3))]
    monkeypatch.setattr(torch.distributions.lowrank_multivariate_normal, "_standard_normal",
                        lambda *a, **k: noise.pop(0))
    y = torch.distributions.LowRankMultivariateNormal(*theirs).rsample((5,))
    np.testing.assert_allclose(x.to_numpy(), y.detach().numpy(), rtol=1e-12, atol=1e-12)
    weights = normal(5, 2, 3)
    (x * mt.tensor(weights, backend=backend)).sum().backward()
    (y * torch.tensor(weights)).sum().backward()
    for o, p in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.to_numpy(), p.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_straight_through_rsample_is_the_draw_with_the_gradient_of_probs(monkeypatch):
    logits = normal(2, 3)
    ours, theirs = mt.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    mt.manual_seed(4)
    x = D.OneHotCategoricalStraightThrough(logits=ours).rsample((5,))
    assert x.requires_grad and set(np.unique(x.to_numpy())) <= {0.0, 1.0}
    np.testing.assert_array_equal(x.to_numpy().sum(-1), 1.0)
    draws = torch.tensor(x.detach().to_numpy())
    monkeypatch.setattr(torch.distributions.OneHotCategorical, "sample", lambda self, shape=(): draws)
    y = torch.distributions.OneHotCategoricalStraightThrough(logits=theirs).rsample((5,))
    weights = normal(5, 2, 3)
    (x * mt.tensor(weights)).sum().backward()
    (y * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(ours.grad.to_numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_errors_match_torch():
    cases = [
        (lambda L: L.distributions.Multinomial(2.5, L.ones(3)), NotImplementedError),
        (lambda L: L.distributions.Multinomial(3, L.ones(3)).log_prob(L.tensor([-1.0, 2.0, 2.0])), ValueError),
        (lambda L: L.distributions.LowRankMultivariateNormal(L.tensor(0.0), L.ones(1, 1), L.ones(1)), ValueError),
        (lambda L: L.distributions.LowRankMultivariateNormal(L.zeros(3), L.ones(3), L.ones(3)), ValueError),
        (lambda L: L.distributions.LowRankMultivariateNormal(L.zeros(3), L.ones(2, 1), L.ones(3)), ValueError),
        (lambda L: L.distributions.LowRankMultivariateNormal(L.zeros(3), L.ones(3, 1), L.ones(2)), ValueError),
        (lambda L: L.distributions.LowRankMultivariateNormal(L.zeros(2, 3), L.ones(3, 3, 1), L.ones(3)), ValueError),
        (lambda L: L.distributions.LowRankMultivariateNormal(L.zeros(3), L.ones(3, 1), -L.ones(3)), RuntimeError),
        (lambda L: L.distributions.Wishart(3.0), AssertionError),
        (lambda L: L.distributions.Wishart(3.0, covariance_matrix=L.eye(2), scale_tril=L.eye(2)), AssertionError),
        (lambda L: L.distributions.Wishart(1.0, covariance_matrix=L.eye(3)), ValueError),
        (lambda L: L.distributions.Wishart(3.0, covariance_matrix=L.ones(3)), ValueError),
        (lambda L: L.distributions.Wishart(3.0, covariance_matrix=L.tensor([[1.0, 2.0], [2.0, 1.0]])), ValueError),
        (lambda L: L.distributions.Wishart(3.0, covariance_matrix=L.eye(2)).log_prob(L.tensor([[1.0, 0.5], [0.0, 1.0]])),
         ValueError),
        (lambda L: L.distributions.LKJCholesky(1), ValueError),
        (lambda L: L.distributions.LKJCholesky(3, L.tensor([0.0])), ValueError),
        (lambda L: L.distributions.LKJCholesky(2).log_prob(L.tensor([[1.0, 0.0], [0.5, 0.5]])), ValueError),
        (lambda L: L.distributions.OneHotCategoricalStraightThrough(L.tensor([0.5, -0.1])), ValueError),
    ]
    for fn, error in cases:
        for L in (torch, mt):
            with pytest.raises(error):
                fn(L)
    for L in (torch, mt):
        with pytest.warns(UserWarning, match="Low df values detected"):
            L.distributions.Wishart(L.tensor([2.5]), covariance_matrix=L.eye(3))
        with pytest.raises(NotImplementedError):
            L.distributions.LKJCholesky(3).entropy()


def test_cuda_low_rank_and_multinomial():
    if "cuda" not in BACKENDS:
        pytest.skip("no cuda backend")
    check("cuda", lambda L, m, w, d, p, x: (L.distributions.LowRankMultivariateNormal(m, w, d).log_prob(m + 0.5),
                                            L.distributions.Multinomial(2, p).log_prob(x)),
          normal(2), normal(2, 1), positive(2), simplex(2), np.array([1.0, 1.0]), rtol=1e-10, atol=1e-10)
