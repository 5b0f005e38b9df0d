"""Optimizers against hand-written NumPy references of PyTorch's update rules; schedulers; state dicts."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn, optim

STEPS = 4
GRADS = [np.random.default_rng(i).standard_normal((2, 3)) for i in range(STEPS)]
P0 = np.random.default_rng(99).standard_normal((2, 3))


def ref_sgd(lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    p, buf = P0.copy(), None
    for g in GRADS:
        g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


def ref_adam(lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, decoupled=False):
    p, m, v, vmax = P0.copy(), np.zeros_like(P0), np.zeros_like(P0), np.zeros_like(P0)
    for t, g in enumerate(GRADS, start=1):
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        vmax = np.maximum(vmax, v)
        mhat = m / (1 - betas[0] ** t)
        vhat = (vmax if amsgrad else v) / (1 - betas[1] ** t)
        p = p - lr * mhat / (np.sqrt(vhat) + eps)
    return p


def ref_rmsprop(lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False):
    p, sq, ga, buf = P0.copy(), np.zeros_like(P0), np.zeros_like(P0), np.zeros_like(P0)
    for g in GRADS:
        g = g + weight_decay * p
        sq = alpha * sq + (1 - alpha) * g * g
        if centered:
            ga = alpha * ga + (1 - alpha) * g
            avg = np.sqrt(sq - ga * ga) + eps
        else:
            avg = np.sqrt(sq) + eps
        if momentum:
            buf = momentum * buf + g / avg
            p = p - lr * buf
        else:
            p = p - lr * g / avg
    return p


def ref_adagrad(lr, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10):
    p, total = P0.copy(), np.full_like(P0, initial_accumulator_value)
    for t, g in enumerate(GRADS, start=1):
        g = g + weight_decay * p
        total = total + g * g
        p = p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(total) + eps)
    return p


CASES = [
    (optim.SGD, ref_sgd, dict(lr=0.1)),
    (optim.SGD, ref_sgd, dict(lr=0.1, momentum=0.9, weight_decay=0.01)),
    (optim.SGD, ref_sgd, dict(lr=0.1, momentum=0.8, dampening=0.3)),
    (optim.SGD, ref_sgd, dict(lr=0.1, momentum=0.9, nesterov=True)),
    (optim.Adam, ref_adam, dict(lr=0.01)),
    (optim.Adam, ref_adam, dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    (optim.AdamW, lambda **k: ref_adam(decoupled=True, **{"weight_decay": 1e-2, **k}), dict(lr=0.01)),
    (optim.AdamW, lambda **k: ref_adam(decoupled=True, **k), dict(lr=0.01, weight_decay=0.3)),
    (optim.RMSProp, ref_rmsprop, dict(lr=0.01)),
    (optim.RMSProp, ref_rmsprop, dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    (optim.Adagrad, ref_adagrad, dict(lr=0.1)),
    (optim.Adagrad, ref_adagrad, dict(lr=0.1, lr_decay=0.5, weight_decay=0.1, initial_accumulator_value=0.2)),
]


def _run(cls, kwargs, backend, steps=STEPS, dtype="float64"):
    param = mt.Parameter(mt.tensor(P0, backend=backend, dtype=dtype))
    opt = cls([param], **kwargs)
    for g in GRADS[:steps]:
        param.grad = mt.tensor(g, backend=backend, dtype=dtype)
        opt.step()
    return param, opt


@pytest.mark.parametrize("cls,ref,kwargs", CASES, ids=[f"{c.__name__}-{i}" for i, (c, _, _) in enumerate(CASES)])
def test_update_rules_match_numpy(backend, cls, ref, kwargs):
    param, _ = _run(cls, kwargs, backend)
    np.testing.assert_allclose(param.to_numpy(), ref(**kwargs), rtol=1e-10, atol=1e-12)
    assert param.backend.name == backend and param.dtype == np.float64
    assert param.requires_grad and param.is_leaf


def test_float32_stays_float32(backend):
    param, _ = _run(optim.Adam, dict(lr=0.01), backend, dtype="float32")
    assert param.dtype == np.float32
    np.testing.assert_allclose(param.to_numpy(), ref_adam(0.01), rtol=1e-4)


@pytest.mark.parametrize("cls,ref,kwargs", [CASES[1], CASES[5], CASES[9], CASES[11]])
def test_state_dict_resumes_exactly(cls, ref, kwargs):
    param, opt = _run(cls, kwargs, "simple", steps=2)
    saved_state, saved_value = opt.state_dict(), param.to_numpy()
    fresh = mt.Parameter(mt.tensor(saved_value))
    resumed = cls([fresh], lr=123.0)
    resumed.load_state_dict(saved_state)
    assert resumed.lr == kwargs["lr"]
    for g in GRADS[2:]:
        fresh.grad = mt.tensor(g)
        resumed.step()
    np.testing.assert_allclose(fresh.to_numpy(), ref(**kwargs), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError):
        cls([fresh, mt.Parameter(mt.zeros(1))], lr=0.1).load_state_dict(saved_state)


def test_zero_grad_param_groups_and_skipping():
    a, b = mt.Parameter(mt.ones(2)), mt.Parameter(mt.ones(2))
    opt = optim.SGD([{"params": [a], "lr": 0.5}, {"params": [b]}], lr=0.1)
    a.grad = mt.ones(2)
    opt.step()  # b has no grad: untouched
    np.testing.assert_allclose(a.to_numpy(), [0.5, 0.5])
    np.testing.assert_allclose(b.to_numpy(), [1.0, 1.0])
    assert a.grad is not None
    opt.zero_grad()
    assert a.grad is None
    with pytest.raises(TypeError):
        optim.SGD([np.ones(2)], lr=0.1)
    with pytest.raises(ValueError):
        optim.SGD([], lr=0.1)


def test_training_reduces_loss(backend):
    mt.manual_seed(0)
    model = nn.Linear(3, 1, backend=backend)
    x = mt.tensor(np.random.default_rng(0).standard_normal((8, 3)), backend=backend)
    y = x.to_numpy() @ np.array([[1.0], [-2.0], [0.5]])
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    losses = []
    steps = 4 if backend == "cuda" else 15  # the CUDA simulator is slow
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < (0.7 if backend == "cuda" else 0.1) * losses[0]


def test_step_lr():
    opt = optim.SGD([mt.Parameter(mt.ones(1))], lr=1.0)
    sched = optim.StepLR(opt, step_size=2, gamma=0.5)
    lrs = [opt.lr]
    for _ in range(5):
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert lrs == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]


def test_cosine_annealing_lr():
    opt = optim.Adam([mt.Parameter(mt.ones(1))], lr=0.1)
    sched = optim.CosineAnnealingLR(opt, T_max=4, eta_min=0.01)
    lrs = [opt.lr]
    for _ in range(4):
        sched.step()
        lrs.append(opt.lr)
    expected = [0.01 + 0.09 * (1 + math.cos(math.pi * t / 4)) / 2 for t in range(5)]
    np.testing.assert_allclose(lrs, expected)
    state = sched.state_dict()
    again = optim.CosineAnnealingLR(optim.Adam([mt.Parameter(mt.ones(1))], lr=0.1), T_max=4, eta_min=0.01)
    again.load_state_dict(state)
    assert again.get_last_lr() == pytest.approx([0.01])


TORCH_CASES = [
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01, weight_decay=0.3)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.5, initial_accumulator_value=0.2)),
]


@pytest.mark.parametrize("name,kwargs", TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_against_torch_when_available(name, kwargs):
    torch = pytest.importorskip("torch")
    theirs = torch.tensor(P0.copy(), requires_grad=True)
    torch_opt = getattr(torch.optim, name)([theirs], **kwargs)
    mine, _ = _run(getattr(optim, name), kwargs, "simple")
    for g in GRADS:
        theirs.grad = torch.tensor(g)
        torch_opt.step()
    np.testing.assert_allclose(mine.to_numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
