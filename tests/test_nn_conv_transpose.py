"""conv_transpose1d/2d, fold and the ConvTranspose/Fold/Unfold Modules against PyTorch: values and input, weight and
bias gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor import nn
from minitensor.errors import ShapeError
from minitensor.nn import functional as F

TF = torch.nn.functional
RNG = np.random.default_rng(11)


def compare(mine, theirs, arrays, backend, dtype="float64", rtol=1e-10, atol=1e-12):
    """Same inputs through ``mine`` (minitensor) and ``theirs`` (torch): outputs and every input's gradient agree."""
    tdtype = torch.float64 if dtype == "float64" else torch.float32
    ts = [torch.tensor(a, dtype=tdtype, requires_grad=True) for a in arrays]
    ms = [mt.tensor(a, dtype=dtype, backend=backend, requires_grad=True) for a in arrays]
    want, got = theirs(*ts), mine(*ms)
    assert tuple(got.shape) == tuple(want.shape)
    assert got.dtype == dtype
    np.testing.assert_allclose(got.to_numpy(), want.detach().numpy(), rtol=rtol, atol=atol)
    g = RNG.standard_normal(tuple(want.shape))
    want.backward(torch.tensor(g, dtype=tdtype))
    got.backward(mt.tensor(g, dtype=dtype, backend=backend))
    for t, m in zip(ts, ms):
        np.testing.assert_allclose(m.grad.to_numpy(), t.grad.numpy(), rtol=rtol, atol=atol)


# (input shape, weight shape, options); weight (C_in, C_out/groups, *kernel)
CT2D = [
    ((2, 3, 4, 5), (3, 2, 3, 2), {}),
    ((2, 2, 3, 4), (2, 3, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    ((1, 2, 3, 3), (2, 2, 2, 3), {"stride": (2, 3), "padding": (0, 2), "output_padding": (1, 2)}),
    ((1, 2, 3, 4), (2, 1, 2, 2), {"dilation": (2, 3), "padding": (1, 2)}),
    ((1, 2, 3, 3), (2, 2, 2, 2), {"stride": 1, "dilation": 3, "output_padding": 2}),  # output_padding < dilation only
    ((2, 4, 3, 3), (4, 3, 3, 2), {"groups": 2, "stride": (1, 2), "output_padding": (0, 1)}),
    ((1, 6, 2, 3), (6, 1, 3, 3), {"groups": 3, "stride": 3, "padding": 2, "dilation": 2, "output_padding": 1}),
    ((3, 3, 4), (3, 2, 2, 3), {"stride": 2, "padding": (1, 0)}),  # unbatched (C, H, W)
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("xs, ws, kw", CT2D)
@pytest.mark.parametrize("bias", [True, False])
def test_conv_transpose2d_matches_torch(backend, xs, ws, kw, bias):
    out_c = ws[1] * kw.get("groups", 1)
    arrays = [RNG.standard_normal(xs), RNG.standard_normal(ws)] + ([RNG.standard_normal(out_c)] if bias else [])
    compare(lambda *a: F.conv_transpose2d(*a, **kw) if bias else F.conv_transpose2d(a[0], a[1], **kw),
            lambda *a: TF.conv_transpose2d(*a, **kw) if bias else TF.conv_transpose2d(a[0], a[1], **kw), arrays, backend)


CT1D = [
    ((2, 3, 5), (3, 2, 3), {}),
    ((2, 2, 4), (2, 3, 3), {"stride": 3, "padding": 2, "output_padding": 2, "dilation": 2}),
    ((1, 4, 3), (4, 2, 2), {"groups": 2, "stride": 2, "output_padding": 1}),
    ((3, 4), (3, 2, 4), {"padding": 1, "dilation": 2, "output_padding": 1}),  # unbatched (C, L)
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("xs, ws, kw", CT1D)
def test_conv_transpose1d_matches_torch(backend, xs, ws, kw):
    arrays = [RNG.standard_normal(xs), RNG.standard_normal(ws), RNG.standard_normal(ws[1] * kw.get("groups", 1))]
    compare(lambda *a: F.conv_transpose1d(*a, **kw), lambda *a: TF.conv_transpose1d(*a, **kw), arrays, backend)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_conv_transpose_float32(backend):
    kw = {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2, "dilation": (1, 2)}
    arrays = [RNG.standard_normal((2, 4, 3, 4)), RNG.standard_normal((4, 2, 3, 3)), RNG.standard_normal(4)]
    compare(lambda *a: F.conv_transpose2d(*a, **kw), lambda *a: TF.conv_transpose2d(*a, **kw), arrays, backend,
            dtype="float32", rtol=1e-5, atol=1e-5)
    arrays = [RNG.standard_normal((2, 2, 5)), RNG.standard_normal((2, 3, 2)), RNG.standard_normal(3)]
    compare(lambda *a: F.conv_transpose1d(*a, stride=2), lambda *a: TF.conv_transpose1d(*a, stride=2), arrays, backend,
            dtype="float32", rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_conv_transpose_non_contiguous_inputs(backend):
    x, w = RNG.standard_normal((2, 3, 4, 2)), RNG.standard_normal((2, 3, 2, 3))  # channels-last x, kernel-transposed w
    compare(lambda a, c: F.conv_transpose2d(a.permute(0, 3, 1, 2), c.transpose(2, 3), stride=(2, 1), padding=1),
            lambda a, c: TF.conv_transpose2d(a.permute(0, 3, 1, 2), c.transpose(2, 3), stride=(2, 1), padding=1),
            [x, w], backend)
    x, w = RNG.standard_normal((3, 1, 5)), RNG.standard_normal((2, 3, 2))
    compare(lambda a, c: F.conv_transpose1d(a.transpose(0, 1), c.transpose(0, 1), stride=2),
            lambda a, c: TF.conv_transpose1d(a.transpose(0, 1), c.transpose(0, 1), stride=2), [x, w], backend)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_conv_transpose_zero_batch(backend):
    arrays = [np.zeros((0, 2, 3, 3)), RNG.standard_normal((2, 3, 2, 2)), RNG.standard_normal(3)]
    compare(lambda *a: F.conv_transpose2d(*a, stride=2), lambda *a: TF.conv_transpose2d(*a, stride=2), arrays, backend)
    arrays = [np.zeros((0, 2, 3)), RNG.standard_normal((2, 2, 2))]
    compare(lambda *a: F.conv_transpose1d(*a, padding=1), lambda *a: TF.conv_transpose1d(*a, padding=1), arrays, backend)


def test_conv_transpose_is_the_adjoint_of_conv():
    """<conv2d(x, w), y> == <x, conv_transpose2d(y, w)> for the same stride/padding/dilation/groups."""
    kw = {"stride": 2, "padding": 1, "dilation": (1, 2), "groups": 2}
    x, w = mt.tensor(RNG.standard_normal((2, 4, 7, 8))), mt.tensor(RNG.standard_normal((6, 2, 3, 2)))
    y = mt.tensor(RNG.standard_normal(tuple(F.conv2d(x, w, **kw).shape)))
    back = F.conv_transpose2d(y, w, output_padding=(0, 1), **kw)
    assert back.shape == x.shape
    np.testing.assert_allclose((F.conv2d(x, w, **kw) * y).sum().item(), (x * back).sum().item(), rtol=1e-10)


def test_conv_transpose_second_derivative():
    kw = {"stride": 2, "padding": 1, "output_padding": 1}
    x, w = RNG.standard_normal((1, 2, 3, 3)), RNG.standard_normal((2, 2, 3, 3))
    grads = []
    for lib in (mt, torch):
        a, b = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        fn = F.conv_transpose2d if lib is mt else TF.conv_transpose2d
        (gx,) = lib.autograd.grad((fn(a, b, **kw) ** 2).sum(), [a], create_graph=True)
        grads.append([g.numpy() if lib is mt else g.detach().numpy() for g in lib.autograd.grad((gx ** 2).sum(), [a, b])])
    for g, want in zip(*grads):
        np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_conv_transpose_modules_load_torch_weights(backend):
    for theirs, mine, xs, size in [
        (torch.nn.ConvTranspose2d(4, 6, (3, 2), stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2,
                                  dilation=(1, 2)),
         nn.ConvTranspose2d(4, 6, (3, 2), stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2,
                            dilation=(1, 2), device=backend, dtype=mt.float64), (2, 4, 3, 3), None),
        (torch.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, bias=False),
         nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, bias=False, backend=backend, dtype=mt.float64),
         (2, 3, 4), (3, 6, 8)),  # unbatched, output_size with the channel dim
        (torch.nn.ConvTranspose1d(2, 4, 3, stride=3, padding=1),
         nn.ConvTranspose1d(2, 4, 3, stride=3, padding=1, device=backend, dtype=mt.float64), (2, 2, 4), [11]),
    ]:
        theirs = theirs.double()
        assert repr(mine) == repr(theirs)
        assert mine.weight.shape == tuple(theirs.weight.shape)
        assert [n for n, _ in mine.named_parameters()] == [n for n, _ in theirs.named_parameters()]
        mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
        x = RNG.standard_normal(xs)
        tx, mx = torch.tensor(x, requires_grad=True), mt.tensor(x, backend=backend, requires_grad=True)
        want, got = theirs(tx, output_size=size), mine(mx, output_size=size)
        assert got.shape == tuple(want.shape)
        np.testing.assert_allclose(got.to_numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-12)
        g = RNG.standard_normal(tuple(want.shape))
        want.backward(torch.tensor(g))
        got.backward(mt.tensor(g, backend=backend))
        np.testing.assert_allclose(mx.grad.to_numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
        for (_, p), (_, q) in zip(mine.named_parameters(), theirs.named_parameters()):
            np.testing.assert_allclose(p.grad.to_numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_conv_transpose_module_init_repr_and_output_size():
    conv, theirs = nn.ConvTranspose2d(4, 6, 3, groups=2), torch.nn.ConvTranspose2d(4, 6, 3, groups=2)
    assert conv.weight.shape == tuple(theirs.weight.shape) == (4, 3, 3, 3)
    bound = 1 / math.sqrt(3 * 9)  # fan_in = weight.shape[1] * kh * kw = out_channels / groups * 9
    for p in (conv.weight, conv.bias):
        assert np.abs(p.numpy()).max() <= bound
    assert np.abs(conv.weight.numpy()).max() > 0.8 * bound
    assert repr(conv) == repr(theirs) == "ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(1, 1), groups=2)"
    kw = {"stride": 2, "padding": 1, "output_padding": 1, "dilation": 2, "bias": False}
    assert repr(nn.ConvTranspose1d(2, 3, 2, **kw)) == repr(torch.nn.ConvTranspose1d(2, 3, 2, **kw))
    up = nn.ConvTranspose2d(1, 1, 3, stride=2, padding=1)
    x = mt.zeros(1, 1, 4, 5)
    assert up(x).shape == (1, 1, 7, 9)
    assert up(x, output_size=(8, 10)).shape == (1, 1, 8, 10)
    assert up(x, output_size=(1, 1, 8, 9)).shape == (1, 1, 8, 9)
    with pytest.raises(ValueError, match=r"requested an output size of \(9, 9\).*\(7, 9\) to \(8, 10\)"):
        up(x, output_size=(9, 9))
    with pytest.raises(ValueError, match="output_size must have 2 or 4 elements"):
        up(x, output_size=(8,))
    for bad in [dict(groups=3), dict(groups=0), dict(padding_mode="reflect"), dict(stride=0)]:
        with pytest.raises(ValueError):
            nn.ConvTranspose2d(4, 6, 3, **bad)


def test_conv_transpose_errors():
    x = mt.zeros(1, 4, 3, 3)
    with pytest.raises(ShapeError, match=r"to have 2 channels.*got 4"):
        F.conv_transpose2d(x, mt.zeros(2, 1, 2, 2))
    with pytest.raises(ShapeError, match=r"groups=3.*divisible"):
        F.conv_transpose2d(x[:, :2], mt.zeros(2, 1, 2, 2), groups=3)
    with pytest.raises(ValueError, match=r"output_padding \(2, 2\) must be smaller than either stride \(2, 2\) or "
                                         r"dilation \(1, 1\)"):
        F.conv_transpose2d(x, mt.zeros(4, 1, 2, 2), stride=2, output_padding=2)
    with pytest.raises(ValueError, match="output_padding"):
        F.conv_transpose1d(mt.zeros(1, 2, 3), mt.zeros(2, 1, 2), output_padding=1)  # stride = dilation = 1
    with pytest.raises(ShapeError, match=r"output size \(0, 0\): too small"):
        F.conv_transpose2d(mt.zeros(1, 1, 2, 2), mt.zeros(1, 1, 1, 1), padding=1)
    with pytest.raises(ShapeError, match=r"bias must have shape \(2,\)"):
        F.conv_transpose2d(x, mt.zeros(4, 1, 2, 2), mt.zeros(4), groups=2)
    with pytest.raises(ShapeError, match="weight must be 4-D"):
        F.conv_transpose2d(x, mt.zeros(4, 1, 2))
    with pytest.raises(ShapeError, match="input"):
        F.conv_transpose1d(mt.zeros(4), mt.zeros(4, 1, 2))
    with pytest.raises(ValueError, match="padding must be >= 0"):
        F.conv_transpose2d(x, mt.zeros(4, 1, 2, 2), padding=-1)
    with pytest.raises(ValueError, match="groups"):
        F.conv_transpose2d(x, mt.zeros(4, 1, 2, 2), groups=0)
    with pytest.raises(TypeError, match="argument 'weight' must be Tensor"):
        F.conv_transpose2d(x, None)


# --- fold / unfold ---

FOLD = [
    ((2, 3, 5, 6), {"kernel_size": 2}),
    ((1, 2, 6, 5), {"kernel_size": (2, 3), "stride": (2, 1), "padding": (1, 2), "dilation": (2, 1)}),
    ((1, 2, 7, 7), {"kernel_size": 3, "stride": 3}),  # non-overlapping, last row/col not covered
    ((2, 4, 5), {"kernel_size": (3, 2), "dilation": 2, "padding": 1}),  # unbatched
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("xs, kw", FOLD)
def test_unfold_and_fold_match_torch(backend, xs, kw):
    compare(lambda a: nn.Unfold(**kw)(a), lambda a: torch.nn.Unfold(**kw)(a), [RNG.standard_normal(xs)], backend)
    args = [kw.get(k, d) for k, d in (("kernel_size", 1), ("dilation", 1), ("padding", 0), ("stride", 1))]
    compare(lambda a: F.unfold(a, *args), lambda a: TF.unfold(a, *args), [RNG.standard_normal(xs)], backend)
    cols = tuple(torch.nn.Unfold(**kw)(torch.zeros(xs)).shape)
    size = xs[-2:]
    compare(lambda a: F.fold(a, size, **kw), lambda a: TF.fold(a, size, **kw), [RNG.standard_normal(cols)], backend)
    compare(lambda a: nn.Fold(size, **kw)(nn.Unfold(**kw)(a)), lambda a: torch.nn.Fold(size, **kw)(torch.nn.Unfold(**kw)(a)),
            [RNG.standard_normal(xs)], backend, dtype="float32", rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_fold_zero_batch_and_non_contiguous(backend):
    compare(lambda a: F.fold(a, (3, 4), 2), lambda a: TF.fold(a, (3, 4), 2), [np.zeros((0, 8, 6))], backend)
    compare(lambda a: F.fold(a.transpose(1, 2), (3, 4), 2), lambda a: TF.fold(a.transpose(1, 2), (3, 4), 2),
            [RNG.standard_normal((2, 6, 8))], backend)
    compare(lambda a: nn.Unfold(2)(a.transpose(2, 3)), lambda a: torch.nn.Unfold(2)(a.transpose(2, 3)),
            [RNG.standard_normal((2, 2, 4, 3))], backend)


def test_fold_unfold_repr_and_errors():
    kw = {"kernel_size": 2, "dilation": 1, "padding": (0, 1), "stride": 2}
    assert repr(nn.Fold((4, 5), **kw)) == repr(torch.nn.Fold((4, 5), **kw))
    assert repr(nn.Unfold(**kw)) == repr(torch.nn.Unfold(**kw))
    with pytest.raises(ShapeError, match=r"input.size\(1\)=11.*divisible by the product of kernel_size=\(2, 2\)"):
        F.fold(mt.zeros(1, 11, 4), (3, 3), 2)
    with pytest.raises(ShapeError, match=r"sliding blocks 2 \* 2 = 4, but got 5"):
        F.fold(mt.zeros(1, 12, 5), (3, 3), 2)
    with pytest.raises(ShapeError, match="sliding blocks"):
        F.fold(mt.zeros(1, 12, 4), (1, 1), 2)
    with pytest.raises(ShapeError, match="2-D"):
        F.fold(mt.zeros(12), (3, 3), 2)
    with pytest.raises(ShapeError, match="larger than"):
        nn.Unfold(4)(mt.zeros(1, 2, 3, 3))
    with pytest.raises(ShapeError, match="3-D"):
        nn.Unfold(2)(mt.zeros(3, 3))


@pytest.mark.parametrize("backend", BACKENDS)
def test_tiny_every_backend(backend):
    arrays = [RNG.standard_normal((1, 2, 2, 2)), RNG.standard_normal((2, 1, 2, 2)), RNG.standard_normal(2)]
    kw = {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}
    compare(lambda *a: F.conv_transpose2d(*a, **kw), lambda *a: TF.conv_transpose2d(*a, **kw), arrays, backend)
    compare(lambda a: F.fold(a, (3, 3), 2, stride=1), lambda a: TF.fold(a, (3, 3), 2, stride=1),
            [RNG.standard_normal((1, 4, 4))], backend)
    compare(lambda a: nn.Unfold(2, padding=1)(a), lambda a: torch.nn.Unfold(2, padding=1)(a),
            [RNG.standard_normal((1, 1, 2, 2))], backend)
