"""Sampling from minitensor.distributions: draws come from minitensor's shared generator (so they differ from torch's),
hence checked by shape, dtype, backend, support, seeding and moments rather than against torch's values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import CPU_BACKENDS
from distribution_inputs import within_sampling_error

import minitensor as mt

N = 4000
SAMPLED = {  # name: make(D, backend) with float64 parameters; draws are checked against the distribution's moments
    "normal": lambda D, b: D.Normal(_t([0.5, -1.0], b), _t([1.0, 2.0], b)),
    "lognormal": lambda D, b: D.LogNormal(_t([0.0, 0.3], b), _t([0.25, 0.5], b)),
    "uniform": lambda D, b: D.Uniform(_t([0.0, -2.0], b), _t([1.0, 3.0], b)),
    "exponential": lambda D, b: D.Exponential(_t([0.5, 3.0], b)),
    "laplace": lambda D, b: D.Laplace(_t([1.0, -1.0], b), _t([0.5, 2.0], b)),
    "studentt": lambda D, b: D.StudentT(_t([5.0, 9.0], b), _t([1.0, 0.0], b), _t([1.0, 2.0], b)),
    "gamma": lambda D, b: D.Gamma(_t([0.5, 3.0], b), _t([1.0, 2.0], b)),
    "beta": lambda D, b: D.Beta(_t([0.5, 3.0], b), _t([2.0, 1.5], b)),
    "dirichlet": lambda D, b: D.Dirichlet(_t([0.5, 2.0, 3.0], b)),
    "bernoulli": lambda D, b: D.Bernoulli(_t([0.2, 0.7], b)),
    "binomial": lambda D, b: D.Binomial(_t([4.0, 10.0], b), _t([0.3, 0.6], b)),
    "geometric": lambda D, b: D.Geometric(_t([0.3, 0.8], b)),
    "poisson": lambda D, b: D.Poisson(_t([0.5, 4.0], b)),
    "categorical": lambda D, b: D.Categorical(_t([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], b)),
    "onehot": lambda D, b: D.OneHotCategorical(_t([0.2, 0.3, 0.5], b)),
    "mvn": lambda D, b: D.MultivariateNormal(_t([1.0, -1.0], b), _t([[2.0, 0.6], [0.6, 1.0]], b)),
    "independent": lambda D, b: D.Independent(D.Normal(_t([[0.0, 1.0]], b), 1.0), 1),
    "mixture": lambda D, b: D.MixtureSameFamily(D.Categorical(_t([0.3, 0.7], b)), D.Normal(_t([-2.0, 1.0], b), 0.5)),
}


def _t(values: Any, backend: str) -> mt.Tensor:
    return mt.tensor(values, dtype=mt.float64, backend=backend)


def _moments(d: Any) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(d, mt.distributions.Categorical):  # draws are indices: their mean and variance
        k = np.arange(d.probs.shape[-1])
        p = d.probs.to_numpy()
        mean = (p * k).sum(-1)
        return mean, (p * k**2).sum(-1) - mean**2
    return d.mean.to_numpy(), d.variance.to_numpy()


@pytest.mark.parametrize("name", list(SAMPLED))
def test_samples_have_the_distribution_moments(name):
    mt.manual_seed(17)
    d = SAMPLED[name](mt.distributions, "fast")
    x = d.sample((N,))
    assert x.shape == (N,) + d.batch_shape + d.event_shape and x.backend.name == "fast"
    assert x.dtype == (mt.int64 if name == "categorical" else mt.float64) and not x.requires_grad
    assert bool(d.support.check(x).all().item())
    within_sampling_error(x.to_numpy().astype(np.float64), *_moments(d))


def test_cauchy_samples_have_the_quartiles_and_mvn_the_covariance():
    mt.manual_seed(3)
    c = mt.distributions.Cauchy(_t([1.0], "fast"), _t([2.0], "fast")).sample((N,)).to_numpy()
    np.testing.assert_allclose(np.quantile(c, [0.25, 0.5, 0.75]), [-1.0, 1.0, 3.0], atol=0.25)
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    x = mt.distributions.MultivariateNormal(_t([1.0, -1.0], "fast"), precision_matrix=_t(np.linalg.inv(cov), "fast"))
    np.testing.assert_allclose(np.cov(x.sample((N,)).to_numpy().T), cov, atol=0.15)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", ["normal", "gamma", "categorical", "mvn", "mixture"])
def test_sample_shapes_and_seeding(backend, name):
    d = SAMPLED[name](mt.distributions, backend)
    mt.manual_seed(9)
    first = d.sample((2, 3))
    mt.manual_seed(9)
    again = d.sample((2, 3))
    assert first.shape == (2, 3) + d.batch_shape + d.event_shape and first.backend.name == backend
    np.testing.assert_array_equal(first.to_numpy(), again.to_numpy())  # the shared generator drives the draws
    assert d.sample().shape == d.batch_shape + d.event_shape
    if d.has_rsample:
        r = d.rsample((4,))
        assert r.shape == (4,) + d.batch_shape + d.event_shape
    else:
        with pytest.raises(NotImplementedError):
            d.rsample()
