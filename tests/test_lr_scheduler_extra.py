"""ConstantLR, MultiplicativeLR, PolynomialLR, CosineAnnealingWarmRestarts, CyclicLR and ChainedScheduler against
torch.optim.lr_scheduler: lr (and momentum) sequences, get_last_lr, state dicts (same keys, exact resume), epochs
passed to step(), and argument checks."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import torch
from torch.optim import lr_scheduler as tsched

import minitensor as mt
from minitensor import nn, optim
from minitensor.optim import lr_scheduler as msched

STEPS = 30


def _optimizers(kind: str = "SGD", **kwargs):
    """A torch and a minitensor optimizer with two parameter groups of different lrs."""
    t = [torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(1))]
    m = [nn.Parameter(mt.zeros(2)), nn.Parameter(mt.zeros(1))]
    groups = lambda ps: [{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.03}]  # noqa: E731
    return getattr(torch.optim, kind)(groups(t), lr=0.1, **kwargs), getattr(optim, kind)(groups(m), lr=0.1, **kwargs)


class Halving:
    """A stateful scale function (a callable object: its __dict__ goes into the state dict)."""

    def __init__(self) -> None:
        self.base = 0.5

    def __call__(self, x: float) -> float:
        return self.base ** (x / 4)


SCHEDULES = {
    "ConstantLR": lambda o, s: s.ConstantLR(o),
    "ConstantLR-long": lambda o, s: s.ConstantLR(o, factor=0.2, total_iters=12),
    "MultiplicativeLR": lambda o, s: s.MultiplicativeLR(o, lambda e: 0.95 if e % 3 else 1.01),
    "MultiplicativeLR-per-group": lambda o, s: s.MultiplicativeLR(o, [lambda e: 0.9, lambda e: 1.0 - 0.01 * e]),
    "PolynomialLR": lambda o, s: s.PolynomialLR(o, total_iters=20, power=2.0),
    "PolynomialLR-linear": lambda o, s: s.PolynomialLR(o),
    "CosineAnnealingWarmRestarts": lambda o, s: s.CosineAnnealingWarmRestarts(o, T_0=7, eta_min=0.001),
    "CosineAnnealingWarmRestarts-mult": lambda o, s: s.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2),
    "CyclicLR": lambda o, s: s.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.05], step_size_up=4),
    "CyclicLR-triangular2": lambda o, s: s.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=3,
                                                    step_size_down=5, mode="triangular2", base_momentum=0.7,
                                                    max_momentum=[0.95, 0.9]),
    "CyclicLR-exp_range": lambda o, s: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=5, mode="exp_range",
                                                  gamma=0.97),
    "CyclicLR-scale_fn": lambda o, s: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=Halving(),
                                                 scale_mode="iterations"),
    "ChainedScheduler": lambda o, s: s.ChainedScheduler([s.ConstantLR(o, factor=0.5, total_iters=4),
                                                         s.ExponentialLR(o, gamma=0.9)]),
    "ChainedScheduler-3": lambda o, s: s.ChainedScheduler([s.PolynomialLR(o, total_iters=10),
                                                           s.MultiplicativeLR(o, lambda e: 0.97),
                                                           s.StepLR(o, 4, gamma=0.5)], optimizer=o),
}


def _momenta(opt) -> list[float]:
    return [g["betas"][0] if "betas" in g else g.get("momentum", 0.0) for g in opt.param_groups]


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
@pytest.mark.parametrize("name", list(SCHEDULES))
def test_lr_sequence_matches_torch(name, kind):
    topt, mopt = _optimizers(kind, **({"momentum": 0.9} if kind == "SGD" else {}))
    ts, ms = SCHEDULES[name](topt, tsched), SCHEDULES[name](mopt, msched)
    assert ms.get_last_lr() == ts.get_last_lr()
    assert _momenta(mopt) == _momenta(topt)
    for step in range(STEPS):
        topt.step()
        mopt.step()
        ts.step()
        ms.step()
        np.testing.assert_allclose(ms.get_last_lr(), ts.get_last_lr(), rtol=1e-13, atol=0, err_msg=f"step {step + 1}")
        assert [g["lr"] for g in mopt.param_groups] == ms.get_last_lr()
        np.testing.assert_allclose(_momenta(mopt), _momenta(topt), rtol=1e-13, err_msg=f"step {step + 1}")
    assert [g["initial_lr"] for g in mopt.param_groups] == [g["initial_lr"] for g in topt.param_groups]
    if not name.startswith("Chained"):
        assert ms.last_epoch == ts.last_epoch


def test_cyclic_momentum_cycles_between_its_bounds():
    """The momentum falls while the lr rises and returns to max_momentum with the lr at base_lr (SGD's momentum,
    Adam's beta1 with beta2 kept)."""
    for kind in ("SGD", "Adam"):
        _, opt = _optimizers(kind, **({"momentum": 0.5} if kind == "SGD" else {}))
        sched = msched.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=2, base_momentum=0.8, max_momentum=0.9)
        seen = [(sched.get_last_lr()[0], _momenta(opt)[0])]
        for _ in range(4):
            sched.step()
            seen.append((sched.get_last_lr()[0], _momenta(opt)[0]))
        np.testing.assert_allclose(seen, [(0.01, 0.9), (0.055, 0.85), (0.1, 0.8), (0.055, 0.85), (0.01, 0.9)])
        if kind == "Adam":
            assert opt.param_groups[0]["betas"][1] == 0.999
        assert opt.param_groups[1]["max_momentum"] == 0.9 and opt.param_groups[1]["base_momentum"] == 0.8


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_state_dict_keys_and_exact_resume(name):
    topt, mopt = _optimizers("SGD", momentum=0.9)
    ts, ms = SCHEDULES[name](topt, tsched), SCHEDULES[name](mopt, msched)
    assert set(ms.state_dict()) == set(ts.state_dict())
    straight = []
    for _ in range(STEPS):
        mopt.step()
        ms.step()
        straight.append((ms.get_last_lr(), _momenta(mopt)))
    _, first = _optimizers("SGD", momentum=0.9)
    sched = SCHEDULES[name](first, msched)
    for _ in range(STEPS // 3):
        first.step()
        sched.step()
    saved_opt, saved_sched = first.state_dict(), sched.state_dict()
    if name == "CyclicLR-scale_fn":
        assert saved_sched["_scale_fn_custom"] == {"base": 0.5}
    _, second = _optimizers("SGD", momentum=0.9)
    resumed = SCHEDULES[name](second, msched)  # build the scheduler first, then load (as in PyTorch)
    second.load_state_dict(saved_opt)
    resumed.load_state_dict(saved_sched)
    for step in range(STEPS // 3, STEPS):
        second.step()
        resumed.step()
        assert (resumed.get_last_lr(), _momenta(second)) == straight[step], f"step {step + 1}"


def test_cyclic_scale_fn_object_state_is_restored():
    _, opt = _optimizers()
    fn = Halving()
    sched = msched.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=fn, cycle_momentum=False)
    state = sched.state_dict()
    fn.base = 0.9
    sched.load_state_dict(state)
    assert fn.base == 0.5 and sched.scale_fn(4.0) == 0.5 and "_scale_fn_ref" not in state
    plain = msched.CyclicLR(opt, base_lr=0.01, max_lr=0.1, mode="exp_range", gamma=0.5, cycle_momentum=False)
    saved = plain.state_dict()
    assert saved["_scale_fn_custom"] is None and "_scale_fn_ref" not in saved
    plain.load_state_dict(saved)
    assert plain.scale_fn(2) == 0.25


@pytest.mark.parametrize("name, epochs", [
    ("ConstantLR", [3, 7, 2]), ("PolynomialLR", [4, 25, 1]),
    ("CosineAnnealingWarmRestarts-mult", [0.5, 2.25, 8, 20.5, 3]), ("CosineAnnealingWarmRestarts", [9, 1.5, 15]),
])
def test_step_with_an_epoch_matches_torch(name, epochs):
    topt, mopt = _optimizers()
    ts, ms = SCHEDULES[name](topt, tsched), SCHEDULES[name](mopt, msched)
    warns = not name.startswith("Cosine")  # SGDR takes (fractional) epochs without a warning, as in PyTorch
    topt.step()
    mopt.step()
    for epoch in epochs:
        if warns:
            with pytest.warns(UserWarning, match="deprecated"):
                ts.step(epoch)
            with pytest.warns(UserWarning, match="deprecated"):
                ms.step(epoch)
        else:
            ts.step(epoch)
            ms.step(epoch)
        assert ms.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-13, abs=0)
        assert ms.last_epoch == ts.last_epoch
    if not warns:
        assert (ms.T_cur, ms.T_i) == (ts.T_cur, ts.T_i)


@pytest.mark.parametrize("name", ["ConstantLR", "MultiplicativeLR", "PolynomialLR", "CosineAnnealingWarmRestarts",
                                  "CyclicLR", "ChainedScheduler"])
def test_signatures_match_torch(name):
    theirs = inspect.signature(getattr(tsched, name).__init__).parameters.values()
    mine = inspect.signature(getattr(msched, name).__init__).parameters.values()
    assert [(p.name, p.kind, p.default) for p in mine] == [(p.name, p.kind, p.default) for p in theirs]
    assert name in msched.__all__


def test_inside_a_compiled_step():
    """A scheduler stepped inside a compiled step is host work that runs again on every replay."""
    p = nn.Parameter(mt.tensor([1.0, -2.0], backend="fast", dtype="float64"))
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    sched = msched.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=3)

    @mt.compile
    def step(x: mt.Tensor) -> None:
        opt.zero_grad()
        ((p * x) ** 2).sum().backward()
        opt.step()
        sched.step()

    lrs = []
    for _ in range(7):
        step(mt.tensor([1.0, 0.5], backend="fast", dtype="float64"))
        lrs.append(sched.get_last_lr()[0])
    np.testing.assert_allclose(lrs, [0.04, 0.07, 0.1, 0.07, 0.04, 0.01, 0.04])
    assert opt.param_groups[0]["momentum"] == pytest.approx(0.9 - 0.1 / 3)  # epoch 7: a third of the way up


def test_bad_arguments():
    _, opt = _optimizers()
    with pytest.raises(ValueError, match="Constant multiplicative factor expected to be between 0 and 1, got 1.5"):
        msched.ConstantLR(opt, factor=1.5)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        msched.MultiplicativeLR(opt, [lambda e: 1.0])
    with pytest.raises(TypeError, match="lr_lambda should be a function, but got float"):
        msched.MultiplicativeLR(opt, 0.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        msched.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="Expected integer T_mult >= 1, but got 0"):
        msched.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=0)
    with pytest.raises(ValueError, match="Expected float or int eta_min"):
        msched.CosineAnnealingWarmRestarts(opt, T_0=2, eta_min="0")  # type: ignore[arg-type]
    sgdr = msched.CosineAnnealingWarmRestarts(opt, T_0=2)
    with pytest.raises(ValueError, match="Expected non-negative epoch, but got -1"):
        sgdr.step(-1)
    with pytest.raises(ValueError, match="mode 'sawtooth' is invalid"):
        msched.CyclicLR(opt, base_lr=0.01, max_lr=0.1, mode="sawtooth")
    with pytest.raises(ValueError, match="max_lr must have the same length as optimizer.param_groups"):
        msched.CyclicLR(opt, base_lr=0.01, max_lr=[0.1, 0.2, 0.3])
    _, adagrad = _optimizers("Adagrad")
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        msched.CyclicLR(adagrad, base_lr=0.01, max_lr=0.1)
    with pytest.raises(ValueError, match="at least one scheduler"):
        msched.ChainedScheduler([])
    _, other = _optimizers()
    with pytest.raises(ValueError, match="belong to the same optimizer"):
        msched.ChainedScheduler([msched.ConstantLR(opt), msched.ConstantLR(other)])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        msched.ChainedScheduler([msched.ReduceLROnPlateau(opt)])
    assert math.isclose(msched.PolynomialLR(other, total_iters=4)._get_closed_form_lr()[0], 0.1)
