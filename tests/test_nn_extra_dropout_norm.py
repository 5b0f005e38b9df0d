"""Channel-wise and alpha dropout (F.dropout1d/2d/3d, alpha_dropout, feature_alpha_dropout and their Modules),
InstanceNorm1d/2d (F.instance_norm) and LocalResponseNorm against PyTorch: values, input and parameter gradients,
train/eval, running statistics, state dicts, reprs, errors and torch's warnings; statistical checks with fixed seeds
for the random ones (fraction zeroed, scaling, channel structure, alpha dropout's mean 0 / var 1). The bulk runs on
the CPU backends, one tiny case per family on every backend."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from conftest import BACKENDS, CPU_BACKENDS
from test_nn_extra_layers import X, _m, _t, compare

import minitensor as mt
from minitensor import nn
from minitensor.errors import GradientError, ShapeError
from minitensor.nn import functional as F

RNG = np.random.default_rng(4048)


# --- dropout ---


def _channel_check(out, x, p, dims):
    """Every (sample, channel) slice over ``dims`` is all zero or all x / (1 - p); returns the kept mask."""
    kept = np.all(np.isclose(out, x / (1 - p), rtol=1e-6), axis=dims)
    dropped = np.all(out == 0, axis=dims)
    assert np.all(kept ^ dropped)
    return kept


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("name", "shape", "dims"), [
    ("dropout1d", (40, 50, 3), (2,)), ("dropout1d", (2000, 3), (1,)), ("dropout2d", (40, 50, 2, 2), (2, 3)),
    ("dropout3d", (40, 50, 2, 1, 2), (2, 3, 4)), ("dropout3d", (2000, 2, 1, 2), (1, 2, 3)),
])
def test_channel_dropout_statistics(backend, name, shape, dims, recwarn):
    """Whole channels are zeroed, a fraction ~p of them (5 standard errors), the rest scaled by 1/(1-p); the
    gradient is the same mask and scale; unbatched input (dropout1d (C, L), dropout3d (C, D, H, W)) is channel-wise
    over dim 0; the draws repeat from a seed."""
    p = 0.3
    x = RNG.uniform(0.5, 1.5, shape if backend == "fast" else (shape[0] // 5, *shape[1:]))
    mx = _m(x, backend)
    mt.manual_seed(11)
    out = getattr(F, name)(mx, p)
    kept = _channel_check(out.numpy(), x, p, dims)
    n = kept.size
    assert abs((1 - kept.mean()) - p) < 5 * math.sqrt(p * (1 - p) / n)
    out.sum().backward()
    np.testing.assert_allclose(mx.grad.numpy(), np.broadcast_to(np.expand_dims(kept, dims), x.shape) / (1 - p))
    mt.manual_seed(11)
    np.testing.assert_array_equal(getattr(F, name)(mt.tensor(x, backend=backend), p).numpy(), out.numpy())
    assert not recwarn.list


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"])
def test_dropout_identity_cases(name):
    x = mt.tensor(RNG.standard_normal((2, 3, 4, 2, 2)) if name == "dropout3d" else RNG.standard_normal((2, 3, 4, 2)))
    x = x[:, :, :, 0] if name == "dropout1d" else x
    assert getattr(F, name)(x, 0.5, training=False) is x
    assert getattr(F, name)(x, 0.0, training=True) is x
    assert np.all(getattr(F, name)(x, 1.0, training=True).numpy() == 0)  # torch: x * 0, alpha forms too
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
        getattr(F, name)(x, 1.5)
    empty = mt.zeros(*(0, 3, 4, 2, 2)[: {"dropout1d": 3, "dropout2d": 4}.get(name, 5)])
    assert getattr(F, name)(empty, 0.5, True) is empty


def test_dropout_defaults_and_inplace():
    """dropout1d/2d/3d train by default, alpha_dropout/feature_alpha_dropout don't (torch's defaults)."""
    x = mt.ones(8, 16, 4)
    assert F.alpha_dropout(x) is x and F.feature_alpha_dropout(x) is x
    assert not np.all(F.dropout1d(x).numpy() == 1)
    for fn, shape in [(F.dropout1d, (6, 5)), (F.dropout1d, (4, 6, 5)), (F.dropout2d, (4, 6, 5, 2)),
                      (F.dropout3d, (6, 5, 2, 2)), (F.alpha_dropout, (6, 5)), (F.feature_alpha_dropout, (4, 6, 5))]:
        y = mt.ones(*shape)
        assert fn(y, 0.5, True, True) is y and y.shape == shape
        assert len(np.unique(y.numpy())) == 2
    y = mt.ones(3, requires_grad=True)
    with pytest.raises(GradientError):
        F.alpha_dropout(y, 0.5, True, True)


def _warnings(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn(*args)
            error = None
        except Exception as e:
            error = type(e)
    return [str(w.message) for w in caught], error


@pytest.mark.parametrize(("name", "shape"), [
    ("dropout2d", (4, 5)), ("dropout2d", (3, 4, 5)), ("dropout2d", (6,)), ("dropout2d", (2, 3, 2, 2, 2)),
    ("dropout3d", (3, 4, 5)), ("dropout3d", (6,)), ("dropout3d", ()), ("dropout3d", (2, 2, 3, 2, 2, 2)),
    ("dropout1d", (2, 3, 4, 5)), ("dropout1d", (3,)), ("dropout2d", (3, 4, 5, 6)),
])
def test_dropout_ranks_and_warnings_like_torch(name, shape):
    """Torch's accepted ranks: the same warnings (message text), errors where torch errors, channel structure."""
    x = np.ones(shape)
    mine_w, mine_e = _warnings(getattr(F, name), mt.tensor(x), 0.5)
    torch_w, torch_e = _warnings(getattr(TF, name), torch.tensor(x), 0.5)
    assert mine_w == torch_w
    assert (mine_e is None) == (torch_e is None)
    if mine_e is not None:
        assert issubclass(mine_e, ShapeError)


def test_dropout2d_3d_input_is_channelwise_over_dim_1():
    mt.manual_seed(5)
    with pytest.warns(UserWarning, match="interpreted as shape \\(N, C, L\\)"):
        out = F.dropout2d(mt.ones(30, 40, 6), 0.5).numpy()
    _channel_check(out, np.ones((30, 40, 6)), 0.5, (2,))
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        out = F.dropout2d(mt.ones(30, 40), 0.5).numpy()  # every (n, c) element is its own channel
    assert set(np.unique(out)) == {0.0, 2.0}


@pytest.mark.parametrize("name", ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"])
def test_dropout_modules(name):
    for args in [(), (0.2,), (0.2, True)]:
        assert repr(getattr(nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))
    with pytest.raises(ValueError, match="between 0 and 1, but got -0.1"):
        getattr(nn, name)(-0.1)
    module = getattr(nn, name)(0.5)
    x = mt.ones(4, 6, 3, 2, 2) if name == "Dropout3d" else mt.ones(4, 6, 3, 2) if name != "Dropout1d" else mt.ones(4, 6, 3)
    mt.manual_seed(1)
    assert len(np.unique(module(x).numpy())) == 2
    assert module.eval()(x) is x
    assert list(module.state_dict()) == []
    y = mt.ones(*x.shape)
    if name.startswith("Dropout"):
        assert getattr(nn, name)(0.5, inplace=True)(y) is y
    else:  # torch's alpha dropout modules ignore inplace
        assert getattr(nn, name)(0.5, inplace=True)(y) is not y and np.all(y.numpy() == 1)


ALPHA = 1.7580993408473766


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("p", [0.1, 0.5])
def test_alpha_dropout_keeps_selu_statistics(backend, p):
    """SELU-normalised input (selu of N(0, 1): mean 0, var 1) keeps mean 0 and var 1 within 5 standard errors;
    dropped elements take torch's value -alpha a (1 - p), kept ones a x + alpha a p (the same values as torch's);
    the gradient is a on kept elements, 0 on dropped."""
    n = 200_000 if backend == "fast" else 5000
    x = TF.selu(torch.tensor(RNG.standard_normal(n))).numpy()
    mx = _m(x, backend)
    mt.manual_seed(2)
    out = F.alpha_dropout(mx, p, training=True)
    o = out.numpy()
    a = 1.0 / math.sqrt((ALPHA**2 * p + 1) * (1 - p))
    dropped = np.isclose(o, -ALPHA * a * (1 - p), rtol=0, atol=1e-12)
    np.testing.assert_allclose(o[~dropped], a * x[~dropped] + ALPHA * a * p, rtol=1e-12)
    assert abs(dropped.mean() - p) < 5 * math.sqrt(p * (1 - p) / n)
    assert abs(o.mean()) < 5 * o.std() / math.sqrt(n) + abs(x.mean()) * 2
    se_var = math.sqrt(np.var((o - o.mean()) ** 2) / n)
    assert abs(o.var() - 1.0) < 5 * se_var + abs(x.var() - 1.0) * 2
    out.sum().backward()
    np.testing.assert_allclose(mx.grad.numpy(), np.where(dropped, 0.0, a), rtol=1e-12)
    # the two values torch produces for a constant input
    want = np.unique(TF.alpha_dropout(torch.ones(500, dtype=torch.float64), p, True).numpy())
    got = np.unique(F.alpha_dropout(mt.ones(500, dtype="float64", backend=backend), p, True).numpy())
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_feature_alpha_dropout_channelwise(backend):
    p, x = 0.4, RNG.standard_normal((30, 40, 5))
    mt.manual_seed(9)
    o = F.feature_alpha_dropout(mt.tensor(x, backend=backend), p, True).numpy()
    a = 1.0 / math.sqrt((ALPHA**2 * p + 1) * (1 - p))
    dropped = np.all(np.isclose(o, -ALPHA * a * (1 - p), atol=1e-6), axis=2)
    kept = np.all(np.isclose(o, a * x + ALPHA * a * p, atol=1e-6), axis=2)
    assert np.all(dropped ^ kept)
    assert abs(dropped.mean() - p) < 5 * math.sqrt(p * (1 - p) / dropped.size)
    with pytest.raises(ShapeError, match="at least 2 dims"):
        F.feature_alpha_dropout(mt.ones(5), 0.5, True)


# --- instance norm and local response norm ---


def _pair(cls, *args, backend, **kw):
    return getattr(nn, cls)(*args, backend=backend, dtype="float64", **kw), getattr(torch.nn, cls)(*args, **kw).double()


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("cls", "shape"), [("InstanceNorm1d", (4, 3, 5)), ("InstanceNorm1d", (3, 5)),
                                            ("InstanceNorm2d", (2, 3, 4, 3)), ("InstanceNorm2d", (3, 4, 3))])
@pytest.mark.parametrize("affine", [False, True])
def test_instance_norm_modules(backend, cls, shape, affine):
    """Training steps update tracked running stats like torch (num_batches_tracked stays 0); eval normalizes with
    them; untracked modules use the input's statistics in eval too; values and all gradients match."""
    for track in (False, True):
        mine, theirs = _pair(cls, 3, momentum=0.3, affine=affine, track_running_stats=track, backend=backend)
        assert repr(mine) == repr(theirs) and list(mine.state_dict()) == list(theirs.state_dict())
        if affine:
            with torch.no_grad():
                theirs.weight.copy_(torch.tensor(RNG.standard_normal(3)))
                theirs.bias.copy_(torch.tensor(RNG.standard_normal(3)))
        mine.load_state_dict({k: mt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
        for step in range(3):
            if step == 2:
                mine.eval()
                theirs.eval()
            x = RNG.standard_normal(shape) * 2 + 1
            compare(mine, theirs, [x], backend)
        if track:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                np.testing.assert_allclose(getattr(mine, name).numpy(), getattr(theirs, name).numpy(), rtol=1e-12)
        if affine:
            mine.weight.grad = mine.bias.grad = None
            xm, xt = _m(x, backend), _t(x)
            (mine(xm) ** 3).sum().backward()
            theirs.weight.grad = None
            theirs.bias.grad = None
            (theirs(xt) ** 3).sum().backward()
            np.testing.assert_allclose(mine.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-9)
            np.testing.assert_allclose(mine.bias.grad.numpy(), theirs.bias.grad.numpy(), rtol=1e-9)


def test_instance_norm_defaults_and_momentum_none():
    mine, theirs = nn.InstanceNorm2d(3), torch.nn.InstanceNorm2d(3)
    assert repr(mine) == repr(theirs)
    assert mine.weight is None and mine.running_mean is None and list(mine.state_dict()) == []
    mine, theirs = _pair("InstanceNorm1d", 3, momentum=None, track_running_stats=True, backend="fast")
    x = RNG.standard_normal((2, 3, 4))
    mine(mt.tensor(x))
    theirs(torch.tensor(x))
    np.testing.assert_array_equal(mine.running_mean.numpy(), theirs.running_mean.numpy())  # momentum None: no update
    assert repr(mine) == repr(theirs)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_instance_norm_functional(backend):
    x, rm, rv = RNG.standard_normal((2, 3, 5)), RNG.standard_normal(3), RNG.uniform(0.5, 2, 3)
    w, b = RNG.standard_normal(3), RNG.standard_normal(3)
    compare(lambda a, c, d: F.instance_norm(a, weight=c, bias=d, eps=1e-3),
            lambda a, c, d: TF.instance_norm(a, weight=c, bias=d, eps=1e-3), [x, w, b], backend)
    compare(lambda a: F.instance_norm(a, mt.tensor(rm, backend=backend), mt.tensor(rv, backend=backend),
                                      use_input_stats=False),
            lambda a: TF.instance_norm(a, torch.tensor(rm), torch.tensor(rv), use_input_stats=False), [x], backend)
    mine_rm, mine_rv, torch_rm, torch_rv = mt.tensor(rm), mt.tensor(rv), torch.tensor(rm), torch.tensor(rv)
    F.instance_norm(mt.tensor(x), mine_rm, mine_rv, momentum=0.2)
    TF.instance_norm(torch.tensor(x), torch_rm, torch_rv, momentum=0.2)
    np.testing.assert_allclose(mine_rm.numpy(), torch_rm.numpy(), rtol=1e-12)
    np.testing.assert_allclose(mine_rv.numpy(), torch_rv.numpy(), rtol=1e-12)


def test_instance_norm_errors_and_warning():
    with pytest.raises(ShapeError, match="2-D \\(unbatched\\) or 3-D"):
        nn.InstanceNorm1d(3)(mt.zeros(2, 3, 4, 5))
    with pytest.raises(ShapeError, match="3-D \\(unbatched\\) or 4-D"):
        nn.InstanceNorm2d(3)(mt.zeros(3, 4))
    with pytest.raises(ShapeError, match="dim=1 to match num_features \\(3\\)"):
        nn.InstanceNorm1d(3, affine=True)(mt.zeros(2, 4, 5))
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(3)(mt.zeros(2, 4, 5))
    with pytest.raises(ValueError, match="more than 1 spatial element"):
        F.instance_norm(mt.zeros(2, 3, 1))
    with pytest.raises(ValueError, match="running_mean and running_var"):
        F.instance_norm(mt.zeros(2, 3, 4), use_input_stats=False)
    with pytest.raises(ShapeError, match="running_mean must have shape"):
        F.instance_norm(mt.zeros(2, 3, 4), mt.zeros(4), mt.ones(4))
    with pytest.raises(ValueError, match="num_features"):
        nn.InstanceNorm1d(-2)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("shape", "args"), [((2, 5, 4), (3,)), ((2, 6, 3, 2), (2, 1e-2, 0.5, 2.0)),
                                             ((1, 4, 2, 2, 3), (4, 0.1)), ((2, 3, 4), (1,)), ((2, 3, 4), (7, 1.0))])
def test_local_response_norm(backend, shape, args):
    x = RNG.standard_normal(shape) * 3
    compare(lambda a: F.local_response_norm(a, *args), lambda a: TF.local_response_norm(a, *args), [x], backend)
    compare(nn.LocalResponseNorm(*args), torch.nn.LocalResponseNorm(*args), [x], backend)
    assert repr(nn.LocalResponseNorm(*args)) == repr(torch.nn.LocalResponseNorm(*args))


def test_local_response_norm_errors():
    with pytest.raises(ShapeError, match="3 or more dims"):
        F.local_response_norm(mt.zeros(2, 3), 2)
    with pytest.raises(ValueError, match="positive int"):
        F.local_response_norm(mt.zeros(2, 3, 4), 0)
    assert F.local_response_norm(mt.zeros(0, 3, 4), 2).shape == (0, 3, 4)


# --- one tiny case per family on every backend (cuda: the simulator) ---


@pytest.mark.parametrize("backend", BACKENDS)
def test_tiny_every_backend(backend):
    x = X[:1, :2, :3]
    mt.manual_seed(0)
    d = F.dropout2d(mt.ones(2, 3, 2, 2, backend=backend), 0.5).numpy()
    assert np.all((d == d[:, :, :1, :1]) & np.isin(d, (0.0, 2.0)))
    compare(nn.InstanceNorm1d(2, affine=True, backend=backend, dtype="float64"),
            torch.nn.InstanceNorm1d(2, affine=True).double(), [x], backend)
    compare(lambda a: F.local_response_norm(a, 2), lambda a: TF.local_response_norm(a, 2), [x], backend)
