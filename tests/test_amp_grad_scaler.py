"""minitensor.amp.GradScaler against torch.amp.GradScaler on CPU (float32 there too): training trajectories with
skipped steps (inf and NaN batches, an overflowing initial scale), scale growth and backoff, several optimizers,
unscale_ before clipping, the errors of a misused iteration, state dicts and pickling, and minitensor.compile
(scale() inside a compiled step replays with the live scale; step() inside raises CompileError).
"""

from __future__ import annotations

import pickle
import warnings
from typing import Any

import numpy as np
import pytest
import torch

import minitensor as mt
from minitensor import amp, nn, optim
from minitensor.amp import grad_scaler
from minitensor.errors import CompileError

CPU = ["simple", "fast"]


def _numpy(t: Any) -> np.ndarray:
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.to_numpy()


def _data(steps: int, bad: dict[int, float], scale: float = 1.0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Batches of a 3 -> 4 regression; batch i gets the value bad[i] (inf or nan) in one input."""
    rng = np.random.default_rng(0)
    batches = []
    for i in range(steps):
        x = (scale * rng.standard_normal((5, 3))).astype(np.float32)
        if i in bad:
            x[0, 1] = bad[i]
        batches.append((x, rng.standard_normal((5, 4)).astype(np.float32)))
    return batches


def _model(lib: Any, backend: str, dtype: str = "float32") -> Any:
    rng = np.random.default_rng(1)
    weight, bias = rng.standard_normal((4, 3)).astype(dtype), rng.standard_normal(4).astype(dtype)
    if lib is torch:
        model = torch.nn.Linear(3, 4).to(getattr(torch, dtype))
        with torch.no_grad():
            model.weight.copy_(torch.tensor(weight))
            model.bias.copy_(torch.tensor(bias))
        return model
    model = nn.Linear(3, 4, device=backend, dtype=dtype)
    with mt.no_grad():
        model.weight.copy_(mt.tensor(weight, device=backend))
        model.bias.copy_(mt.tensor(bias, device=backend))
    return model


def _train(lib: Any, backend: str, opt_name: str, opt_kwargs: dict, scaler_kwargs: dict, data: list) -> tuple:
    """Train with a GradScaler; returns the scales after each update, step results, parameters and the optimizer."""
    model = _model(lib, backend)
    opt = getattr(lib.optim, opt_name)(model.parameters(), **opt_kwargs)
    scaler = lib.amp.GradScaler("cpu", **scaler_kwargs)
    to_tensor = torch.tensor if lib is torch else (lambda a: mt.tensor(a, device=backend))
    scales, results = [], []
    for x, y in data:
        opt.zero_grad()
        loss = ((model(to_tensor(x)) - to_tensor(y)) ** 2).sum()
        scaler.scale(loss).backward()
        results.append(scaler.step(opt))
        scaler.update()
        scales.append(scaler.get_scale())
    return scales, results, [_numpy(p) for p in model.parameters()], opt, scaler


@pytest.mark.parametrize("opt_name, opt_kwargs", [("SGD", {"lr": 0.01, "momentum": 0.9}), ("Adam", {"lr": 0.05})])
@pytest.mark.parametrize("backend", CPU)
def test_trajectory_matches_torch(backend: str, opt_name: str, opt_kwargs: dict) -> None:
    data = _data(12, {3: np.inf, 4: np.nan, 9: -np.inf})
    kwargs = {"init_scale": 2.0**10, "growth_interval": 2}
    theirs = _train(torch, backend, opt_name, opt_kwargs, kwargs, data)
    mine = _train(mt, backend, opt_name, opt_kwargs, kwargs, data)
    assert mine[0] == theirs[0]
    assert theirs[0][2:5] == [2048.0, 1024.0, 512.0]  # steps 3 and 4 skipped and backed off
    for m, t in zip(mine[2], theirs[2]):
        np.testing.assert_allclose(m, t, rtol=2e-6, atol=2e-6)
    if opt_name == "Adam":  # skipped steps do not count
        for tstate, mstate in zip(theirs[3].state.values(), mine[3].state.values()):
            assert float(mstate["step"].item()) == float(tstate["step"]) == 9
    assert mine[4].state_dict() == theirs[4].state_dict()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's overflow warnings inside the backends
def test_overflowing_scale_backs_off_as_torch() -> None:
    data = _data(10, {}, scale=30.0)
    kwargs = {"init_scale": 2.0**127, "growth_interval": 3, "backoff_factor": 0.25}
    theirs = _train(torch, "fast", "SGD", {"lr": 1e-4}, kwargs, data)
    mine = _train(mt, "fast", "SGD", {"lr": 1e-4}, kwargs, data)
    assert mine[0] == theirs[0] and theirs[0][0] < 2.0**127
    for m, t in zip(mine[2], theirs[2]):
        np.testing.assert_allclose(m, t, rtol=1e-6, atol=1e-6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_cuda_trajectory() -> None:
    if not mt.cuda.is_available():
        pytest.skip("no cuda backend")
    data = _data(3, {1: np.inf})
    kwargs = {"init_scale": 8.0, "growth_interval": 1}
    theirs = _train(torch, "cuda", "SGD", {"lr": 0.01}, kwargs, data)
    mine = _train(mt, "cuda", "SGD", {"lr": 0.01}, kwargs, data)
    assert mine[0] == theirs[0] == [16.0, 8.0, 16.0]
    assert mine[4]._scale.backend.name == "cuda"
    for m, t in zip(mine[2], theirs[2]):
        np.testing.assert_allclose(m, t, rtol=1e-6, atol=1e-6)


def _one_param(lib: Any, grad: list[float], dtype: str = "float32", opt: str = "Adam") -> tuple:
    p = (torch.nn.Parameter(torch.ones(3, dtype=getattr(torch, dtype))) if lib is torch
         else nn.Parameter(mt.ones(3, dtype=dtype)))
    optimizer = getattr(lib.optim, opt)([p], lr=0.1)
    p.grad = lib.tensor(grad, dtype=getattr(lib, dtype))
    return p, optimizer


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_step_with_a_non_finite_gradient_is_skipped(bad: float) -> None:
    scaler = amp.GradScaler("cpu", init_scale=64.0, growth_interval=1)
    scaler.scale(mt.tensor(1.0))
    p, opt = _one_param(mt, [1.0, bad, 2.0])
    assert scaler.step(opt) is None
    assert p.to_numpy().tolist() == [1.0, 1.0, 1.0] and len(opt.state) == 0
    scaler.update()
    assert scaler.get_scale() == 32.0 and scaler._get_growth_tracker() == 0


def test_clean_steps_grow_after_growth_interval() -> None:
    scaler = amp.GradScaler("cpu", init_scale=4.0, growth_factor=3.0, growth_interval=3)
    scaler.scale(mt.tensor(1.0))
    p, opt = _one_param(mt, [4.0, 8.0, 12.0], opt="SGD")
    seen = []
    for _ in range(7):
        p.grad = mt.tensor([4.0, 8.0, 12.0])
        scaler.step(opt)
        scaler.update()
        seen.append((scaler.get_scale(), scaler._get_growth_tracker()))
    assert seen == [(4.0, 1), (4.0, 2), (12.0, 0), (12.0, 1), (12.0, 2), (36.0, 0), (36.0, 1)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unscale_then_clip_as_torch(dtype: str) -> None:
    values = {}
    for lib in (torch, mt):
        scaler = lib.amp.GradScaler("cpu", init_scale=3.0)
        scaler.scale(lib.tensor(1.0))
        p, opt = _one_param(lib, [0.1, 30.0, -7.0], dtype)
        scaler.unscale_(opt)
        unscaled = _numpy(p.grad).copy()
        lib.nn.utils.clip_grad_norm_([p], 2.0)
        scaler.step(opt)
        scaler.update()
        values[lib.__name__] = (unscaled, _numpy(p.grad), _numpy(p))
    mine, theirs = values["minitensor"], values["torch"]
    np.testing.assert_array_equal(mine[0], theirs[0])  # times float32(1/3) in the gradient's dtype, as torch
    assert mine[0][0] == np.array(0.1, dtype) * np.array(np.float32(1 / 3), dtype)
    for m, t in zip(mine[1:], theirs[1:]):
        assert m.dtype == t.dtype
        np.testing.assert_allclose(m, t, rtol=1e-6 if dtype == "float32" else 1e-15)


def test_two_optimizers_one_skipped() -> None:
    results = {}
    for lib in (torch, mt):
        scaler = lib.amp.GradScaler("cpu", init_scale=16.0)
        scaler.scale([lib.tensor(1.0), (lib.tensor(2.0),)])
        p1, opt1 = _one_param(lib, [1.0, 2.0, 3.0], opt="SGD")
        p2, opt2 = _one_param(lib, [1.0, float("nan"), 3.0], opt="SGD")
        results[lib.__name__] = (scaler.step(opt1), scaler.step(opt2), _numpy(p1).tolist(), _numpy(p2).tolist())
        scaler.update()
        results[lib.__name__] += (scaler.get_scale(),)
    assert results["minitensor"] == results["torch"]
    assert results["torch"][4] == 8.0


def test_scale_outputs() -> None:
    scaler = amp.GradScaler("cpu", init_scale=8.0)
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    x64 = mt.tensor([3.0], dtype=mt.float64)
    out = scaler.scale([x, (x64, [x])])
    assert isinstance(out, list) and isinstance(out[1], tuple) and isinstance(out[1][1], list)
    assert out[0].to_numpy().tolist() == [8.0, 16.0] and out[1][0].dtype == mt.float64
    out[0].sum().backward()
    assert x.grad.to_numpy().tolist() == [8.0, 8.0]
    assert [t.item() for t in scaler.scale(iter([mt.tensor(1.0)]))] == [8.0]
    assert scaler.scale(mt.tensor(1.0, device="simple")).item() == 8.0  # another backend: a copy of the scale
    for bad in (3, "ab"):
        with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
            scaler.scale(bad)
    off = amp.GradScaler("cpu", enabled=False)
    assert off.scale(x) is x and off.get_scale() == 1.0 and off.state_dict() == {}


def _misuse(lib: Any, actions: list[str]) -> tuple[type, str]:
    """The error (type, message) of running ``actions`` on a fresh scaler and optimizer."""
    scaler = lib.amp.GradScaler("cpu")
    _, opt = _one_param(lib, [1.0, 2.0, 3.0], opt="SGD")
    try:
        for action in actions:
            if action == "scale":
                scaler.scale(lib.tensor(1.0))
            elif action == "closure":
                scaler.step(opt, closure=lambda: 0.0)
            elif action == "no_grads":
                scaler.step(lib.optim.SGD([lib.ones(1, requires_grad=True)]))
            else:
                getattr(scaler, action)(*(() if action == "update" else (opt,)))
    except (AssertionError, RuntimeError) as error:
        return type(error), str(error)
    raise AssertionError(f"no error for {actions}")


@pytest.mark.parametrize("actions", [
    ["step"], ["unscale_"], ["update"], ["scale", "unscale_", "unscale_"], ["scale", "step", "unscale_"],
    ["scale", "step", "step"], ["scale", "update"], ["scale", "closure"], ["scale", "no_grads"],
])
def test_misuse_errors_as_torch(actions: list[str]) -> None:
    assert _misuse(mt, actions) == _misuse(torch, actions)


def test_constructor_and_update_checks() -> None:
    for kwargs, message in [({"growth_factor": 1.0}, "growth factor"), ({"backoff_factor": 1.0}, "backoff factor")]:
        with pytest.raises(AssertionError, match=message):
            amp.GradScaler("cpu", **kwargs)
    amp.GradScaler("cpu", growth_factor=1.0, enabled=False)  # unchecked when disabled, as torch
    scaler = amp.GradScaler("cpu")
    scaler.scale(mt.tensor(1.0))
    scaler.update(3.0)
    assert scaler.get_scale() == 3.0
    scaler.update(mt.tensor([5.0], dtype=mt.float64))
    assert scaler.get_scale() == 5.0
    for bad in (mt.tensor(2.0, requires_grad=True), mt.ones(2)):
        with pytest.raises(AssertionError, match="new_scale should be a float"):
            scaler.update(bad)


def test_cuda_device_without_backend_disables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grad_scaler, "cuda_available", lambda: False)
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling"):
        scaler = amp.GradScaler()
    assert not scaler.is_enabled()
    p, opt = _one_param(mt, [1.0, 2.0, 3.0], opt="SGD")
    assert scaler.step(opt) is None and p.to_numpy().tolist() == pytest.approx([0.9, 0.8, 0.7])


def test_hyperparameters_state_dict_and_pickle() -> None:
    scaler = amp.GradScaler("cpu", init_scale=2.0**8, growth_interval=5)
    assert scaler.get_scale() == 256.0 and scaler.is_enabled()
    scaler.set_growth_factor(4.0)
    scaler.set_backoff_factor(0.25)
    scaler.set_growth_interval(1)
    assert (scaler.get_growth_factor(), scaler.get_backoff_factor(), scaler.get_growth_interval()) == (4.0, 0.25, 1)
    scaler.scale(mt.tensor(1.0))
    _, opt = _one_param(mt, [1.0, 2.0, 3.0], opt="SGD")
    scaler.step(opt)
    scaler.update()
    state = scaler.state_dict()
    assert state == {"scale": 1024.0, "growth_factor": 4.0, "backoff_factor": 0.25, "growth_interval": 1,
                     "_growth_tracker": 0}
    other = amp.GradScaler("cpu")
    other.scale(mt.tensor(1.0))
    other.load_state_dict(state)
    assert other.state_dict() == state and other._scale.item() == 1024.0
    restored = pickle.loads(pickle.dumps(scaler))
    assert restored.state_dict() == state and restored._scale is None
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        other.load_state_dict({})
    scaler.scale(mt.tensor(1.0))
    scaler.unscale_(opt)
    with pytest.raises(AssertionError, match="may only be pickled"):
        pickle.dumps(scaler)


def test_update_rounding_as_torch() -> None:
    for kwargs in [{"init_scale": 3.0, "backoff_factor": 0.3}, {"init_scale": 3.0e38, "growth_interval": 1},
                   {"init_scale": 1.1, "growth_factor": 1.7, "growth_interval": 1}]:
        found = []
        for lib in (torch, mt):
            scaler = lib.amp.GradScaler("cpu", **kwargs)
            scaler.scale(lib.tensor(1.0))
            _, opt = _one_param(lib, [1.0, float("inf") if "backoff_factor" in kwargs else 1.0, 3.0], opt="SGD")
            scaler.step(opt)
            scaler.update()
            found.append(scaler.get_scale())
        assert found[0] == found[1], kwargs


def _compiled_run(compiled: bool) -> tuple:
    data = _data(8, {3: np.inf, 4: np.nan})
    model = _model(mt, "fast")
    opt = optim.Adam(model.parameters(), lr=0.05)
    scaler = amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=2)

    def forward_backward(x: mt.Tensor, y: mt.Tensor) -> mt.Tensor:
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).sum()
        scaler.scale(loss).backward()
        return loss

    run = mt.compile(forward_backward) if compiled else forward_backward
    scales = []
    for x, y in data:
        run(mt.tensor(x, device="fast"), mt.tensor(y, device="fast"))
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    return scales, [p.to_numpy() for p in model.parameters()], run


def test_scale_inside_compile_matches_eager() -> None:
    eager, compiled = _compiled_run(False), _compiled_run(True)
    assert compiled[0] == eager[0] and len(set(eager[0])) > 2
    for m, e in zip(compiled[1], eager[1]):
        np.testing.assert_array_equal(m, e)
    assert compiled[2].traces <= 2  # the scale's changes are read live, not traced again


def test_step_inside_compile_raises() -> None:
    model = nn.Linear(3, 2)
    opt = optim.SGD(model.parameters(), lr=0.1)
    scaler = amp.GradScaler("cpu")

    @mt.compile
    def train_step(x: mt.Tensor) -> None:
        opt.zero_grad()
        scaler.scale(model(x).sum()).backward()
        scaler.step(opt)

    with pytest.raises(CompileError, match=r"GradScaler.step\(\) inside a compiled function"):
        train_step(mt.ones(2, 3))
    off = amp.GradScaler("cpu", enabled=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")

        @mt.compile
        def plain_step(x: mt.Tensor) -> None:
            opt.zero_grad()
            off.scale(model(x).sum()).backward()
            off.step(opt)

        plain_step(mt.ones(2, 3))  # a disabled scaler only calls optimizer.step()


@pytest.mark.parametrize("bad", [False, True])
def test_one_host_read_per_step(monkeypatch: pytest.MonkeyPatch, bad: bool) -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2)).to("fast")
    opt = optim.Adam(model.parameters(), lr=0.01)
    scaler = amp.GradScaler("cpu")
    x = mt.ones(5, 3, device="fast")
    scaler.scale(model(x).sum()).backward()
    if bad:
        model[2].bias.grad[1] = float("nan")
    backend = x.backend
    reads: list[Any] = []
    real = backend.to_numpy
    monkeypatch.setattr(backend, "to_numpy", lambda data: reads.append(data.shape) or real(data))
    scaler.step(opt)
    scaler.update()
    assert reads == [()]  # the found-inf flag, once, for six parameters
    assert len(opt.state) == (0 if bad else 6)
