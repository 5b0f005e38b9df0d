"""nn layers: forward against NumPy, gradients, buffers, moving between backends, overfitting small batches."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import BACKENDS

import minitensor as mt
from minitensor import nn, optim
from minitensor.errors import ShapeError
from minitensor.nn import init

RNG = np.random.default_rng(11)


def directional_grad_check(fn, x, param_tensors, backend, eps=1e-6, tol=1e-6):
    """Check d(sum(w * fn(x)))/dx along a random direction against central differences."""
    w = np.random.default_rng(3).standard_normal(fn(mt.tensor(x, backend=backend)).shape)
    t = mt.tensor(x, backend=backend, requires_grad=True)
    (fn(t) * mt.tensor(w, backend=backend)).sum().backward()
    v = np.random.default_rng(4).standard_normal(x.shape)
    f = lambda a: float((fn(mt.tensor(a, backend=backend)).to_numpy() * w).sum())  # noqa: E731
    numeric = (f(x + eps * v) - f(x - eps * v)) / (2 * eps)
    assert abs(numeric - float((t.grad.to_numpy() * v).sum())) <= tol * max(1.0, abs(numeric))
    for p in param_tensors:
        assert p.grad is not None and p.grad.shape == p.shape


def test_linear(backend):
    layer = nn.Linear(4, 3, backend=backend)
    assert layer.weight.shape == (3, 4) and layer.bias.shape == (3,)
    assert repr(layer) == "Linear(in_features=4, out_features=3, bias=True)"
    x = RNG.standard_normal((2, 4))
    w, b = layer.weight.to_numpy(), layer.bias.to_numpy()
    np.testing.assert_allclose(layer(mt.tensor(x, backend=backend)).to_numpy(), x @ w.T + b, rtol=1e-10)
    directional_grad_check(layer, x, [layer.weight, layer.bias], backend)
    assert [n for n, _ in nn.Linear(2, 2, bias=False, backend=backend).named_parameters()] == ["weight"]
    x3 = RNG.standard_normal((2, 2, 4))  # extra leading dims broadcast
    np.testing.assert_allclose(layer(mt.tensor(x3, backend=backend)).to_numpy(), x3 @ w.T + b, rtol=1e-10)


def test_flatten_dropout_layers(backend):  # pooling: tests/test_nn_pooling.py
    x = mt.tensor(RNG.standard_normal((1, 2, 4, 4)), backend=backend)
    assert nn.Flatten()(x).shape == (1, 32)
    drop = nn.Dropout(0.5)
    assert repr(drop) == "Dropout(p=0.5, inplace=False)"
    drop.eval()
    assert drop(x) is x
    drop.train()
    assert np.mean(drop(mt.ones(10, 10, backend=backend)).to_numpy() == 0) > 0.2


def test_activation_layers(backend):
    x = RNG.standard_normal((2, 3))
    t = mt.tensor(x, backend=backend)
    np.testing.assert_allclose(nn.ReLU()(t).to_numpy(), np.maximum(x, 0))
    np.testing.assert_allclose(nn.Sigmoid()(t).to_numpy(), 1 / (1 + np.exp(-x)), rtol=1e-12)
    np.testing.assert_allclose(nn.Tanh()(t).to_numpy(), np.tanh(x), rtol=1e-12)
    np.testing.assert_allclose(nn.LeakyReLU(0.2)(t).to_numpy(), np.where(x > 0, x, 0.2 * x))
    assert nn.GELU()(t).shape == (2, 3)
    assert repr(nn.LeakyReLU(0.2)) == "LeakyReLU(negative_slope=0.2)"
    np.testing.assert_allclose(nn.Softmax(1)(t).to_numpy().sum(1), 1.0)


@pytest.mark.parametrize("kind", ["1d", "1d-seq", "2d"])
def test_batchnorm(backend, kind):
    shape, dims = {"1d": ((4, 3), (0,)), "1d-seq": ((2, 3, 2), (0, 2)), "2d": ((2, 3, 2, 2), (0, 2, 3))}[kind]
    layer = (nn.BatchNorm2d if kind == "2d" else nn.BatchNorm1d)(3, momentum=0.2, backend=backend, dtype="float64")
    assert [n for n, _ in layer.named_buffers()] == ["running_mean", "running_var", "num_batches_tracked"]
    x = RNG.standard_normal(shape) * 2 + 1
    mean, var = x.mean(dims, keepdims=True), x.var(dims, keepdims=True)
    out = layer(mt.tensor(x, backend=backend)).to_numpy()
    np.testing.assert_allclose(out, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-8, atol=1e-10)
    n = x.size // 3
    np.testing.assert_allclose(layer.running_mean.to_numpy(), 0.2 * mean.reshape(3), rtol=1e-10)
    np.testing.assert_allclose(layer.running_var.to_numpy(), 0.8 + 0.2 * var.reshape(3) * n / (n - 1), rtol=1e-10)
    layer.eval()
    rm, rv = layer.running_mean.to_numpy(), layer.running_var.to_numpy()
    view = [3 if d == 1 else 1 for d in range(len(shape))]
    out = layer(mt.tensor(x, backend=backend)).to_numpy()
    np.testing.assert_allclose(out, (x - rm.reshape(view)) / np.sqrt(rv.reshape(view) + 1e-5), rtol=1e-8)
    np.testing.assert_allclose(layer.running_mean.to_numpy(), rm)  # eval does not update
    layer.train()
    if backend != "cuda" or kind == "2d":  # the CUDA simulator is slow
        directional_grad_check(layer, x, [layer.weight, layer.bias], backend)
    with pytest.raises(ShapeError):
        layer(mt.zeros(2, 4, backend=backend))


def test_sequential_and_repr(backend):
    model = nn.Sequential(nn.Linear(3, 4, backend=backend), nn.ReLU(), nn.Linear(4, 2, backend=backend))
    assert len(model) == 3 and isinstance(model[1], nn.ReLU) and len(model[1:]) == 2
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert "(0): Linear(in_features=3, out_features=4, bias=True)" in repr(model)
    assert model(mt.zeros(5, 3, backend=backend)).shape == (5, 2)


def test_to_moves_parameters_and_buffers(backend):
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    params = list(model.parameters())
    before = [p.to_numpy() for p in params]
    assert model.to(backend) is model
    assert list(model.parameters()) == params  # same Parameter objects
    for p, old in zip(params, before):
        assert p.backend.name == backend and p.requires_grad and p.is_leaf
        np.testing.assert_array_equal(p.to_numpy(), old)
    assert all(b.backend.name == backend for _, b in model.named_buffers())
    model.to("float32")
    assert all(p.dtype == np.float32 for p in params)
    assert all(b.dtype == np.float32 for _, b in model.named_buffers() if b.is_floating_point())
    out = model(mt.zeros(4, 3, backend=backend, dtype="float32"))
    assert out.dtype == np.float32 and out.backend.name == backend
    plain = mt.nn.Module()
    plain.lin = nn.Linear(2, 2)
    plain.to(backend)  # works for any Module
    assert plain.lin.weight.backend.name == backend


def test_init_matches_torch_formulas():
    """Each initializer's bound or spread follows torch's formula for the same shape and options."""
    torch = pytest.importorskip("torch")
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(torch.nn.init.calculate_gain("leaky_relu", 0.2))
    assert init.calculate_gain("tanh") == pytest.approx(torch.nn.init.calculate_gain("tanh"))
    mt.manual_seed(0)
    cases = [
        (lambda t: init.kaiming_uniform_(t, nonlinearity="relu"), (200, 50), "uniform", math.sqrt(2) * math.sqrt(3 / 50)),
        (lambda t: init.kaiming_uniform_(t, a=math.sqrt(5)), (60, 8, 3, 3), "uniform", math.sqrt(6 / 6 / 72)),
        (lambda t: init.xavier_uniform_(t, gain=2.0), (30, 20), "uniform", 2 * math.sqrt(6 / 50)),
        (lambda t: init.kaiming_normal_(t, mode="fan_out"), (100, 400), "normal", math.sqrt(2 / 1.0001) / math.sqrt(100)),
        (lambda t: init.xavier_normal_(t), (300, 200), "normal", math.sqrt(2 / 500)),
        (lambda t: init.normal_(t, 1.0, 2.0), (100, 100), "normal", 2.0),
        (lambda t: init.uniform_(t, -0.5, 0.5), (100, 100), "uniform", 0.5),
    ]
    for fill, shape, kind, scale in cases:
        t = mt.empty(*shape, dtype=mt.float64)
        assert fill(t) is t
        values = t.numpy()
        if kind == "uniform":
            assert np.abs(values).max() <= scale and np.abs(values).max() > 0.95 * scale, shape
        else:
            assert values.std() == pytest.approx(scale, rel=0.05), shape
    t = init.trunc_normal_(mt.empty(1000), std=1.0, a=-0.5, b=0.5).numpy()
    assert t.min() >= -0.5 and t.max() <= 0.5 and t.std() > 0.2
    q = init.orthogonal_(mt.empty(3, 5, dtype=mt.float64)).numpy()
    np.testing.assert_allclose(q @ q.T, np.eye(3), atol=1e-12)
    np.testing.assert_array_equal(init.eye_(mt.empty(2, 3)).numpy(), np.eye(2, 3))
    layer = nn.Linear(4, 2)
    weight = layer.weight
    init.zeros_(layer.weight)
    assert layer.weight is weight and np.all(weight.numpy() == 0) and weight.requires_grad and weight.is_leaf
    init.constant_(layer.bias, 0.5)
    assert layer.bias.tolist() == [0.5, 0.5]
    mt.manual_seed(1)
    a = init.normal_(mt.empty(3)).numpy()
    mt.manual_seed(1)
    np.testing.assert_array_equal(a, init.normal_(mt.empty(3)).numpy())
    with pytest.raises(ShapeError):
        init.xavier_uniform_(mt.empty(3))
    assert nn.Linear(0, 3)(mt.empty(2, 0)).shape == (2, 3)  # zero fan-in works as in torch
    with pytest.raises(ValueError, match="in_features"):
        nn.Linear(-1, 3)


# --- overfitting small batches ---

FAST = "fast" if "fast" in BACKENDS else "simple"


def _overfit(model, x, y, backend, steps, lr):
    opt = optim.Adam(model.parameters(), lr=lr)
    xt = mt.tensor(x, backend=backend)
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.cross_entropy(model(xt), y)
        loss.backward()
        opt.step()
    return loss.item()


def test_mlp_overfits():
    mt.manual_seed(0)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 5)), rng.integers(0, 3, 16)
    model = nn.Sequential(nn.Linear(5, 32, backend=FAST), nn.ReLU(), nn.Linear(32, 3, backend=FAST))
    assert _overfit(model, x, y, FAST, 50, 0.05) < 0.01


def test_lenet_overfits():
    mt.manual_seed(0)
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((8, 1, 8, 8)), rng.integers(0, 4, 8)
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1, backend=FAST), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 8, 3, backend=FAST), nn.ReLU(), nn.AvgPool2d(2), nn.Flatten(),
        nn.Linear(8, 16, backend=FAST), nn.GELU(), nn.Linear(16, 4, backend=FAST),
    )
    assert _overfit(model, x, y, FAST, 40, 0.05) < 0.01


def test_batchnorm_without_affine():
    layer = nn.BatchNorm1d(2, affine=False)
    assert list(layer.parameters()) == [] and "affine=False" in repr(layer)
    x = np.array([[1.0, 2.0], [3.0, 6.0]])
    np.testing.assert_allclose(layer(mt.tensor(x)).to_numpy(), [[-1.0, -1.0], [1.0, 1.0]], rtol=1e-5)
