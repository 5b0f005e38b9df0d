"""Optimizers against torch.optim: parameter trajectories for every option, param groups, state dicts (structure,
round trips, validation), in-place updates and argument checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import minitensor as mt
from minitensor import nn, optim
from minitensor.errors import DTypeError, ShapeError

STEPS = 5

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.05}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "maximize": True}),
    ("Adam", {}),
    ("Adam", {"lr": 0.05, "amsgrad": True}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.02, "betas": (0.8, 0.9), "eps": 1e-6, "maximize": True}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1, "maximize": True}),
    ("Adam", {"lr": 0.05, "betas": (0.3, 0.9), "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.1, "amsgrad": True}),
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.1, "maximize": True}),
    ("RMSprop", {"lr": 0.02, "alpha": 0.4, "eps": 1e-4}),
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.1, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5, "eps": 1e-6, "maximize": True}),
]
CASE_IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'defaults'}" for name, kw in CASES]


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


def _trajectory(name, kwargs, backend, dtype="float64", groups=False, steps=STEPS, rtol=1e-10, atol=1e-12):
    tparams, mparams, topt, mopt = _pair(name, kwargs, backend, dtype, groups)
    for step in range(steps):
        _set_grads(tparams, mparams)
        topt.step()
        mopt.step()
        for i, (t, m) in enumerate(zip(tparams, mparams)):
            np.testing.assert_allclose(m.to_numpy(), t.detach().numpy(), rtol=rtol, atol=atol,
                                       err_msg=f"{name} {kwargs} step {step + 1} parameter {i}")
    return tparams, mparams, topt, mopt


@pytest.mark.parametrize("name, kwargs", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("groups", [False, True], ids=["one-group", "two-groups"])
@pytest.mark.parametrize("cpu_backend", ["simple", "fast"])
def test_trajectory_matches_torch_float64(name, kwargs, groups, cpu_backend):
    _trajectory(name, kwargs, cpu_backend, groups=groups)


@pytest.mark.parametrize("name, kwargs", [CASES[2], CASES[9], CASES[16], CASES[20], CASES[12]], ids=lambda v: str(v))
def test_trajectory_matches_torch_float32(name, kwargs):
    _, mparams, _, _ = _trajectory(name, kwargs, "fast", dtype="float32", rtol=2e-5, atol=1e-6)
    assert all(p.dtype == np.float32 for p in mparams)


@pytest.mark.parametrize("name, kwargs", [CASES[3], CASES[9]], ids=["SGD-nesterov", "Adam-amsgrad"])
def test_trajectory_on_cuda(name, kwargs):
    if "cuda" not in mt.backend_names() or not _usable("cuda"):
        pytest.skip("cuda backend not available")
    _trajectory(name, kwargs, "cuda", steps=2)


def _usable(name: str) -> bool:
    try:
        mt.get_backend(name)
    except Exception:  # noqa: BLE001 - no GPU and no simulator
        return False
    return True


# --- state dicts ---------------------------------------------------------------------------------


def _structure(state_dict: dict) -> tuple:
    state = {int(k): {name: (tuple(v.shape) if hasattr(v, "shape") else type(v).__name__) for name, v in entry.items()}
             for k, entry in state_dict["state"].items()}
    groups = [(sorted(g), g["params"]) for g in state_dict["param_groups"]]
    return state, groups


@pytest.mark.parametrize("name, kwargs", [CASES[1], CASES[0], CASES[9], CASES[16], CASES[20], CASES[12]],
                         ids=lambda v: str(v))
def test_state_dict_has_torchs_structure(name, kwargs):
    tparams, mparams, topt, mopt = _trajectory(name, kwargs, "fast", groups=True, steps=2)
    tsd, msd = topt.state_dict(), mopt.state_dict()
    assert _structure(msd) == _structure(tsd)
    for index, entry in tsd["state"].items():
        for key, value in entry.items():
            mine = msd["state"][index][key]
            assert isinstance(mine, mt.Tensor)
            if key == "step":
                assert mine.dtype == np.float32 and mine.shape == ()
            np.testing.assert_allclose(mine.to_numpy(), value.numpy(), rtol=1e-10)
    for tg, mg in zip(tsd["param_groups"], msd["param_groups"]):
        assert {k: v for k, v in mg.items()} == {k: v for k, v in tg.items()}


def test_resume_from_torch_state_and_through_save_load(tmp_path):
    """Two steps in torch, its state dict (as NumPy) loaded into minitensor, three more steps: same as torch's five;
    and minitensor's own state dict through mt.save/mt.load resumes bit for bit."""
    name, kwargs = "Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1}
    tparams, _, topt, _ = _pair(name, kwargs, "fast", "float64", True)
    for _ in range(2):
        for t in tparams:
            t.grad = torch.tensor(_grad_field(t.detach().numpy()))
        topt.step()
    exported = topt.state_dict()
    exported = {"state": {k: {n: v.numpy() for n, v in e.items()} for k, e in exported["state"].items()},
                "param_groups": exported["param_groups"]}
    mparams = [nn.Parameter(mt.tensor(t.detach().numpy(), backend="fast")) for t in tparams]
    mopt = optim.Adam(_groups(mparams, kwargs, True), **kwargs)
    mopt.load_state_dict(exported)
    for _ in range(3):
        _set_grads(tparams, mparams)
        topt.step()
        mopt.step()
    for t, m in zip(tparams, mparams):
        np.testing.assert_allclose(m.to_numpy(), t.detach().numpy(), rtol=1e-10)

    path = tmp_path / "opt.safetensors"
    mt.save({"params": [p.detach() for p in mparams], "optimizer": mopt.state_dict(), "epoch": 3}, path)
    twin_params = [nn.Parameter(mt.tensor(p.to_numpy(), backend="fast")) for p in mparams]
    twin = optim.Adam(_groups(twin_params, kwargs, True), **kwargs)
    loaded = mt.load(path, backend="fast")
    assert loaded["epoch"] == 3
    twin.load_state_dict(loaded["optimizer"])
    for _ in range(2):
        for a, b in zip(mparams, twin_params):
            g = _grad_field(a.to_numpy())
            a.grad = mt.tensor(g, backend="fast")
            b.grad = mt.tensor(g, backend="fast")
        mopt.step()
        twin.step()
    for a, b in zip(mparams, twin_params):
        np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())


def test_load_state_dict_validates_every_tensor():
    params = [nn.Parameter(mt.tensor(a)) for a in _inits()]
    opt = optim.Adam(params, lr=0.1)
    for p in params:
        p.grad = mt.ones(*p.shape)
    opt.step()
    good = opt.state_dict()
    before = {k: v.to_numpy() for k, v in good["state"][0].items()}

    bad = {"state": {k: dict(v) for k, v in good["state"].items()}, "param_groups": good["param_groups"]}
    bad["state"][1]["exp_avg_sq"] = mt.zeros(4)
    with pytest.raises(ShapeError, match=r"'exp_avg_sq' of parameter 1 has shape \(4,\), but the parameter has shape \(3,\)"):
        opt.load_state_dict(bad)
    bad["state"][1]["exp_avg_sq"] = np.zeros(3, dtype=np.int64)
    with pytest.raises(DTypeError, match="'exp_avg_sq' of parameter 1 has dtype int64"):
        opt.load_state_dict(bad)
    bad["state"][1] = {"step": 1.0, "exp_avg": np.zeros(3)}
    with pytest.raises(ValueError, match="lacks exp_avg_sq"):
        opt.load_state_dict(bad)
    bad["state"] = {7: good["state"][0]}
    with pytest.raises(ValueError, match="parameter 7"):
        opt.load_state_dict(bad)
    with pytest.raises(ValueError, match="number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": good["param_groups"] * 2})
    with pytest.raises(ValueError, match="doesn't match the size"):
        opt.load_state_dict({"state": {}, "param_groups": [{**good["param_groups"][0], "params": [0, 1]}]})
    # nothing changed, and a step keeps every parameter's shape (the known bug: a wrong shape used to reshape it)
    for k, v in opt.state[params[0]].items():
        np.testing.assert_array_equal(v.to_numpy(), before[k])
    opt.step()
    assert [p.shape for p in params] == [(2, 3), (3,), ()]


def test_loaded_state_moves_to_the_parameters_backend_and_dtype():
    params = [nn.Parameter(mt.tensor(a, backend="fast", dtype="float32")) for a in _inits()]
    opt = optim.SGD(params, lr=0.1, momentum=0.9)
    state = {"state": {i: {"momentum_buffer": mt.ones(*p.shape, backend="simple", dtype="float64")}
                       for i, p in enumerate(params)},
             "param_groups": opt.state_dict()["param_groups"]}
    opt.load_state_dict(state)
    for p in params:
        buf = opt.state[p]["momentum_buffer"]
        assert buf.backend.name == "fast" and buf.dtype == np.float32


# --- behaviour -----------------------------------------------------------------------------------


def test_updates_in_place_and_views_see_them():
    p = nn.Parameter(mt.tensor([[1.0, 2.0], [3.0, 4.0]]))
    view = p.detach()[0]
    storage_before = p._data.storage
    opt = optim.SGD([p], lr=0.5, momentum=0.9)
    p.grad = mt.ones(2, 2)
    opt.step()
    assert isinstance(p, nn.Parameter) and p.requires_grad and p.is_leaf
    assert p._data.storage is storage_before
    np.testing.assert_array_equal(view.to_numpy(), [0.5, 1.5])
    np.testing.assert_array_equal(p.to_numpy(), [[0.5, 1.5], [2.5, 3.5]])


def test_zero_grad_closure_and_add_param_group():
    a, b = nn.Parameter(mt.tensor([1.0, 2.0])), nn.Parameter(mt.tensor([3.0]))
    opt = optim.SGD([a], lr=0.1)
    a.grad = mt.ones(2)
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(a.grad.to_numpy(), [0.0, 0.0])
    opt.zero_grad()
    assert a.grad is None
    opt.add_param_group({"params": b, "lr": 1.0})
    assert opt.param_groups[1]["momentum"] == 0 and opt.param_groups[1]["lr"] == 1.0

    def closure():
        opt.zero_grad()
        loss = (a * a).sum() + (b * 2).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == pytest.approx(11.0)
    np.testing.assert_allclose(a.to_numpy(), [0.8, 1.6])
    np.testing.assert_allclose(b.to_numpy(), [1.0])
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})


def test_parameters_without_grad_are_skipped_and_keep_no_state():
    a, b = nn.Parameter(mt.tensor([1.0])), nn.Parameter(mt.tensor([2.0]))
    opt = optim.Adam([a, b])
    a.grad = mt.ones(1)
    opt.step()
    assert b.to_numpy()[0] == 2.0 and b not in opt.state and a in opt.state


@pytest.mark.parametrize(
    "make, error, message",
    [
        (lambda p: optim.SGD(p, lr=-1), ValueError, "Invalid learning rate: -1"),
        (lambda p: optim.SGD(p, lr=float("nan")), ValueError, "Invalid learning rate: nan"),
        (lambda p: optim.SGD(p, momentum=-0.1), ValueError, "Invalid momentum value: -0.1"),
        (lambda p: optim.SGD(p, weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
        (lambda p: optim.SGD(p, nesterov=True), ValueError, "Nesterov momentum requires"),
        (lambda p: optim.SGD(p, lr="0.1"), TypeError, "learning rate must be a number"),
        (lambda p: optim.Adam(p, betas=(1.0, 0.9)), ValueError, "Invalid beta parameter at index 0: 1.0"),
        (lambda p: optim.Adam(p, betas=(0.9, -0.1)), ValueError, "Invalid beta parameter at index 1: -0.1"),
        (lambda p: optim.Adam(p, eps=-1e-8), ValueError, "Invalid epsilon value"),
        (lambda p: optim.AdamW(p, lr=-0.1), ValueError, "Invalid learning rate"),
        (lambda p: optim.RMSprop(p, alpha=-0.5), ValueError, "Invalid alpha value"),
        (lambda p: optim.Adagrad(p, lr_decay=-1), ValueError, "Invalid lr_decay value"),
        (lambda p: optim.Adagrad(p, initial_accumulator_value=-1), ValueError, "Invalid initial_accumulator_value"),
        (lambda p: optim.SGD([], lr=0.1), ValueError, "empty parameter list"),
        (lambda p: optim.SGD(p[0], lr=0.1), TypeError, "iterable of Tensors"),
        (lambda p: optim.SGD(set(p), lr=0.1), TypeError, "ordered"),
        (lambda p: optim.SGD([np.zeros(2)], lr=0.1), TypeError, "can only optimize Tensors"),
        (lambda p: optim.SGD([p[0] * 2], lr=0.1), ValueError, "can't optimize a non-leaf Tensor"),
        (lambda p: optim.SGD([{"params": p}, {"params": p}]), ValueError, "more than one parameter group"),
        (lambda p: optim.SGD(p, differentiable=True), NotImplementedError, "differentiable"),
    ],
)
def test_bad_arguments(make, error, message):
    params = [nn.Parameter(mt.tensor([1.0, 2.0]))]
    with pytest.raises(error, match=message):
        make(params)


def test_plain_tensors_and_torch_defaults():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([x])
    assert opt.defaults["lr"] == 1e-3
    assert optim.AdamW([x]).defaults["weight_decay"] == 1e-2
    assert optim.RMSprop([x]).defaults["lr"] == 1e-2 and optim.Adagrad([x]).defaults["eps"] == 1e-10
    (x * x).sum().backward()
    opt.step()
    np.testing.assert_allclose(x.to_numpy(), [1.0 - 2e-3, 2.0 - 4e-3])
    assert x.is_leaf


def test_a_gradient_that_does_not_fit_is_refused():
    p = nn.Parameter(mt.zeros(2, backend="simple"))
    opt = optim.SGD([p], lr=0.1)
    p.grad = mt.zeros(3, backend="simple")
    with pytest.raises(ShapeError, match=r"gradient of shape \(3,\)"):
        opt.step()
    p.grad = mt.zeros(2, backend="fast")
    with pytest.raises(mt.BackendError, match="'fast'"):
        opt.step()
