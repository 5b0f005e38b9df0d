"""Activations, softmax family and dropout against PyTorch: forward values and input gradients (float64 exact,
float32 loose), the numerical edges (-inf, +-1e4), the Modules' reprs, and the errors. The bulk runs on the CPU
backends; a few tiny cases run on cuda (simulator)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor import nn
from minitensor.errors import ShapeError
from minitensor.nn import functional as F

RNG = np.random.default_rng(21)
CUDA = [b for b in BACKENDS if b == "cuda"]
X = RNG.standard_normal((3, 4)) * 3  # no exact kinks (0, +-3, +-1, 6) hit
EDGE = np.array([[-1e4, -30.0, -3.5, -1.0, -1e-3, 0.0, 1e-3, 0.7, 2.5, 25.0, 1e4]])


def compare(name, backend, x, *args, dtype="float64", rtol=1e-10, atol=1e-12, **kw):
    """F.<name>(x, *args, **kw) against torch's: value and d/dx of sum(out * upstream)."""
    # torch's hardsigmoid backward multiplies by float32(1/6) even in float64; minitensor uses the exact 1/6
    grad_rtol = max(rtol, 1e-7) if name == "hardsigmoid" else rtol
    tx = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    expected = getattr(TF, name)(tx, *args, **kw)
    upstream = RNG.standard_normal(tuple(expected.shape))
    (expected * torch.tensor(upstream, dtype=expected.dtype)).sum().backward()
    mx = mt.tensor(x, backend=backend, dtype=dtype, requires_grad=True)
    got = getattr(F, name)(mx, *args, **kw)
    assert got.shape == tuple(expected.shape) and got.dtype == np.dtype(dtype)
    (got * mt.tensor(upstream, backend=backend, dtype=dtype)).sum().backward()
    np.testing.assert_allclose(got.to_numpy(), expected.detach().numpy(), rtol=rtol, atol=atol)
    np.testing.assert_allclose(mx.grad.to_numpy(), tx.grad.numpy(), rtol=grad_rtol, atol=atol)


ELEMENTWISE = [
    ("relu", (), {}), ("relu6", (), {}), ("sigmoid", (), {}), ("tanh", (), {}), ("logsigmoid", (), {}),
    ("gelu", (), {}), ("gelu", (), {"approximate": "tanh"}), ("silu", (), {}), ("elu", (), {}),
    ("elu", (0.5,), {}), ("selu", (), {}), ("celu", (), {"alpha": 2.0}), ("softplus", (), {}),
    ("softplus", (), {"beta": 2.0, "threshold": 3.0}), ("leaky_relu", (), {}), ("leaky_relu", (0.2,), {}),
    ("hardtanh", (), {}), ("hardtanh", (-2.0, 0.5), {}), ("hardsigmoid", (), {}), ("hardswish", (), {}),
    ("mish", (), {}), ("softsign", (), {}), ("tanhshrink", (), {}),
]
IDS = [f"{n}-{a}-{k}" for n, a, k in ELEMENTWISE]


@pytest.mark.parametrize(("name", "args", "kw"), ELEMENTWISE, ids=IDS)
@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_elementwise_against_torch(backend, name, args, kw):
    compare(name, backend, X, *args, **kw)


@pytest.mark.parametrize(("name", "args", "kw"), ELEMENTWISE, ids=IDS)
def test_elementwise_float32(name, args, kw):
    compare(name, "fast", X, *args, dtype="float32", rtol=1e-5, atol=1e-6, **kw)


SAFE_AT_EDGES = ["relu", "sigmoid", "tanh", "logsigmoid", "gelu", "silu", "elu", "selu", "celu", "softplus",
                 "leaky_relu", "mish", "softsign", "tanhshrink"]


@pytest.mark.parametrize("name", SAFE_AT_EDGES)
def test_elementwise_edges(name):
    """Huge inputs (+-1e4) stay finite with torch's values and gradients; 0 gets torch's one-sided derivative."""
    compare(name, "fast", EDGE, rtol=1e-10, atol=1e-300)


def test_minus_inf_edges():
    """logsigmoid(-inf) = -inf with gradient 1, softplus(-inf) = 0 with gradient 0, as in torch."""
    x = np.array([-np.inf, 0.5, np.inf])
    for name in ("logsigmoid", "softplus", "relu", "sigmoid"):
        compare(name, "fast", x, atol=0)


@pytest.mark.parametrize("backend", CUDA)
def test_elementwise_cuda(backend):
    x = X[:2, :3]
    for name, args, kw in [("gelu", (), {}), ("softplus", (), {}), ("logsigmoid", (), {}), ("hardswish", (), {})]:
        compare(name, backend, x, *args, **kw)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_glu(backend, dim):
    x = RNG.standard_normal((4, 2, 6))
    compare("glu", backend, x, dim)
    with pytest.raises(ShapeError, match="even"):
        F.glu(mt.tensor(RNG.standard_normal((3, 3)), backend=backend), 0)


# --- softmax family ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_against_torch(backend, name, dim):
    compare(name, backend, RNG.standard_normal((3, 4, 2)), dim)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_float32_and_dtype_argument(name):
    compare(name, "fast", X, 1, dtype="float32", rtol=1e-5, atol=1e-6)
    x32 = mt.tensor(X, dtype="float32")
    got = getattr(F, name)(x32, 1, dtype=mt.float64)
    assert got.dtype == mt.float64
    expected = getattr(TF, name)(torch.tensor(X, dtype=torch.float32), 1, dtype=torch.float64)
    np.testing.assert_allclose(got.to_numpy(), expected.numpy(), rtol=1e-12)


@pytest.mark.parametrize("backend", CPU_BACKENDS + CUDA)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_edges(backend, name):
    """Huge logits stay exact; -inf entries give 0 (log: -inf) with torch's gradients; an all -inf row is NaN."""
    x = np.array([[1e4, 1e4 - 1.0, -1e4], [-np.inf, 0.5, -np.inf], [-1e4, -1e4 + 2.0, -np.inf]])
    compare(name, backend, x, 1, atol=0)
    row = mt.tensor([[-np.inf, -np.inf], [0.0, 1.0]], backend=backend, dtype="float64")
    got = getattr(F, name)(row, 1).to_numpy()
    expected = getattr(TF, name)(torch.tensor([[-np.inf, -np.inf], [0.0, 1.0]], dtype=torch.float64), 1).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12)


def test_softmax_needs_dim():
    with pytest.raises(ValueError, match="dim"):
        F.softmax(mt.tensor(X))
    with pytest.raises(ValueError, match="dim"):
        nn.LogSoftmax()(mt.tensor(X))


# --- in-place ---


@pytest.mark.parametrize("name", ["relu", "relu6", "leaky_relu", "elu", "selu", "silu", "mish", "hardtanh",
                                  "hardsigmoid", "hardswish", "celu"])
def test_inplace(name):
    """inplace=True writes into the input and returns it; the gradient through it matches torch's."""
    ta = torch.tensor(X, requires_grad=True)
    tx = ta * 1.5
    t_out = getattr(TF, name)(tx, inplace=True)
    assert t_out is tx
    w = RNG.standard_normal(X.shape)
    (t_out * torch.tensor(w)).sum().backward()
    ma = mt.tensor(X, dtype="float64", requires_grad=True)
    mx = ma * 1.5
    m_out = getattr(F, name)(mx, inplace=True)
    assert m_out is mx
    (m_out * mt.tensor(w)).sum().backward()
    np.testing.assert_allclose(mx.to_numpy(), tx.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ma.grad.to_numpy(), ta.grad.numpy(), rtol=1e-7 if name == "hardsigmoid" else 1e-10)


# --- Modules ---

MODULES = [
    ("ReLU", (), {}), ("ReLU", (True,), {}), ("ReLU6", (), {}), ("ReLU6", (True,), {}), ("Sigmoid", (), {}),
    ("Tanh", (), {}), ("GELU", (), {}), ("GELU", ("tanh",), {}), ("SiLU", (), {}), ("SiLU", (True,), {}),
    ("ELU", (), {}), ("ELU", (0.5, True), {}), ("CELU", (2.0,), {}), ("SELU", (), {}), ("LeakyReLU", (), {}),
    ("LeakyReLU", (0.2, True), {}), ("Softplus", (), {}), ("Softplus", (2.0, 5.0), {}), ("Softmax", (1,), {}),
    ("Softmax", (), {"dim": 0}), ("LogSoftmax", (-1,), {}), ("Hardtanh", (), {}), ("Hardtanh", (-2.0, 3.0, True), {}),
    ("Hardtanh", (), {"min_value": -0.5}), ("Hardsigmoid", (), {}), ("Hardswish", (True,), {}), ("Mish", (), {}),
    ("Mish", (True,), {}), ("Softsign", (), {}), ("LogSigmoid", (), {}), ("Tanhshrink", (), {}), ("GLU", (), {}),
    ("GLU", (0,), {}),
]


@pytest.mark.filterwarnings("ignore:.*(min_value|max_value).*")
@pytest.mark.parametrize(("name", "args", "kw"), MODULES, ids=[f"{n}{a}{k}" for n, a, k in MODULES])
@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_modules_against_torch(backend, name, args, kw):
    theirs, mine = getattr(torch.nn, name)(*args, **kw), getattr(nn, name)(*args, **kw)
    assert repr(mine) == repr(theirs)
    assert list(mine.state_dict()) == []
    x = RNG.standard_normal((4, 2)) * 3
    ta = torch.tensor(x, requires_grad=True)
    t_out = theirs(ta * 1.0)
    w = RNG.standard_normal(tuple(t_out.shape))
    (t_out * torch.tensor(w)).sum().backward()
    ma = mt.tensor(x, backend=backend, dtype="float64", requires_grad=True)
    m_out = mine(ma * 1.0)
    (m_out * mt.tensor(w, backend=backend)).sum().backward()
    np.testing.assert_allclose(m_out.to_numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    # atol: where a derivative cancels (Tanh's 1 - t^2 at |x| > 7) one ulp of t is a 1e-9 relative change of it, but
    # never more than ~1e-15 absolute (|w| < 5)
    np.testing.assert_allclose(ma.grad.to_numpy(), ta.grad.numpy(), rtol=1e-7 if name == "Hardsigmoid" else 1e-10,
                               atol=1e-14)


def test_module_errors():
    with pytest.raises(ValueError, match="approximate"):
        nn.GELU("fast")
    with pytest.raises(ValueError, match="approximate"):
        F.gelu(mt.tensor(X), approximate="erf")
    with pytest.raises(ValueError, match="min_val"):
        nn.Hardtanh(1.0, -1.0)
    with pytest.raises(ValueError, match="min_val"):
        F.hardtanh(mt.tensor(X), 2.0, 1.0)
