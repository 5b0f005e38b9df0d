"""TransformedDistribution and the distributions built on it (Gumbel, HalfNormal, HalfCauchy, Weibull, Pareto,
LogisticNormal, the relaxed ones) against torch.distributions: each distribution's log_prob, cdf, icdf, entropy and
moments with their gradients to 1e-10 in float64 (tests/torch_oracle.py's check), shapes, flags, support and errors;
KL divergences; sampling by shapes, support and moments (draws come from minitensor's own generator)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS
from distribution_inputs import Inputs, within_sampling_error
from torch_oracle import check

import minitensor as mt

INPUTS = Inputs(24)
RNG = INPUTS.rng
normal, positive, unit, simplex = INPUTS.normal, INPUTS.positive, INPUTS.unit, INPUTS.simplex
TOL = {"rtol": 1e-10, "atol": 1e-10}
D = mt.distributions


# Distributions: make(D, *params), params, log_prob value, icdf quantiles, properties, methods
CONT = ("log_prob", "cdf", "icdf", "entropy")
DISTS: dict[str, tuple[Any, list[np.ndarray], np.ndarray, np.ndarray | None, tuple[str, ...], tuple[str, ...]]] = {
    "gumbel": (lambda D, m, s: D.Gumbel(m, s), [normal(2, 3), positive(2, 3)], normal(4, 2, 3), unit(3),
               ("mean", "variance", "stddev", "mode"), CONT),
    "gumbel_number_scale": (lambda D, m: D.Gumbel(m, 1.5), [normal(3)], normal(3), unit(3), ("mean", "mode"), CONT),
    "half_normal": (lambda D, s: D.HalfNormal(s), [positive(2, 3)], positive(4, 2, 3, low=0.1), unit(3),
                    ("mean", "variance", "stddev", "mode", "scale"), CONT),
    "half_cauchy": (lambda D, s: D.HalfCauchy(s), [positive(3)], positive(2, 3, low=0.1), unit(3),
                    ("mean", "variance", "mode", "scale"), CONT),
    "weibull": (lambda D, s, c: D.Weibull(s, c), [positive(3), positive(3, low=1.2)], positive(2, 3, low=0.1), unit(3),
                ("mean", "variance", "stddev", "mode"), CONT),
    "weibull_small_concentration": (lambda D, s, c: D.Weibull(s, c), [positive(3), positive(3, low=0.3, high=0.9)],
                                    positive(3, low=0.1), unit(3), ("mean", "variance"), CONT),
    "pareto": (lambda D, s, a: D.Pareto(s, a), [positive(4, low=0.5, high=1.0), np.array([0.5, 1.5, 2.5, 4.0])],
               positive(2, 4, low=1.0, high=3.0), unit(4), ("mean", "variance", "mode"), CONT),
    "logistic_normal": (lambda D, m, s: D.LogisticNormal(m, s), [normal(2, 3), positive(2, 3)], simplex(5, 2, 4), None,
                        ("loc", "scale"), ("log_prob",)),
    "logistic_normal_vector": (lambda D, m, s: D.LogisticNormal(m, s), [normal(3), positive(3)], simplex(4), None, (),
                               ("log_prob",)),
    "relaxed_bernoulli": (lambda D, t, p: D.RelaxedBernoulli(t, probs=p), [positive(1), unit(4)], unit(3, 4), None,
                          ("probs", "logits", "temperature"), ("log_prob",)),
    "relaxed_bernoulli_logits": (lambda D, t, lg: D.RelaxedBernoulli(t, logits=lg), [positive(), normal(2, 3)],
                                 unit(2, 3), None, ("probs", "logits"), ("log_prob",)),
    "relaxed_one_hot": (lambda D, t, p: D.RelaxedOneHotCategorical(t, p * 2), [positive(1), simplex(2, 3)],
                        simplex(4, 2, 3), None, ("probs", "logits", "temperature"), ("log_prob",)),
    "relaxed_one_hot_logits": (lambda D, t, lg: D.RelaxedOneHotCategorical(t, logits=lg), [positive(), normal(4)],
                               simplex(3, 4), None, ("probs",), ("log_prob",)),
    "transformed_exp": (lambda D, m, s: D.TransformedDistribution(D.Normal(m, s), [D.ExpTransform()]),
                        [normal(3), positive(3)], positive(2, 3), unit(3), (), ("log_prob", "cdf", "icdf")),
    "transformed_decreasing": (lambda D, m, s, b: D.TransformedDistribution(D.Normal(m, s), D.AffineTransform(1.0, -b)),
                               [normal(3), positive(3), positive(3)], normal(2, 3), unit(3), (), ("log_prob", "cdf", "icdf")),
    "transformed_number_decreasing": (lambda D, m, s: D.TransformedDistribution(
        D.Exponential(s), [D.AffineTransform(0.0, -2.0), D.AffineTransform(m, 1.0)]),
        [normal(3), positive(3)], normal(3) - 3, unit(3), (), ("log_prob", "cdf", "icdf")),
    "transformed_broadcast": (lambda D, m, s, a, b: D.TransformedDistribution(D.Normal(m, s), [D.AffineTransform(a, b)]),
                              [normal(1), positive(1), normal(2, 3), positive(3)], normal(4, 2, 3), unit(3), (),
                              ("log_prob", "cdf", "icdf")),
    "transformed_event": (lambda D, m, s: D.TransformedDistribution(D.Normal(m, s), [D.StickBreakingTransform(),
                                                                                     D.ExpTransform()]),
                          [normal(2, 3), positive(2, 3)], np.exp(simplex(5, 2, 4)), None, (), ("log_prob",)),
    "transformed_reshape": (lambda D, m, s: D.TransformedDistribution(D.Normal(m, s), D.ReshapeTransform((2, 3), (6,))),
                            [normal(2, 3), positive(2, 3)], normal(4, 6), None, (), ("log_prob",)),
}


def _dist_outputs(name: str) -> Any:
    make, params, _, q, props, methods = DISTS[name]
    n = len(params)

    def fn(L: Any, *a: Any) -> tuple[Any, ...]:
        d = make(L.distributions, *a[:n])
        out = [getattr(d, p) for p in props]
        for m in methods:
            if m in ("log_prob", "cdf"):
                out.append(getattr(d, m)(a[n]))
            elif m == "icdf":
                out.append(d.icdf(a[n + 1]))
            else:
                out.append(getattr(d, m)())
        return tuple(out)

    return fn


@pytest.mark.parametrize("backend, name", [(b, n) for n in DISTS for b in CPU_BACKENDS])
def test_distribution_values_and_gradients_match_torch(backend, name):
    _, params, value, q, _, _ = DISTS[name]
    check(backend, _dist_outputs(name), *params, value, *([] if q is None else [q]), **TOL)


def _both(name: str) -> tuple[Any, Any]:
    make, params, *_ = DISTS[name]
    return make(D, *[mt.tensor(p) for p in params]), make(torch.distributions, *[torch.tensor(p) for p in params])


@pytest.mark.parametrize("name", list(DISTS))
def test_shapes_flags_support_and_expand_match_torch(name):
    ours, theirs = _both(name)
    assert ours.batch_shape == tuple(theirs.batch_shape) and ours.event_shape == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample and sorted(ours.arg_constraints) == sorted(theirs.arg_constraints)
    assert isinstance(ours, D.TransformedDistribution)
    s, ts = ours.support, theirs.support
    assert s.event_dim == ts.event_dim and s.is_discrete == ts.is_discrete
    if "tensor" not in repr(ts):
        assert repr(s) == repr(ts)
    assert repr(ours) == re.sub(r"torch\.Size\(\[(.*?)\]\)", lambda m: str(tuple(int(v) for v in m[1].split(","))), repr(theirs))
    shape = (2,) + ours.batch_shape
    big, tbig = ours.expand(shape), theirs.expand(torch.Size(shape))
    assert type(big) is type(ours) and big._validate_args == ours._validate_args
    assert big.batch_shape == tuple(tbig.batch_shape) == shape and big.event_shape == ours.event_shape
    assert tuple(big.base_dist.batch_shape) == tuple(tbig.base_dist.batch_shape)
    mt.manual_seed(4)
    draws = big.sample((3,))
    assert draws.shape == (3,) + shape + ours.event_shape and not draws.requires_grad
    assert bool(big.support.check(draws).all().item())
    np.testing.assert_allclose(big.log_prob(draws).to_numpy(), tbig.log_prob(torch.tensor(draws.to_numpy())).numpy(),
                               rtol=1e-9, atol=1e-9)


N = 4000
SAMPLED = {  # name: make(D, lib) with float64 parameters
    "gumbel": lambda D, L: D.Gumbel(L.tensor([0.5, -1.0], dtype=L.float64), L.tensor([1.0, 2.0], dtype=L.float64)),
    "half_normal": lambda D, L: D.HalfNormal(L.tensor([0.5, 2.0], dtype=L.float64)),
    "weibull": lambda D, L: D.Weibull(L.tensor([1.0, 2.0], dtype=L.float64), L.tensor([0.8, 3.0], dtype=L.float64)),
    "pareto": lambda D, L: D.Pareto(L.tensor([1.0, 0.5], dtype=L.float64), L.tensor([5.0, 9.0], dtype=L.float64)),
    "logistic_normal": lambda D, L: D.LogisticNormal(L.tensor([0.5, -1.0], dtype=L.float64),
                                                     L.tensor([1.0, 0.5], dtype=L.float64)),
    "relaxed_bernoulli": lambda D, L: D.RelaxedBernoulli(L.tensor(0.5, dtype=L.float64),
                                                         L.tensor([0.2, 0.7], dtype=L.float64)),
    "relaxed_one_hot": lambda D, L: D.RelaxedOneHotCategorical(L.tensor([0.7], dtype=L.float64),
                                                               L.tensor([0.2, 0.3, 0.5], dtype=L.float64)),
}


@pytest.mark.parametrize("name", list(SAMPLED))
def test_samples_have_torchs_moments(name):
    """Our draws against torch's mean and variance where torch defines them, else against the moments of a large
    sample of torch's draws."""
    mt.manual_seed(19)
    d, t = SAMPLED[name](D, mt), SAMPLED[name](torch.distributions, torch)
    x = d.rsample((N,)) if d.has_rsample else d.sample((N,))
    assert x.shape == (N,) + tuple(t.batch_shape) + tuple(t.event_shape) and x.dtype == mt.float64
    assert bool(d.support.check(x).all().item())
    try:
        mean, var = t.mean.numpy(), t.variance.numpy()
        reference_error = 0.0
    except NotImplementedError:
        torch.manual_seed(0)
        big = t.sample((50 * N,)).numpy()
        mean, var = big.mean(0), big.var(0)
        reference_error = np.sqrt(var / (50 * N))
    within_sampling_error(x.to_numpy(), mean, var, reference_error)


def test_half_cauchy_samples_have_torchs_quartiles():
    mt.manual_seed(8)
    x = D.HalfCauchy(mt.tensor([1.0, 3.0], dtype=mt.float64)).sample((N,)).to_numpy()
    q = np.array([0.25, 0.5, 0.75])
    want = torch.distributions.HalfCauchy(torch.tensor([1.0, 3.0])).icdf(torch.tensor(q)[:, None]).numpy()
    np.testing.assert_allclose(np.quantile(x, q, axis=0), want, rtol=0.1)


RSAMPLE = {
    "gumbel": (lambda D, m, s: D.Gumbel(m, s), [normal(3), positive(3)]),
    "half_normal": (lambda D, s: D.HalfNormal(s), [positive(3)]),
    "half_cauchy": (lambda D, s: D.HalfCauchy(s), [positive(3)]),
    "weibull": (lambda D, s, c: D.Weibull(s, c), [positive(3), positive(3)]),
    "pareto": (lambda D, s, a: D.Pareto(s, a), [positive(3), positive(3)]),
}


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", list(RSAMPLE))
def test_rsample_gradients_match_torch_for_the_same_noise(backend, name):
    """x = g(noise, params) and torch's icdf(cdf(x)) are the same map of the parameters: equal draws and gradients."""
    make, params = RSAMPLE[name]
    ours = [mt.tensor(p, backend=backend, requires_grad=True) for p in params]
    theirs = [torch.tensor(p, requires_grad=True) for p in params]
    mt.manual_seed(5)
    x = make(D, *ours).rsample((4,))
    assert x.shape == (4, 3) and x.requires_grad
    t = make(torch.distributions, *theirs)
    with torch.no_grad():
        u = t.cdf(torch.tensor(x.to_numpy()))
    y = t.icdf(u)
    np.testing.assert_allclose(x.to_numpy(), y.detach().numpy(), rtol=1e-8, atol=1e-9)
    w = RNG.standard_normal((4, 3))
    (x * mt.tensor(w, backend=backend)).sum().backward()
    (y * torch.tensor(w)).sum().backward()
    for o, p in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.to_numpy(), p.grad.numpy(), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["relaxed_bernoulli", "relaxed_one_hot", "logistic_normal"])
def test_relaxed_and_logistic_normal_rsample_carry_gradients(name):
    logits = mt.tensor([0.3, -0.2], dtype=mt.float64, requires_grad=True)
    temperature = mt.tensor(0.6, dtype=mt.float64, requires_grad=True)
    d = {"relaxed_bernoulli": lambda: D.RelaxedBernoulli(temperature, logits=logits),
         "relaxed_one_hot": lambda: D.RelaxedOneHotCategorical(temperature, logits=logits),
         "logistic_normal": lambda: D.LogisticNormal(logits, temperature)}[name]()
    x = d.rsample((5,))
    assert x.requires_grad and d.has_rsample
    (x * mt.arange(x.shape[-1], dtype=mt.float64)).sum().backward()
    assert np.isfinite(logits.grad.to_numpy()).all() and np.abs(logits.grad.to_numpy()).sum() > 0
    assert temperature.grad is not None and np.isfinite(temperature.grad.item())


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_relaxed_bases_match_torch(backend):
    """LogitRelaxedBernoulli and ExpRelaxedCategorical live in minitensor.distributions.relaxed (torch's
    relaxed_bernoulli and relaxed_categorical): log_prob with gradients to temperature, logits and value."""

    def fn(L: Any, t: Any, logits: Any, x: Any, cat_logits: Any, y: Any) -> Any:
        bern, cat = ((torch.distributions.relaxed_bernoulli, torch.distributions.relaxed_categorical) if L is torch
                     else (mt.distributions.relaxed, mt.distributions.relaxed))
        return (bern.LogitRelaxedBernoulli(t, logits=logits).log_prob(x),
                cat.ExpRelaxedCategorical(t, logits=cat_logits).log_prob(y))

    rng = np.random.default_rng(5)
    check(backend, fn, rng.uniform(0.5, 2.0, ()), rng.standard_normal((2, 3)), rng.standard_normal((2, 3)),
          rng.standard_normal((2, 3)), np.log(rng.dirichlet(np.ones(3), 2)), **TOL)


BAD = [  # (make(D, lib), parameter named in the message)
    (lambda D, L: D.Gumbel(L.zeros(2), -L.ones(2)), "scale"),
    (lambda D, L: D.HalfNormal(L.tensor([1.0, 0.0])), "scale"),
    (lambda D, L: D.HalfCauchy(L.tensor([-1.0])), "scale"),
    (lambda D, L: D.Weibull(L.ones(2), L.tensor([1.0, -2.0])), "concentration"),
    (lambda D, L: D.Pareto(L.ones(2), L.tensor([0.0, 1.0])), "rate"),  # its base Exponential(alpha) checks first
    (lambda D, L: D.Pareto(L.tensor([0.0, 1.0]), L.ones(2)), "scale"),
    (lambda D, L: D.LogisticNormal(L.zeros(2), L.tensor([1.0, -1.0])), "scale"),
    (lambda D, L: D.RelaxedBernoulli(L.tensor(1.0), L.tensor([1.5])), "probs"),
    (lambda D, L: D.RelaxedOneHotCategorical(L.tensor(1.0), L.tensor([0.5, -0.1])), "probs"),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_invalid_parameters_raise_value_error_naming_the_parameter(i):
    make, param = BAD[i]
    for L in (torch, mt):
        with pytest.raises(ValueError, match=rf"Expected parameter {param} \(Tensor of shape .* to satisfy the constraint"):
            make(L.distributions, L)


def test_transformed_distribution_errors_match_torch():
    cases = [
        (lambda L: L.distributions.TransformedDistribution(L.distributions.Normal(0.0, 1.0), [1]),
         "transforms must be a Transform or a list of Transforms"),
        (lambda L: L.distributions.TransformedDistribution(L.distributions.Normal(0.0, 1.0), "exp"),
         "transforms must be a Transform or list, but was exp"),
        (lambda L: L.distributions.TransformedDistribution(L.distributions.Normal(0.0, 1.0),
                                                           L.distributions.StickBreakingTransform()),
         r"base_distribution needs to have shape with size at least 1, but got "),
        (lambda L: L.distributions.HalfNormal(L.tensor([1.0])).log_prob(L.tensor([-1.0])), "within the support"),
        (lambda L: L.distributions.Pareto(L.tensor([2.0]), L.tensor([1.0])).log_prob(L.tensor([1.0])),
         "within the support"),
        (lambda L: L.distributions.LogisticNormal(L.zeros(2), L.ones(2)).log_prob(L.ones(3)), "within the support"),
        (lambda L: L.distributions.Gumbel(L.zeros(1), L.ones(1)).cdf(L.tensor([-50.0])), "within the support"),
    ]
    for fn, pattern in cases:
        for L in (torch, mt):
            with pytest.raises(ValueError, match=pattern):
                fn(L)
    for L in (torch, mt):
        with pytest.raises(NotImplementedError):
            L.distributions.LogisticNormal(L.zeros(2), L.ones(2)).cdf(L.ones(3) / 3)
        with pytest.raises(NotImplementedError):
            _ = L.distributions.LogisticNormal(L.zeros(2), L.ones(2)).mean
    empty = D.TransformedDistribution(D.Normal(mt.zeros(2), 1.0), [])
    assert empty.support is D.constraints.real and empty.batch_shape == (2,) and empty.transforms == []


KL = {
    "gumbel": (lambda D, a, b, c, d: (D.Gumbel(a, b), D.Gumbel(c, d)), [normal(3), positive(3), normal(3), positive(3)]),
    "half_normal": (lambda D, a, b: (D.HalfNormal(a), D.HalfNormal(b)), [positive(3), positive(3)]),
    "pareto": (lambda D, a, b, c, d: (D.Pareto(a, b), D.Pareto(c, d)),
               [positive(4), positive(4), positive(4), positive(4)]),
    "transformed": (lambda D, a, b, c: (D.TransformedDistribution(D.Normal(a, b), D.ExpTransform()),
                                        D.TransformedDistribution(D.Normal(c, b + 1), D.ExpTransform())),
                    [normal(3), positive(3), normal(3)]),
    "logistic_normal": (lambda D, a, b, c: (D.LogisticNormal(a, b), D.LogisticNormal(c, b)),
                        [normal(2, 3), positive(2, 3), normal(2, 3)]),
}


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", list(KL))
def test_kl_divergence_matches_torch(backend, name):
    make, params = KL[name]
    check(backend, lambda L, *a: L.distributions.kl_divergence(*make(L.distributions, *a)), *params, **TOL)


def test_kl_between_different_transforms_is_not_implemented():
    for L in (torch, mt):
        p = L.distributions.TransformedDistribution(L.distributions.Normal(L.zeros(2), 1.0), L.distributions.ExpTransform())
        q = L.distributions.TransformedDistribution(L.distributions.Normal(L.zeros(2), 1.0),
                                                    L.distributions.SigmoidTransform())
        with pytest.raises(NotImplementedError):
            L.distributions.kl_divergence(p, q)


def test_cuda_gumbel():
    if "cuda" not in BACKENDS:
        pytest.skip("no cuda backend")
    check("cuda", lambda L, m, s, x: L.distributions.Gumbel(m, s).log_prob(x), normal(2), positive(2), normal(2), **TOL)
