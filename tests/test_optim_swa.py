"""optim.swa_utils against torch.optim.swa_utils on the same weights and data: AveragedModel's averaged parameters and
buffers over several updates (default mean, EMA and SWA through avg_fn and multi_avg_fn, use_buffers on and off),
n_averaged, state dicts, device placement; SWALR's learning rates and state dict; update_bn's running statistics;
and the argument errors."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS
from torch.optim import swa_utils as tswa

import minitensor as mt
from minitensor import nn, optim
from minitensor.optim import swa_utils as mswa
from minitensor.utils.data import DataLoader, TensorDataset

DTYPES = {"float64": torch.float64, "float32": torch.float32}


def _models(backend: str, dtype: str = "float64", conv: bool = False):
    """The same small BatchNorm network in torch and minitensor, with equal random weights."""
    if conv:
        tm = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 2), torch.nn.BatchNorm2d(3), torch.nn.ReLU())
        mm = nn.Sequential(nn.Conv2d(2, 3, 2, backend=backend), nn.BatchNorm2d(3, backend=backend), nn.ReLU())
    else:
        tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
        mm = nn.Sequential(nn.Linear(3, 4, backend=backend), nn.BatchNorm1d(4, backend=backend), nn.ReLU(),
                           nn.Linear(4, 2, backend=backend))
    tm.to(DTYPES[dtype])
    mm.to(dtype)
    _perturb(tm, mm, np.random.default_rng(0))
    return tm, mm


def _perturb(tm, mm, rng) -> None:
    """New random parameters in both models, then one training forward (moving the BatchNorm buffers)."""
    with torch.no_grad():
        for p in tm.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape))))
    mm.load_state_dict({k: v.numpy() for k, v in tm.state_dict().items()})
    shape = (6, 3) if isinstance(tm[0], torch.nn.Linear) else (4, 2, 3, 3)
    x = rng.standard_normal(shape)
    tm.train()
    mm.train()
    tm(torch.from_numpy(x).to(tm[0].weight.dtype))
    mm(mt.tensor(x, backend=mm[0].weight.backend, dtype=mm[0].weight.dtype))


def _assert_state(mstate, tstate, rtol, where="") -> None:
    assert list(mstate) == list(tstate), where
    for key, value in tstate.items():
        mine = mstate[key].to_numpy()
        assert mine.dtype == value.numpy().dtype, f"{where} {key}"
        np.testing.assert_allclose(mine, value.numpy(), rtol=rtol, atol=rtol, err_msg=f"{where} {key}")


AVERAGING = {
    "default": lambda s: {},
    "ema-avg_fn": lambda s: {"avg_fn": s.get_ema_avg_fn(0.8)},
    "ema-multi": lambda s: {"multi_avg_fn": s.get_ema_multi_avg_fn(0.8)},
    "swa-avg_fn": lambda s: {"avg_fn": s.get_swa_avg_fn()},
    "custom-avg_fn": lambda s: {"avg_fn": lambda avg, cur, n: avg * 0.25 + cur * 0.75 + n},
}


def _run(backend, kind, use_buffers, dtype="float64", updates=4, conv=False):
    tm, mm = _models(backend, dtype, conv)
    ta = tswa.AveragedModel(tm, use_buffers=use_buffers, **AVERAGING[kind](tswa))
    ma = mswa.AveragedModel(mm, use_buffers=use_buffers, **AVERAGING[kind](mswa))
    rng = np.random.default_rng(1)
    rtol = 1e-12 if dtype == "float64" else 1e-5
    _assert_state(ma.state_dict(), ta.state_dict(), rtol, "before any update")
    for step in range(updates):
        _perturb(tm, mm, rng)  # the model moves on after the copy was made, and between updates
        ta.update_parameters(tm)
        ma.update_parameters(mm)
        _assert_state(ma.state_dict(), ta.state_dict(), rtol, f"{kind} use_buffers={use_buffers} update {step + 1}")
    assert int(ma.n_averaged.item()) == updates and ma.n_averaged.dtype == np.int64
    return ta, ma


@pytest.mark.parametrize("use_buffers", [False, True], ids=["params", "buffers"])
@pytest.mark.parametrize("kind", list(AVERAGING))
@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_averaged_model_matches_torch(backend, kind, use_buffers):
    _run(backend, kind, use_buffers)


@pytest.mark.parametrize("kind", ["default", "ema-multi"])
def test_averaged_model_float32_and_conv(kind):
    _run("fast", kind, True, dtype="float32", updates=3, conv=True)


def test_swa_multi_avg_fn_matches_torch_and_rejects_integer_buffers():
    tm, mm = _models("fast")
    ta = tswa.AveragedModel(tm, multi_avg_fn=tswa.get_swa_multi_avg_fn())
    ma = mswa.AveragedModel(mm, multi_avg_fn=mswa.get_swa_multi_avg_fn())
    rng = np.random.default_rng(2)
    for _ in range(3):
        ta.update_parameters(tm)
        ma.update_parameters(mm)
        _perturb(tm, mm, rng)
    _assert_state(ma.state_dict(), ta.state_dict(), 1e-12)
    for s, model in ((tswa, tm), (mswa, mm)):  # num_batches_tracked (int64) cannot be averaged in place
        averaged = s.AveragedModel(model, multi_avg_fn=s.get_swa_multi_avg_fn(), use_buffers=True)
        averaged.update_parameters(model)
        with pytest.raises(RuntimeError):
            averaged.update_parameters(model)


def test_multi_avg_fn_gets_backend_dtype_groups_and_count():
    calls = {"torch": [], "mt": []}

    def recorder(name):
        def fn(averaged, current, n):
            calls[name].append((str(averaged[0].dtype).replace("torch.", ""), len(averaged), len(current), int(n)))
        return fn

    tm, mm = _models("simple")
    ta = tswa.AveragedModel(tm, multi_avg_fn=recorder("torch"), use_buffers=True)
    ma = mswa.AveragedModel(mm, multi_avg_fn=recorder("mt"), use_buffers=True)
    for _ in range(3):
        ta.update_parameters(tm)
        ma.update_parameters(mm)
    assert sorted(calls["mt"]) == sorted(calls["torch"]) and len(calls["mt"]) == 4


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_forward_state_dict_and_load(backend):
    """The averaged copy's forward, a torch state dict loaded by name, and the original model left untouched."""
    tm, mm = _models(backend)
    ta, ma = tswa.AveragedModel(tm), mswa.AveragedModel(mm)
    before = {k: v.to_numpy().copy() for k, v in mm.state_dict().items()}
    for _ in range(2):
        ta.update_parameters(tm)
        ma.update_parameters(mm)
        _perturb(tm, mm, np.random.default_rng(3))
    assert ma.module is not mm and isinstance(ma.module, nn.Sequential)
    assert any(not np.array_equal(before[k], v.to_numpy()) for k, v in mm.state_dict().items())
    x = np.random.default_rng(4).standard_normal((5, 3))
    ta.eval()
    ma.eval()
    np.testing.assert_allclose(ma(mt.tensor(x, backend=backend)).to_numpy(), ta(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-12)
    fresh = mswa.AveragedModel(_models(backend)[1])
    fresh.load_state_dict({k: v.numpy() for k, v in ta.state_dict().items()})
    _assert_state(fresh.state_dict(), ta.state_dict(), 0)
    assert int(fresh.n_averaged.item()) == 2


def test_device_moves_the_copy_and_counter():
    """``device`` is a backend name: the copy and n_averaged live there; updates read a model on another backend."""
    target = "cuda" if "cuda" in BACKENDS else "simple"
    tm = torch.nn.Linear(2, 2).double()
    mm = nn.Linear(2, 2, backend="fast").to("float64")
    mm.load_state_dict({k: v.numpy() for k, v in tm.state_dict().items()})
    ta, ma = tswa.AveragedModel(tm, device="cpu"), mswa.AveragedModel(mm, device=target)
    assert ma.module.weight.backend is mt.get_backend(target) and ma.n_averaged.backend is mt.get_backend(target)
    assert mm.weight.backend is mt.get_backend("fast")
    for step in range(2):
        ta.update_parameters(tm)
        ma.update_parameters(mm)
        with torch.no_grad():
            tm.weight.mul_(-1.5).add_(step)
        mm.load_state_dict({k: v.numpy() for k, v in tm.state_dict().items()})
    _assert_state(ma.state_dict(), ta.state_dict(), 1e-12)


def test_averaging_function_factories():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(4), rng.standard_normal(4)
    n = 3
    for name, args in (("get_ema_avg_fn", (0.7,)), ("get_swa_avg_fn", ())):
        want = getattr(tswa, name)(*args)(torch.from_numpy(a), torch.from_numpy(b), torch.tensor(n))
        got = getattr(mswa, name)(*args)(mt.tensor(a), mt.tensor(b), mt.tensor(n, dtype="int64"))
        np.testing.assert_allclose(got.to_numpy(), want.numpy(), rtol=1e-15)
    for name, args in (("get_ema_multi_avg_fn", (0.7,)), ("get_swa_multi_avg_fn", ())):
        tl, ml = [torch.from_numpy(a.copy())], [mt.tensor(a)]
        assert getattr(tswa, name)(*args)(tl, [torch.from_numpy(b)], n) is None
        assert getattr(mswa, name)(*args)(ml, [mt.tensor(b)], n) is None
        np.testing.assert_allclose(ml[0].to_numpy(), tl[0].numpy(), rtol=1e-14)
    ints_t, ints_m = [torch.tensor([10, -7])], [mt.tensor([10, -7], dtype="int64")]
    tswa.get_ema_multi_avg_fn(0.3)(ints_t, [torch.tensor([1, 4])], 1)
    mswa.get_ema_multi_avg_fn(0.3)(ints_m, [mt.tensor([1, 4], dtype="int64")], 1)
    assert ints_m[0].to_numpy().tolist() == ints_t[0].tolist()


def test_signatures_match_torch():
    for name in ("AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
                 "get_ema_avg_fn", "get_swa_avg_fn"):
        mine = inspect.signature(getattr(mswa, name))
        theirs = inspect.signature(getattr(tswa, name))
        assert [(p.name, p.default) for p in mine.parameters.values()] == \
               [(p.name, p.default) for p in theirs.parameters.values()], name
    assert optim.swa_utils is mswa and set(mswa.__all__) == set(tswa.__all__)


def _raises_like(make_torch, make_mt, *, contains: str) -> None:
    with pytest.raises(Exception) as theirs:
        make_torch()
    with pytest.raises(Exception) as mine:
        make_mt()
    assert type(mine.value) is type(theirs.value), (mine.value, theirs.value)
    assert contains in str(mine.value) and contains in str(theirs.value), (mine.value, theirs.value)


def _optimizers(kind: str = "SGD"):
    """Torch and minitensor optimizers with two parameter groups of different lrs."""
    t = [torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(1))]
    m = [nn.Parameter(mt.zeros(2)), nn.Parameter(mt.zeros(1))]
    groups = lambda ps: [{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.03}]  # noqa: E731
    return getattr(torch.optim, kind)(groups(t), lr=0.1), getattr(optim, kind)(groups(m), lr=0.1)


def test_errors_match_torch():
    tm, mm = _models("simple")
    _raises_like(lambda: tswa.AveragedModel(tm, avg_fn=tswa.get_swa_avg_fn(), multi_avg_fn=tswa.get_swa_multi_avg_fn()),
                 lambda: mswa.AveragedModel(mm, avg_fn=mswa.get_swa_avg_fn(), multi_avg_fn=mswa.get_swa_multi_avg_fn()),
                 contains="Only one of avg_fn and multi_avg_fn")
    for name in ("get_ema_avg_fn", "get_ema_multi_avg_fn"):
        for decay in (1.5, -0.25):
            _raises_like(lambda n=name, d=decay: getattr(tswa, n)(d), lambda n=name, d=decay: getattr(mswa, n)(d),
                         contains=str(decay))
    topt, mopt = _optimizers()
    for kwargs, value in (({"anneal_strategy": "exp"}, "exp"), ({"anneal_epochs": -1}, "-1"),
                          ({"anneal_epochs": 2.5}, "2.5"), ({"swa_lr": [0.1, 0.2, 0.3]}, "3 values")):
        args = {"swa_lr": 0.05, **kwargs}
        _raises_like(lambda a=args: tswa.SWALR(topt, **a), lambda a=args: mswa.SWALR(mopt, **a), contains=value)
    ta, ma = tswa.AveragedModel(tm), mswa.AveragedModel(mm)
    # the same parameters without buffers: the buffer sync fails
    tm = torch.nn.Sequential(tm[0], torch.nn.BatchNorm1d(4, track_running_stats=False).double(), tm[2], tm[3])
    mm = nn.Sequential(mm[0], nn.BatchNorm1d(4, track_running_stats=False).to("float64"), mm[2], mm[3])
    _raises_like(lambda: ta.update_parameters(tm), lambda: ma.update_parameters(mm), contains="shorter")


SWALR_CASES = [
    {"swa_lr": 0.05},
    {"swa_lr": 0.05, "anneal_strategy": "linear"},
    {"swa_lr": [0.2, 0.001], "anneal_epochs": 4},
    {"swa_lr": [0.2, 0.001], "anneal_epochs": 4, "anneal_strategy": "linear"},
    {"swa_lr": 0.01, "anneal_epochs": 0},
    {"swa_lr": 0.01, "anneal_epochs": 0, "anneal_strategy": "linear"},
    {"swa_lr": 0.3, "anneal_epochs": 1},
    {"swa_lr": (0.02, 0.5), "anneal_epochs": 30, "anneal_strategy": "linear"},
]


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
@pytest.mark.parametrize("kwargs", SWALR_CASES, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_swalr_lrs_match_torch(kwargs, kind):
    topt, mopt = _optimizers(kind)
    ts, ms = tswa.SWALR(topt, **kwargs), mswa.SWALR(mopt, **kwargs)
    assert ms.get_last_lr() == ts.get_last_lr()
    assert [g["swa_lr"] for g in mopt.param_groups] == [g["swa_lr"] for g in topt.param_groups]
    for step in range(25):
        topt.step()
        mopt.step()
        ts.step()
        ms.step()
        assert ms.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-15, abs=1e-17), f"step {step + 1}"
        assert [g["lr"] for g in mopt.param_groups] == ms.get_last_lr()
    if kwargs.get("anneal_epochs", 10) < 25:
        assert ms.get_last_lr() == pytest.approx([g["swa_lr"] for g in topt.param_groups], rel=1e-12)


def test_swalr_after_another_schedule_and_state_dict():
    """SWALR taking over from a decayed lr; state dict keys as torch's and an exact resume."""
    topt, mopt = _optimizers()
    tdecay, mdecay = torch.optim.lr_scheduler.ExponentialLR(topt, 0.7), optim.lr_scheduler.ExponentialLR(mopt, 0.7)
    for _ in range(3):
        topt.step()
        mopt.step()
        tdecay.step()
        mdecay.step()
    ts, ms = tswa.SWALR(topt, 0.2, anneal_epochs=6), mswa.SWALR(mopt, 0.2, anneal_epochs=6)
    assert set(ms.state_dict()) == set(ts.state_dict())
    straight = []
    for _ in range(10):
        topt.step()
        mopt.step()
        ts.step()
        ms.step()
        straight.append(ms.get_last_lr())
        assert ms.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-15)
    _, first = _optimizers()
    sched = mswa.SWALR(first, 0.2, anneal_epochs=6, anneal_strategy="linear")
    for _ in range(3):
        sched.step()
    saved_opt, saved = first.state_dict(), sched.state_dict()
    assert saved["_anneal_strategy"] == "linear" and "anneal_func" not in saved
    _, second = _optimizers()
    resumed = mswa.SWALR(second, 0.2, anneal_epochs=6)  # cos until the state says linear
    second.load_state_dict(saved_opt)
    resumed.load_state_dict(saved)
    for _ in range(5):
        sched.step()
        resumed.step()
        assert resumed.get_last_lr() == sched.get_last_lr()
    assert resumed.anneal_func(0.25) == 0.25


def _bn_data(rng, conv: bool, n: int = 4):
    shape = (5, 2, 4, 4) if conv else (7, 3)
    return [rng.standard_normal(shape) * 2 + 1 for _ in range(n)]


def _bn_models(backend, conv: bool):
    tm, mm = _models(backend, conv=conv)
    tm[1].momentum = mm[1].momentum = 0.3
    tm.eval()
    mm.eval()
    return tm, mm


@pytest.mark.parametrize("batches", ["tensors", "pairs", "loader"])
@pytest.mark.parametrize("conv", [False, True], ids=["BatchNorm1d", "BatchNorm2d"])
@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_update_bn_matches_torch(backend, conv, batches):
    tm, mm = _bn_models(backend, conv)
    data = _bn_data(np.random.default_rng(6), conv)
    targets = [np.arange(len(x)) for x in data]
    if batches == "tensors":
        tl, ml = [torch.from_numpy(x) for x in data], [mt.tensor(x, backend=backend) for x in data]
    elif batches == "pairs":
        tl = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in zip(data, targets)]
        ml = [(mt.tensor(x, backend=backend), mt.tensor(y, backend=backend)) for x, y in zip(data, targets)]
    else:
        x, y = np.concatenate(data), np.concatenate(targets)
        tl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)), 5)
        ml = DataLoader(TensorDataset(mt.tensor(x, backend=backend), mt.tensor(y, backend=backend)), 5)
    tswa.update_bn(tl, tm)
    mswa.update_bn(ml, mm)
    _assert_state(mm.state_dict(), tm.state_dict(), 1e-12, f"{batches}")
    assert mm[1].momentum == 0.3 and not mm.training and not mm[1].training
    assert int(mm[1].num_batches_tracked.item()) == len(tl)


def test_update_bn_device_training_mode_and_no_batchnorm():
    """``device`` moves each batch; a training model stays in training; momentum None stays None; no BatchNorm:
    nothing changes."""
    tm, mm = _bn_models("simple", conv=False)
    tm[1].momentum = mm[1].momentum = None
    tm.train()
    mm.train()
    data = _bn_data(np.random.default_rng(7), conv=False, n=3)
    tswa.update_bn([[torch.from_numpy(x)] for x in data], tm, device="cpu")
    mswa.update_bn([[mt.tensor(x, backend="fast")] for x in data], mm, device="simple")
    _assert_state(mm.state_dict(), tm.state_dict(), 1e-12)
    assert mm[1].momentum is None and mm.training and mm[3].training
    plain = nn.Sequential(nn.Linear(3, 2)).eval()
    before = plain[0].weight.to_numpy().copy()
    mswa.update_bn([object()], plain)  # returns before touching the loader
    assert not plain.training and np.array_equal(plain[0].weight.to_numpy(), before)


def test_averaged_model_then_update_bn():
    """The usual SWA ending: update_bn on the AveragedModel itself."""
    tm, mm = _models("fast")
    ta, ma = tswa.AveragedModel(tm), mswa.AveragedModel(mm)
    rng = np.random.default_rng(8)
    for _ in range(3):
        ta.update_parameters(tm)
        ma.update_parameters(mm)
        _perturb(tm, mm, rng)
    data = _bn_data(rng, conv=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tswa.update_bn([torch.from_numpy(x) for x in data], ta)
        mswa.update_bn([mt.tensor(x) for x in data], ma)
    _assert_state(ma.state_dict(), ta.state_dict(), 1e-12)
