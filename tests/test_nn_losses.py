"""Losses: forward against NumPy, backward against central differences, target validation."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn
from minitensor.errors import DTypeError, IndexOutOfRangeError, ShapeError

RNG = np.random.default_rng(5)


def check_grad(fn, x, backend, eps=1e-6, tol=1e-6):
    t = mt.tensor(x, backend=backend, dtype="float64", requires_grad=True)
    fn(t).backward()
    grad = t.grad.to_numpy()
    v = np.random.default_rng(2).standard_normal(x.shape)
    f = lambda a: fn(mt.tensor(a, backend=backend, dtype="float64")).item()  # noqa: E731
    numeric = (f(x + eps * v) - f(x - eps * v)) / (2 * eps)
    assert abs(numeric - float((grad * v).sum())) <= tol * max(1.0, abs(numeric))


def np_logsoftmax(x):
    z = x - x.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_regression_losses(backend, reduction):
    x, y = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4)) * 2
    red = np.mean if reduction == "mean" else np.sum
    d = x - y
    a = np.abs(d)
    expected = {
        nn.mse_loss: red(d**2),
        nn.l1_loss: red(a),
        nn.huber_loss: red(np.where(a <= 1.0, 0.5 * d**2, a - 0.5)),
    }
    for fn, value in expected.items():
        t = mt.tensor(x, backend=backend)
        for target in (y, mt.tensor(y, backend=backend)):
            assert fn(t, target, reduction=reduction).item() == pytest.approx(value, rel=1e-10)
        if backend != "cuda" or reduction == "mean":  # the CUDA simulator is slow
            check_grad(lambda z, fn=fn: fn(z, y, reduction=reduction), x, backend)
    huber = nn.huber_loss(mt.tensor(x, backend=backend), y, delta=0.5).item()
    assert huber == pytest.approx(np.mean(np.where(a <= 0.5, 0.5 * d**2, 0.5 * (a - 0.25))), rel=1e-10)
    assert nn.mse_loss(mt.tensor(x, backend=backend), y, reduction="none").shape == (3, 4)


def test_binary_cross_entropy(backend):
    p, y = RNG.uniform(0.05, 0.95, (2, 3)), (RNG.random((2, 3)) > 0.5).astype(float)
    expected = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    assert nn.binary_cross_entropy(mt.tensor(p, backend=backend), y).item() == pytest.approx(expected, rel=1e-10)
    check_grad(lambda z: nn.binary_cross_entropy(z, y), p, backend)
    # log is clamped at -100 like PyTorch
    edge = nn.binary_cross_entropy(mt.tensor([0.0, 1.0], backend=backend), [1.0, 0.0], reduction="sum").item()
    assert edge == pytest.approx(200.0)


def test_binary_cross_entropy_with_logits_stable(backend):
    x, y = RNG.standard_normal((2, 3)) * 3, (RNG.random((2, 3)) > 0.5).astype(float)
    p = 1 / (1 + np.exp(-x))
    expected = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    assert nn.binary_cross_entropy_with_logits(mt.tensor(x, backend=backend), y).item() == pytest.approx(expected, rel=1e-10)
    check_grad(lambda z: nn.binary_cross_entropy_with_logits(z, y), x, backend)
    big = nn.binary_cross_entropy_with_logits(mt.tensor([1000.0, -1000.0], backend=backend), [0.0, 1.0], reduction="sum")
    assert big.item() == pytest.approx(2000.0)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_and_nll(backend, reduction):
    x, target = RNG.standard_normal((4, 3)), np.array([0, 2, 1, 2])
    picked = np_logsoftmax(x)[np.arange(4), target]
    expected = -(picked.mean() if reduction == "mean" else picked.sum())
    t = mt.tensor(x, backend=backend)
    for form in (target, target.tolist(), mt.tensor(target, backend=backend)):
        assert nn.cross_entropy(t, form, reduction=reduction).item() == pytest.approx(expected, rel=1e-10)
    assert nn.nll_loss(nn.logsoftmax(t, 1), target, reduction=reduction).item() == pytest.approx(expected, rel=1e-10)
    check_grad(lambda z: nn.cross_entropy(z, target, reduction=reduction), x, backend)


def test_cross_entropy_huge_logits(backend):
    x = np.array([[1000.0, -1000.0, 0.0], [500.0, 501.0, -2000.0]])
    loss = nn.cross_entropy(mt.tensor(x, backend=backend, dtype="float32"), [0, 0]).item()
    assert np.isfinite(loss)
    assert loss == pytest.approx(np.mean([0.0, 1.0 + np.log1p(np.exp(-1.0))]), rel=1e-5)


def test_class_target_errors(backend):
    t = mt.zeros(3, 4, backend=backend)
    with pytest.raises(IndexOutOfRangeError, match=r"target\[1\]=4.*target\[2\]=-1"):
        nn.cross_entropy(t, [0, 4, -1])
    with pytest.raises(ShapeError, match="batch of 3"):
        nn.cross_entropy(t, [0, 1])
    with pytest.raises(ShapeError):
        nn.nll_loss(t, [[0, 1, 2]])
    with pytest.raises(DTypeError, match="non-integral"):
        nn.cross_entropy(t, np.array([0.0, 1.5, 2.0]))
    with pytest.raises(ShapeError):
        nn.cross_entropy(mt.zeros(3, backend=backend), [0, 1, 2])
    with pytest.raises(ShapeError, match="differ"):
        nn.mse_loss(t, np.zeros((4, 3)))
    with pytest.raises(ValueError, match="reduction"):
        nn.mse_loss(t, np.zeros((3, 4)), reduction="avg")
