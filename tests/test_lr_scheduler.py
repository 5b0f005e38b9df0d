"""Learning-rate schedulers against torch.optim.lr_scheduler: lr (and momentum) sequences over many steps, state
dicts (same keys, exact resume) and argument checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch.optim import lr_scheduler as tsched

import minitensor as mt
from minitensor import nn, optim
from minitensor.optim import lr_scheduler as msched

STEPS = 40


def _optimizers(kind: str = "SGD", **kwargs):
    """A torch and a minitensor optimizer with two parameter groups of different lrs."""
    t = [torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(1))]
    m = [nn.Parameter(mt.zeros(2)), nn.Parameter(mt.zeros(1))]
    groups = lambda ps: [{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.03}]  # noqa: E731
    return getattr(torch.optim, kind)(groups(t), lr=0.1, **kwargs), getattr(optim, kind)(groups(m), lr=0.1, **kwargs)


def _lambda(epoch: int) -> float:
    return 1.0 / (epoch + 1) + 0.1 * math.sin(epoch)


SCHEDULES = {
    "StepLR": lambda o, s: s.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda o, s: s.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3),
    "ExponentialLR": lambda o, s: s.ExponentialLR(o, gamma=0.93),
    "CosineAnnealingLR": lambda o, s: s.CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    "CosineAnnealingLR-long": lambda o, s: s.CosineAnnealingLR(o, T_max=30),
    "LambdaLR": lambda o, s: s.LambdaLR(o, _lambda),
    "LambdaLR-per-group": lambda o, s: s.LambdaLR(o, [_lambda, lambda e: 0.9**e]),
    "LinearLR": lambda o, s: s.LinearLR(o),
    "LinearLR-down": lambda o, s: s.LinearLR(o, start_factor=1.0, end_factor=0.05, total_iters=13),
    "OneCycleLR": lambda o, s: s.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=STEPS + 1),
    "OneCycleLR-linear-3phase": lambda o, s: s.OneCycleLR(o, max_lr=0.8, epochs=4, steps_per_epoch=11, pct_start=0.25,
                                                        anneal_strategy="linear", three_phase=True, div_factor=10.0),
    "SequentialLR": lambda o, s: s.SequentialLR(o, [s.LinearLR(o, start_factor=0.1, total_iters=4),
                                                    s.CosineAnnealingLR(o, T_max=20)], milestones=[5]),
    "SequentialLR-3": lambda o, s: s.SequentialLR(o, [s.ExponentialLR(o, gamma=0.9), s.ExponentialLR(o, gamma=0.8),
                                                      s.StepLR(o, 4)], milestones=[3, 10]),
}


def _momenta(opt) -> list[float]:
    return [g["betas"][0] if "betas" in g else g.get("momentum", 0.0) for g in opt.param_groups]


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
@pytest.mark.parametrize("name", list(SCHEDULES))
def test_lr_sequence_matches_torch(name, kind):
    topt, mopt = _optimizers(kind, **({"momentum": 0.9} if kind == "SGD" else {}))
    ts, ms = SCHEDULES[name](topt, tsched), SCHEDULES[name](mopt, msched)
    assert ms.get_last_lr() == ts.get_last_lr()
    for step in range(STEPS):
        topt.step()
        mopt.step()
        ts.step()
        ms.step()
        np.testing.assert_allclose(ms.get_last_lr(), ts.get_last_lr(), rtol=1e-12, atol=0, err_msg=f"step {step + 1}")
        assert [g["lr"] for g in mopt.param_groups] == ms.get_last_lr()
        np.testing.assert_allclose(_momenta(mopt), _momenta(topt), rtol=1e-12)
    assert ms.last_epoch == ts.last_epoch
    assert [g["initial_lr"] for g in mopt.param_groups] == [g["initial_lr"] for g in topt.param_groups]


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_state_dict_keys_and_exact_resume(name):
    topt, mopt = _optimizers("SGD", momentum=0.9)
    ts, ms = SCHEDULES[name](topt, tsched), SCHEDULES[name](mopt, msched)
    assert set(ms.state_dict()) == set(ts.state_dict())
    straight = []
    for _ in range(STEPS):
        mopt.step()
        ms.step()
        straight.append(ms.get_last_lr())
    _, first = _optimizers("SGD", momentum=0.9)
    sched = SCHEDULES[name](first, msched)
    for _ in range(STEPS // 3):
        first.step()
        sched.step()
    saved_opt, saved_sched = first.state_dict(), sched.state_dict()
    _, second = _optimizers("SGD", momentum=0.9)
    resumed = SCHEDULES[name](second, msched)  # build the scheduler first, then load (as in PyTorch)
    second.load_state_dict(saved_opt)
    resumed.load_state_dict(saved_sched)
    for step in range(STEPS // 3, STEPS):
        second.step()
        resumed.step()
        assert resumed.get_last_lr() == straight[step], f"step {step + 1}"


def test_reduce_lr_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.8, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85, 0.7] * 2
    for kwargs in ({"patience": 2}, {"mode": "max", "factor": 0.5, "patience": 1, "cooldown": 2, "threshold_mode": "abs",
                                     "threshold": 0.01}, {"patience": 0, "min_lr": [0.05, 0.0], "eps": 1e-3}):
        topt, mopt = _optimizers()
        ts, ms = tsched.ReduceLROnPlateau(topt, **kwargs), msched.ReduceLROnPlateau(mopt, **kwargs)
        assert set(ms.state_dict()) == set(ts.state_dict())
        for value in metrics:
            ts.step(value)
            ms.step(mt.tensor(value))
            assert ms.get_last_lr() == ts.get_last_lr(), kwargs
        state = ms.state_dict()
        _, other = _optimizers()
        again = msched.ReduceLROnPlateau(other, **kwargs)
        again.load_state_dict(state)
        assert again.best == ms.best and again.num_bad_epochs == ms.num_bad_epochs


def test_lambda_state_dict_leaves_out_functions():
    class Schedule:
        def __init__(self) -> None:
            self.rate = 0.5

        def __call__(self, epoch: int) -> float:
            return self.rate**epoch

    _, opt = _optimizers()
    fn = Schedule()
    sched = msched.LambdaLR(opt, [_lambda, fn])
    state = sched.state_dict()
    assert state["lr_lambdas"] == [None, {"rate": 0.5}]
    fn.rate = 0.9
    sched.load_state_dict(state)
    assert fn.rate == 0.5 and sched.lr_lambdas[0] is _lambda


def test_scheduler_state_round_trips_through_save(tmp_path):
    _, opt = _optimizers()
    sched = msched.MultiStepLR(opt, milestones=[2, 2, 4])
    for _ in range(3):
        sched.step()
    mt.save({"scheduler": sched.state_dict(), "optimizer": opt.state_dict()}, tmp_path / "s.safetensors")
    loaded = mt.load(tmp_path / "s.safetensors")
    _, other = _optimizers()
    again = msched.MultiStepLR(other, milestones=[1])
    other.load_state_dict(loaded["optimizer"])
    again.load_state_dict(loaded["scheduler"])
    for _ in range(3):
        sched.step()
        again.step()
        assert again.get_last_lr() == sched.get_last_lr()
    assert again._get_closed_form_lr() == sched._get_closed_form_lr()


def test_bad_arguments():
    _, opt = _optimizers()
    with pytest.raises(TypeError, match="is not an Optimizer"):
        msched.StepLR(object(), 2)  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="initial_lr"):
        msched.StepLR(opt, 2, last_epoch=3)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        msched.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        msched.ReduceLROnPlateau(opt, factor=1.5)
    with pytest.raises(ValueError, match="total_steps OR"):
        msched.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas"):
        msched.LambdaLR(opt, [_lambda])
    with pytest.raises(ValueError, match="one more than the number of milestone"):
        msched.SequentialLR(opt, [msched.ExponentialLR(opt, 0.9)], milestones=[3])
    with pytest.raises(ValueError, match="T_max"):
        msched.CosineAnnealingLR(opt, T_max=0)
    one_cycle = msched.OneCycleLR(opt, max_lr=1.0, total_steps=2)
    one_cycle.step()
    one_cycle.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        one_cycle.step()


def test_trainer_steps_reduce_lr_on_plateau_with_the_loss():
    from minitensor.train import Trainer

    model = nn.Linear(2, 1, backend="simple", dtype="float64")
    opt = optim.SGD(model.parameters(), lr=1e-3)
    sched = msched.ReduceLROnPlateau(opt, mode="max", patience=0)  # "max": every decrease of the loss is bad
    batches = [(np.ones((2, 2)), np.full((2, 1), 5.0))]
    Trainer(model, nn.functional.mse_loss, opt, metrics=(), scheduler=sched).fit(batches, epochs=3, progress=False)
    assert sched.last_epoch == 3 and opt.param_groups[0]["lr"] == pytest.approx(1e-5, rel=1e-12)


def test_step_with_an_epoch_uses_the_closed_form_like_torch():
    topt, mopt = _optimizers()
    ts, ms = tsched.StepLR(topt, step_size=2, gamma=0.5), msched.StepLR(mopt, step_size=2, gamma=0.5)
    topt.step()
    mopt.step()
    with pytest.warns(UserWarning, match="deprecated"):
        ts.step(5)
    with pytest.warns(UserWarning, match="deprecated"):
        ms.step(5)
    assert ms.get_last_lr() == ts.get_last_lr() and ms.last_epoch == 5
