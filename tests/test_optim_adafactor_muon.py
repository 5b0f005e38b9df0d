"""Adafactor and Muon against torch.optim: parameter (and state) trajectories for their options and param groups,
signatures and defaults, a small model trained with both, state dicts (torch's structure, resuming bit for bit), the
errors torch raises for bad hyperparameters, and compiled steps.

Muon's oracle: torch runs Muon's Newton-Schulz iteration in bfloat16 (minitensor has no bfloat16 and runs it in the
parameter's dtype), so trajectories are compared bit-tight against torch.optim.Muon with its iteration patched to run
in the parameter's dtype (momentum, Nesterov lerp, lr adjustment and weight decay are torch's own code), and within
bfloat16 accuracy against unpatched torch.optim.Muon.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.optim._muon as torch_muon
from conftest import BACKENDS

import minitensor as mt
from minitensor import nn, optim
from minitensor.errors import ShapeError

CPU = ["simple", "fast"]


def _grad_field(x: np.ndarray) -> np.ndarray:
    """A gradient that depends on the parameter, so trajectories differ when an update is wrong."""
    return x**3 - 0.5 * x + 0.3


def _inits(shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape) for shape in shapes]


ADAFACTOR_SHAPES = [(3, 4), (4,), (), (2, 3, 5)]  # factored 2-D and 3-D, full 1-D and 0-D second moments
MUON_SHAPES = [(3, 5), (6, 2), (4, 4)]  # wide, tall (transposed in the iteration, lr scaled by sqrt(3)), square


def _pair(name: str, kwargs: dict, shapes: list, backend: str, dtype: str, groups: bool):
    tparams = [torch.nn.Parameter(torch.tensor(a, dtype=getattr(torch, dtype))) for a in _inits(shapes)]
    mparams = [nn.Parameter(mt.tensor(a, backend=backend, dtype=dtype)) for a in _inits(shapes)]

    def grouped(params: list) -> list:
        if not groups:
            return params
        return [{"params": params[:2]}, {"params": params[2:], "lr": kwargs.get("lr", 0.01) * 0.5, "weight_decay": 0.2}]

    return tparams, mparams, getattr(torch.optim, name)(grouped(tparams), **kwargs), \
        getattr(optim, name)(grouped(mparams), **kwargs)


def _set_grads(tparams: list, mparams: list) -> None:
    for t, m in zip(tparams, mparams):
        t.grad = torch.tensor(_grad_field(t.detach().numpy()))
        m.grad = mt.tensor(_grad_field(m.to_numpy()), backend=m.backend, dtype=m.dtype)


def _trajectory(name: str, kwargs: dict, shapes: list, backend: str, dtype: str = "float64", groups: bool = False,
                steps: int = 8, rtol: float = 1e-10, atol: float = 1e-13):
    tparams, mparams, topt, mopt = _pair(name, kwargs, shapes, backend, dtype, groups)
    for step in range(steps):
        _set_grads(tparams, mparams)
        topt.step()
        mopt.step()
        for i, (t, m) in enumerate(zip(tparams, mparams)):
            where = f"{name} {kwargs} step {step + 1} parameter {i}"
            np.testing.assert_allclose(m.to_numpy(), t.detach().numpy(), rtol=rtol, atol=atol, err_msg=where)
            theirs, mine = topt.state[t], mopt.state[m]
            assert list(mine) == list(theirs), where
            for key, value in theirs.items():
                np.testing.assert_allclose(mine[key].to_numpy(), value.numpy(), rtol=rtol, atol=atol,
                                           err_msg=f"{where} {key}")
    return tparams, mparams, topt, mopt


def _newton_schulz_in_input_dtype(grad: torch.Tensor, coefficients: tuple, steps: int, eps: float) -> torch.Tensor:
    """Muon's quintic Newton-Schulz iteration (as torch documents it) in grad's own dtype instead of bfloat16."""
    a, b, c = coefficients
    tall = grad.shape[0] > grad.shape[1]
    x = grad.T if tall else grad
    x = x / x.norm().clamp(min=eps)
    for _ in range(steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * (gram @ gram)) @ x
    return x.T if tall else x


@pytest.fixture
def exact_muon(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch_muon, "_zeropower_via_newtonschulz", _newton_schulz_in_input_dtype)


ADAFACTOR_CASES = [
    {},
    {"lr": 0.1, "weight_decay": 0.1, "maximize": True},
    {"lr": 0.05, "eps": (1e-3, 1e-2), "d": 1.5, "beta2_decay": -0.5},
    {"lr": 0.3, "eps": (0.0, 0.0), "d": 1.0},  # no floor on the RMS or the estimate: the clipping decides
]
MUON_CASES = [
    {},
    {"lr": 0.02, "weight_decay": 0.0, "nesterov": False},
    {"lr": 0.05, "momentum": 0.3, "adjust_lr_fn": "match_rms_adamw", "ns_steps": 3},
    {"lr": 0.05, "momentum": 0.0, "ns_coefficients": (2.0, -1.5, 0.5), "eps": 1e-3, "adjust_lr_fn": "original"},
]


@pytest.mark.parametrize("kwargs", ADAFACTOR_CASES, ids=str)
@pytest.mark.parametrize("groups", [False, True], ids=["one-group", "two-groups"])
@pytest.mark.parametrize("backend", CPU)
def test_adafactor_trajectory_matches_torch_float64(kwargs: dict, groups: bool, backend: str) -> None:
    _trajectory("Adafactor", kwargs, ADAFACTOR_SHAPES, backend, groups=groups)


@pytest.mark.parametrize("kwargs", ADAFACTOR_CASES[:2], ids=str)
def test_adafactor_trajectory_matches_torch_float32(kwargs: dict) -> None:
    _, mparams, _, _ = _trajectory("Adafactor", kwargs, ADAFACTOR_SHAPES, "fast", "float32", rtol=1e-4, atol=1e-6)
    assert all(p.dtype == np.float32 for p in mparams)


@pytest.mark.parametrize("kwargs", MUON_CASES, ids=str)
@pytest.mark.parametrize("groups", [False, True], ids=["one-group", "two-groups"])
@pytest.mark.parametrize("backend", CPU)
def test_muon_trajectory_matches_torch_float64(exact_muon: None, kwargs: dict, groups: bool, backend: str) -> None:
    _trajectory("Muon", kwargs, MUON_SHAPES, backend, groups=groups, steps=5)


def test_muon_trajectory_matches_torch_float32(exact_muon: None) -> None:
    _trajectory("Muon", MUON_CASES[0], MUON_SHAPES, "fast", "float32", steps=5, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("kwargs", MUON_CASES[:3], ids=str)
def test_muon_is_within_bfloat16_accuracy_of_torchs_bfloat16_iteration(kwargs: dict) -> None:
    tparams, mparams, topt, mopt = _pair("Muon", kwargs, MUON_SHAPES, "fast", "float64", False)
    starts = _inits(MUON_SHAPES)
    for _ in range(5):
        _set_grads(tparams, mparams)
        topt.step()
        mopt.step()
    for t, m, start in zip(tparams, mparams, starts):
        moved = np.linalg.norm(t.detach().numpy() - start)
        assert moved > 0
        assert np.linalg.norm(m.to_numpy() - t.detach().numpy()) <= 0.05 * moved


@pytest.mark.skipif("cuda" not in BACKENDS, reason="no cuda backend")
def test_adafactor_and_muon_on_cuda(exact_muon: None) -> None:
    _trajectory("Adafactor", {"lr": 0.1, "weight_decay": 0.1}, [(2, 3), (3,)], "cuda", steps=3)
    _trajectory("Muon", {}, [(2, 3)], "cuda", steps=2)


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_signature_and_defaults_match_torch(name: str) -> None:
    theirs = inspect.signature(getattr(torch.optim, name).__init__).parameters.values()
    mine = inspect.signature(getattr(optim, name).__init__).parameters.values()
    assert [(p.name, p.kind, p.default) for p in mine] == [(p.name, p.kind, p.default) for p in theirs]
    x, t = nn.Parameter(mt.zeros(2, 2)), torch.nn.Parameter(torch.zeros(2, 2))
    assert getattr(optim, name)([x]).defaults == getattr(torch.optim, name)([t]).defaults


def _mlp(framework: Any, weights: list[np.ndarray]) -> tuple[Callable, list, list]:
    """A 4-8-3 tanh MLP with the given weights: (forward, 2-D weights, biases) in torch or minitensor."""
    if framework is torch:
        params = [torch.nn.Parameter(torch.tensor(w)) for w in weights]
    else:
        params = [nn.Parameter(mt.tensor(w, backend="fast")) for w in weights]
    w1, b1, w2, b2 = params

    def forward(x: Any) -> Any:
        return (x @ w1.T + b1).tanh() @ w2.T + b2

    return forward, [w1, w2], [b1, b2]


def test_small_model_trained_with_muon_and_adafactor_matches_torch(exact_muon: None) -> None:
    """Muon on the weight matrices and Adafactor on the biases (the split torch's docs recommend), 4 steps of a
    regression loss."""
    rng = np.random.default_rng(1)
    weights = [rng.standard_normal(s) * 0.5 for s in [(8, 4), (8,), (3, 8), (3,)]]
    x, y = rng.standard_normal((16, 4)), rng.standard_normal((16, 3))
    runs = []
    for fw, lib in ((torch, torch.optim), (mt, optim)):
        forward, matrices, biases = _mlp(fw, weights)
        opts = [lib.Muon(matrices, lr=0.05), lib.Adafactor(biases, lr=0.05)]
        inputs, targets = (fw.tensor(x), fw.tensor(y)) if fw is torch else (mt.tensor(x, backend="fast"),
                                                                           mt.tensor(y, backend="fast"))
        losses = []
        for _ in range(4):
            loss = ((forward(inputs) - targets) ** 2).mean()
            for opt in opts:
                opt.zero_grad()
            loss.backward()
            for opt in opts:
                opt.step()
            losses.append(float(loss.item()))
        runs.append((losses, [p.detach().numpy() if fw is torch else p.to_numpy() for p in matrices + biases]))
    (tlosses, tparams), (mlosses, mparams) = runs
    np.testing.assert_allclose(mlosses, tlosses, rtol=1e-12)
    assert mlosses[-1] < mlosses[0]
    for a, b in zip(mparams, tparams):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13)


# --- state dicts ---------------------------------------------------------------------------------


def _structure(state_dict: dict) -> tuple:
    state = {int(k): {name: tuple(v.shape) for name, v in entry.items()} for k, entry in state_dict["state"].items()}
    return state, [(sorted(g), g["params"]) for g in state_dict["param_groups"]]


@pytest.mark.parametrize("name, shapes", [("Adafactor", ADAFACTOR_SHAPES), ("Muon", MUON_SHAPES)])
def test_state_dict_has_torchs_structure_and_resumes_bit_for_bit(exact_muon: None, name: str, shapes: list) -> None:
    kwargs = {"lr": 0.05}
    tparams, mparams, topt, mopt = _trajectory(name, kwargs, shapes, "fast", groups=True, steps=3)
    tsd, msd = topt.state_dict(), mopt.state_dict()
    assert _structure(msd) == _structure(tsd)
    assert msd["param_groups"] == tsd["param_groups"]
    twin_params = [nn.Parameter(mt.tensor(p.to_numpy(), backend="simple")) for p in mparams]
    twin = getattr(optim, name)([{"params": twin_params[:2]}, {"params": twin_params[2:]}], **kwargs)
    exported = {"state": {k: {n: v.numpy() for n, v in e.items()} for k, e in tsd["state"].items()},
                "param_groups": tsd["param_groups"]}
    twin.load_state_dict(exported)  # torch's state, as NumPy, into a fresh optimizer on another backend
    copy_params = [nn.Parameter(mt.tensor(p.to_numpy(), backend="fast")) for p in mparams]
    copy = getattr(optim, name)([{"params": copy_params[:2]}, {"params": copy_params[2:]}], **kwargs)
    copy.load_state_dict(mopt.state_dict())
    for _ in range(3):
        _set_grads(tparams, mparams)
        for a, b, c in zip(mparams, twin_params, copy_params):
            b.grad = mt.tensor(_grad_field(b.to_numpy()), backend="simple")
            c.grad = mt.tensor(a.grad.to_numpy(), backend="fast")
        for opt in (topt, mopt, twin, copy):
            opt.step()
    for t, a, b, c in zip(tparams, mparams, twin_params, copy_params):
        np.testing.assert_array_equal(c.to_numpy(), a.to_numpy())
        np.testing.assert_allclose(b.to_numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-13)


def test_adafactor_load_state_dict_checks_the_factor_shapes() -> None:
    params = [nn.Parameter(mt.tensor(a)) for a in _inits([(3, 4), (4,)])]
    opt = optim.Adafactor(params)
    for p in params:
        p.grad = mt.ones(*p.shape, dtype=p.dtype)
    opt.step()
    good = opt.state_dict()
    bad = {"state": {k: dict(v) for k, v in good["state"].items()}, "param_groups": good["param_groups"]}
    bad["state"][0]["row_var"] = np.zeros((3, 4))
    with pytest.raises(ShapeError, match=r"'row_var' of parameter 0 has shape \(3, 4\), but it must have shape \(3, 1\)"):
        opt.load_state_dict(bad)
    bad["state"][0]["row_var"] = np.zeros((3, 1))
    bad["state"][1]["variance"] = np.zeros(3)
    with pytest.raises(ShapeError, match=r"'variance' of parameter 1 has shape \(3,\), but the parameter has shape"):
        opt.load_state_dict(bad)


# --- errors --------------------------------------------------------------------------------------

BAD = [
    ("Adafactor", {"lr": -1.0}),
    ("Adafactor", {"beta2_decay": 0.5}),
    ("Adafactor", {"eps": (-1.0, 1e-3)}),
    ("Adafactor", {"eps": (None, -1.0)}),
    ("Adafactor", {"d": 0.5}),
    ("Adafactor", {"weight_decay": -0.1}),
    ("Adafactor", {"lr": float("nan")}),
    ("Muon", {"lr": -1.0}),
    ("Muon", {"momentum": -0.5}),
    ("Muon", {"weight_decay": -0.1}),
    ("Muon", {"adjust_lr_fn": "spectral"}),
]


@pytest.mark.parametrize("name, kwargs", BAD, ids=str)
def test_bad_hyperparameters_raise_torchs_errors(name: str, kwargs: dict) -> None:
    with pytest.raises(Exception) as theirs:
        getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2, 2))], **kwargs)
    with pytest.raises(type(theirs.value)) as mine:
        getattr(optim, name)([nn.Parameter(mt.zeros(2, 2))], **kwargs)
    assert str(mine.value) == str(theirs.value)


def test_muon_shape_and_iteration_errors() -> None:
    with pytest.raises(ValueError, match=r"Muon only supports 2D parameters whereas we found a parameter with size: \(3,\)"):
        optim.Muon([nn.Parameter(mt.zeros(2, 2)), nn.Parameter(mt.zeros(3))])
    for kwargs, message in [({"ns_steps": 100}, "Number of steps must be less than 100"),
                            ({"ns_coefficients": (1.0, 2.0)}, "Coefficients must be a tuple of exactly 3 values")]:
        p = nn.Parameter(mt.ones(2, 2))
        opt = optim.Muon([p], **kwargs)
        p.grad = mt.ones(2, 2)
        with pytest.raises(ValueError, match=message):
            opt.step()
    p, q = nn.Parameter(mt.ones(2, 2)), nn.Parameter(mt.ones(3))
    opt = optim.Muon([p])
    opt.add_param_group({"params": [q]})  # as in torch, only the constructor's parameters are checked
    q.grad = mt.ones(3)
    with pytest.raises(ValueError, match="Param gradient must be a 2D matrix"):
        opt.step()


def test_adafactor_empty_parameter_divides_by_zero_as_torch() -> None:
    t = torch.nn.Parameter(torch.zeros(0, 3))
    t.grad = torch.zeros(0, 3)
    with pytest.raises(ZeroDivisionError):
        torch.optim.Adafactor([t]).step()
    p = nn.Parameter(mt.zeros(0, 3))
    p.grad = mt.zeros(0, 3)
    with pytest.raises(ZeroDivisionError, match=r"empty parameter \(shape \(0, 3\)\)"):
        optim.Adafactor([p]).step()


# --- compiled steps ------------------------------------------------------------------------------


def test_compiled_steps_match_eager() -> None:
    """Four steps of Adafactor and Muon in one compiled function, against eager: parameters and state bit for bit.
    Adafactor's lerp switches formulas at step 3 (2^-0.8 > 0.5 > 3^-0.8), which its guard turns into a re-trace."""
    rng = np.random.default_rng(0)
    w0, xs = rng.standard_normal((4, 3)), [rng.standard_normal((5, 4)) for _ in range(3)]
    makers = [lambda ps: optim.Adafactor(ps, lr=0.05, weight_decay=0.1), lambda ps: optim.Muon(ps, lr=0.05)]
    runs: list[Any] = []
    for compiled in (False, True):
        ws = [nn.Parameter(mt.tensor(w0, backend="fast", dtype="float64")) for _ in makers]
        opts = [make([w]) for make, w in zip(makers, ws)]

        def step(x: mt.Tensor, ws: list = ws, opts: list = opts) -> None:
            for w, opt in zip(ws, opts):
                loss = ((x @ w).tanh() ** 2).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()

        run: Callable[..., Any] = mt.compile(step) if compiled else step
        for i in range(4):
            run(mt.tensor(xs[i % 3], backend="fast", dtype="float64"))
        runs.append(([w.to_numpy() for w in ws], [{k: v.to_numpy() for k, v in opt.state[w].items()}
                                                 for w, opt in zip(ws, opts)], getattr(run, "traces", 0)))
    (w_eager, s_eager, _), (w_compiled, s_compiled, traces) = runs
    for a, b, sa, sb in zip(w_eager, w_compiled, s_eager, s_compiled):
        np.testing.assert_array_equal(b, a)
        for key, value in sa.items():
            np.testing.assert_array_equal(sb[key], value, err_msg=key)
    assert traces == 3  # the first step (no state), the second, and step 3 (Adafactor's lerp formula changes)


def test_split_modules_keep_their_public_names() -> None:
    """optimizer.py and lr_scheduler.py were split by concept; every name stays importable from where it was."""
    from minitensor.optim import lr_scheduler, optimizer

    names = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "LinearLR", "ExponentialLR", "SequentialLR",
             "CosineAnnealingLR", "ReduceLROnPlateau", "OneCycleLR", "ConstantLR", "MultiplicativeLR", "PolynomialLR",
             "CosineAnnealingWarmRestarts", "CyclicLR", "ChainedScheduler"]
    assert sorted(lr_scheduler.__all__) == sorted(names)
    for name in names:
        assert getattr(lr_scheduler, name).__name__ == name and hasattr(torch.optim.lr_scheduler, name)
        assert issubclass(getattr(lr_scheduler, name), lr_scheduler.LRScheduler)
    assert optimizer.Optimizer is optim.Optimizer and repr(optimizer.required) == "<required parameter>"
    assert {"Adafactor", "Muon"} <= set(optim.__all__)
