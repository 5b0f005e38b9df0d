"""conv1d/conv2d, pad and the Conv Modules against PyTorch: forward values, input, weight and bias gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import CPU_BACKENDS

import minitensor as mt
from minitensor import nn
from minitensor.errors import ShapeError
from minitensor.nn import functional as F

TF = torch.nn.functional
pytestmark = pytest.mark.filterwarnings("ignore:Using padding=.same. with even kernel")
RNG = np.random.default_rng(7)


def compare(mine, theirs, arrays, backend, dtype="float64", rtol=1e-10, atol=1e-12):
    """Same inputs through ``mine`` (minitensor) and ``theirs`` (torch): outputs and every input's gradient agree."""
    tdtype = torch.float64 if dtype == "float64" else torch.float32
    ts = [torch.tensor(a, dtype=tdtype, requires_grad=True) for a in arrays]
    ms = [mt.tensor(a, dtype=dtype, backend=backend, requires_grad=True) for a in arrays]
    want, got = theirs(*ts), mine(*ms)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.to_numpy(), want.detach().numpy(), rtol=rtol, atol=atol)
    g = RNG.standard_normal(tuple(want.shape))
    want.backward(torch.tensor(g, dtype=tdtype))
    got.backward(mt.tensor(g, dtype=dtype, backend=backend))
    for t, m in zip(ts, ms):
        np.testing.assert_allclose(m.grad.to_numpy(), t.grad.numpy(), rtol=rtol, atol=atol)


CONV2D = [
    ((2, 2, 5, 6), (3, 2, 3, 2), {}),
    ((2, 2, 5, 6), (3, 2, 3, 3), {"stride": (2, 1), "padding": (1, 2)}),
    ((1, 2, 5, 6), (3, 2, 2, 3), {"padding": "same", "dilation": (1, 2)}),  # even kernel: extra pad bottom
    ((1, 2, 6, 5), (2, 2, 2, 2), {"padding": "same", "dilation": 3}),
    ((1, 2, 5, 6), (3, 2, 3, 3), {"padding": "valid", "stride": 2}),
    ((2, 4, 5, 5), (6, 2, 3, 2), {"groups": 2, "padding": 1}),
    ((1, 6, 7, 6), (3, 2, 2, 2), {"groups": 3, "stride": 2, "dilation": 2, "padding": (2, 1)}),
    ((4, 5, 6), (3, 4, 2, 2), {"padding": 1}),  # unbatched (C, H, W)
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("xs, ws, kw", CONV2D)
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d_matches_torch(backend, xs, ws, kw, bias):
    arrays = [RNG.standard_normal(xs), RNG.standard_normal(ws)] + ([RNG.standard_normal(ws[0])] if bias else [])
    compare(lambda *a: F.conv2d(*a, **kw) if bias else F.conv2d(a[0], a[1], **kw),
            lambda *a: TF.conv2d(*a, **kw) if bias else TF.conv2d(a[0], a[1], **kw), arrays, backend)


CONV1D = [
    ((2, 3, 7), (4, 3, 3), {}),
    ((2, 3, 7), (4, 3, 2), {"stride": 2, "padding": 2, "dilation": 2}),
    ((1, 4, 6), (2, 2, 4), {"padding": "same", "groups": 2}),
    ((1, 2, 7), (3, 2, 2), {"padding": "same", "dilation": 3}),
    ((3, 7), (2, 3, 3), {"padding": 1}),  # unbatched (C, L)
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("xs, ws, kw", CONV1D)
def test_conv1d_matches_torch(backend, xs, ws, kw):
    arrays = [RNG.standard_normal(xs), RNG.standard_normal(ws), RNG.standard_normal(ws[0])]
    compare(lambda *a: F.conv1d(*a, **kw), lambda *a: TF.conv1d(*a, **kw), arrays, backend)


def test_conv2d_float32():
    arrays = [RNG.standard_normal((2, 4, 6, 6)), RNG.standard_normal((4, 2, 3, 3)), RNG.standard_normal(4)]
    compare(lambda *a: F.conv2d(*a, stride=2, padding=1, groups=2), lambda *a: TF.conv2d(*a, stride=2, padding=1, groups=2),
            arrays, "fast", dtype="float32", rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_conv2d_non_contiguous_input(backend):
    x, w = RNG.standard_normal((1, 5, 5, 2)), RNG.standard_normal((3, 2, 3, 3))
    compare(lambda a, c: F.conv2d(a.permute(0, 3, 1, 2), c, padding=1, dilation=(1, 2)),
            lambda a, c: TF.conv2d(a.permute(0, 3, 1, 2), c, padding=1, dilation=(1, 2)), [x, w], backend)


PADS = [
    ("constant", (1, 2), 3), ("constant", (2, 0, 1, 3), 4), ("constant", (-1, 2, 1, -2), 4), ("constant", (1, 1, 0, 0, 2, 1), 4),
    ("reflect", (2, 1), 3), ("reflect", (1, 3, 2, 0), 4), ("reflect", (3, 3, 2, 2), 3),
    ("replicate", (3, 1), 3), ("replicate", (2, 1, 0, 4), 4),
    ("circular", (1, 2), 3), ("circular", (2, 1, 3, 0), 4), ("circular", (-1, 2, 2, -1), 4),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("mode, pads, dims", PADS)
def test_pad_matches_torch(backend, mode, pads, dims):
    x = RNG.standard_normal((2, 3, 4, 5)[4 - dims :])
    compare(lambda a: F.pad(a, pads, mode), lambda a: TF.pad(a, pads, mode), [x], backend)
    if mode == "constant":
        compare(lambda a: F.pad(a, pads, value=-2.5), lambda a: TF.pad(a, pads, value=-2.5), [x], backend)


def test_pad_errors():
    x = mt.zeros(1, 2, 3)
    with pytest.raises(ValueError, match="even"):
        F.pad(x, (1, 2, 3))
    with pytest.raises(ShapeError, match=r"\(1, 2, 3\)"):
        F.pad(x, (1, 1) * 4)
    with pytest.raises(ShapeError, match="reflect"):
        F.pad(x, (3, 0), "reflect")  # reflect needs pad < size
    with pytest.raises(ValueError, match="mode"):
        F.pad(x, (1, 1), "mirror")
    with pytest.raises(ValueError, match="negative"):
        F.pad(x, (-1, 1), "replicate")
    assert F.pad(x, (0, 0)) is x


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("padding_mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv_modules_load_torch_weights(backend, padding_mode):
    for theirs, mine, xs in [
        (torch.nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2, padding_mode=padding_mode),
         nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2, padding_mode=padding_mode,
                   device=backend, dtype=mt.float64), (2, 4, 5, 6)),
        (torch.nn.Conv2d(2, 3, (2, 3), padding="same", padding_mode=padding_mode, bias=False),
         nn.Conv2d(2, 3, (2, 3), padding="same", padding_mode=padding_mode, bias=False, backend=backend,
                   dtype=mt.float64), (1, 2, 4, 5)),
        (torch.nn.Conv1d(2, 4, 3, stride=2, padding=2, padding_mode=padding_mode),
         nn.Conv1d(2, 4, 3, stride=2, padding=2, padding_mode=padding_mode, device=backend, dtype=mt.float64), (2, 2, 6)),
    ]:
        theirs = theirs.double()
        assert repr(mine) == repr(theirs)
        assert [n for n, _ in mine.named_parameters()] == [n for n, _ in theirs.named_parameters()]
        mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
        x = RNG.standard_normal(xs)
        tx, mx = torch.tensor(x, requires_grad=True), mt.tensor(x, backend=backend, requires_grad=True)
        want, got = theirs(tx), mine(mx)
        np.testing.assert_allclose(got.to_numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-12)
        g = RNG.standard_normal(tuple(want.shape))
        want.backward(torch.tensor(g))
        got.backward(mt.tensor(g, backend=backend))
        np.testing.assert_allclose(mx.grad.to_numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
        for (_, p), (_, q) in zip(mine.named_parameters(), theirs.named_parameters()):
            np.testing.assert_allclose(p.grad.to_numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_conv_module_default_init_and_repr():
    conv = nn.Conv2d(4, 8, 3, groups=2)
    theirs = torch.nn.Conv2d(4, 8, 3, groups=2)
    assert conv.weight.shape == tuple(theirs.weight.shape) == (8, 2, 3, 3)
    bound = 1 / math.sqrt(2 * 9)  # fan_in = in_channels / groups * kh * kw
    assert np.abs(conv.weight.numpy()).max() <= bound and np.abs(conv.bias.numpy()).max() <= bound
    assert np.abs(conv.weight.numpy()).max() > 0.8 * bound
    assert repr(conv) == repr(theirs) == "Conv2d(4, 8, kernel_size=(3, 3), stride=(1, 1), groups=2)"
    assert repr(nn.Conv1d(2, 3, 2, dilation=2, bias=False)) == repr(torch.nn.Conv1d(2, 3, 2, dilation=2, bias=False))
    assert conv(mt.zeros(4, 5, 5)).shape == (8, 3, 3)  # unbatched
    for bad in [dict(groups=3), dict(padding="full"), dict(padding="same", stride=2), dict(padding_mode="mirror")]:
        with pytest.raises(ValueError):
            nn.Conv2d(4, 8, 3, **bad)


def test_conv_errors():
    x = mt.zeros(1, 2, 4, 4)
    with pytest.raises(ShapeError, match=r"4 channels.*got 2"):
        F.conv2d(x, mt.zeros(1, 2, 2, 2), groups=2)
    with pytest.raises(ShapeError, match="divisible"):
        F.conv2d(mt.zeros(1, 4, 4, 4), mt.zeros(3, 2, 2, 2), groups=2)
    with pytest.raises(ShapeError, match=r"smaller than the \(dilated\) kernel"):
        F.conv2d(x, mt.zeros(1, 2, 5, 5))
    with pytest.raises(ShapeError, match=r"smaller than the \(dilated\) kernel"):
        F.conv2d(x, mt.zeros(1, 2, 2, 2), dilation=4)
    with pytest.raises(ShapeError, match="input"):
        F.conv2d(mt.zeros(4, 4), mt.zeros(1, 2, 2, 2))
    with pytest.raises(ShapeError, match=r"bias must have shape \(1,\)"):
        F.conv2d(x, mt.zeros(1, 2, 2, 2), mt.zeros(2))
    with pytest.raises(ValueError, match="strided"):
        F.conv1d(mt.zeros(1, 2, 4), mt.zeros(1, 2, 2), padding="same", stride=2)
    with pytest.raises(ValueError, match="stride"):
        F.conv2d(x, mt.zeros(1, 2, 2, 2), stride=0)


def test_cnn_state_dict_from_torch():
    theirs = torch.nn.Sequential(
        torch.nn.Conv2d(1, 3, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(3, 4, 2, stride=1, groups=1), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(4 * 3 * 3, 5),
    ).double()
    kw = {"dtype": mt.float64, "device": "fast"}
    mine = nn.Sequential(
        nn.Conv2d(1, 3, 3, padding=1, **kw), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(3, 4, 2, stride=1, **kw), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 3 * 3, 5, **kw),
    )
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = RNG.standard_normal((2, 1, 8, 8))
    np.testing.assert_allclose(mine(mt.tensor(x, backend="fast")).numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-10, atol=1e-12)


def test_cuda_conv_and_pad():
    if "cuda" not in mt.backend_names():
        pytest.skip("no cuda backend")
    arrays = [RNG.standard_normal((1, 2, 3, 3)), RNG.standard_normal((2, 1, 2, 2)), RNG.standard_normal(2)]
    compare(lambda *a: F.conv2d(*a, padding=1, groups=2), lambda *a: TF.conv2d(*a, padding=1, groups=2), arrays, "cuda")
    compare(lambda a: F.pad(a, (1, 1, 0, 1), "reflect"), lambda a: TF.pad(a, (1, 1, 0, 1), "reflect"),
            [RNG.standard_normal((1, 2, 3))], "cuda")
