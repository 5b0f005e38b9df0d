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
    assert layer.weight.value.shape == (3, 4) and layer.bias.value.shape == (3,)
    assert repr(layer) == "Linear(in_features=4, out_features=3, bias=True)"
    x = RNG.standard_normal((2, 4))
    w, b = layer.weight.value.to_numpy(), layer.bias.value.to_numpy()
    np.testing.assert_allclose(layer(mt.tensor(x, backend=backend)).to_numpy(), x @ w.T + b, rtol=1e-10)
    directional_grad_check(layer, x, [layer.weight.value, layer.bias.value], backend)
    assert [n for n, _ in nn.Linear(2, 2, bias=False, backend=backend).named_parameters()] == ["weight"]
    x3 = RNG.standard_normal((2, 2, 4))  # extra leading dims broadcast
    np.testing.assert_allclose(layer(mt.tensor(x3, backend=backend)).to_numpy(), x3 @ w.T + b, rtol=1e-10)


def test_conv_layers(backend):
    conv = nn.Conv2d(2, 3, (3, 2), stride=(2, 1), padding=1, backend=backend)
    assert repr(conv) == "Conv2d(2, 3, kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), bias=True)"
    x = RNG.standard_normal((1, 2, 4, 3))
    expected = nn.conv2d(mt.tensor(x, backend=backend), conv.weight.value, conv.bias.value, (2, 1), 1).to_numpy()
    np.testing.assert_allclose(conv(mt.tensor(x, backend=backend)).to_numpy(), expected)
    assert conv(mt.tensor(x, backend=backend)).shape == (1, 3, 2, 4)
    directional_grad_check(conv, x, [conv.weight.value], backend)
    conv1 = nn.Conv1d(2, 2, 3, padding=1, bias=False, backend=backend)
    assert conv1(mt.zeros(2, 2, 5, backend=backend)).shape == (2, 2, 5)
    assert conv1.bias is None


def test_pool_flatten_dropout_layers(backend):
    x = mt.tensor(RNG.standard_normal((1, 2, 4, 4)), backend=backend)
    assert nn.MaxPool2d(2)(x).shape == (1, 2, 2, 2)
    assert nn.AvgPool2d(3, stride=1)(x).shape == (1, 2, 2, 2)
    assert repr(nn.MaxPool2d(2)) == "MaxPool2d(kernel_size=(2, 2), stride=(2, 2))"
    assert nn.Flatten()(x).shape == (1, 32)
    drop = nn.Dropout(0.5)
    assert repr(drop) == "Dropout(p=0.5)"
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
    assert [n for n, _ in layer.named_buffers()] == ["running_mean", "running_var"]
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
        directional_grad_check(layer, x, [layer.weight.value, layer.bias.value], backend)
    with pytest.raises(ShapeError):
        layer(mt.zeros(2, 4, backend=backend))


def test_embedding(backend):
    emb = nn.Embedding(5, 3, backend=backend)
    w = emb.weight.value.to_numpy()
    idx = np.array([[1, 4], [1, 0]])
    out = emb(idx)
    assert out.shape == (2, 2, 3)
    np.testing.assert_allclose(out.to_numpy(), w[idx])
    (out * mt.tensor(np.arange(12.0).reshape(2, 2, 3), backend=backend)).sum().backward()
    expected = np.zeros((5, 3))
    np.add.at(expected, idx.reshape(-1), np.arange(12.0).reshape(4, 3))  # repeated index 1 accumulates
    np.testing.assert_allclose(emb.weight.value.grad.to_numpy(), expected)
    np.testing.assert_allclose(emb(mt.tensor([3.0], backend=backend)).to_numpy(), w[[3]])
    with pytest.raises(IndexError):
        emb([5])


def test_sequential_and_repr(backend):
    model = nn.Sequential(nn.Linear(3, 4, backend=backend), nn.ReLU(), nn.Linear(4, 2, backend=backend))
    assert len(model) == 3 and isinstance(model[1], nn.ReLU) and len(model[1:]) == 2
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert "(0): Linear(in_features=3, out_features=4, bias=True)" in repr(model)
    assert model(mt.zeros(5, 3, backend=backend)).shape == (5, 2)


def test_to_moves_parameters_and_buffers(backend):
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    params = model.parameters()
    before = [p.value.to_numpy() for p in params]
    assert model.to(backend) is model
    assert model.parameters() == params  # same Parameter objects
    for p, old in zip(params, before):
        assert p.value.backend.name == backend and p.value.requires_grad and p.value.is_leaf()
        np.testing.assert_array_equal(p.value.to_numpy(), old)
    assert all(b.backend.name == backend for _, b in model.named_buffers())
    model.to("float32")
    assert all(p.value.dtype == np.float32 for p in params)
    assert all(b.dtype == np.float32 for _, b in model.named_buffers())
    out = model(mt.zeros(4, 3, backend=backend, dtype="float32"))
    assert out.dtype == np.float32 and out.backend.name == backend
    plain = mt.Module()
    plain.lin = nn.Linear(2, 2)
    nn.to(plain, backend)  # works for any Module
    assert plain.lin.weight.value.backend.name == backend


def test_init():
    mt.manual_seed(0)
    assert init.calculate_fans((8, 4, 3, 3)) == (36, 72)
    w = init.kaiming_uniform((200, 50), nonlinearity="relu")
    bound = math.sqrt(2) * math.sqrt(3 / 50)
    assert np.abs(w.to_numpy()).max() <= bound and np.abs(w.to_numpy()).max() > 0.9 * bound
    assert init.xavier_normal((300, 200)).to_numpy().std() == pytest.approx(math.sqrt(2 / 500), rel=0.05)
    assert init.kaiming_normal((400, 100)).to_numpy().std() == pytest.approx(math.sqrt(2 / 100), rel=0.05)
    x = init.xavier_uniform((30, 20), gain=2.0, dtype="float32")
    assert x.dtype == np.float32 and np.abs(x.to_numpy()).max() <= 2 * math.sqrt(6 / 50)
    assert np.all(init.ones(3).to_numpy() == 1) and np.all(init.zeros((2, 2)).to_numpy() == 0)
    assert 0 <= init.uniform(100, 0.0, 0.5).to_numpy().min() and init.uniform(100, 0.0, 0.5).to_numpy().max() < 0.5
    mt.manual_seed(1)
    a = init.normal((3,), 1.0, 2.0).to_numpy()
    mt.manual_seed(1)
    np.testing.assert_array_equal(a, init.normal((3,), 1.0, 2.0).to_numpy())
    layer = nn.Linear(4, 2)
    init.zeros_(layer.weight)
    assert np.all(layer.weight.value.to_numpy() == 0) and layer.weight.value.requires_grad
    with pytest.raises(ShapeError):
        init.xavier_uniform((3,))


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
    assert layer.parameters() == [] and "affine=False" in repr(layer)
    x = np.array([[1.0, 2.0], [3.0, 6.0]])
    np.testing.assert_allclose(layer(mt.tensor(x)).to_numpy(), [[-1.0, -1.0], [1.0, 1.0]], rtol=1e-5)
