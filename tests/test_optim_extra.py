"""Adamax, NAdam, RAdam, Adadelta, ASGD, Rprop and LBFGS against torch.optim: parameter trajectories for the main
options, param groups, signatures and defaults, state dicts (torch's structure, resuming mid-run bit for bit),
argument checks, compiled steps, and LBFGS on a quadratic and on Rosenbrock's function with and without line search."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import minitensor as mt
from minitensor import nn, optim
from minitensor.errors import CompileError, ShapeError

STEPS = 8  # RAdam's rectification (rho_t > 5) starts at step 6 with the default betas

CASES = [
    ("Adamax", {}),
    ("Adamax", {"lr": 0.05, "weight_decay": 0.1, "maximize": True}),
    ("Adamax", {"lr": 0.05, "betas": (0.3, 0.8), "eps": 1e-3}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True, "momentum_decay": 0.01,
               "maximize": True}),
    ("NAdam", {"lr": 0.05, "betas": (0.4, 0.9)}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.05, "betas": (0.3, 0.9), "weight_decay": 0.1, "decoupled_weight_decay": True,
               "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "eps": 1e-4, "weight_decay": 0.1, "maximize": True}),
    ("Adadelta", {"rho": 0.0}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "t0": 3, "lambd": 0.01, "alpha": 0.5, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.05, "t0": 2.5, "maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (0.01, 0.1), "maximize": True}),
]
CASE_IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'defaults'}" for name, kw in CASES]
NAMES = ["Adamax", "NAdam", "RAdam", "Adadelta", "ASGD", "Rprop"]


def _grad_field(x: np.ndarray) -> np.ndarray:
    """A gradient that depends on the parameter, so trajectories differ when an update is wrong."""
    return x**3 - 0.5 * x + 0.3


def _inits() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal((2, 3)), rng.standard_normal(3), rng.standard_normal(())]


def _groups(params: list, kwargs: dict, groups: bool) -> list:
    if not groups:
        return params
    lr = kwargs.get("lr", 0.01)
    return [{"params": params[:2]}, {"params": params[2:], "lr": lr * 0.5, "weight_decay": 0.2}]


def _pair(name: str, kwargs: dict, backend: str, dtype: str, groups: bool):
    tdtype = torch.float64 if dtype == "float64" else torch.float32
    tparams = [torch.nn.Parameter(torch.tensor(a, dtype=tdtype)) for a in _inits()]
    mparams = [nn.Parameter(mt.tensor(a, backend=backend, dtype=dtype)) for a in _inits()]
    topt = getattr(torch.optim, name)(_groups(tparams, kwargs, groups), **kwargs)
    mopt = getattr(optim, name)(_groups(mparams, kwargs, groups), **kwargs)
    return tparams, mparams, topt, mopt


def _set_grads(tparams, mparams) -> None:
    for t, m in zip(tparams, mparams):
        t.grad = torch.tensor(_grad_field(t.detach().numpy()))
        m.grad = mt.tensor(_grad_field(m.to_numpy()), backend=m.backend, dtype=m.dtype)


def _trajectory(name, kwargs, backend, dtype="float64", groups=False, steps=STEPS, rtol=1e-11, atol=1e-13):
    tparams, mparams, topt, mopt = _pair(name, kwargs, backend, dtype, groups)
    for step in range(steps):
        _set_grads(tparams, mparams)
        topt.step()
        mopt.step()
        for i, (t, m) in enumerate(zip(tparams, mparams)):
            where = f"{name} {kwargs} step {step + 1} parameter {i}"
            np.testing.assert_allclose(m.to_numpy(), t.detach().numpy(), rtol=rtol, atol=atol, err_msg=where)
            theirs, mine = topt.state[t], mopt.state[m]
            assert list(mine) == list(theirs), where
            for key, value in theirs.items():  # the averages too (ASGD's ax never feeds back into p)
                np.testing.assert_allclose(mine[key].to_numpy(), value.numpy(), rtol=rtol, atol=atol,
                                           err_msg=f"{where} {key}")
    return tparams, mparams, topt, mopt


@pytest.mark.parametrize("name, kwargs", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("groups", [False, True], ids=["one-group", "two-groups"])
@pytest.mark.parametrize("cpu_backend", ["simple", "fast"])
def test_trajectory_matches_torch_float64(name, kwargs, groups, cpu_backend):
    _trajectory(name, kwargs, cpu_backend, groups=groups)


@pytest.mark.parametrize("name, kwargs", [CASES[1], CASES[5], CASES[9], CASES[11], CASES[14], CASES[17]],
                         ids=lambda v: str(v))
def test_trajectory_matches_torch_float32(name, kwargs):
    _, mparams, _, _ = _trajectory(name, kwargs, "fast", dtype="float32", rtol=2e-5, atol=1e-6)
    assert all(p.dtype == np.float32 for p in mparams)


def test_trajectory_on_cuda():
    if "cuda" not in mt.backend_names() or not _usable("cuda"):
        pytest.skip("cuda backend not available")
    _trajectory("NAdam", {"lr": 0.05, "weight_decay": 0.1}, "cuda", steps=2)


def _usable(name: str) -> bool:
    try:
        mt.get_backend(name)
    except Exception:  # noqa: BLE001 - no GPU and no simulator
        return False
    return True


@pytest.mark.parametrize("name", [*NAMES, "LBFGS"])
def test_signature_and_defaults_match_torch(name):
    theirs = inspect.signature(getattr(torch.optim, name).__init__).parameters.values()
    mine = inspect.signature(getattr(optim, name).__init__).parameters.values()
    assert [(p.name, p.kind, p.default) for p in mine] == [(p.name, p.kind, p.default) for p in theirs]
    x, t = nn.Parameter(mt.zeros(2)), torch.nn.Parameter(torch.zeros(2))
    assert getattr(optim, name)([x]).defaults == getattr(torch.optim, name)([t]).defaults


# --- state dicts ---------------------------------------------------------------------------------


def _structure(state_dict: dict) -> tuple:
    state = {int(k): {name: (tuple(v.shape) if hasattr(v, "shape") else type(v).__name__) for name, v in entry.items()}
             for k, entry in state_dict["state"].items()}
    groups = [(sorted(g), g["params"]) for g in state_dict["param_groups"]]
    return state, groups


@pytest.mark.parametrize("name, kwargs", [CASES[0], CASES[5], CASES[8], CASES[11], CASES[14], CASES[17]],
                         ids=lambda v: str(v))
def test_state_dict_has_torchs_structure(name, kwargs):
    _, _, topt, mopt = _trajectory(name, kwargs, "fast", groups=True, steps=4)
    tsd, msd = topt.state_dict(), mopt.state_dict()
    assert _structure(msd) == _structure(tsd)
    for index, entry in tsd["state"].items():
        for key, value in entry.items():
            mine = msd["state"][index][key]
            assert isinstance(mine, mt.Tensor)
            if key in ("step", "mu_product", "eta", "mu"):  # host scalars: 0-d float32, as torch keeps them
                assert mine.dtype == np.float32 and mine.shape == () and mine.backend.name == "simple"
                assert mine.item() == value.item(), key
            else:
                np.testing.assert_allclose(mine.to_numpy(), value.numpy(), rtol=1e-11, err_msg=key)
    for tg, mg in zip(tsd["param_groups"], msd["param_groups"]):
        assert mg == tg


@pytest.mark.parametrize("name, kwargs", [CASES[1], CASES[5], CASES[8], CASES[11], CASES[14], CASES[17]],
                         ids=lambda v: str(v))
def test_state_dict_round_trip_mid_run_continues_bit_for_bit(name, kwargs):
    """Three steps, then the state dict goes to a twin (fresh parameters of the same values) and, as NumPy, from
    torch into a third optimizer: all continue the run (twin bit for bit, the torch-loaded one as torch does)."""
    tparams, mparams, topt, mopt = _trajectory(name, kwargs, "fast", groups=True, steps=3)
    twin_params = [nn.Parameter(mt.tensor(p.to_numpy(), backend="fast")) for p in mparams]
    twin = getattr(optim, name)(_groups(twin_params, kwargs, True), **kwargs)
    twin.load_state_dict(mopt.state_dict())
    exported = topt.state_dict()
    exported = {"state": {k: {n: v.numpy() for n, v in e.items()} for k, e in exported["state"].items()},
                "param_groups": exported["param_groups"]}
    third_params = [nn.Parameter(mt.tensor(t.detach().numpy(), backend="simple")) for t in tparams]
    third = getattr(optim, name)(_groups(third_params, kwargs, True), **kwargs)
    third.load_state_dict(exported)
    for _ in range(4):
        _set_grads(tparams, mparams)
        for a, b, c in zip(mparams, twin_params, third_params):
            b.grad = mt.tensor(a.grad.to_numpy(), backend="fast")
            c.grad = mt.tensor(_grad_field(c.to_numpy()), backend="simple")
        for opt in (topt, mopt, twin, third):
            opt.step()
    for t, a, b, c in zip(tparams, mparams, twin_params, third_params):
        np.testing.assert_array_equal(b.to_numpy(), a.to_numpy())
        np.testing.assert_allclose(c.to_numpy(), t.detach().numpy(), rtol=1e-11, atol=1e-13)


def test_load_state_dict_validates_host_scalars_and_tensors():
    params = [nn.Parameter(mt.tensor(a)) for a in _inits()]
    opt = optim.NAdam(params, lr=0.1)
    for p in params:
        p.grad = mt.ones(*p.shape)
    opt.step()
    good = opt.state_dict()
    bad = {"state": {k: dict(v) for k, v in good["state"].items()}, "param_groups": good["param_groups"]}
    bad["state"][0]["mu_product"] = np.zeros(3)
    with pytest.raises(ValueError, match="'mu_product' of parameter 0 must be one number"):
        opt.load_state_dict(bad)
    bad["state"][0]["mu_product"] = 0.5  # a plain number becomes a 0-d float32 host tensor, like step
    bad["state"][1]["exp_avg_sq"] = mt.zeros(4)
    with pytest.raises(ShapeError, match=r"'exp_avg_sq' of parameter 1 has shape \(4,\)"):
        opt.load_state_dict(bad)
    bad["state"][1] = {"step": 1.0, "exp_avg": np.zeros(3)}
    with pytest.raises(ValueError, match="lacks mu_product, exp_avg_sq"):
        opt.load_state_dict(bad)
    del bad["state"][1]
    opt.load_state_dict(bad)
    mu = opt.state[params[0]]["mu_product"]
    assert mu.dtype == np.float32 and mu.shape == () and mu.item() == 0.5


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: optim.Adamax(p, lr=-1), "Invalid learning rate: -1"),
        (lambda p: optim.Adamax(p, betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
        (lambda p: optim.Adamax(p, eps=-1e-8), "Invalid epsilon value: -1e-08"),
        (lambda p: optim.NAdam(p, betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
        (lambda p: optim.NAdam(p, momentum_decay=-1), "Invalid momentum_decay value: -1"),
        (lambda p: optim.NAdam(p, weight_decay=-0.5), "Invalid weight_decay value: -0.5"),
        (lambda p: optim.RAdam(p, lr=float("nan")), "Invalid learning rate: nan"),
        (lambda p: optim.RAdam(p, betas=(0.9, 1.5)), "Invalid beta parameter at index 1: 1.5"),
        (lambda p: optim.Adadelta(p, rho=1.1), "Invalid rho value: 1.1"),
        (lambda p: optim.Adadelta(p, eps=-1), "Invalid epsilon value: -1"),
        (lambda p: optim.ASGD(p, weight_decay=-1), "Invalid weight_decay value: -1"),
        (lambda p: optim.ASGD(p, lr=-0.1), "Invalid learning rate: -0.1"),
        (lambda p: optim.Rprop(p, etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
        (lambda p: optim.Rprop(p, etas=(0.5, 0.9)), "Invalid eta values: 0.5, 0.9"),
        (lambda p: optim.LBFGS(p, lr=-1), "Invalid learning rate: -1"),
        (lambda p: optim.LBFGS(p, line_search_fn="armijo"), "only 'strong_wolfe' is supported"),
        (lambda p: optim.LBFGS([{"params": p[:1]}, {"params": p[1:]}]), "doesn't support per-parameter options"),
    ],
)
def test_bad_arguments(make, message):
    params = [nn.Parameter(mt.tensor([1.0, 2.0])), nn.Parameter(mt.tensor([3.0]))]
    with pytest.raises(ValueError, match=message):
        make(params)


def test_unsupported_flags_are_refused():
    p = [nn.Parameter(mt.tensor([1.0]))]
    for name in NAMES:
        with pytest.raises(NotImplementedError, match="differentiable"):
            getattr(optim, name)(p, differentiable=True)


# --- compiled steps ------------------------------------------------------------------------------

COMPILED = [
    lambda ps: optim.Adamax(ps, lr=0.05, weight_decay=0.1),
    lambda ps: optim.NAdam(ps, lr=0.05, weight_decay=0.1, decoupled_weight_decay=True),
    lambda ps: optim.RAdam(ps, lr=0.05, weight_decay=0.1),  # rectified from step 6: kernels change
    lambda ps: optim.Adadelta(ps, lr=0.5, weight_decay=0.1, maximize=True),
    lambda ps: optim.ASGD(ps, lr=0.05, t0=2, lambd=0.01),  # averaging (mu < 1) from step 5: kernels change
    lambda ps: optim.Rprop(ps, lr=0.05),
]


def test_compiled_steps_match_eager():
    """Seven steps of every new optimizer (one parameter each) in one function, compiled (traced, then replayed with
    the host values recomputed) and eager: parameters and state bit for bit. Traces: the first step (no state),
    the second, step 5, where ASGD's kernels change, and step 6, where RAdam's do (their guards)."""
    rng = np.random.default_rng(0)
    w0, xs = rng.standard_normal((4, 3)), [rng.standard_normal((5, 4)) for _ in range(3)]
    runs: list[Any] = []
    for compiled in (False, True):
        ws = [nn.Parameter(mt.tensor(w0, backend="fast", dtype="float64")) for _ in COMPILED]
        opts = [make([w]) for make, w in zip(COMPILED, ws)]

        def step(x: mt.Tensor, ws: list = ws, opts: list = opts) -> None:
            for w, opt in zip(ws, opts):
                loss = ((x @ w).tanh() ** 2).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()

        run: Callable[..., Any] = mt.compile(step) if compiled else step
        for i in range(7):
            run(mt.tensor(xs[i % 3], backend="fast", dtype="float64"))
        runs.append(([w.to_numpy() for w in ws], [{k: v.to_numpy() for k, v in opt.state[w].items()}
                                                 for w, opt in zip(ws, opts)], getattr(run, "traces", 0)))
    (w_eager, s_eager, _), (w_compiled, s_compiled, traces) = runs
    for opt, a, b, sa, sb in zip(COMPILED, w_eager, w_compiled, s_eager, s_compiled):
        name = type(opt([nn.Parameter(mt.zeros(1))])).__name__
        np.testing.assert_array_equal(b, a, err_msg=name)
        for key, value in sa.items():
            np.testing.assert_array_equal(sb[key], value, err_msg=f"{name} {key}")
    assert traces == 4


# --- LBFGS ---------------------------------------------------------------------------------------


def _rosenbrock(x: Any, y: Any) -> Any:
    a, c = 1 - x, y - x * x
    return a * a + 100 * (c * c)


_RNG = np.random.default_rng(3)
_M = _RNG.standard_normal((5, 5))
_A, _B, _X0 = _M @ _M.T + 2 * np.eye(5), _RNG.standard_normal(5), _RNG.standard_normal(5)


def _problem(kind: str, lib: Any, make: Callable[..., Any]) -> tuple[list[Any], Callable[[], Any]]:
    """Parameters (two, of different shapes) and the loss of a quadratic or of Rosenbrock's function."""
    if kind == "rosenbrock":
        params = [make(np.array([-1.5])), make(np.array([[2.0]]))]
        return params, lambda: _rosenbrock(params[0].sum(), params[1].sum())
    params = [make(_X0[:2].reshape(1, 2)), make(_X0[2:])]
    a, b = lib.tensor(_A, dtype=lib.float64), lib.tensor(_B, dtype=lib.float64)

    def loss() -> Any:
        x = lib.cat([params[0].reshape(-1), params[1]])
        return 0.5 * (x * (a @ x)).sum() - (b * x).sum()

    return params, loss


def _lbfgs_pair(kind: str, kwargs: dict):
    tparams, tloss = _problem(kind, torch, lambda a: torch.nn.Parameter(torch.tensor(a)))
    mparams, mloss = _problem(kind, mt, lambda a: nn.Parameter(mt.tensor(a, dtype="float64")))
    topt, mopt = torch.optim.LBFGS(tparams, **kwargs), optim.LBFGS(mparams, **kwargs)

    def closure(opt: Any, loss: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            opt.zero_grad()
            value = loss()
            value.backward()
            return value
        return run

    return tparams, mparams, topt, mopt, closure(topt, tloss), closure(mopt, mloss)


@pytest.mark.parametrize("kind, line_search, steps, rtol", [
    ("quadratic", None, 4, 1e-12), ("quadratic", "strong_wolfe", 3, 1e-12),
    ("rosenbrock", None, 4, 1e-11), ("rosenbrock", "strong_wolfe", 2, 1e-8),  # chaotic: BLAS dot's last bits grow
])
def test_lbfgs_matches_torch(kind, line_search, steps, rtol):
    kwargs = {"lr": 1 if line_search else 0.05, "max_iter": 10, "history_size": 3, "line_search_fn": line_search}
    tparams, mparams, topt, mopt, tclosure, mclosure = _lbfgs_pair(kind, kwargs)
    for step in range(steps):
        tloss, mloss = topt.step(tclosure), mopt.step(mclosure)
        np.testing.assert_allclose(float(mloss), float(tloss.detach()), rtol=rtol, err_msg=f"step {step + 1}")
        for t, m in zip(tparams, mparams):
            np.testing.assert_allclose(m.to_numpy(), t.detach().numpy(), rtol=rtol, atol=1e-13, err_msg=f"step {step + 1}")
        tstate, mstate = topt.state[tparams[0]], mopt.state[mparams[0]]
        assert (mstate["func_evals"], mstate["n_iter"]) == (tstate["func_evals"], tstate["n_iter"])
        assert len(mstate["old_dirs"]) == len(tstate["old_dirs"]) <= 3
    assert set(mopt.state_dict()["state"][0]) == set(topt.state_dict()["state"][0])
    assert mopt.state_dict()["param_groups"] == topt.state_dict()["param_groups"]


def test_lbfgs_state_dict_round_trip_continues_bit_for_bit():
    kwargs = {"max_iter": 4, "history_size": 2, "line_search_fn": "strong_wolfe"}
    _, mparams, _, mopt, _, mclosure = _lbfgs_pair("quadratic", kwargs)
    for _ in range(2):
        mopt.step(mclosure)
    twin_params = [nn.Parameter(mt.tensor(p.to_numpy(), dtype="float64")) for p in mparams]
    twin = optim.LBFGS(twin_params, **kwargs)
    twin.load_state_dict(mopt.state_dict())
    assert twin.state[twin_params[0]]["d"] is not mopt.state[mparams[0]]["d"]
    _, twin_loss = _problem_over(twin_params)  # the same loss over the twin's parameters

    def twin_closure() -> Any:
        twin.zero_grad()
        value = twin_loss()
        value.backward()
        return value

    for _ in range(2):
        assert float(mopt.step(mclosure)) == float(twin.step(twin_closure))
    for a, b in zip(mparams, twin_params):
        np.testing.assert_array_equal(b.to_numpy(), a.to_numpy())
    bad = mopt.state_dict()
    bad["state"][0] = {**bad["state"][0], "d": np.zeros(4)}
    with pytest.raises(ShapeError, match="'d' of parameter 0 has shape \\(4,\\)"):
        twin.load_state_dict(bad)


def _problem_over(params: list[Any]) -> tuple[list[Any], Callable[[], Any]]:
    a, b = mt.tensor(_A, dtype="float64"), mt.tensor(_B, dtype="float64")

    def loss() -> Any:
        x = mt.cat([params[0].reshape(-1), params[1]])
        return 0.5 * (x * (a @ x)).sum() - (b * x).sum()

    return params, loss


def test_lbfgs_float32_converges_and_refuses_compile():
    p = nn.Parameter(mt.tensor([-1.2, 1.0], dtype="float32"))
    opt = optim.LBFGS([p], line_search_fn="strong_wolfe")

    def closure() -> Any:
        opt.zero_grad()
        loss = _rosenbrock(p[0], p[1])
        loss.backward()
        return loss

    for _ in range(6):
        opt.step(closure)
    np.testing.assert_allclose(p.to_numpy(), [1.0, 1.0], atol=1e-3)
    assert p.dtype == np.float32 and opt.state[p]["d"].dtype == np.float32
    with pytest.raises(CompileError, match="LBFGS.step reads the loss"):
        mt.compile(lambda: opt.step(closure))()
