"""minitensor.distributions against torch.distributions: log_prob, cdf, icdf, entropy, moments and their gradients to
1e-10 in float64 (tests/torch_oracle.py's check), KL divergences, and rsample's gradients given the same base noise.
Sampling is checked by shapes, dtypes, seeding and moments."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS
from distribution_inputs import TRIGAMMA_TOL, Inputs, Spec, arrays, lib, lower, outputs, spd_of
from torch_oracle import check

import minitensor as mt

INPUTS = Inputs(11)
RNG = INPUTS.rng
normal, positive, probabilities, simplex = INPUTS.normal, INPUTS.positive, INPUTS.unit, INPUTS.simplex
TOL = {"rtol": 1e-10, "atol": 1e-10}


CONT = ("log_prob", "cdf", "icdf", "entropy", "perplexity")
SPECS = {
    "normal": Spec(lambda D, m, s: D.Normal(m, s), [normal(2, 3), positive(2, 3)], normal(4, 2, 3), probabilities(3),
                   methods=CONT),
    "normal_scalar": Spec(lambda D, m: D.Normal(m, 1.5), [normal(3)], normal(3), probabilities(3), methods=CONT),
    "lognormal": Spec(lambda D, m, s: D.LogNormal(m, s), [normal(3), positive(3)], positive(2, 3), probabilities(3),
                      methods=CONT),
    "uniform": Spec(lambda D, lo, w: D.Uniform(lo, lo + w), [normal(3), positive(3)], None, probabilities(3),
                    methods=("icdf", "entropy")),
    "exponential": Spec(lambda D, r: D.Exponential(r), [positive(4)], positive(2, 4), probabilities(4), methods=CONT),
    "laplace": Spec(lambda D, m, s: D.Laplace(m, s), [normal(4), positive(4)], normal(4), probabilities(4), methods=CONT),
    "cauchy": Spec(lambda D, m, s: D.Cauchy(m, s), [normal(4), positive(4)], normal(4), probabilities(4), methods=CONT),
    "studentt": Spec(lambda D, df, m, s: D.StudentT(df + 2, m, s), [positive(4), normal(4), positive(4)], normal(4),
                     tol=TRIGAMMA_TOL),
    "studentt_small_df": Spec(lambda D, df: D.StudentT(df), [np.array([0.5, 1.5, 3.0])], normal(3),
                              props=("mean", "variance", "mode"), tol=TRIGAMMA_TOL),
    "gamma": Spec(lambda D, c, r: D.Gamma(c, r), [positive(4), positive(4)], positive(3, 4)),
    "gamma_cdf": Spec(lambda D, r: D.Gamma(2.5, r), [positive(4)], positive(3, 4), methods=("cdf",), props=()),
    "beta": Spec(lambda D, a, b: D.Beta(a, b), [positive(4, low=1.2), positive(4, low=1.2)], probabilities(4),
                 tol=TRIGAMMA_TOL),
    "dirichlet": Spec(lambda D, c: D.Dirichlet(c), [positive(2, 4)], simplex(3, 2, 4), tol=TRIGAMMA_TOL),
    "bernoulli_probs": Spec(lambda D, p: D.Bernoulli(p), [probabilities(4)], RNG.integers(0, 2, (3, 4)).astype(float),
                            methods=("log_prob", "entropy", "enumerate_support")),
    "bernoulli_logits": Spec(lambda D, lg: D.Bernoulli(logits=lg), [normal(4)], RNG.integers(0, 2, 4).astype(float),
                             props=("mean", "variance", "probs", "logits")),
    "binomial": Spec(lambda D, p: D.Binomial(6, p), [probabilities(4)], RNG.integers(0, 7, (2, 4)).astype(float),
                     props=("mean", "variance", "mode"), methods=("log_prob", "entropy", "enumerate_support")),
    "binomial_logits": Spec(lambda D, n, lg: D.Binomial(n, logits=lg), [np.array([3.0, 5.0, 9.0]), normal(3)],
                            np.array([1.0, 5.0, 0.0]), props=("mean", "variance", "mode", "probs"),
                            methods=("log_prob",)),
    "geometric": Spec(lambda D, p: D.Geometric(p), [probabilities(4)], RNG.integers(0, 6, (2, 4)).astype(float)),
    "geometric_logits": Spec(lambda D, lg: D.Geometric(logits=lg), [normal(4)], RNG.integers(0, 6, 4).astype(float),
                             props=("mean", "variance", "probs")),
    "poisson": Spec(lambda D, r: D.Poisson(r), [positive(4)], RNG.integers(0, 6, (3, 4)).astype(float),
                    props=("mean", "variance", "mode"), methods=("log_prob",)),
    "categorical": Spec(lambda D, p: D.Categorical(p * 3), [simplex(3, 4)], RNG.integers(0, 4, (2, 3)),
                        props=("mean", "variance", "mode", "probs", "logits"),
                        methods=("log_prob", "entropy", "enumerate_support")),
    "categorical_logits": Spec(lambda D, lg: D.Categorical(logits=lg), [normal(4)], RNG.integers(0, 4, (5,)),
                               props=("probs", "logits", "mode"), methods=("log_prob", "entropy", "perplexity")),
    "onehot": Spec(lambda D, p: D.OneHotCategorical(p), [simplex(2, 3)], np.eye(3)[RNG.integers(0, 3, (4, 2))],
                   props=("mean", "variance", "mode", "probs"), methods=("log_prob", "entropy", "enumerate_support")),
    "mvn_scale_tril": Spec(lambda D, m, raw: D.MultivariateNormal(m, scale_tril=lower(lib(m), raw)),
                           [normal(2, 3), normal(3, 3) * 0.3], normal(4, 2, 3),
                           props=("mean", "variance", "stddev", "mode", "covariance_matrix", "precision_matrix")),
    "mvn_covariance": Spec(lambda D, m, raw: D.MultivariateNormal(m, covariance_matrix=spd_of(m, raw)),
                           [normal(3), normal(2, 3, 3) * 0.5], normal(2, 3), props=("mean", "variance", "scale_tril")),
    "mvn_precision": Spec(lambda D, m, raw: D.MultivariateNormal(m, precision_matrix=spd_of(m, raw)),
                          [normal(3), normal(3, 3) * 0.5], normal(3),
                          props=("variance", "scale_tril", "covariance_matrix")),
    "independent": Spec(lambda D, m, s: D.Independent(D.Normal(m, s), 1), [normal(2, 3), positive(2, 3)], normal(2, 3),
                        props=("mean", "variance", "mode")),
    "mixture": Spec(lambda D, lg, m, s: D.MixtureSameFamily(D.Categorical(logits=lg), D.Normal(m, s)),
                    [normal(2, 3), normal(2, 3), positive(2, 3)], normal(4, 2), props=("mean", "variance"),
                    methods=("log_prob", "cdf")),
    "mixture_mvn": Spec(lambda D, lg, m: D.MixtureSameFamily(D.Categorical(logits=lg),
                                                             D.Independent(D.Normal(m, 1.0 + m.square()), 1)),
                        [normal(3), normal(3, 2)], normal(5, 2), props=("mean", "variance"),
                        methods=("log_prob",)),
}


FAST_ONLY = {"mvn_scale_tril", "mvn_covariance"}  # the simple backend's triangular solves cost seconds


@pytest.mark.parametrize("backend, name", [(b, n) for n in SPECS for b in CPU_BACKENDS
                                           if not (b == "simple" and n in FAST_ONLY)])
def test_values_and_gradients_match_torch(backend, name):
    spec = SPECS[name]
    check(backend, outputs(spec), *arrays(spec), **spec.tol)


def test_cuda_normal_log_prob_and_kl():
    if "cuda" not in BACKENDS:
        pytest.skip("no cuda backend")
    check("cuda", lambda L, m, s, x: (L.distributions.Normal(m, s).log_prob(x),
                                      L.distributions.kl_divergence(L.distributions.Normal(m, s),
                                                                    L.distributions.Normal(x, s + 1))),
          normal(3), positive(3), normal(3), **TOL)


KL = {
    "normal": (lambda D, a, b, c, d: (D.Normal(a, b), D.Normal(c, d)), [normal(3), positive(3), normal(3), positive(3)]),
    "bernoulli": (lambda D, p, q: (D.Bernoulli(p), D.Bernoulli(logits=q)), [probabilities(4), normal(4)]),
    "categorical": (lambda D, p, q: (D.Categorical(p), D.Categorical(logits=q)), [simplex(2, 4), normal(2, 4)]),
    "onehot": (lambda D, p, q: (D.OneHotCategorical(p), D.OneHotCategorical(q)), [simplex(3), simplex(2, 3)]),
    "uniform": (lambda D, a, b: (D.Uniform(a, a + 1), D.Uniform(a - b, a + 1 + b)), [normal(3), positive(3)]),
    "uniform_outside": (lambda D, a, b: (D.Uniform(a - b, a + 1), D.Uniform(a, a + 1 + b)), [normal(3), positive(3)]),
    "exponential": (lambda D, a, b: (D.Exponential(a), D.Exponential(b)), [positive(3), positive(3)]),
    "laplace": (lambda D, a, b, c, d: (D.Laplace(a, b), D.Laplace(c, d)), [normal(3), positive(3), normal(3), positive(3)]),
    "gamma": (lambda D, a, b, c, d: (D.Gamma(a, b), D.Gamma(c, d)), [positive(3), positive(3), positive(3), positive(3)]),
    "beta": (lambda D, a, b, c, d: (D.Beta(a, b), D.Beta(c, d)), [positive(3), positive(3), positive(3), positive(3)]),
    "dirichlet": (lambda D, a, b: (D.Dirichlet(a), D.Dirichlet(b)), [positive(2, 3), positive(3)]),
    "poisson": (lambda D, a, b: (D.Poisson(a), D.Poisson(b)), [positive(3), positive(3)]),
    "geometric": (lambda D, a, b: (D.Geometric(a), D.Geometric(b)), [probabilities(3), probabilities(3)]),
    "binomial": (lambda D, a, b: (D.Binomial(5, a), D.Binomial(5, b)), [probabilities(3), probabilities(3)]),
    "mvn": (lambda D, m, r, n, s: (D.MultivariateNormal(m, scale_tril=lower(lib(m), r)),
                                   D.MultivariateNormal(n, covariance_matrix=spd_of(n, s))),
            [normal(2, 3), normal(3, 3) * 0.3, normal(3), normal(2, 3, 3) * 0.5]),
    "independent": (lambda D, a, b, c: (D.Independent(D.Normal(a, b), 1), D.Independent(D.Normal(c, b + 1), 1)),
                    [normal(2, 3), positive(2, 3), normal(2, 3)]),
}


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", list(KL))
def test_kl_divergence_matches_torch(backend, name):
    make, params = KL[name]
    tol = TRIGAMMA_TOL if name in ("gamma", "beta", "dirichlet") else TOL
    check(backend, lambda L, *a: L.distributions.kl_divergence(*make(L.distributions, *a)), *params, **tol)


def _uniform_noise(x: np.ndarray, cdf: Any) -> np.ndarray:
    return np.asarray(cdf(torch.tensor(x)).detach().numpy())


RSAMPLE = {  # name: make(D, *params), params, torch's noise -> sample map (from the recovered uniform noise)
    "normal": (lambda D, m, s: D.Normal(m, s), [normal(3), positive(3)]),
    "lognormal": (lambda D, m, s: D.LogNormal(m, s), [normal(3), positive(3)]),
    "uniform": (lambda D, a, w: D.Uniform(a, a + w), [normal(3), positive(3)]),
    "exponential": (lambda D, r: D.Exponential(r), [positive(3)]),
    "laplace": (lambda D, m, s: D.Laplace(m, s), [normal(3), positive(3)]),
    "cauchy": (lambda D, m, s: D.Cauchy(m, s), [normal(3), positive(3)]),
}


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", list(RSAMPLE))
def test_rsample_gradients_match_torch_for_the_same_noise(backend, name):
    """Our draws x = g(noise, params); torch's icdf at the uniform noise u = F(x) is the same map, so x and the
    gradients of a weighted sum of the draws to the parameters must agree."""
    make, params = RSAMPLE[name]
    ours = [mt.tensor(p, backend=backend, requires_grad=True) for p in params]
    theirs = [torch.tensor(p, requires_grad=True) for p in params]
    mt.manual_seed(5)
    d = make(mt.distributions, *ours)
    assert d.has_rsample
    x = d.rsample((4,))
    assert x.shape == (4, 3) and x.dtype == mt.float64 and x.requires_grad
    t = make(torch.distributions, *theirs)
    with torch.no_grad():
        u = t.cdf(torch.tensor(x.to_numpy()))
    y = t.icdf(u)
    np.testing.assert_allclose(x.to_numpy(), y.detach().numpy(), rtol=1e-8, atol=1e-9)
    w = RNG.standard_normal((4, 3))
    (x * mt.tensor(w, backend=backend)).sum().backward()
    (y * torch.tensor(w)).sum().backward()
    for o, p in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.to_numpy(), p.grad.numpy(), rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_mvn_rsample_gradients_match_torch_for_the_same_noise(backend, monkeypatch):
    loc, raw = normal(2, 3), normal(3, 3) * 0.3
    ours = [mt.tensor(a, backend=backend, requires_grad=True) for a in (loc, raw)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (loc, raw)]
    mt.manual_seed(2)
    x = mt.distributions.MultivariateNormal(ours[0], scale_tril=lower(mt, ours[1])).rsample((5,))
    assert x.shape == (5, 2, 3)
    mt.manual_seed(2)
    noise = torch.tensor(mt.randn(5, 2, 3, dtype=mt.float64).to_numpy())  # the same draws
    monkeypatch.setattr(torch.distributions.multivariate_normal, "_standard_normal", lambda *a, **k: noise)
    y = torch.distributions.MultivariateNormal(theirs[0], scale_tril=lower(torch, theirs[1])).rsample((5,))
    np.testing.assert_allclose(x.to_numpy(), y.detach().numpy(), rtol=1e-12, atol=1e-12)
    w = RNG.standard_normal((5, 2, 3))
    (x * mt.tensor(w, backend=backend)).sum().backward()
    (y * torch.tensor(w)).sum().backward()
    for o, p in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.to_numpy(), p.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_uniform_log_prob_and_cdf_inside_and_outside(backend):
    low, width = normal(4), positive(4)
    at = np.array([0.2, 0.5, 0.99, 0.0])  # fractions of the way from low to high
    check(backend, lambda L, lo, w: (L.distributions.Uniform(lo, lo + w).log_prob(lo + w * L.ones_like(lo) * 0.5),
                                     L.distributions.Uniform(lo, lo + w).cdf(lo + w * 0.3)), low, width, **TOL)
    d = mt.distributions.Uniform(mt.tensor(low, backend=backend), mt.tensor(low + width, backend=backend),
                                 validate_args=False)
    t = torch.distributions.Uniform(torch.tensor(low), torch.tensor(low + width), validate_args=False)
    for x in (low + at * width, low - 1.0, low + width + 1.0):
        np.testing.assert_allclose(d.log_prob(mt.tensor(x, backend=backend)).to_numpy(),
                                   t.log_prob(torch.tensor(x)).numpy(), **TOL)
        np.testing.assert_allclose(d.cdf(mt.tensor(x, backend=backend)).to_numpy(), t.cdf(torch.tensor(x)).numpy(), **TOL)


def _both(name: str) -> tuple[Any, Any]:
    spec = SPECS[name]
    params = spec.params
    return (spec.make(mt.distributions, *[mt.tensor(p) for p in params]),
            spec.make(torch.distributions, *[torch.tensor(p) for p in params]))


@pytest.mark.parametrize("name", list(SPECS))
def test_shapes_flags_constraints_and_expand_match_torch(name):
    ours, theirs = _both(name)
    assert ours.batch_shape == tuple(theirs.batch_shape) and ours.event_shape == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample or name.split("_")[0] in ("studentt", "gamma", "beta", "dirichlet")
    assert ours.has_enumerate_support == theirs.has_enumerate_support
    assert sorted(ours.arg_constraints) == sorted(theirs.arg_constraints)
    for key, c in ours.arg_constraints.items():
        assert repr(c) == repr(theirs.arg_constraints[key]) or "Dependent" in repr(c)
    if "Tensor" not in repr(theirs.support) and "tensor" not in repr(theirs.support):
        assert repr(ours.support) == repr(theirs.support)
    assert ours.support.is_discrete == theirs.support.is_discrete and ours.support.event_dim == theirs.support.event_dim
    shape = (2,) + ours.batch_shape
    big, tbig = ours.expand(shape), theirs.expand(torch.Size(shape))
    assert big.batch_shape == tuple(tbig.batch_shape) == shape and big.event_shape == ours.event_shape
    np.testing.assert_allclose(big.mean.to_numpy(), tbig.mean.numpy(), **TOL) if name != "uniform" else None
    assert tuple(big.sample().shape) == shape + ours.event_shape
    assert type(big) is type(ours) and big._validate_args == ours._validate_args


BAD = [  # (make(D, lib), parameter named in torch's message, constraint repr)
    (lambda D, L: D.Normal(L.zeros(2), -L.ones(2)), "scale", "GreaterThan(lower_bound=0.0)"),
    (lambda D, L: D.Normal(L.tensor([float("nan")]), 1.0), "loc", "Real()"),
    (lambda D, L: D.Exponential(L.tensor([1.0, 0.0])), "rate", "GreaterThan(lower_bound=0.0)"),
    (lambda D, L: D.Bernoulli(L.tensor([1.5])), "probs", "Interval(lower_bound=0.0, upper_bound=1.0)"),
    (lambda D, L: D.Categorical(L.tensor([0.5, -0.1])), "probs", "Simplex()"),
    (lambda D, L: D.Gamma(L.tensor([1.0]), L.tensor([-2.0])), "rate", "GreaterThan(lower_bound=0.0)"),
    (lambda D, L: D.Dirichlet(L.tensor([1.0, 0.0])), "concentration", "IndependentConstraint(GreaterThan(lower_bound=0.0), 1)"),
    (lambda D, L: D.Poisson(L.tensor([-1.0])), "rate", "GreaterThanEq(lower_bound=0.0)"),
    (lambda D, L: D.Binomial(L.tensor([2.5]), L.tensor([0.5])), "total_count", "IntegerGreaterThan(lower_bound=0)"),
    (lambda D, L: D.MultivariateNormal(L.zeros(2), scale_tril=L.tensor([[1.0, 0.0], [0.0, -1.0]])), "scale_tril",
     "LowerCholesky()"),
    (lambda D, L: D.MultivariateNormal(L.zeros(2), covariance_matrix=L.tensor([[1.0, 2.0], [2.0, 1.0]])),
     "covariance_matrix", "PositiveDefinite()"),
    (lambda D, L: D.StudentT(L.tensor([0.0])), "df", "GreaterThan(lower_bound=0.0)"),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_invalid_parameters_raise_value_error_naming_parameter_and_constraint(i):
    make, param, constraint = BAD[i]
    with pytest.raises(ValueError, match=rf"Expected parameter {param} .* to satisfy the constraint") as theirs:
        make(torch.distributions, torch)
    with pytest.raises(ValueError, match=rf"Expected parameter {param} \(Tensor of shape") as ours:
        make(mt.distributions, mt)
    assert f"the constraint {constraint}, but found invalid values" in str(ours.value)
    assert f"the constraint {constraint}, but found invalid values" in str(theirs.value)


def test_validation_switches_and_sample_errors_match_torch():
    D = mt.distributions
    d = D.Normal(mt.zeros(2), -mt.ones(2), validate_args=False)  # no check asked for
    assert d.batch_shape == (2,)
    D.Distribution.set_default_validate_args(False)
    try:
        assert D.Exponential(mt.tensor([-1.0])).batch_shape == (1,)
    finally:
        D.Distribution.set_default_validate_args(True)
    cases = [
        (lambda L: L.distributions.Exponential(1.0).log_prob(L.tensor([-1.0])),
         r"Expected value argument \(Tensor of shape \(1,\)\) to be within the support \(GreaterThanEq\(lower_bound=0.0\)\)"
         r" of the distribution Exponential\(rate: 1.0\), but found invalid values"),
        (lambda L: L.distributions.Bernoulli(L.tensor([0.3])).log_prob(L.tensor([0.5])), "within the support"),
        (lambda L: L.distributions.Normal(L.zeros(3), 1.0).log_prob(L.zeros(2)),
         r"Value is not broadcastable with batch_shape\+event_shape"),
        (lambda L: L.distributions.Dirichlet(L.ones(3)).log_prob(L.ones(2) / 2), "right-most size of value must match"),
        (lambda L: L.distributions.Normal(0.0, 1.0).log_prob(0.5), "The value argument to log_prob must be a Tensor"),
        (lambda L: L.distributions.Bernoulli(L.tensor(0.5), logits=L.tensor(0.0)), "Either `probs` or `logits`"),
        (lambda L: L.distributions.Categorical(), "Either `probs` or `logits`"),
        (lambda L: L.distributions.Categorical(L.tensor(1.0)), "`probs` parameter must be at least one-dimensional"),
        (lambda L: L.distributions.MultivariateNormal(L.zeros(2)), "Exactly one of covariance_matrix"),
        (lambda L: L.distributions.MultivariateNormal(L.tensor(0.0), L.eye(1)), "loc must be at least one-dimensional"),
        (lambda L: L.distributions.Independent(L.distributions.Normal(L.zeros(2), 1.0), 2),
         r"Expected reinterpreted_batch_ndims <= len\(base_distribution.batch_shape\), actual 2 vs 1"),
        (lambda L: L.distributions.MixtureSameFamily(L.distributions.Categorical(L.ones(2)),
                                                     L.distributions.Normal(L.zeros(3), 1.0)),
         r"`mixture_distribution component` \(2\) does not equal"),
        (lambda L: L.distributions.kl_divergence(L.distributions.MultivariateNormal(L.zeros(2), L.eye(2)),
                                                 L.distributions.MultivariateNormal(L.zeros(3), L.eye(3))),
         "different event shapes"),
    ]
    for fn, pattern in cases:
        for L in (torch, mt):
            with pytest.raises(ValueError, match=pattern):
                fn(L)


def test_kl_dispatch_registration_and_missing_pairs():
    D = mt.distributions
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Poisson(1.0), D.Normal(0.0, 1.0))
    with pytest.raises(NotImplementedError):
        torch.distributions.kl_divergence(torch.distributions.Poisson(1.0), torch.distributions.Normal(0.0, 1.0))

    class Wide(D.Normal):
        pass

    p, q = Wide(mt.tensor([0.0]), mt.tensor([1.0])), D.Normal(mt.tensor([1.0]), mt.tensor([2.0]))
    base = D.kl_divergence(p, q).to_numpy()  # Normal-Normal serves the subclass
    want = torch.distributions.kl_divergence(torch.distributions.Normal(0.0, 1.0), torch.distributions.Normal(1.0, 2.0))
    np.testing.assert_allclose(base, [want.item()], rtol=1e-6)

    @D.register_kl(Wide, D.Normal)
    def _kl_wide(p, q):
        return p.loc * 0 + 42.0

    assert D.kl_divergence(p, q).item() == 42.0  # the more specific registration wins
    assert D.kl_divergence(q, q).item() == 0.0
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


CHECKS = [  # (constraint name, values) checked against torch
    ("real", [0.0, float("nan"), float("inf")]), ("positive", [-1.0, 0.0, 2.0]), ("nonnegative", [-1.0, 0.0, 2.0]),
    ("unit_interval", [-0.1, 0.0, 0.5, 1.0, 1.1]), ("boolean", [0.0, 1.0, 0.5]),
    ("nonnegative_integer", [-1.0, 0.0, 2.0, 2.5]), ("simplex", [[0.2, 0.8], [0.5, 0.6], [-0.2, 1.2]]),
    ("real_vector", [[0.0, float("nan")], [1.0, 2.0]]), ("one_hot", [[0.0, 1.0], [1.0, 1.0], [0.0, 0.0]]),
    ("lower_cholesky", [[[1.0, 0.0], [2.0, 3.0]], [[1.0, 1.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, -1.0]]]),
    ("positive_definite", [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 2.0], [2.0, 1.0]]]),
    ("positive_definite", [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 0.5], [0.0, 1.0]]]),
]


@pytest.mark.parametrize("name, values", CHECKS)
def test_constraint_checks_match_torch(name, values):
    ours = getattr(mt.distributions.constraints, name)
    theirs = getattr(torch.distributions.constraints, name)
    got = ours.check(mt.tensor(values, dtype=mt.float64))
    np.testing.assert_array_equal(got.to_numpy(), theirs.check(torch.tensor(values, dtype=torch.float64)).numpy())
    assert repr(ours) == repr(theirs) and ours.event_dim == theirs.event_dim and ours.is_discrete == theirs.is_discrete
    interval = mt.distributions.constraints.interval(0.0, 2.0)
    assert interval.check(mt.tensor([0.0, 2.0, 2.1])).tolist() == [True, True, False]
    assert mt.distributions.constraints.is_dependent(mt.distributions.Uniform.support)



def test_a_subclass_without_constraints_warns_like_torch():
    for L in (torch, mt):
        class Point(L.distributions.Distribution):
            def log_prob(self, value):
                return value * 0

        with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
            d = Point((2,))
        assert tuple(d.batch_shape) == (2,) and d.event_shape == type(d.event_shape)()
        with pytest.warns(UserWarning, match="does not define `support`"):
            d._validate_sample(L.zeros(2))
        with pytest.raises(NotImplementedError):
            d.entropy()
