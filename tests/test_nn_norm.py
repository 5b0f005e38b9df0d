"""Normalization against PyTorch: F.layer_norm/group_norm/rms_norm/batch_norm/normalize/cosine_similarity and the
LayerNorm/GroupNorm/RMSNorm/BatchNorm Modules with the same weights and inputs: forward values, input, weight and
bias gradients, running statistics over several training steps, eval mode, reprs and state_dict names (a torch
state dict loads). Dropout's contract is here too. The bulk runs on the CPU backends; a few tiny cases on cuda."""

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

RNG = np.random.default_rng(31)
CUDA = [b for b in BACKENDS if b == "cuda"]


def _t(a, dtype="float64"):
    return torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True)


def _m(a, backend, dtype="float64"):
    return mt.tensor(a, backend=backend, dtype=dtype, requires_grad=True)


def compare_fn(name, backend, arrays, *args, dtype="float64", rtol=1e-10, atol=1e-12, **kw):
    """F.<name>(*tensors, *args, **kw) against torch's; every tensor argument's gradient compared too (None skips)."""
    tt = [None if a is None else _t(a, dtype) for a in arrays]
    expected = getattr(TF, name)(*tt, *args, **kw)
    upstream = RNG.standard_normal(tuple(expected.shape))
    (expected * torch.tensor(upstream, dtype=expected.dtype)).sum().backward()
    mm = [None if a is None else _m(a, backend, dtype) for a in arrays]
    got = getattr(F, name)(*mm, *args, **kw)
    assert got.shape == tuple(expected.shape) and got.dtype == np.dtype(dtype)
    (got * mt.tensor(upstream, backend=backend, dtype=dtype)).sum().backward()
    np.testing.assert_allclose(got.to_numpy(), expected.detach().numpy(), rtol=rtol, atol=atol)
    for mine, theirs in zip(mm, tt):
        if mine is not None:
            np.testing.assert_allclose(mine.grad.to_numpy(), theirs.grad.numpy(), rtol=rtol, atol=atol)


# --- functional ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("shape", [(4,), (3, 2)])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(backend, shape, affine):
    x = RNG.standard_normal((2, 3) + shape) * 2 + 1
    w, b = (RNG.standard_normal(shape), RNG.standard_normal(shape)) if affine else (None, None)
    tx, tw, tb = _t(x), None if w is None else _t(w), None if b is None else _t(b)
    expected = TF.layer_norm(tx, shape, tw, tb, eps=1e-5)
    up = RNG.standard_normal(expected.shape)
    (expected * torch.tensor(up)).sum().backward()
    mx, mw, mb = _m(x, backend), None if w is None else _m(w, backend), None if b is None else _m(b, backend)
    got = F.layer_norm(mx, shape, mw, mb, eps=1e-5)
    (got * mt.tensor(up, backend=backend)).sum().backward()
    np.testing.assert_allclose(got.to_numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    for mine, theirs in ((mx, tx), (mw, tw), (mb, tb)):
        if mine is not None:
            np.testing.assert_allclose(mine.grad.to_numpy(), theirs.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_layer_norm_float32_and_errors():
    compare_fn("layer_norm", "fast", [RNG.standard_normal((3, 5))], (5,), dtype="float32", rtol=1e-5, atol=1e-5)
    with pytest.raises(ShapeError, match="normalized_shape"):
        F.layer_norm(mt.zeros(2, 3), (4,))
    with pytest.raises(ShapeError, match="weight"):
        F.layer_norm(mt.zeros(2, 3), 3, mt.ones(2))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("shape", [(4,), (3, 2)])
def test_rms_norm(backend, shape):
    x = RNG.standard_normal((2,) + shape)
    compare_fn("rms_norm", backend, [x], shape)  # eps=None: finfo(float64).eps
    compare_fn("rms_norm", backend, [x], shape, eps=0.5)
    tx, tw = _t(x), _t(RNG.standard_normal(shape))
    expected = TF.rms_norm(tx, shape, tw)
    expected.sum().backward()
    mx, mw = _m(x, backend), _m(tw.detach().numpy(), backend)
    got = F.rms_norm(mx, shape, mw)
    got.sum().backward()
    np.testing.assert_allclose(got.to_numpy(), expected.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(mw.grad.to_numpy(), tw.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(mx.grad.to_numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_rms_norm_float32_default_eps():
    x = RNG.standard_normal((2, 3)) * 1e-4  # eps = finfo(float32).eps matters at this scale
    compare_fn("rms_norm", "fast", [x], (3,), dtype="float32", rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("shape", "groups"), [((2, 4, 3), 2), ((2, 6, 2, 2), 3), ((3, 4), 4), ((2, 4, 3), 1)])
def test_group_norm(backend, shape, groups):
    x = RNG.standard_normal(shape) * 3
    c = shape[1]
    tx, tw, tb = _t(x), _t(RNG.standard_normal(c)), _t(RNG.standard_normal(c))
    expected = TF.group_norm(tx, groups, tw, tb)
    up = RNG.standard_normal(shape)
    (expected * torch.tensor(up)).sum().backward()
    mx, mw, mb = _m(x, backend), _m(tw.detach().numpy(), backend), _m(tb.detach().numpy(), backend)
    got = F.group_norm(mx, groups, mw, mb)
    (got * mt.tensor(up, backend=backend)).sum().backward()
    np.testing.assert_allclose(got.to_numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    for mine, theirs in ((mx, tx), (mw, tw), (mb, tb)):
        np.testing.assert_allclose(mine.grad.to_numpy(), theirs.grad.numpy(), rtol=1e-10, atol=1e-12)
    compare_fn("group_norm", backend, [x], groups, eps=0.1)
    with pytest.raises(ShapeError, match="groups"):
        F.group_norm(mt.zeros(2, 5), 2)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 2), (2, 3, 2, 2)])
def test_batch_norm_functional(backend, shape):
    x = RNG.standard_normal(shape) * 2 + 1
    rm, rv = RNG.standard_normal(3), RNG.random(3) + 0.5
    w, b = RNG.standard_normal(3), RNG.standard_normal(3)
    for training in (True, False):
        trm, trv = torch.tensor(rm), torch.tensor(rv)
        tx, tw, tb = _t(x), _t(w), _t(b)
        expected = TF.batch_norm(tx, trm, trv, tw, tb, training=training, momentum=0.3, eps=1e-3)
        up = RNG.standard_normal(shape)
        (expected * torch.tensor(up)).sum().backward()
        mrm, mrv = mt.tensor(rm, backend=backend), mt.tensor(rv, backend=backend)
        mx, mw, mb = _m(x, backend), _m(w, backend), _m(b, backend)
        got = F.batch_norm(mx, mrm, mrv, mw, mb, training=training, momentum=0.3, eps=1e-3)
        (got * mt.tensor(up, backend=backend)).sum().backward()
        np.testing.assert_allclose(got.to_numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
        for mine, theirs in ((mx, tx), (mw, tw), (mb, tb)):
            np.testing.assert_allclose(mine.grad.to_numpy(), theirs.grad.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(mrm.to_numpy(), trm.numpy(), rtol=1e-12)
        np.testing.assert_allclose(mrv.to_numpy(), trv.numpy(), rtol=1e-12)
    compare_fn("batch_norm", backend, [x], None, None, training=True)  # no running stats, no affine
    with pytest.raises(ValueError, match="more than 1 value"):
        F.batch_norm(mt.zeros(1, 3), None, None, training=True)
    with pytest.raises(ValueError, match="running_mean"):
        F.batch_norm(mt.zeros(2, 3), None, None)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("p", "dim"), [(2.0, 1), (1.0, 0), (3.0, -1)])
def test_normalize(backend, p, dim):
    x = RNG.standard_normal((3, 4))
    x[1] = 0.0  # a zero row: the eps clamp, torch's zero gradient of the norm
    compare_fn("normalize", backend, [x], p, dim)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_cosine_similarity(backend):
    x1, x2 = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    x1[2] = 0.0  # zero vector: norm clamped to eps
    x2[1] *= 1e-9  # a norm under eps
    compare_fn("cosine_similarity", backend, [x1, x2])
    compare_fn("cosine_similarity", backend, [x1, x2], dim=0, eps=0.5)
    compare_fn("cosine_similarity", backend, [x1, RNG.standard_normal((1, 4))])  # broadcast
    compare_fn("cosine_similarity", backend, [RNG.standard_normal((2, 3, 2)), RNG.standard_normal((2, 3, 2))], dim=-1)
    compare_fn("cosine_similarity", "fast", [x1, x2], dtype="float32", rtol=1e-5, atol=1e-6)
    with pytest.raises(ShapeError, match="broadcast"):
        F.cosine_similarity(mt.zeros(2, 3), mt.zeros(2, 4))


@pytest.mark.parametrize("backend", CUDA)
def test_functional_cuda(backend):
    x = RNG.standard_normal((2, 4))
    compare_fn("layer_norm", backend, [x], (4,))
    compare_fn("group_norm", backend, [x.reshape(2, 4, 1)], 2)
    compare_fn("cosine_similarity", backend, [x, RNG.standard_normal((2, 4))])


# --- Modules ---


def _copy_params(mine, theirs, backend):
    """Give both modules the same random parameters (through torch's state dict, loaded into minitensor's)."""
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.tensor(RNG.standard_normal(tuple(p.shape))))
    mine.load_state_dict({k: mt.tensor(v.numpy(), backend=backend) for k, v in theirs.state_dict().items()})


def run_module(mine, theirs, x, backend, rtol=1e-10, atol=1e-12, dtype="float64"):
    """One forward/backward through both; compare output and the input/parameter gradients."""
    tx = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    t_out = theirs(tx)
    up = RNG.standard_normal(tuple(t_out.shape))
    (t_out * torch.tensor(up, dtype=t_out.dtype)).sum().backward()
    mx = mt.tensor(x, backend=backend, dtype=dtype, requires_grad=True)
    m_out = mine(mx)
    (m_out * mt.tensor(up, backend=backend, dtype=dtype)).sum().backward()
    np.testing.assert_allclose(m_out.to_numpy(), t_out.detach().numpy(), rtol=rtol, atol=atol)
    np.testing.assert_allclose(mx.grad.to_numpy(), tx.grad.numpy(), rtol=rtol, atol=atol)
    tparams = dict(theirs.named_parameters())
    for name, p in mine.named_parameters():
        np.testing.assert_allclose(p.grad.to_numpy(), tparams[name].grad.numpy(), rtol=rtol, atol=atol)
        p.grad = None
    theirs.zero_grad()


def check_state(mine, theirs):
    ts = theirs.state_dict()
    ms = mine.state_dict()
    assert list(ms) == list(ts)
    for k, v in ts.items():
        np.testing.assert_allclose(ms[k].to_numpy(), v.numpy(), rtol=1e-12, atol=1e-15)
        assert ms[k].dtype == np.dtype(str(v.dtype).replace("torch.", ""))


LAYERS = [
    ("LayerNorm", (4,), {}, (2, 3, 4)),
    ("LayerNorm", ((3, 4),), {"eps": 1e-3}, (2, 3, 4)),
    ("LayerNorm", (4,), {"bias": False}, (3, 4)),
    ("LayerNorm", (4,), {"elementwise_affine": False}, (3, 4)),
    ("GroupNorm", (2, 4), {}, (2, 4, 3)),
    ("GroupNorm", (1, 4), {"affine": False}, (2, 4)),
    ("GroupNorm", (3, 6), {"bias": False, "eps": 0.1}, (2, 6, 2, 1)),
    ("RMSNorm", (4,), {}, (2, 3, 4)),
    ("RMSNorm", ([3, 4],), {"eps": 1e-2}, (2, 3, 4)),
    ("RMSNorm", (4,), {"elementwise_affine": False}, (3, 4)),
]


@pytest.mark.parametrize(("name", "args", "kw", "shape"), LAYERS, ids=[f"{n}{a}{k}" for n, a, k, _ in LAYERS])
@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_norm_layers(backend, name, args, kw, shape):
    theirs = getattr(torch.nn, name)(*args, **kw, dtype=torch.float64)
    mine = getattr(nn, name)(*args, **kw, device=backend, dtype="float64")
    assert repr(mine) == repr(theirs)
    check_state(mine, theirs)  # default init: ones / zeros, same names
    _copy_params(mine, theirs, backend)
    run_module(mine, theirs, RNG.standard_normal(shape) * 2, backend)
    mine.eval()
    theirs.eval()
    run_module(mine, theirs, RNG.standard_normal(shape), backend)


def test_norm_layer_float32_and_errors():
    mine, theirs = nn.LayerNorm(5), torch.nn.LayerNorm(5)
    _copy_params(mine, theirs, "fast")
    mine.float()
    theirs.float()
    run_module(mine, theirs, RNG.standard_normal((2, 5)), "fast", rtol=1e-5, atol=1e-5, dtype="float32")
    assert mine.weight.dtype == mt.float32
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(3, 4)
    with pytest.raises(ShapeError, match="GroupNorm"):
        nn.GroupNorm(2, 4)(mt.zeros(2, 6))
    with pytest.raises(ShapeError, match="normalized_shape"):
        nn.RMSNorm(3)(mt.zeros(3, 2))


BN_CASES = [
    ("BatchNorm1d", {}, (4, 3)),
    ("BatchNorm1d", {"momentum": None}, (2, 3, 2)),
    ("BatchNorm1d", {"affine": False, "eps": 1e-3}, (4, 3)),
    ("BatchNorm1d", {"track_running_stats": False}, (4, 3)),
    ("BatchNorm2d", {"momentum": 0.3}, (2, 3, 2, 2)),
    ("BatchNorm2d", {"bias": False}, (2, 3, 1, 2)),
]


@pytest.mark.parametrize(("name", "kw", "shape"), BN_CASES, ids=[f"{n}{k}" for n, k, _ in BN_CASES])
@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_batchnorm_layers(backend, name, kw, shape):
    """Three training steps (running stats, num_batches_tracked, gradients), then eval; torch's state dict loads."""
    theirs = getattr(torch.nn, name)(3, **kw, dtype=torch.float64)
    mine = getattr(nn, name)(3, **kw, device=backend, dtype="float64")
    assert repr(mine) == repr(theirs)
    check_state(mine, theirs)
    _copy_params(mine, theirs, backend)
    for _ in range(3):
        run_module(mine, theirs, RNG.standard_normal(shape) * 2 + 1, backend)
        check_state(mine, theirs)
    mine.eval()
    theirs.eval()
    run_module(mine, theirs, RNG.standard_normal(shape), backend)
    check_state(mine, theirs)  # eval does not update the statistics
    fresh = getattr(nn, name)(3, **kw, device=backend, dtype="float64").eval()
    fresh.load_state_dict({k: mt.tensor(v.numpy(), backend=backend) for k, v in theirs.state_dict().items()})
    x = RNG.standard_normal(shape)
    np.testing.assert_allclose(fresh(mt.tensor(x, backend=backend)).to_numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-10, atol=1e-12)


def test_batchnorm_float32_and_errors():
    mine, theirs = nn.BatchNorm2d(2), torch.nn.BatchNorm2d(2)
    _copy_params(mine, theirs, "fast")
    for _ in range(2):
        run_module(mine, theirs, RNG.standard_normal((2, 2, 2, 2)), "fast", rtol=1e-5, atol=1e-5, dtype="float32")
    for k, v in theirs.state_dict().items():
        np.testing.assert_allclose(mine.state_dict()[k].to_numpy(), v.numpy(), rtol=1e-5)
    with pytest.raises(ShapeError, match="4D"):
        mine(mt.zeros(2, 2))
    with pytest.raises(ShapeError, match="channels"):
        nn.BatchNorm1d(3)(mt.zeros(2, 4))
    with pytest.raises(ValueError, match="more than 1 value"):
        nn.BatchNorm1d(3)(mt.zeros(1, 3))
    bn = nn.BatchNorm1d(3)
    bn(mt.randn(4, 3))
    bn.reset_running_stats()
    assert bn.num_batches_tracked.item() == 0 and np.all(bn.running_var.to_numpy() == 1)


@pytest.mark.parametrize("backend", CUDA)
def test_layers_cuda(backend):
    for mine, theirs, shape in [
        (nn.LayerNorm(3, device=backend, dtype="float64"), torch.nn.LayerNorm(3, dtype=torch.float64), (2, 3)),
        (nn.BatchNorm1d(2, device=backend, dtype="float64"), torch.nn.BatchNorm1d(2, dtype=torch.float64), (3, 2)),
    ]:
        _copy_params(mine, theirs, backend)
        run_module(mine, theirs, RNG.standard_normal(shape), backend)
        check_state(mine, theirs)


# --- dropout ---


@pytest.mark.parametrize("backend", CPU_BACKENDS + CUDA)
def test_dropout(backend):
    x = mt.ones(20, 10, backend=backend)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert np.all(F.dropout(x, 1.0).to_numpy() == 0)
    mt.manual_seed(3)
    out = F.dropout(x, 0.25).to_numpy()
    np.testing.assert_allclose(out[out != 0], 1 / 0.75, rtol=1e-6)
    assert 0.1 < np.mean(out == 0) < 0.4
    mt.manual_seed(3)
    np.testing.assert_array_equal(F.dropout(x, 0.25).to_numpy(), out)  # reproducible from the seed
    t = mt.tensor(np.ones((4, 5)), backend=backend, requires_grad=True)
    out = F.dropout(t, 0.5)
    out.sum().backward()
    np.testing.assert_allclose(t.grad.to_numpy(), out.to_numpy())  # grad = mask / (1 - p) = out for x = 1
    y = mt.ones(4, 5, backend=backend, dtype="float64") * 2.0
    assert F.dropout(y, 0.5, inplace=True) is y and set(np.unique(y.to_numpy())) <= {0.0, 4.0}
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, 1.5)


def test_dropout_module():
    assert repr(nn.Dropout()) == repr(torch.nn.Dropout()) == "Dropout(p=0.5, inplace=False)"
    assert repr(nn.Dropout(0.2, True)) == repr(torch.nn.Dropout(0.2, True))
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(-0.1)
    drop = nn.Dropout(0.5)
    x = mt.ones(10, 10)
    assert drop.eval()(x) is x
    assert np.mean(drop.train()(x).to_numpy() == 0) > 0.2
