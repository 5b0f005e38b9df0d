"""ContinuousBernoulli, Chi2, InverseGamma, FisherSnedecor, GeneralizedPareto, Kumaraswamy, VonMises and
NegativeBinomial against torch.distributions: log_prob, cdf, icdf, entropy and moments with their gradients (1e-10 in
float64 through tests/torch_oracle.py's check), shapes, constraints, expand and errors; sampling by shapes, support and
moments, and rsample's gradients given the same noise. Where torch is not exact (VonMises' polynomial Bessel
functions, GeneralizedPareto's float64 log_prob, which raises in torch) SciPy is the reference."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS
from distribution_inputs import TRIGAMMA_TOL, Inputs, Spec, arrays, outputs, within_sampling_error
from scipy import special as sp_special
from scipy import stats
from torch_oracle import check

import minitensor as mt

INPUTS = Inputs(41)
normal, positive, unit, integers = INPUTS.normal, INPUTS.positive, INPUTS.unit, INPUTS.integers
D = mt.distributions
CONT = ("log_prob", "cdf", "icdf", "entropy")
F32_TOL = {"rtol": 2e-5, "atol": 2e-6}
BESSEL_TOL = {"rtol": 2e-5, "atol": 1e-6}
"""torch's VonMises uses polynomial approximations of log I0 and I1 (~1e-7 relative, ~1e-5 in the variance
1 - I1/I0 at large concentrations); minitensor's are exact (see the SciPy test)."""

CB_PROBS = np.array([[0.1, 0.4995, 0.7], [0.5, 0.95, 0.3]])
"""Probabilities on both sides of 1/2 and inside the Taylor region (0.499, 0.501]."""
GP_LOC, GP_SCALE = np.array([0.0, 1.0, -1.0, 0.0, 2.0]), np.array([1.0, 2.0, 0.5, 1.0, 1.5])
GP_CONC = np.array([0.3, 0.0, -0.2, 0.7, -0.5])
"""Concentrations positive, zero (the exponential limit) and negative (a bounded support), across 1/2 and 1."""
GP_VALUE = np.array([0.3, 1.5, 1.2, 2.0, 3.0])
"""Inside each support (the upper ends are 1.5 and 5 for the negative concentrations)."""


def _f32(*a: np.ndarray) -> list[np.ndarray]:
    return [x.astype(np.float32) for x in a]


SPECS = {
    "continuous_bernoulli": Spec(lambda D, p: D.ContinuousBernoulli(p), [CB_PROBS], unit(4, 2, 3), unit(2, 3),
                                 props=("mean", "variance", "stddev"), methods=CONT),
    "continuous_bernoulli_logits": Spec(lambda D, lg: D.ContinuousBernoulli(logits=lg),
                                        [np.array([-2.0, 0.0005, 0.3, 4.0])], unit(4), unit(4),
                                        props=("mean", "variance", "probs", "logits"), methods=CONT),
    "chi2": Spec(lambda D, df: D.Chi2(df), [positive(2, 3)], positive(4, 2, 3), props=("mean", "variance", "mode", "df"),
                 tol=TRIGAMMA_TOL),
    "chi2_cdf": Spec(lambda D, df: D.Chi2(df), [positive(3)], positive(2, 3), props=(), methods=("cdf",), grad=False),
    "inverse_gamma": Spec(lambda D, c, r: D.InverseGamma(c, r), [np.array([0.7, 1.5, 2.5, 4.0]), positive(4)],
                          positive(3, 4), props=("mean", "variance", "mode", "concentration", "rate"), tol=TRIGAMMA_TOL),
    "inverse_gamma_cdf": Spec(lambda D, r: D.InverseGamma(2.5, r), [positive(4)], positive(3, 4), props=(),
                              methods=("cdf",)),
    "fisher_snedecor": Spec(lambda D, a, b: D.FisherSnedecor(a, b), [positive(2, 3, low=2.1, high=6.0),
                                                                     positive(2, 3, low=4.1, high=9.0)],
                            positive(4, 2, 3), props=("mean", "variance", "mode"), methods=("log_prob",)),
    "fisher_snedecor_undefined_moments": Spec(lambda D, a, b: D.FisherSnedecor(a, b),
                                              [np.array([1.5, 2.5, 5.0, 0.8]), np.array([1.5, 3.0, 6.0, 4.5])],
                                              positive(4), props=("mean", "variance", "mode"), methods=("log_prob",),
                                              grad=False),
    "generalized_pareto": Spec(lambda D, m, s, c: D.GeneralizedPareto(m, s, c), [GP_LOC, GP_SCALE, GP_CONC], None,
                               unit(5), props=("mean", "variance", "stddev", "mode"), methods=("icdf", "entropy")),
    "generalized_pareto_float32": Spec(lambda D, m, s, c: D.GeneralizedPareto(m, s, c),
                                       _f32(GP_LOC, GP_SCALE, GP_CONC), GP_VALUE.astype(np.float32), props=(),
                                       methods=("log_prob", "cdf", "log_cdf", "log_survival_function"), tol=F32_TOL),
    "kumaraswamy": Spec(lambda D, a, b: D.Kumaraswamy(a, b), [positive(2, 3, high=3.0), positive(2, 3, high=3.0)],
                        unit(4, 2, 3), unit(2, 3), props=("mean", "variance", "stddev"), methods=CONT,
                        tol=TRIGAMMA_TOL),
    "von_mises": Spec(lambda D, m, k: D.VonMises(m, k), [normal(2, 3), np.array([[0.3, 2.0, 3.7], [3.8, 8.0, 20.0]])],
                      2 * normal(4, 2, 3), props=("mean", "mode", "variance", "stddev"), methods=("log_prob",),
                      tol=BESSEL_TOL),
    "negative_binomial": Spec(lambda D, n, p: D.NegativeBinomial(n, p), [positive(2, 3, low=0.2, high=6.0), unit(2, 3)],
                              integers(0, 12, 4, 2, 3), props=("mean", "variance", "mode", "logits"),
                              methods=("log_prob",)),
    "negative_binomial_logits": Spec(lambda D, n, lg: D.NegativeBinomial(n, logits=lg), [positive(3), normal(3)],
                                     integers(0, 8, 2, 3), props=("mean", "variance", "probs"), methods=("log_prob",)),
}
NO_RSAMPLE = {"chi2", "chi2_cdf", "inverse_gamma", "inverse_gamma_cdf", "fisher_snedecor",
              "fisher_snedecor_undefined_moments"}
"""Drawn through gamma variates: no rsample here (torch differentiates its gamma draws)."""


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
    ours, theirs = _both(name)
    assert ours.batch_shape == tuple(theirs.batch_shape) and ours.event_shape == tuple(theirs.event_shape)
    assert ours.has_rsample == (theirs.has_rsample and name not in NO_RSAMPLE)
    assert isinstance(ours, D.ExponentialFamily) == isinstance(theirs, torch.distributions.ExponentialFamily)
    assert sorted(ours.arg_constraints) == sorted(theirs.arg_constraints)
    for key, c in ours.arg_constraints.items():
        assert repr(c) == repr(theirs.arg_constraints[key])
    if "tensor" not in repr(theirs.support):
        assert repr(ours.support) == repr(theirs.support)
    assert ours.support.is_discrete == theirs.support.is_discrete and ours.support.event_dim == theirs.support.event_dim
    shape = (2,) + ours.batch_shape
    big, tbig = ours.expand(shape), theirs.expand(torch.Size(shape))
    assert type(big) is type(ours) and big.batch_shape == tuple(tbig.batch_shape) == shape
    np.testing.assert_allclose(big.mean.to_numpy(), tbig.mean.numpy(), rtol=1e-6, equal_nan=True)
    mt.manual_seed(3)
    draws = big.sample((3,))
    assert draws.shape == (3,) + shape and draws.dtype == ours.mean.dtype and not draws.requires_grad
    assert bool(big.support.check(draws).all().item())


def test_scalar_parameters_give_an_empty_batch_shape():
    for L in (torch, mt):
        dists = [L.distributions.ContinuousBernoulli(0.3), L.distributions.Chi2(2.0), L.distributions.FisherSnedecor(2.0, 3.0),
                 L.distributions.GeneralizedPareto(0.0, 1.0, 0.2), L.distributions.Kumaraswamy(2.0, 3.0),
                 L.distributions.VonMises(0.0, 1.0), L.distributions.NegativeBinomial(3.0, 0.4),
                 L.distributions.InverseGamma(2.0, 1.0)]
        assert [tuple(d.batch_shape) for d in dists] == [()] * len(dists)


def test_generalized_pareto_float64_matches_scipy():
    """torch's log_prob and cdf raise for float64 (isclose against a float32 zero); minitensor's match SciPy."""
    d = D.GeneralizedPareto(mt.tensor(GP_LOC), mt.tensor(GP_SCALE), mt.tensor(GP_CONC))
    x = mt.tensor(GP_VALUE)
    args = (GP_VALUE, GP_CONC, GP_LOC, GP_SCALE)
    np.testing.assert_allclose(d.log_prob(x).to_numpy(), stats.genpareto.logpdf(*args), rtol=1e-12)
    np.testing.assert_allclose(d.cdf(x).to_numpy(), stats.genpareto.cdf(*args), rtol=1e-12)
    np.testing.assert_allclose(d.log_survival_function(x).to_numpy(), stats.genpareto.logsf(*args), rtol=1e-12)
    with pytest.raises(RuntimeError):
        torch.distributions.GeneralizedPareto(*map(torch.tensor, (GP_LOC, GP_SCALE, GP_CONC))).log_prob(torch.tensor(GP_VALUE))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_von_mises_matches_scipy_and_the_bessel_derivative(backend):
    loc, kappa = normal(5), np.array([0.01, 0.5, 3.74, 3.76, 30.0])  # both sides of torch's series switch at 3.75
    x = 3 * normal(5)
    k = mt.tensor(kappa, backend=backend, requires_grad=True)
    d = D.VonMises(mt.tensor(loc, backend=backend), k)
    log_prob = d.log_prob(mt.tensor(x, backend=backend))
    np.testing.assert_allclose(log_prob.to_numpy(), stats.vonmises.logpdf(x, kappa, loc), rtol=1e-12, atol=1e-13)
    ratio = sp_special.i1e(kappa) / sp_special.i0e(kappa)
    np.testing.assert_allclose(d.variance.to_numpy(), 1 - ratio, rtol=1e-12)
    log_prob.sum().backward()
    np.testing.assert_allclose(k.grad.to_numpy(), np.cos(x - loc) - ratio, rtol=1e-10, atol=1e-12)  # d/dk log I0 = I1/I0


def test_kumaraswamy_mode_is_the_density_maximum():
    """torch's mode formula gives nan for every concentration0 > 1; minitensor's is ((a - 1) / (a b - 1))^(1 / a)."""
    a, b = np.array([2.0, 3.0, 1.0, 0.5, 1.0, 5.0, 4.0, 1.5]), np.array([3.0, 1.0, 2.0, 2.0, 1.0, 0.9, 2.0, 5.0])
    d = D.Kumaraswamy(mt.tensor(a), mt.tensor(b))
    mode = d.mode.to_numpy()
    valid = (a >= 1) & (b >= 1) & ((a > 1) | (b > 1))
    want = (a[valid] - 1) / (a[valid] * b[valid] - 1)
    np.testing.assert_allclose(mode[valid], want ** (1 / a[valid]), rtol=1e-14)
    assert np.isnan(mode[~valid]).all()
    inner = (mode > 0.01) & (mode < 0.99)  # (2, 3), (4, 2), (1.5, 5); (3, 1) and (1, 2) peak at the ends
    dv = D.Kumaraswamy(mt.tensor(a[inner]), mt.tensor(b[inner]))
    at = dv.log_prob(mt.tensor(mode[inner])).to_numpy()
    for step in (-1e-3, 1e-3):
        assert np.all(at > dv.log_prob(mt.tensor(mode[inner] + step)).to_numpy())


def test_negative_binomial_edge_counts():
    """total_count 0 puts all mass at 0 (log_prob 0 there, as torch); probs may be 0."""
    for L in (torch, mt):
        d = L.distributions.NegativeBinomial(L.tensor([0.0, 2.0, 3.0], dtype=L.float64),
                                             L.tensor([0.3, 0.0, 0.5], dtype=L.float64))
        got = d.log_prob(L.tensor([0.0, 0.0, 2.0], dtype=L.float64))
        values = got.numpy() if L is torch else got.to_numpy()
        np.testing.assert_allclose(values, [0.0, 0.0, stats.nbinom.logpmf(2, 3, 0.5)], rtol=1e-12, atol=1e-14)


def test_continuous_bernoulli_cdf_at_the_ends_and_taylor_region():
    """cdf is 0 at 0 and 1 at 1; inside the Taylor region the cdf and icdf are the identity."""
    d = D.ContinuousBernoulli(mt.tensor([0.2, 0.5, 0.9]))
    np.testing.assert_array_equal(d.cdf(mt.tensor([0.0, 0.0, 0.0])).to_numpy(), [0, 0, 0])
    np.testing.assert_array_equal(d.cdf(mt.tensor([1.0, 1.0, 1.0])).to_numpy(), [1, 1, 1])
    np.testing.assert_allclose(d.cdf(mt.tensor([0.3, 0.3, 0.3])).to_numpy()[1], 0.3)
    u = mt.tensor([0.25, 0.6, 0.75])
    np.testing.assert_allclose(d.cdf(d.icdf(u)).to_numpy(), u.to_numpy(), rtol=1e-6)


N = 4000
SAMPLED = {  # name: make(D, L) with float64 parameters whose fourth moments are finite
    "continuous_bernoulli": lambda D, L: D.ContinuousBernoulli(L.tensor([0.2, 0.5, 0.9], dtype=L.float64)),
    "chi2": lambda D, L: D.Chi2(L.tensor([1.5, 6.0], dtype=L.float64)),
    "inverse_gamma": lambda D, L: D.InverseGamma(L.tensor([6.0, 10.0], dtype=L.float64), L.tensor([1.0, 3.0], dtype=L.float64)),
    "fisher_snedecor": lambda D, L: D.FisherSnedecor(L.tensor([5.0, 10.0], dtype=L.float64),
                                                     L.tensor([12.0, 20.0], dtype=L.float64)),
    "generalized_pareto": lambda D, L: D.GeneralizedPareto(L.tensor([0.0, 1.0], dtype=L.float64),
                                                           L.tensor([1.0, 2.0], dtype=L.float64),
                                                           L.tensor([-0.2, 0.1], dtype=L.float64)),
    "kumaraswamy": lambda D, L: D.Kumaraswamy(L.tensor([2.0, 0.7], dtype=L.float64), L.tensor([3.0, 2.0], dtype=L.float64)),
    "negative_binomial": lambda D, L: D.NegativeBinomial(L.tensor([2.5, 10.0], dtype=L.float64),
                                                         L.tensor([0.3, 0.6], dtype=L.float64)),
}


@pytest.mark.parametrize("name", list(SAMPLED))
def test_samples_have_torchs_moments(name):
    mt.manual_seed(29)
    d, t = SAMPLED[name](D, mt), SAMPLED[name](torch.distributions, torch)
    x = d.rsample((N,)) if d.has_rsample else d.sample((N,))
    assert x.shape == (N,) + d.batch_shape and x.dtype == mt.float64
    assert bool(d.support.check(x).all().item())
    within_sampling_error(x.to_numpy(), t.mean.numpy(), t.variance.numpy())


def test_von_mises_samples_have_the_circular_moments():
    """Draws in [-pi, pi) with E cos(X - loc) = I1(k) / I0(k) = 1 - variance and E sin(X - loc) = 0."""
    mt.manual_seed(7)
    loc, kappa = np.array([3.0, -1.0, 0.5]), np.array([0.5, 4.0, 40.0])
    x = D.VonMises(mt.tensor(loc), mt.tensor(kappa)).sample((N,)).to_numpy()
    assert x.shape == (N, 3) and x.min() >= -np.pi and x.max() < np.pi
    want = 1 - torch.distributions.VonMises(torch.tensor(loc), torch.tensor(kappa)).variance.numpy()
    for values, mean in ((np.cos(x - loc), want), (np.sin(x - loc), np.zeros(3))):
        assert np.all(np.abs(values.mean(0) - mean) <= 5 * values.std(0) / np.sqrt(N)), (values.mean(0), mean)


RSAMPLE = {  # name: make(D, *params), params; torch's icdf at our draws' uniform noise is the same map
    "continuous_bernoulli": (lambda D, p: D.ContinuousBernoulli(p), [np.array([0.2, 0.4995, 0.8])]),
    "kumaraswamy": (lambda D, a, b: D.Kumaraswamy(a, b), [positive(3), positive(3)]),
    "generalized_pareto": (lambda D, m, s, c: D.GeneralizedPareto(m, s, c), [normal(3), positive(3),
                                                                             np.array([0.3, 0.0, -0.2])]),
}


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", list(RSAMPLE))
def test_rsample_gradients_match_torch_for_the_same_noise(backend, name):
    make, params = RSAMPLE[name]
    ours = [mt.tensor(p, backend=backend, requires_grad=True) for p in params]
    theirs = [torch.tensor(p, requires_grad=True) for p in params]
    mt.manual_seed(5)
    d = make(D, *ours)
    x = d.rsample((4,))
    assert x.shape == (4, 3) and x.requires_grad
    with mt.no_grad():
        u = torch.tensor(d.cdf(x.detach()).to_numpy())  # torch's GeneralizedPareto cdf raises in float64
    y = make(torch.distributions, *theirs).icdf(u)
    np.testing.assert_allclose(x.to_numpy(), y.detach().numpy(), rtol=1e-7, atol=1e-9)
    w = normal(4, 3)
    (x * mt.tensor(w, backend=backend)).sum().backward()
    (y * torch.tensor(w)).sum().backward()
    for o, p in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.to_numpy(), p.grad.numpy(), rtol=1e-6, atol=1e-8)


BAD = [  # make(D, lib) with an invalid parameter
    lambda D, L: D.Chi2(L.tensor([1.0, -1.0])),
    lambda D, L: D.InverseGamma(L.tensor([-1.0]), L.tensor([1.0])),
    lambda D, L: D.InverseGamma(L.tensor([1.0]), L.tensor([0.0])),
    lambda D, L: D.FisherSnedecor(L.tensor([0.0]), L.tensor([1.0])),
    lambda D, L: D.GeneralizedPareto(L.tensor([0.0]), L.tensor([-1.0]), L.tensor([0.5])),
    lambda D, L: D.Kumaraswamy(L.tensor([-1.0]), L.tensor([1.0])),
    lambda D, L: D.VonMises(L.tensor([0.0]), L.tensor([0.0])),
    lambda D, L: D.NegativeBinomial(L.tensor([-1.0]), L.tensor([0.5])),
    lambda D, L: D.NegativeBinomial(L.tensor([1.0]), L.tensor([1.0])),
    lambda D, L: D.ContinuousBernoulli(L.tensor([1.5]), validate_args=True),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_invalid_parameters_raise_value_error_naming_the_parameter(i):
    with pytest.raises(ValueError) as theirs:
        BAD[i](torch.distributions, torch)
    with pytest.raises(ValueError, match=r"Expected parameter \w+ \(Tensor of shape") as ours:
        BAD[i](D, mt)
    named = re.search(r"Expected parameter (\w+)", str(theirs.value))
    want = named[1] if named else "probs"  # torch's ContinuousBernoulli says "The parameter probs has invalid values"
    assert f"Expected parameter {want} " in str(ours.value)


def test_values_outside_the_support_and_other_errors_match_torch():
    cases = [
        (lambda L: L.distributions.ContinuousBernoulli(L.tensor([0.3])).log_prob(L.tensor([1.5])), ValueError),
        (lambda L: L.distributions.NegativeBinomial(L.tensor([2.0]), L.tensor([0.3])).log_prob(L.tensor([0.5])),
         ValueError),
        (lambda L: L.distributions.GeneralizedPareto(L.tensor([1.0]), L.tensor([1.0]), L.tensor([0.5])).log_prob(
            L.tensor([0.5])), ValueError),
        (lambda L: L.distributions.Chi2(L.tensor([2.0])).log_prob(L.tensor([-1.0])), ValueError),
        (lambda L: L.distributions.ContinuousBernoulli(), ValueError),
        (lambda L: L.distributions.NegativeBinomial(2.0, probs=L.tensor(0.5), logits=L.tensor(0.0)), ValueError),
        (lambda L: L.distributions.VonMises(L.tensor([0.0]), L.tensor([1.0])).cdf(L.tensor([0.0])), NotImplementedError),
        (lambda L: L.distributions.FisherSnedecor(L.tensor([3.0]), L.tensor([3.0])).entropy(), NotImplementedError),
    ]
    for fn, error in cases:
        for L in (torch, mt):
            with pytest.raises(error):
                fn(L)
    with pytest.raises(NotImplementedError):  # gamma draws have no rsample here
        D.Chi2(mt.tensor([3.0])).rsample()


def test_cuda_continuous_bernoulli_and_von_mises():
    if "cuda" not in BACKENDS:
        pytest.skip("no cuda backend")
    check("cuda", lambda L, p, x, m, k: (L.distributions.ContinuousBernoulli(p).log_prob(x),
                                         L.distributions.VonMises(m, k).log_prob(x)),
          np.array([0.2, 0.8]), np.array([0.3, 0.6]), normal(2), positive(2), **BESSEL_TOL)
