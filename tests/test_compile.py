"""minitensor.compile: compiled training steps against the same steps run eagerly (bit for bit), guards, errors."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from compile_steps import assert_same_params, batches, mlp, sgd_step, train

import minitensor as mt
from minitensor import nn, optim
from minitensor.errors import CompileError

F = nn.functional


def test_mlp_sgd_momentum_matches_eager(backend: str) -> None:
    steps = 4 if backend == "cuda" else 20
    data = batches(backend, 3)
    eager_model, compiled_model = mlp(backend), mlp(backend)
    eager = sgd_step(eager_model, optim.SGD(eager_model.parameters(), lr=0.1, momentum=0.9, nesterov=True))
    compiled = mt.compile(sgd_step(compiled_model, optim.SGD(compiled_model.parameters(), lr=0.1, momentum=0.9,
                                                             nesterov=True)))
    assert train(compiled, data, steps) == train(eager, data, steps)
    assert_same_params(eager_model, compiled_model)
    assert compiled.traces == 2  # the first step (no momentum buffers yet), then one plan replayed
    if backend == "fast":  # every call pre-bound: kernels, BLAS, and the small sums' NumPy reductions
        assert all(entry.plan.method_calls == 0 for entries in compiled._plans.values() for entry in entries)


@pytest.mark.parametrize("inside", [True, False], ids=["scheduler-inside", "scheduler-outside"])
def test_mlp_adam_with_scheduler_matches_eager(inside: bool) -> None:
    data = batches("fast", 3)
    models, steps = [], []
    for compiled in (False, True):
        model = mlp("fast")
        opt = optim.AdamW(model.parameters(), lr=0.01, amsgrad=True)
        sched = optim.lr_scheduler.StepLR(opt, 3, 0.5) if inside else optim.lr_scheduler.CosineAnnealingLR(opt, 7)

        def step(x: mt.Tensor, y: mt.Tensor, model: nn.Module = model, opt: Any = opt, sched: Any = sched) -> mt.Tensor:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if inside:
                sched.step()
            return loss

        run = mt.compile(step) if compiled else step

        def outer(x: mt.Tensor, y: mt.Tensor, run: Any = run, sched: Any = sched) -> mt.Tensor:
            loss = run(x, y)
            if not inside:
                sched.step()
            return loss

        models.append((model, opt))
        steps.append(outer)
    assert train(steps[1], data, 20) == train(steps[0], data, 20)
    assert_same_params(models[0][0], models[1][0])
    (_, eager_opt), (_, compiled_opt) = models
    assert eager_opt.param_groups[0]["lr"] == compiled_opt.param_groups[0]["lr"]
    for p, q in zip(eager_opt.param_groups[0]["params"], compiled_opt.param_groups[0]["params"]):
        assert eager_opt.state[p]["step"].item() == compiled_opt.state[q]["step"].item() == 20
        np.testing.assert_array_equal(eager_opt.state[p]["exp_avg_sq"].to_numpy(), compiled_opt.state[q]["exp_avg_sq"].to_numpy())


class CNN(nn.Module):
    def __init__(self, backend: str, side: int):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, padding=1, backend=backend)
        self.fc = nn.Linear(2 * (side // 2) ** 2, 4, backend=backend)

    def forward(self, x: mt.Tensor) -> mt.Tensor:
        return self.fc(F.max_pool2d(F.relu(self.conv(x)), 2).flatten(1))


def test_cnn_matches_eager(backend: str) -> None:
    steps, batch, side = {"cuda": (2, 1, 4), "simple": (20, 2, 4)}.get(backend, (20, 4, 6))
    rng = np.random.default_rng(2)
    data = [(mt.tensor(rng.standard_normal((batch, 1, side, side)), dtype="float32", backend=backend),
             mt.tensor(rng.integers(0, 4, batch), backend=backend)) for _ in range(2)]
    models = []
    for _ in range(2):
        mt.manual_seed(0)
        models.append(CNN(backend, side))
    eager = sgd_step(models[0], optim.SGD(models[0].parameters(), lr=0.05, momentum=0.5))
    compiled = mt.compile(sgd_step(models[1], optim.SGD(models[1].parameters(), lr=0.05, momentum=0.5)))
    assert train(compiled, data, steps) == train(eager, data, steps)
    assert_same_params(models[0], models[1])


def test_dropout_redraws_like_eager() -> None:
    results = []
    for compile_it in (False, True):
        mt.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 2))
        opt = optim.SGD(model.parameters(), lr=0.1)
        step = sgd_step(model, opt)
        step = mt.compile(step) if compile_it else step
        mt.manual_seed(5)
        x, y = mt.randn(4, 8), mt.tensor([0, 1, 1, 0])
        results.append(([step(x, y).item() for _ in range(6)], [p.to_numpy() for p in model.parameters()]))
    assert results[0][0] == results[1][0]
    assert len(set(results[0][0])) > 1  # the masks differ between steps
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_array_equal(a, b)


def test_zero_grad_outside_and_grads_visible() -> None:
    models = [mlp("fast"), mlp("fast")]
    opts = [optim.SGD(m.parameters(), lr=0.1) for m in models]

    def step(x: mt.Tensor, y: mt.Tensor, model: nn.Module = models[1], opt: Any = opts[1]) -> mt.Tensor:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    compiled = mt.compile(step)
    for x, y in batches("fast", 4):
        opts[0].zero_grad()
        loss = F.cross_entropy(models[0](x), y)
        loss.backward()
        opts[0].step()
        opts[1].zero_grad()  # grads are None when the compiled step starts, as when it was traced
        assert compiled(x, y).item() == loss.item()
        assert_same_params(models[0], models[1])
    assert compiled.traces == 1


def test_guards_retrace_on_new_shape_and_dtype() -> None:
    calls = []

    @mt.compile
    def f(x: mt.Tensor, scale: float) -> mt.Tensor:
        calls.append(1)
        return (x * scale).exp().sum(0)

    x = mt.tensor(np.arange(6.0).reshape(3, 2) / 10, dtype="float32")
    for _ in range(3):
        np.testing.assert_allclose(f(x, 2.0).to_numpy(), np.exp(x.to_numpy() * 2).sum(0), rtol=1e-6)
    assert f.traces == 1 and len(calls) == 1
    f(x[:2], 2.0)  # new shape
    f(x.double(), 2.0)  # new dtype
    f(x, 3.0)  # a non-tensor argument is compared by value
    assert f.traces == 4
    np.testing.assert_allclose(f(x.double() + 1, 2.0).to_numpy(), np.exp((x.to_numpy().astype(np.float64) + 1) * 2).sum(0))
    assert f.traces == 4 and f.plans == 4


def test_plan_cache_is_bounded() -> None:
    f = mt.compile(lambda x: x + 1, max_plans=2)
    for n in (1, 2, 3, 1):
        f(mt.zeros(n))
    assert f.plans == 2 and f.traces == 4


def test_outputs_are_not_aliased() -> None:
    f = mt.compile(lambda x: (x * 2, {"sum": x.sum()}))
    a, extra = f(mt.tensor([1.0, 2.0]))
    b, _ = f(mt.tensor([5.0, 6.0]))
    assert a.tolist() == [2.0, 4.0] and extra["sum"].item() == 3.0 and b.tolist() == [10.0, 12.0]
    assert not a.requires_grad


@pytest.mark.parametrize("read", [lambda t: t.item(), lambda t: bool(t > 0), lambda t: t.tolist(), float])
def test_value_read_inside_is_an_error(read: Callable[[mt.Tensor], Any]) -> None:
    def f(x: mt.Tensor) -> mt.Tensor:
        s = x.sum()
        read(s)
        return s

    with pytest.raises(CompileError, match="reads a tensor's value back to Python inside a compiled function"):
        mt.compile(f)(mt.ones(3))
    assert f(mt.ones(3)).item() == 3.0  # uncompiled it runs (and the backends are no longer intercepted)


def test_numpy_argument_is_refused() -> None:
    with pytest.raises(CompileError, match="NumPy array argument"):
        mt.compile(lambda x: x)(np.ones(2))


def test_gpt_step_matches_eager() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "projects"))
    from gpt import GPT, GPTConfig

    from minitensor.nn.utils import clip_grad_norm_

    rng = np.random.default_rng(3)
    data = [tuple(mt.tensor(rng.integers(0, 11, (2, 6))) for _ in range(2)) for _ in range(3)]
    runs = []
    for compile_it in (False, True):
        mt.manual_seed(0)
        model = GPT(GPTConfig(11, block_size=6, n_layer=1, n_head=2, n_embd=8, dropout=0.1), backend="fast")
        opt = model.configure_optimizers(0.1, 1e-2)

        def step(x: mt.Tensor, y: mt.Tensor, model: Any = model, opt: Any = opt) -> mt.Tensor:
            _, loss = model(x, y)
            opt.zero_grad()
            loss.backward()
            clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            return loss

        run = mt.compile(step) if compile_it else step
        mt.manual_seed(7)
        runs.append((train(run, data, 8), [p.to_numpy() for p in model.parameters()]))
    assert runs[0][0] == runs[1][0]
    for a, b in zip(runs[0][1], runs[1][1]):
        np.testing.assert_array_equal(a, b)


def test_replays_still_validate_class_indices() -> None:
    model = mlp("fast")
    opt = optim.Adam(model.parameters(), lr=0.1)
    step = mt.compile(sgd_step(model, opt))
    (x, y), = batches("fast", 1)
    for _ in range(3):
        step(x, y)
    before = [p.to_numpy() for p in model.parameters()]
    with pytest.raises(IndexError, match="out of range"):
        step(x, mt.tensor([99] * len(y)))
    for a, p in zip(before, model.parameters()):  # checked before any kernel ran, as eager checks before any op
        np.testing.assert_array_equal(a, p.to_numpy())
        assert opt.state[p]["step"].item() == 3


def test_index_tensors_traced_without_negatives_replay_negatives_like_eager() -> None:
    """Eager indexing skips the wrap of negative indices when there is none; a traced step wraps always, so a replay
    given negative indices gathers what eager does (and an out-of-range index is still refused)."""
    values = np.arange(24.0).reshape(6, 4)
    table = mt.tensor(values, backend="fast", requires_grad=True)

    def lookup(rows: mt.Tensor, cols: mt.Tensor) -> mt.Tensor:
        return table[rows, cols] * 2.0

    step = mt.compile(lookup)
    for rows, cols in (([0, 3, 5], [1, 0, 3]), ([1, 2, 4], [2, 2, 0]), ([1, -1, 0], [-1, 0, -4]), ([5, -2, 3], [3, -3, -1])):
        args = mt.tensor(rows, backend="fast"), mt.tensor(cols, backend="fast")
        np.testing.assert_array_equal(lookup(*args).to_numpy(), values[rows, cols] * 2)
        np.testing.assert_array_equal(step(*args).to_numpy(), values[rows, cols] * 2)
    with pytest.raises(IndexError, match="out of range"):
        step(mt.tensor([0, 6, 1], backend="fast"), mt.tensor([0, 0, 0], backend="fast"))


def test_state_rebound_between_calls_is_copied_in() -> None:
    """zero_grad(set_to_none=False) inside the step reads last step's gradient buffers; a loaded optimizer state
    replaces the tensors the plan reads: both must behave as in eager."""
    data = batches("fast", 3)
    models = [mlp("fast"), mlp("fast")]
    opts = [optim.Adam(m.parameters(), lr=0.01) for m in models]
    steps = []
    for model, opt in zip(models, opts):
        def step(x: mt.Tensor, y: mt.Tensor, model: nn.Module = model, opt: Any = opt) -> mt.Tensor:
            opt.zero_grad(set_to_none=False)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        steps.append(step)
    compiled = mt.compile(steps[1])
    assert train(compiled, data, 5) == train(steps[0], data, 5)
    saved = opts[0].state_dict()
    for opt in opts:
        opt.load_state_dict(saved)  # new state tensors (copies), same values
    assert train(compiled, data, 4) == train(steps[0], data, 4)
    assert_same_params(models[0], models[1])


def test_input_gradients_reach_the_callers_tensors() -> None:
    w = mt.tensor([1.0, -2.0, 3.0])
    f = mt.compile(lambda x: ((x * w).sum() ** 2).backward())
    for values in ([1.0, 2.0, 3.0], [0.5, 0.0, -1.0]):
        x = mt.tensor(values, requires_grad=True)
        f(x)
        s = float(np.dot(values, w.tolist()))
        np.testing.assert_allclose(x.grad.to_numpy(), 2 * s * w.to_numpy(), rtol=1e-6)


def test_compiled_method() -> None:
    class Trainer:
        def __init__(self) -> None:
            self.model = mlp("fast")
            self.opt = optim.SGD(self.model.parameters(), lr=0.1)

        @mt.compile
        def step(self, x: mt.Tensor, y: mt.Tensor) -> mt.Tensor:
            loss = F.cross_entropy(self.model(x), y)
            loss.backward()
            self.opt.step()
            return loss

    trainer, model = Trainer(), mlp("fast")
    opt = optim.SGD(model.parameters(), lr=0.1)
    data = batches("fast", 2)
    for x, y in data * 3:  # gradients set to None outside: the replays must hand .grad back as the trace left it
        trainer.opt.zero_grad()
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        assert trainer.step(x, y).item() == loss.item()
        assert_same_params(model, trainer.model)
    assert Trainer.step.traces == 1


def test_gradient_accumulation_across_calls() -> None:
    """backward() inside, zero_grad() and step() outside every 3 calls: .grad accumulates over replays as in eager."""
    data = batches("fast", 3)
    models = [mlp("fast"), mlp("fast")]
    opts = [optim.SGD(m.parameters(), lr=0.1) for m in models]

    def backward(x: mt.Tensor, y: mt.Tensor, model: nn.Module) -> mt.Tensor:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        return loss

    compiled = mt.compile(lambda x, y: backward(x, y, models[1]))
    for i in range(12):
        x, y = data[i % 3]
        assert compiled(x, y).item() == backward(x, y, models[0]).item()
        if i % 3 == 2:
            for opt in opts:
                opt.step()
                opt.zero_grad()
        else:
            assert_same_params(models[0], models[1])
    assert compiled.traces == 2


_HELPER_MODEL = mlp("fast")
_HELPER_OPT = optim.SGD(_HELPER_MODEL.parameters(), lr=0.1)


def _helper_backward(x: mt.Tensor, y: mt.Tensor) -> mt.Tensor:
    loss = F.cross_entropy(_HELPER_MODEL(x), y)
    loss.backward()
    return loss


def test_modules_used_by_helper_functions_are_guarded() -> None:
    """The compiled function only names a helper; the helper's global model is found, so grads set to None outside
    are handed back after each replay (else the optimizer outside would see no gradient)."""
    compiled = mt.compile(lambda x, y: _helper_backward(x, y))
    model = mlp("fast")
    opt = optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches("fast", 3) * 2:
        _HELPER_OPT.zero_grad()
        opt.zero_grad()
        assert compiled(x, y).item() == F.cross_entropy(model(x), y).item()
        F.cross_entropy(model(x), y).backward()
        _HELPER_OPT.step()
        opt.step()
        assert_same_params(model, _HELPER_MODEL)


@pytest.mark.parametrize("make", [
    lambda ps: optim.RMSprop(ps, lr=0.01, momentum=0.5, centered=True, weight_decay=0.01),
    lambda ps: optim.Adagrad(ps, lr=0.1, lr_decay=0.01),
    lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01, maximize=True),
], ids=["rmsprop", "adagrad", "sgd-dampening"])
def test_other_optimizers_match_eager(make: Callable[[Any], optim.Optimizer]) -> None:
    data = batches("fast", 2)
    models = [mlp("fast"), mlp("fast")]
    eager = sgd_step(models[0], make(models[0].parameters()))
    compiled = mt.compile(sgd_step(models[1], make(models[1].parameters())))
    assert train(compiled, data, 6) == train(eager, data, 6)
    assert_same_params(models[0], models[1])


def test_batch_norm_buffers_and_eval_mode_match_eager() -> None:
    rng = np.random.default_rng(0)
    data = [(mt.tensor(rng.standard_normal((8, 5)), dtype="float32"), mt.tensor(rng.integers(0, 3, 8))) for _ in range(3)]
    results = []
    for compile_it in (False, True):
        mt.manual_seed(0)
        model = nn.Sequential(nn.Linear(5, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 3))
        step = sgd_step(model, optim.SGD(model.parameters(), lr=0.1, momentum=0.9))
        run = mt.compile(step) if compile_it else step
        losses = train(run, data, 8)
        model.eval()  # a guard: the training flag changed, so a new plan
        losses += train(run, data, 2)
        bn = model[1]
        results.append((losses, bn.running_mean.to_numpy(), bn.running_var.to_numpy(), bn.num_batches_tracked.item()))
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][1], results[1][1])
    np.testing.assert_array_equal(results[0][2], results[1][2])
    assert results[0][3] == results[1][3] == 8


def test_tracing_survives_dead_weak_proxies_in_the_process() -> None:
    """Buffer reuse scans the live objects for Tensors; a ``weakref.proxy`` whose referent died (PyTorch leaves such
    objects around) raises ReferenceError on attribute access and must not break tracing."""
    class Referent:
        pass

    referent = Referent()
    dead = [weakref.proxy(referent)]
    del referent
    fn = mt.compile(lambda t: ((t * 2.0).relu() + 1.0) * 3.0 - t)
    x = mt.tensor(np.arange(-4.0, 4.0), backend="fast")
    np.testing.assert_array_equal(fn(x).to_numpy(), (np.maximum(np.arange(-4.0, 4.0) * 2, 0) + 1) * 3 - np.arange(-4.0, 4.0))
    assert len(dead) == 1


def test_dead_intermediates_share_buffers_and_kept_tensors_keep_their_own() -> None:
    """Buffer reuse: same-size intermediates whose lifetimes do not overlap share memory in the plan (fewer buffers,
    the same results as eager, bit for bit), while a tensor the function keeps outside (appended to a list) keeps its
    own buffer: after each replay it holds that step's value, as it would in eager mode."""
    def make(kept: list[mt.Tensor]) -> Callable[[mt.Tensor], mt.Tensor]:
        def f(x: mt.Tensor) -> mt.Tensor:
            a = (x * 2).relu()
            b = a + 1
            kept.append(b)
            d = (b * 3 - x).exp()
            return (d / 7).sum()

        return f

    kept_eager: list[mt.Tensor] = []
    kept_compiled: list[mt.Tensor] = []
    eager, compiled = make(kept_eager), mt.compile(make(kept_compiled))
    rng = np.random.default_rng(4)
    for _ in range(4):
        x = mt.tensor(rng.standard_normal((64, 128)), dtype="float32", backend="fast")
        assert compiled(x).item() == eager(x).item()
        np.testing.assert_array_equal(kept_compiled[0].to_numpy(), kept_eager[-1].to_numpy())
    plan = next(iter(compiled._plans.values()))[0].plan
    assert plan.reuse.buffers_after < plan.reuse.buffers_before
    assert plan.reuse.bytes_after < plan.reuse.bytes_before
