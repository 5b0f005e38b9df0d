"""Max, average and adaptive pooling and the padding Modules against PyTorch: values, indices and gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import CPU_BACKENDS

import minitensor as mt
from minitensor import nn
from minitensor.errors import ShapeError
from minitensor.nn import functional as F

TF = torch.nn.functional
RNG = np.random.default_rng(5)


def compare(mine, theirs, x, backend, dtype="float64", rtol=1e-10, atol=1e-12):
    """``mine(x)`` and ``theirs(x)`` agree in value and input gradient; returns both outputs."""
    tdtype = torch.float64 if dtype == "float64" else torch.float32
    t = torch.tensor(x, dtype=tdtype, requires_grad=True)
    m = mt.tensor(x, dtype=dtype, backend=backend, requires_grad=True)
    want, got = theirs(t), mine(m)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.to_numpy(), want.detach().numpy(), rtol=rtol, atol=atol)
    g = RNG.standard_normal(tuple(want.shape))
    want.backward(torch.tensor(g, dtype=tdtype))
    got.backward(mt.tensor(g, dtype=dtype, backend=backend))
    np.testing.assert_allclose(m.grad.to_numpy(), t.grad.numpy(), rtol=rtol, atol=atol)


POOL2D = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
    {"kernel_size": 3, "stride": 2, "ceil_mode": True},
    {"kernel_size": (2, 3), "stride": (1, 2), "padding": (1, 1)},
    {"kernel_size": (3, 2), "stride": (3, 1), "padding": (1, 0), "ceil_mode": True},
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("kw", POOL2D)
@pytest.mark.parametrize("shape", [(2, 2, 6, 7), (2, 5, 5)])
def test_max_pool2d_matches_torch(backend, kw, shape):
    x = RNG.standard_normal(shape)
    for extra in [{}, {"dilation": (2, 1)}]:
        compare(lambda a, e=extra: F.max_pool2d(a, **kw, **e), lambda a, e=extra: TF.max_pool2d(a, **kw, **e), x, backend)
        got = F.max_pool2d(mt.tensor(x, backend=backend), **kw, **extra, return_indices=True)[1]
        want = TF.max_pool2d(torch.tensor(x), **kw, **extra, return_indices=True)[1]
        assert got.dtype == mt.int64
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_max_pool_tie_gradient_goes_to_first_max(backend):
    """Ties: PyTorch gives the whole gradient to the first maximum in row-major window order."""
    x = np.array([[[[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 1.0, 1.0]]]])
    compare(lambda a: F.max_pool2d(a, 2, 1), lambda a: TF.max_pool2d(a, 2, 1), x, backend)
    compare(lambda a: F.max_pool2d(a, 3, 1, 1), lambda a: TF.max_pool2d(a, 3, 1, 1), x, backend)
    compare(lambda a: F.max_pool1d(a, 3, 1, 1), lambda a: TF.max_pool1d(a, 3, 1, 1), x[0, 0], backend)
    t = mt.tensor(np.ones((1, 1, 2, 2)), backend=backend, requires_grad=True)
    F.max_pool2d(t, 2).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), [[[[1.0, 0.0], [0.0, 0.0]]]])


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("kw", POOL2D)
def test_avg_pool2d_matches_torch(backend, kw):
    x = RNG.standard_normal((2, 2, 6, 7))
    for extra in [{}, {"count_include_pad": False}, {"divisor_override": 3}]:
        compare(lambda a, e=extra: F.avg_pool2d(a, **kw, **e), lambda a, e=extra: TF.avg_pool2d(a, **kw, **e), x, backend)
    compare(lambda a: F.avg_pool2d(a, **kw), lambda a: TF.avg_pool2d(a, **kw), x[0], backend)  # unbatched


POOL1D = [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}, {"kernel_size": 4, "stride": 3}]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("kw", POOL1D)
def test_pool1d_matches_torch(backend, kw):
    x = RNG.standard_normal((2, 3, 8))
    compare(lambda a: F.max_pool1d(a, **kw, dilation=2) if kw["kernel_size"] < 4 else F.max_pool1d(a, **kw),
            lambda a: TF.max_pool1d(a, **kw, dilation=2) if kw["kernel_size"] < 4 else TF.max_pool1d(a, **kw), x, backend)
    np.testing.assert_array_equal(F.max_pool1d(mt.tensor(x, backend=backend), **kw, return_indices=True)[1].numpy(),
                                  TF.max_pool1d(torch.tensor(x), **kw, return_indices=True)[1].numpy())
    for cip in [True, False]:
        compare(lambda a, c=cip: F.avg_pool1d(a, **kw, count_include_pad=c),
                lambda a, c=cip: TF.avg_pool1d(a, **kw, count_include_pad=c), x, backend)
    compare(lambda a: F.avg_pool1d(a, **kw), lambda a: TF.avg_pool1d(a, **kw), x[0], backend)  # unbatched


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("size", [(3, 4), (4, None), 5, 1, (7, 2)])
def test_adaptive_pool2d_matches_torch(backend, size):
    x = RNG.standard_normal((2, 2, 7, 6))
    compare(lambda a: F.adaptive_avg_pool2d(a, size), lambda a: TF.adaptive_avg_pool2d(a, size), x, backend)
    compare(lambda a: F.adaptive_max_pool2d(a, size), lambda a: TF.adaptive_max_pool2d(a, size), x, backend)
    got = F.adaptive_max_pool2d(mt.tensor(x[0], backend=backend), size, return_indices=True)[1]
    np.testing.assert_array_equal(got.numpy(), TF.adaptive_max_pool2d(torch.tensor(x[0]), size, return_indices=True)[1].numpy())


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_adaptive_avg_pool1d_matches_torch(backend):
    x = RNG.standard_normal((2, 3, 7))
    for size in [3, 5, 7, 1]:
        compare(lambda a, s=size: F.adaptive_avg_pool1d(a, s), lambda a, s=size: TF.adaptive_avg_pool1d(a, s), x, backend)
    compare(lambda a: F.adaptive_avg_pool1d(a, 4), lambda a: TF.adaptive_avg_pool1d(a, 4), x[0], backend)


def test_pool_float32():
    x = RNG.standard_normal((2, 3, 6, 6))
    compare(lambda a: F.max_pool2d(a, 3, 2, 1), lambda a: TF.max_pool2d(a, 3, 2, 1), x, "fast", "float32", 1e-6, 1e-6)
    compare(lambda a: F.avg_pool2d(a, 3, 2, 1, count_include_pad=False),
            lambda a: TF.avg_pool2d(a, 3, 2, 1, count_include_pad=False), x, "fast", "float32", 1e-5, 1e-6)
    compare(lambda a: F.adaptive_avg_pool2d(a, 4), lambda a: TF.adaptive_avg_pool2d(a, 4), x, "fast", "float32", 1e-5, 1e-6)


MODULES = [
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, (1, 2, 5, 6)),
    ("MaxPool1d", (2,), {}, (2, 2, 5)),
    ("AvgPool2d", ((2, 3),), {"padding": 1, "count_include_pad": False}, (1, 2, 5, 6)),
    ("AvgPool1d", (3,), {"stride": 2, "ceil_mode": True}, (2, 2, 6)),
    ("AdaptiveAvgPool2d", ((2, None),), {}, (1, 2, 5, 6)),
    ("AdaptiveAvgPool1d", (3,), {}, (1, 2, 5)),
    ("AdaptiveMaxPool2d", (3,), {}, (1, 2, 5, 6)),
    ("ZeroPad2d", ((1, 0, 2, 1),), {}, (1, 2, 3, 3)),
    ("ConstantPad1d", (2, 1.5), {}, (2, 3)),
    ("ConstantPad2d", ((1, -1, 0, 2), -3.0), {}, (1, 3, 3)),
    ("ReflectionPad1d", ((2, 1),), {}, (1, 2, 4)),
    ("ReflectionPad2d", (1,), {}, (1, 2, 3, 3)),
    ("ReplicationPad1d", (3,), {}, (1, 2, 2)),
    ("ReplicationPad2d", ((0, 2, 1, 3),), {}, (1, 2, 3, 3)),
]


@pytest.mark.parametrize("name, args, kw, shape", MODULES)
def test_modules_match_torch(name, args, kw, shape):
    mine, theirs = getattr(nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
    assert repr(mine) == repr(theirs)
    compare(mine, theirs, RNG.standard_normal(shape), "simple")


def test_pool_errors():
    x = mt.zeros(1, 1, 4, 4)
    with pytest.raises(ValueError, match="half of kernel"):
        F.max_pool2d(x, 2, padding=2)
    with pytest.raises(ShapeError, match="smaller than the"):
        F.max_pool2d(x, 5)
    with pytest.raises(ShapeError, match=r"\(4, 4\)"):
        F.avg_pool2d(mt.zeros(4, 4), 2)
    with pytest.raises(ValueError, match="kernel_size"):
        F.avg_pool2d(x, 0)
    with pytest.raises(ShapeError, match="output_size"):
        F.adaptive_avg_pool2d(x, (2, 3, 4))
    with pytest.raises(ValueError, match="divisor_override"):
        F.avg_pool2d(x, 2, divisor_override=0)


def test_cuda_pooling():
    if "cuda" not in mt.backend_names():
        pytest.skip("no cuda backend")
    x = RNG.standard_normal((1, 1, 3, 3))
    compare(lambda a: F.max_pool2d(a, 2, 1, 1, ceil_mode=True), lambda a: TF.max_pool2d(a, 2, 1, 1, ceil_mode=True), x, "cuda")
    compare(lambda a: F.adaptive_avg_pool2d(a, 2), lambda a: TF.adaptive_avg_pool2d(a, 2), x, "cuda")
