"""nn.utils against torch.nn.utils: clip_grad_norm_ (every norm type), clip_grad_value_, parameters_to_vector and
vector_to_parameters."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import BACKENDS

import minitensor as mt
from minitensor import nn
from minitensor.errors import ShapeError
from minitensor.nn import utils


def _pairs(backend: str, dtype: str = "float64", scale: float = 1.0):
    rng = np.random.default_rng(3)
    values = [rng.standard_normal((2, 3)), rng.standard_normal(3), rng.standard_normal(())]
    grads = [scale * rng.standard_normal(v.shape) for v in values]
    tdtype = torch.float64 if dtype == "float64" else torch.float32
    tparams = [torch.nn.Parameter(torch.tensor(v, dtype=tdtype)) for v in values]
    mparams = [nn.Parameter(mt.tensor(v, backend=backend, dtype=dtype)) for v in values]
    for t, m, g in zip(tparams, mparams, grads):
        t.grad = torch.tensor(g, dtype=tdtype)
        m.grad = mt.tensor(g, backend=backend, dtype=dtype)
    return tparams, mparams


CLIP_CASES = [(b, n, m) for b in ("simple", "fast") for n in (2.0, 1.0, math.inf, 3.0, 0.5) for m in (0.5, 100.0)]
CLIP_CASES += [pytest.param("cuda", 2.0, 0.5, marks=pytest.mark.skipif("cuda" not in BACKENDS, reason="no cuda"))]


@pytest.mark.parametrize("backend, norm_type, max_norm", CLIP_CASES)
def test_clip_grad_norm_matches_torch(backend, norm_type, max_norm):
    tparams, mparams = _pairs(backend)
    expected = torch.nn.utils.clip_grad_norm_(tparams, max_norm, norm_type)
    total = utils.clip_grad_norm_(mparams, max_norm, norm_type)
    assert isinstance(total, mt.Tensor) and total.shape == () and total.backend.name == backend
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-12)
    for t, m in zip(tparams, mparams):
        np.testing.assert_allclose(m.grad.to_numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_clip_grad_norm_float32_single_tensor_and_no_grads():
    tparams, mparams = _pairs("fast", "float32", scale=10.0)
    expected = torch.nn.utils.clip_grad_norm_(tparams[0], 1.0)
    total = utils.clip_grad_norm_(mparams[0], 1.0)
    assert total.dtype == np.float32
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-6)
    np.testing.assert_allclose(mparams[0].grad.to_numpy(), tparams[0].grad.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(mparams[1].grad.to_numpy(), tparams[1].grad.numpy())  # not listed: untouched
    bare = nn.Parameter(mt.zeros(2))
    assert utils.clip_grad_norm_([bare], 1.0).item() == 0.0


def test_clip_grad_norm_nonfinite():
    _, mparams = _pairs("simple")
    mparams[1].grad = mt.tensor([1.0, math.inf, 0.0], backend="simple", dtype="float64")
    with pytest.raises(RuntimeError, match="non-finite"):
        utils.clip_grad_norm_(mparams, 1.0, error_if_nonfinite=True)
    assert math.isinf(utils.clip_grad_norm_(mparams, 1.0).item())


def test_clip_grad_value_matches_torch(backend):
    tparams, mparams = _pairs(backend)
    torch.nn.utils.clip_grad_value_(tparams, 0.4)
    assert utils.clip_grad_value_(mparams, 0.4) is None
    for t, m in zip(tparams, mparams):
        np.testing.assert_array_equal(m.grad.to_numpy(), t.grad.numpy())


def test_parameters_to_vector_and_back(backend):
    tparams, mparams = _pairs(backend)
    vec = utils.parameters_to_vector(mparams)
    np.testing.assert_array_equal(vec.to_numpy(), torch.nn.utils.parameters_to_vector(tparams).detach().numpy())
    for p in mparams:
        p.grad = None
    (vec * mt.arange(vec.numel(), backend=backend, dtype="float64")).sum().backward()  # differentiable, like torch.cat
    np.testing.assert_array_equal(mparams[1].grad.to_numpy(), [6.0, 7.0, 8.0])
    new = mt.arange(10, backend=backend, dtype="float64")
    view = mparams[0].detach()[1]
    utils.vector_to_parameters(new, mparams)
    np.testing.assert_array_equal(mparams[0].to_numpy(), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(mparams[2].to_numpy(), 9.0)
    np.testing.assert_array_equal(view.to_numpy(), [3.0, 4.0, 5.0])  # written in place
    assert all(p.is_leaf and p.requires_grad for p in mparams)
    with pytest.raises(ShapeError, match="10 elements"):
        utils.vector_to_parameters(mt.zeros(9, backend=backend), mparams)
    with pytest.raises(TypeError, match="expected a Tensor"):
        utils.vector_to_parameters(np.zeros(10), mparams)  # type: ignore[arg-type]
