"""The 3-d family against PyTorch: conv3d / conv_transpose3d, the 3-d pools, 6-element pads and their Modules,
BatchNorm3d and InstanceNorm3d: forward values, dtypes and input/weight/bias gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor import nn
from minitensor.errors import ShapeError
from minitensor.nn import functional as F

TF = torch.nn.functional
pytestmark = pytest.mark.filterwarnings("ignore:Using padding=.same. with even kernel")
RNG = np.random.default_rng(13)


def compare(mine, theirs, arrays, backend, dtype="float64", rtol=1e-10, atol=1e-12):
    """Same inputs through ``mine`` (minitensor) and ``theirs`` (torch): outputs (the first of a tuple), dtypes and
    every float input's gradient agree; a second output (indices) must match exactly."""
    tdtype = torch.float64 if dtype == "float64" else torch.float32
    ts = [torch.tensor(a, dtype=tdtype, requires_grad=True) for a in arrays]
    ms = [mt.tensor(a, dtype=dtype, backend=backend, requires_grad=True) for a in arrays]
    want, got = theirs(*ts), mine(*ms)
    if isinstance(want, tuple):
        assert got[1].dtype == mt.int64 and tuple(got[1].shape) == tuple(want[1].shape)
        np.testing.assert_array_equal(got[1].to_numpy(), want[1].numpy())
        want, got = want[0], got[0]
    assert tuple(got.shape) == tuple(want.shape) and got.dtype.name == str(want.dtype).removeprefix("torch.")
    np.testing.assert_allclose(got.to_numpy(), want.detach().numpy(), rtol=rtol, atol=atol)
    g = RNG.standard_normal(tuple(want.shape))
    want.backward(torch.tensor(g, dtype=tdtype))
    got.backward(mt.tensor(g, dtype=dtype, backend=backend))
    for t, m in zip(ts, ms):
        np.testing.assert_allclose(m.grad.to_numpy(), t.grad.numpy(), rtol=rtol, atol=atol)


def module_compare(mine, theirs, shape, backend):
    """A torch Module's state loaded into ours: same repr, output, input gradient and parameter gradients."""
    theirs = theirs.double()
    assert repr(mine) == repr(theirs)
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = RNG.standard_normal(shape)
    tx, mx = torch.tensor(x, requires_grad=True), mt.tensor(x, backend=backend, requires_grad=True)
    want, got = theirs(tx), mine(mx)
    np.testing.assert_allclose(got.to_numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = RNG.standard_normal(tuple(want.shape))
    want.backward(torch.tensor(g))
    got.backward(mt.tensor(g, backend=backend))
    np.testing.assert_allclose(mx.grad.to_numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    for (name, p), (_, q) in zip(mine.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.to_numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=name)


CONV3D = [
    ((2, 2, 3, 4, 3), (3, 2, 2, 3, 2), {}),
    ((1, 2, 4, 5, 3), (2, 2, 2, 2, 3), {"stride": (2, 1, 2), "padding": (1, 0, 2)}),
    ((1, 2, 3, 4, 4), (2, 2, 2, 3, 2), {"padding": "same", "dilation": (1, 2, 1)}),  # even kernel: extra pad at the end
    ((1, 2, 4, 4, 3), (2, 2, 3, 2, 2), {"padding": "valid", "stride": 2}),
    ((1, 4, 3, 4, 3), (4, 2, 2, 2, 2), {"groups": 2, "padding": 1, "dilation": 2}),
    ((2, 3, 4, 3), (2, 2, 2, 2, 2), {"padding": 1}),  # unbatched (C, D, H, W)
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("xs, ws, kw", CONV3D)
@pytest.mark.parametrize("bias", [True, False])
def test_conv3d_matches_torch(backend, xs, ws, kw, bias):
    arrays = [RNG.standard_normal(xs), RNG.standard_normal(ws)] + ([RNG.standard_normal(ws[0])] if bias else [])
    compare(lambda *a: F.conv3d(*a, **kw), lambda *a: TF.conv3d(*a, **kw), arrays, backend)


def test_conv3d_float32():
    arrays = [RNG.standard_normal((2, 4, 3, 4, 4)), RNG.standard_normal((4, 2, 2, 3, 2)), RNG.standard_normal(4)]
    kw = {"stride": (1, 2, 1), "padding": 1, "groups": 2}
    compare(lambda *a: F.conv3d(*a, **kw), lambda *a: TF.conv3d(*a, **kw), arrays, "fast", "float32", 1e-5, 1e-5)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("padding_mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv3d_module_loads_torch_weights(backend, padding_mode):
    kw = {"stride": (1, 2, 1), "padding": (1, 2, 1), "dilation": (2, 1, 1), "groups": 2, "padding_mode": padding_mode}
    module_compare(nn.Conv3d(4, 2, (2, 2, 3), **kw, device=backend, dtype=mt.float64),
                   torch.nn.Conv3d(4, 2, (2, 2, 3), **kw), (1, 4, 3, 4, 3), backend)
    module_compare(nn.Conv3d(2, 2, 2, padding="same", padding_mode=padding_mode, bias=False, backend=backend,
                             dtype=mt.float64),
                   torch.nn.Conv3d(2, 2, 2, padding="same", padding_mode=padding_mode, bias=False), (2, 3, 3, 4), backend)


def test_conv3d_module_init_and_errors():
    conv, theirs = nn.Conv3d(4, 6, (1, 2, 3), groups=2), torch.nn.Conv3d(4, 6, (1, 2, 3), groups=2)
    assert conv.weight.shape == tuple(theirs.weight.shape) == (6, 2, 1, 2, 3)
    bound = 1 / np.sqrt(2 * 6)
    assert bound * 0.5 < np.abs(conv.weight.numpy()).max() <= bound and np.abs(conv.bias.numpy()).max() <= bound
    assert repr(conv) == repr(theirs)
    with pytest.raises(ShapeError, match="5-D"):
        F.conv3d(mt.zeros(1, 2, 3, 3), mt.zeros(1, 2, 2, 2))
    with pytest.raises(ShapeError, match=r"4-D \(unbatched\) or 5-D"):
        F.conv3d(mt.zeros(2, 3, 3), mt.zeros(1, 2, 2, 2, 2))
    with pytest.raises(ShapeError, match=r"smaller than the \(dilated\) kernel"):
        F.conv3d(mt.zeros(1, 2, 3, 3, 3), mt.zeros(1, 2, 2, 2, 2), dilation=(1, 3, 1))
    with pytest.raises(ShapeError, match="4 channels"):
        F.conv3d(mt.zeros(1, 2, 3, 3, 3), mt.zeros(2, 2, 2, 2, 2), groups=2)
    with pytest.raises(ValueError, match="strided"):
        nn.Conv3d(2, 2, 3, padding="same", stride=(1, 1, 2))


CONV_T3D = [
    ((2, 2, 2, 3, 2), (2, 3, 2, 2, 3), {}),
    ((1, 2, 2, 3, 2), (2, 2, 3, 2, 2), {"stride": (2, 1, 3), "padding": (1, 0, 1), "output_padding": (1, 0, 2)}),
    ((1, 4, 2, 2, 3), (4, 1, 2, 3, 2), {"groups": 2, "dilation": (2, 1, 2), "stride": 2, "output_padding": 1}),
    ((2, 2, 3, 2), (2, 2, 2, 2, 2), {"stride": 2, "padding": 1}),  # unbatched
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("xs, ws, kw", CONV_T3D)
def test_conv_transpose3d_matches_torch(backend, xs, ws, kw):
    out_c = ws[1] * kw.get("groups", 1)
    arrays = [RNG.standard_normal(xs), RNG.standard_normal(ws), RNG.standard_normal(out_c)]
    compare(lambda *a: F.conv_transpose3d(*a, **kw), lambda *a: TF.conv_transpose3d(*a, **kw), arrays, backend)
    compare(lambda *a: F.conv_transpose3d(*a[:2], **kw), lambda *a: TF.conv_transpose3d(*a[:2], **kw), arrays[:2], backend)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_conv_transpose3d_module(backend):
    kw = {"stride": (2, 1, 2), "padding": (0, 1, 1), "groups": 2, "dilation": (1, 2, 1)}
    mine = nn.ConvTranspose3d(2, 4, (2, 2, 3), **kw, device=backend, dtype=mt.float64)
    theirs = torch.nn.ConvTranspose3d(2, 4, (2, 2, 3), **kw).double()
    module_compare(mine, theirs, (1, 2, 2, 3, 2), backend)
    x = RNG.standard_normal((1, 2, 2, 3, 2))
    for size in [(5, 3, 4), (1, 4, 4, 3, 3)]:
        want = theirs(torch.tensor(x), output_size=size)
        got = mine(mt.tensor(x, backend=backend), output_size=size)
        np.testing.assert_allclose(got.to_numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="output size"):
        mine(mt.tensor(x, backend=backend), output_size=(6, 3, 4))


MAX3D = [
    ((2, 2, 4, 5, 4), {"kernel_size": 2}),
    ((1, 2, 5, 4, 5), {"kernel_size": (3, 2, 2), "stride": (2, 1, 2), "padding": (1, 1, 0)}),
    ((1, 2, 5, 5, 4), {"kernel_size": 2, "stride": 2, "ceil_mode": True}),
    ((1, 1, 5, 6, 5), {"kernel_size": (2, 3, 2), "dilation": (2, 1, 2), "padding": (1, 1, 0), "ceil_mode": True}),
    ((1, 1, 6, 4, 3), {"kernel_size": (3, 2, 2), "dilation": (2, 1, 1), "padding": (1, 1, 1), "stride": (1, 2, 1)}),
    ((2, 4, 3, 4), {"kernel_size": (2, 2, 3), "stride": 1}),  # unbatched
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("shape, kw", MAX3D)
def test_max_pool3d_matches_torch(backend, shape, kw):
    x = RNG.permutation(int(np.prod(shape))).reshape(shape).astype(np.float64)  # distinct values: unique argmax
    compare(lambda a: F.max_pool3d(a, **kw), lambda a: TF.max_pool3d(a, **kw), [x], backend)
    compare(lambda a: F.max_pool3d(a, **kw, return_indices=True),
            lambda a: TF.max_pool3d(a, **kw, return_indices=True), [x], backend)
    compare(lambda a: F.max_pool3d_with_indices(a, **kw), lambda a: TF.max_pool3d_with_indices(a, **kw), [x], backend)


AVG3D = [
    ((2, 2, 4, 5, 4), {"kernel_size": 2}),
    ((1, 2, 5, 4, 5), {"kernel_size": (3, 2, 2), "stride": (2, 1, 2), "padding": (1, 1, 0)}),
    ((1, 2, 5, 4, 5), {"kernel_size": (3, 2, 2), "stride": (2, 1, 2), "padding": (1, 1, 0), "count_include_pad": False}),
    ((1, 2, 5, 5, 4), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ((1, 2, 5, 5, 4), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}),
    ((1, 2, 4, 4, 4), {"kernel_size": 2, "stride": 1, "divisor_override": 3}),
    ((2, 4, 3, 4), {"kernel_size": (2, 2, 3), "stride": (1, 2, 1)}),  # unbatched
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("shape, kw", AVG3D)
def test_avg_pool3d_matches_torch(backend, shape, kw):
    compare(lambda a: F.avg_pool3d(a, **kw), lambda a: TF.avg_pool3d(a, **kw), [RNG.standard_normal(shape)], backend)


ADAPTIVE3D = [((2, 2, 5, 4, 6), 2), ((1, 2, 4, 5, 3), (3, None, 2)), ((2, 3, 4, 5), (1, 4, 2)), ((1, 1, 3, 2, 2), (4, 3, 2))]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("shape, size", ADAPTIVE3D)
def test_adaptive_pool3d_matches_torch(backend, shape, size):
    x = RNG.permutation(int(np.prod(shape))).reshape(shape).astype(np.float64)
    compare(lambda a: F.adaptive_avg_pool3d(a, size), lambda a: TF.adaptive_avg_pool3d(a, size), [x], backend)
    compare(lambda a: F.adaptive_max_pool3d(a, size), lambda a: TF.adaptive_max_pool3d(a, size), [x], backend)
    compare(lambda a: F.adaptive_max_pool3d(a, size, True), lambda a: TF.adaptive_max_pool3d(a, size, True), [x], backend)
    compare(lambda a: F.adaptive_max_pool3d_with_indices(a, size),
            lambda a: TF.adaptive_max_pool3d_with_indices(a, size), [x], backend)
    for mine, theirs in [(nn.AdaptiveAvgPool3d(size), torch.nn.AdaptiveAvgPool3d(size)),
                         (nn.AdaptiveMaxPool3d(size, True), torch.nn.AdaptiveMaxPool3d(size, True))]:
        assert repr(mine) == repr(theirs)
        compare(mine, theirs, [x], backend)


LP3D = [((1, 2, 4, 5, 4), 2.0, 2, None, False), ((2, 4, 5, 5), 3.0, (2, 3, 2), (1, 2, 2), True),
        ((1, 1, 5, 4, 5), 1.5, (3, 2, 2), 2, True)]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("shape, p, kernel, stride, ceil", LP3D)
def test_lp_pool3d_matches_torch(backend, shape, p, kernel, stride, ceil):
    x = np.abs(RNG.standard_normal(shape)) + 0.1  # fractional powers need positive input (as in torch)
    compare(lambda a: F.lp_pool3d(a, p, kernel, stride, ceil), lambda a: TF.lp_pool3d(a, p, kernel, stride, ceil), [x],
            backend)
    mine, theirs = nn.LPPool3d(p, kernel, stride, ceil), torch.nn.LPPool3d(p, kernel, stride, ceil)
    assert repr(mine) == repr(theirs)
    compare(mine, theirs, [x], backend)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("shape, kw, size", [
    ((2, 2, 4, 4, 4), {"kernel_size": 2}, None),
    ((1, 2, 5, 4, 4), {"kernel_size": (3, 2, 2), "stride": (2, 1, 2)}, None),
    ((1, 1, 4, 4, 4), {"kernel_size": 3, "stride": 2, "padding": 1}, (4, 4, 4)),
    ((2, 5, 5, 4), {"kernel_size": 2, "stride": 2}, (5, 5, 5)),  # unbatched, explicit output_size
])
def test_max_unpool3d_matches_torch(backend, shape, kw, size):
    x = RNG.permutation(int(np.prod(shape))).reshape(shape).astype(np.float64)
    out, idx = TF.max_pool3d(torch.tensor(x), **kw, return_indices=True)
    tidx, midx = idx, mt.tensor(idx.numpy(), backend=backend)
    compare(lambda a: F.max_unpool3d(a, midx, **kw, output_size=size),
            lambda a: TF.max_unpool3d(a, tidx, **kw, output_size=size), [out.numpy()], backend)
    mine, theirs = nn.MaxUnpool3d(**kw), torch.nn.MaxUnpool3d(**kw)
    assert repr(mine) == repr(theirs)
    compare(lambda a: mine(a, midx, size), lambda a: theirs(a, tidx, size), [out.numpy()], backend)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_pool3d_modules_match_torch(backend):
    x = [RNG.standard_normal((1, 2, 5, 4, 5))]
    for mine, theirs in [
        (nn.MaxPool3d(2, 1, 1, 2, ceil_mode=True), torch.nn.MaxPool3d(2, 1, 1, 2, ceil_mode=True)),
        (nn.MaxPool3d((2, 3, 2), return_indices=True), torch.nn.MaxPool3d((2, 3, 2), return_indices=True)),
        (nn.AvgPool3d(3, 2, 1, True, False), torch.nn.AvgPool3d(3, 2, 1, True, False)),
        (nn.AvgPool3d(2, divisor_override=5), torch.nn.AvgPool3d(2, divisor_override=5)),
    ]:
        assert repr(mine) == repr(theirs)
        compare(mine, theirs, x, backend)


def test_pool3d_errors():
    with pytest.raises(ShapeError, match=r"4-D \(C, D, H, W\) or 5-D"):
        F.max_pool3d(mt.zeros(2, 3, 3), 2)
    with pytest.raises(ShapeError, match=r"4-D \(C, D, H, W\) or 5-D"):
        F.adaptive_avg_pool3d(mt.zeros(3, 3), 2)
    with pytest.raises(ValueError, match="at most half"):
        F.avg_pool3d(mt.zeros(1, 1, 4, 4, 4), 2, padding=(0, 2, 0))
    with pytest.raises(ValueError, match="at most half"):
        F.max_pool3d(mt.zeros(1, 1, 9, 9, 9), 3, 1, 2, 2)  # torch: half the undilated kernel
    with pytest.raises(ShapeError, match="output size would be"):
        F.max_pool3d(mt.zeros(1, 1, 4, 1, 4), 2)
    with pytest.raises(ShapeError, match="tuple of 3"):
        F.adaptive_max_pool3d(mt.zeros(1, 1, 4, 4, 4), (2, 2))


PADS3D = [
    ("constant", (1, 2, 0, 1, 2, 1), 5), ("constant", (-1, 1, 2, -1, 1, 0), 4),
    ("reflect", (1, 2, 2, 0, 1, 1), 5), ("reflect", (2, 1, 1, 2, 0, 2), 4),
    ("replicate", (3, 1, 0, 2, 2, 1), 5), ("replicate", (1, 0, 2, 1, 1, 3), 4),
    ("circular", (1, 2, 2, 1, 0, 3), 5), ("circular", (-1, 2, 1, 0, 2, -1), 4),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("mode, pads, dims", PADS3D)
def test_pad_3d_matches_torch(backend, mode, pads, dims):
    x = RNG.standard_normal((2, 2, 3, 4, 3)[5 - dims :])
    compare(lambda a: F.pad(a, pads, mode), lambda a: TF.pad(a, pads, mode), [x], backend)
    if mode == "constant":
        compare(lambda a: F.pad(a, pads, value=1.5), lambda a: TF.pad(a, pads, value=1.5), [x], backend)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_pad_3d_modules_match_torch(backend):
    x = [RNG.standard_normal((1, 2, 3, 4, 3))]
    pads = (1, 2, 0, 1, 2, 1)
    for mine, theirs in [
        (nn.ConstantPad3d(pads, -2.0), torch.nn.ConstantPad3d(pads, -2.0)), (nn.ZeroPad3d(1), torch.nn.ZeroPad3d(1)),
        (nn.ReflectionPad3d(pads), torch.nn.ReflectionPad3d(pads)), (nn.ReplicationPad3d(2), torch.nn.ReplicationPad3d(2)),
        (nn.CircularPad3d(pads), torch.nn.CircularPad3d(pads)),
    ]:
        assert repr(mine) == repr(theirs)
        compare(mine, theirs, x, backend)
        compare(mine, theirs, [x[0][0]], backend)  # unbatched


def test_pad_errors_for_unsupported_dims():
    for mode in ("reflect", "replicate", "circular"):
        with pytest.raises(ShapeError, match="size 6 is not supported for a 3-D input"):
            F.pad(mt.zeros(3, 3, 3), (1,) * 6, mode)
        with pytest.raises(ShapeError, match="size 2 is not supported for a 5-D input"):
            F.pad(mt.zeros(1, 1, 3, 3, 3), (1, 1), mode)
    with pytest.raises(ShapeError, match="expected a 4-D or 5-D input"):
        nn.CircularPad3d(1)(mt.zeros(3, 3, 3))
    assert F.pad(mt.zeros(3, 3, 3), (1,) * 6).shape == (5, 5, 5)  # constant pads any dims


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_batchnorm3d_matches_torch(backend):
    mine, theirs = nn.BatchNorm3d(3, momentum=0.3, backend=backend, dtype=mt.float64), torch.nn.BatchNorm3d(3, momentum=0.3)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(RNG.standard_normal(3)))
        theirs.bias.copy_(torch.tensor(RNG.standard_normal(3)))
    module_compare(mine, theirs, (2, 3, 2, 3, 2), backend)  # training: batch stats, running stats updated
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(getattr(mine, name).to_numpy(), getattr(theirs, name).numpy(), rtol=1e-12)
    mine.eval(), theirs.eval()
    compare(mine, theirs, [RNG.standard_normal((2, 3, 2, 2, 3))], backend)
    with pytest.raises(ShapeError, match="5D"):
        mine(mt.zeros(3, 2, 2, 2))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_instancenorm3d_matches_torch(backend):
    mine = nn.InstanceNorm3d(2, affine=True, track_running_stats=True, backend=backend, dtype=mt.float64)
    theirs = torch.nn.InstanceNorm3d(2, affine=True, track_running_stats=True)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(RNG.standard_normal(2)))
    module_compare(mine, theirs, (2, 2, 2, 3, 2), backend)
    np.testing.assert_allclose(mine.running_var.to_numpy(), theirs.running_var.numpy(), rtol=1e-12)
    mine.eval(), theirs.eval()
    compare(mine, theirs, [RNG.standard_normal((2, 2, 3, 2))], backend)  # unbatched, running stats
    plain, tplain = nn.InstanceNorm3d(2), torch.nn.InstanceNorm3d(2)
    assert repr(plain) == repr(tplain)
    compare(plain, tplain, [RNG.standard_normal((1, 2, 2, 2, 3))], backend)
    with pytest.raises(ShapeError, match=r"4-D \(unbatched\) or 5-D"):
        plain(mt.zeros(2, 3, 3))


def test_cuda_conv3d_tiny():
    if "cuda" not in BACKENDS:
        pytest.skip("no cuda backend")
    arrays = [RNG.standard_normal((1, 1, 2, 3, 3)), RNG.standard_normal((2, 1, 1, 2, 2)), RNG.standard_normal(2)]
    compare(lambda *a: F.conv3d(*a, padding=(0, 1, 0)), lambda *a: TF.conv3d(*a, padding=(0, 1, 0)), arrays, "cuda")
