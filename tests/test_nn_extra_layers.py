"""The extra activations (PReLU, RReLU, Threshold, Hardshrink, Softshrink, Softmin, Softmax2d and the in-place F
forms) against PyTorch: values, input and parameter gradients, train/eval, state dicts, reprs and errors; a
statistical check (fixed seed) for RReLU's random slopes. The bulk runs on the CPU backends, one tiny case on every
backend. Dropout and normalization: tests/test_nn_extra_dropout_norm.py; containers, pooling and padding:
tests/test_nn_extra_containers_pooling.py. The helpers here (compare, X) are shared with those files."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor import nn
from minitensor.errors import GradientError, ShapeError
from minitensor.nn import functional as F

RNG = np.random.default_rng(2024)
# kinks hit exactly: 0, +-0.5 (shrink lambd), 0.25 (threshold below)
X = np.concatenate([RNG.standard_normal(18) * 2, [0.0, 0.5, -0.5, 0.25, -0.0, 1.0]]).reshape(2, 3, 4)


def _t(a, dtype="float64"):
    return torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True)


def _m(a, backend, dtype="float64"):
    return mt.tensor(a, backend=backend, dtype=dtype, requires_grad=True)


def compare(mine, theirs, arrays, backend, dtype="float64", rtol=1e-10, atol=1e-12):
    """mine(*minitensors) vs theirs(*torch tensors): value and the gradient of every argument."""
    tt = [_t(a, dtype) for a in arrays]
    want = theirs(*tt)
    up = RNG.standard_normal(tuple(want.shape))
    (want * torch.tensor(up, dtype=want.dtype)).sum().backward()
    mm = [_m(a, backend, dtype) for a in arrays]
    got = mine(*mm)
    assert got.shape == tuple(want.shape) and got.dtype == np.dtype(dtype)
    (got * mt.tensor(up, backend=backend, dtype=dtype)).sum().backward()
    np.testing.assert_allclose(got.to_numpy(), want.detach().numpy(), rtol=rtol, atol=atol)
    for m, t in zip(mm, tt):
        np.testing.assert_allclose(m.grad.to_numpy(), t.grad.numpy(), rtol=rtol, atol=atol)


# --- activations ---

ELEMENTWISE = [
    ("threshold", (0.25, -3.0)), ("threshold", (-1.0, 7.0)), ("hardshrink", ()), ("hardshrink", (1.5,)),
    ("softshrink", ()), ("softshrink", (0.0,)), ("softshrink", (1.2,)), ("softmin", (1,)), ("softmin", (-1,)),
    ("rrelu", ()), ("rrelu", (0.1, 0.9)),
]


@pytest.mark.parametrize(("name", "args"), ELEMENTWISE, ids=[f"{n}{a}" for n, a in ELEMENTWISE])
@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_elementwise_against_torch(backend, name, args):
    compare(lambda x: getattr(F, name)(x, *args), lambda x: getattr(TF, name)(x, *args), [X], backend)


@pytest.mark.parametrize("name", ["threshold", "hardshrink", "softshrink", "rrelu", "prelu"])
def test_nan_propagates_like_torch(name):
    x = np.array([np.nan, -1.0, 0.3, 2.0])
    args = {"threshold": (0.5, 9.0), "prelu": (torch.tensor([0.2], dtype=torch.float64),)}.get(name, ())
    margs = tuple(mt.tensor(a.numpy()) if isinstance(a, torch.Tensor) else a for a in args)
    want = getattr(TF, name)(torch.tensor(x), *args).numpy()
    np.testing.assert_array_equal(getattr(F, name)(mt.tensor(x), *margs).numpy(), want)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("shape", "n"), [((2, 3, 4), 3), ((2, 3, 4), 1), ((3, 2, 2, 2), 2), ((5,), 1), ((), 1)])
def test_prelu_against_torch(backend, shape, n):
    x = np.resize(X, shape) if shape else np.array(-1.5)
    w = RNG.uniform(-0.5, 0.5, n)
    compare(F.prelu, TF.prelu, [x, w], backend)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_prelu_module_init_state_dict_and_errors(backend):
    mine, theirs = nn.PReLU(3, init=0.1, backend=backend, dtype="float64"), torch.nn.PReLU(3, init=0.1).double()
    assert repr(mine) == repr(theirs) == "PReLU(num_parameters=3)" and repr(nn.PReLU()) == repr(torch.nn.PReLU())
    assert list(mine.state_dict()) == list(theirs.state_dict()) == ["weight"]
    np.testing.assert_array_equal(mine.weight.numpy(), [0.1, 0.1, 0.1])
    np.testing.assert_array_equal(nn.PReLU().weight.numpy(), [0.25])
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor([0.3, -0.2, 0.05]))
    mine.load_state_dict({k: mt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    xm, xt = _m(X, backend), _t(X)
    mine(xm).pow(2).sum().backward()
    theirs(xt).pow(2).sum().backward()
    np.testing.assert_allclose(mine.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-10)
    with pytest.raises(ShapeError, match="3 parameters.*4 channels"):
        mine(mt.zeros(2, 4, dtype="float64", backend=backend))
    with pytest.raises(ShapeError, match="1 channels"):
        F.prelu(mt.zeros(3), mt.ones(3))
    with pytest.raises(ShapeError, match="scalar or a 1-D"):
        F.prelu(mt.zeros(2, 3), mt.ones(3, 1))
    with pytest.raises(ShapeError, match="0-D"):
        F.prelu(mt.tensor(1.0), mt.ones(3))
    with pytest.raises(ValueError, match="num_parameters"):
        nn.PReLU(-1)
    with pytest.raises(TypeError, match="argument 'weight' must be Tensor"):
        F.prelu(mt.zeros(3), 0.25)


MODULES = [
    ("RReLU", ()), ("RReLU", (0.1, 0.3, True)), ("Threshold", (0.1, 20)), ("Threshold", (0.1, 20.0, True)),
    ("Hardshrink", ()), ("Hardshrink", (1,)), ("Softshrink", ()), ("Softshrink", (0.25,)), ("Softmin", (1,)),
    ("Softmin", ()), ("Softmax2d", ()), ("PReLU", (2, 0.5)),
]


@pytest.mark.parametrize(("name", "args"), MODULES, ids=[f"{n}{a}" for n, a in MODULES])
def test_module_repr(name, args):
    assert repr(getattr(nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_modules_forward_against_torch(backend):
    for name, args in [("Threshold", (0.25, -1.0)), ("Hardshrink", (0.3,)), ("Softshrink", (0.3,)),
                       ("Softmin", (2,)), ("Softmax2d", ())]:
        compare(getattr(nn, name)(*args), getattr(torch.nn, name)(*args), [X], backend)
    compare(nn.Softmax2d(), torch.nn.Softmax2d(), [X[None]], backend)  # batched; X itself is unbatched (C, H, W)
    rrelu = nn.RReLU(0.2, 0.4).eval()
    compare(rrelu, torch.nn.RReLU(0.2, 0.4).eval(), [X], backend)
    assert rrelu.training is False
    with pytest.raises(ShapeError, match="3-D or 4-D"):
        nn.Softmax2d()(mt.zeros(2, 3))
    with pytest.raises(ValueError, match="needs dim"):
        nn.Softmin()(mt.zeros(2, 3))


def test_softmin_dtype():
    x = RNG.standard_normal((2, 5))
    got = F.softmin(mt.tensor(x, dtype="float32"), 1, dtype="float64")
    want = TF.softmin(torch.tensor(x, dtype=torch.float32), 1, dtype=torch.float64)
    assert got.dtype == mt.float64
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_rrelu_training_draws_slopes(backend):
    """Training: each x <= 0 gets its own slope a ~ U(lower, upper) (gradient a, so out == a * x), x > 0 passes;
    seeded draws repeat; eval and the F default (training=False) use the mean slope."""
    lower, upper, n = 0.1, 0.3, 20000 if backend == "fast" else 2000  # the simple backend is slow on big inputs
    x = np.concatenate([-np.abs(RNG.standard_normal(n)) - 0.01, [0.0, 2.0, 3.0]])
    mx = _m(x, backend)
    mt.manual_seed(7)
    out = F.rrelu(mx, lower, upper, training=True)
    out.sum().backward()
    slopes = out.numpy()[:n] / x[:n]
    np.testing.assert_allclose(mx.grad.numpy()[:n], slopes, rtol=1e-12)
    assert lower <= slopes.min() and slopes.max() <= upper
    # uniform: mean (l+u)/2, sd (u-l)/sqrt(12); 5 standard errors
    assert abs(slopes.mean() - 0.2) < 5 * (0.2 / math.sqrt(12)) / math.sqrt(n)
    assert abs(slopes.std() - 0.2 / math.sqrt(12)) < 0.01
    assert len(np.unique(slopes)) > n // 2
    np.testing.assert_array_equal(out.numpy()[n:], [0.0, 2.0, 3.0])
    np.testing.assert_array_equal(mx.grad.numpy()[n + 1:], [1.0, 1.0])
    assert lower <= mx.grad.numpy()[n] <= upper  # 0 counts as negative, as torch
    mt.manual_seed(7)
    np.testing.assert_array_equal(F.rrelu(mt.tensor(x, backend=backend), lower, upper, True).numpy(), out.numpy())
    module = nn.RReLU(lower, upper)
    assert not np.array_equal(module(mt.tensor(x)).numpy(), out.numpy())  # fresh draws in training
    np.testing.assert_allclose(module.eval()(mt.tensor(x)).numpy(), np.where(x > 0, x, 0.2 * x), rtol=1e-12)
    np.testing.assert_allclose(F.rrelu(mt.tensor(x), lower, upper).numpy(), np.where(x > 0, x, 0.2 * x), rtol=1e-12)
    with pytest.raises(ValueError, match="lower bound"):
        F.rrelu(mt.tensor(x), 0.5, 0.1)


def test_shrink_and_threshold_errors():
    with pytest.raises(ValueError, match="lambd must be >= 0"):
        F.softshrink(mt.zeros(3), -0.5)
    with pytest.raises(TypeError, match="argument 'input' must be Tensor"):
        F.threshold([1.0], 0.0, 1.0)


INPLACE = [
    ("relu_", ()), ("elu_", (0.7,)), ("leaky_relu_", (0.2,)), ("hardtanh_", (-0.5, 0.8)), ("selu_", ()),
    ("celu_", (1.3,)), ("threshold_", (0.25, -2.0)), ("rrelu_", (0.1, 0.4)),
]


@pytest.mark.parametrize(("name", "args"), INPLACE, ids=[n for n, _ in INPLACE])
@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_inplace_forms_mutate_and_return_input(backend, name, args):
    """F.<op>_ writes into its input and returns it (values as torch's in-place op); the gradient through the
    in-place op on a non-leaf is torch's; a leaf that requires grad is refused."""
    leaf_m, leaf_t = _m(X, backend), _t(X)
    ym, yt = leaf_m * 1.0, leaf_t * 1.0
    before = ym.numpy().copy()
    rm, rt = getattr(F, name)(ym, *args), getattr(TF, name)(yt, *args)
    assert rm is ym and rt is yt
    assert not np.array_equal(ym.numpy(), before)
    np.testing.assert_allclose(ym.numpy(), yt.detach().numpy(), rtol=1e-12)
    up = RNG.standard_normal(X.shape)
    (ym * mt.tensor(up, backend=backend, dtype="float64")).sum().backward()
    (yt * torch.tensor(up)).sum().backward()
    rtol = 1e-7 if name == "celu_" else 1e-10  # torch's in-place celu backward uses 1/alpha in float32
    np.testing.assert_allclose(leaf_m.grad.numpy(), leaf_t.grad.numpy(), rtol=rtol, atol=1e-12)
    plain = mt.tensor(X, backend=backend)
    assert getattr(F, name)(plain, *args) is plain
    with pytest.raises(GradientError, match="in-place"):
        getattr(F, name)(_m(X, backend), *args)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_inplace_modules(backend):
    for mine, theirs in [(nn.Threshold(0.1, 5.0, True), torch.nn.Threshold(0.1, 5.0, True)),
                         (nn.RReLU(inplace=True).eval(), torch.nn.RReLU(inplace=True).eval())]:
        xm, xt = mt.tensor(X, backend=backend), torch.tensor(X)
        assert mine(xm) is xm and theirs(xt) is xt
        np.testing.assert_allclose(xm.numpy(), xt.numpy(), rtol=1e-12)
    xm = mt.tensor(X, backend=backend)
    mt.manual_seed(3)
    assert nn.RReLU(inplace=True)(xm) is xm and np.all((xm.numpy() >= X / 3 - 1e-12) | (X > 0))


# --- one tiny case on every backend (cuda: the simulator) ---


@pytest.mark.parametrize("backend", BACKENDS)
def test_tiny_every_backend(backend):
    x = X[:1, :2, :3]
    compare(lambda a, w: F.prelu(a, w), TF.prelu, [x, np.array([0.2, -0.1])], backend)
    compare(nn.Hardshrink(0.3), torch.nn.Hardshrink(0.3), [x], backend)
    y = mt.tensor(x, backend=backend)
    assert F.relu_(y) is y and np.all(y.numpy() >= 0)
