"""The nn.utils additions against torch.nn.utils: get_total_norm, clip_grads_with_norm_, weight_norm and
spectral_norm (hooks and parametrizations), parametrize, rnn.pad_sequence, the batchnorm fusions, skip_init, and
Module.register_forward_pre_hook."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor import nn
from minitensor.errors import ShapeError
from minitensor.nn import utils
from minitensor.nn.utils import parametrizations, parametrize, rnn

torch = pytest.importorskip("torch")

CUDA = [pytest.param("cuda", marks=pytest.mark.skipif("cuda" not in BACKENDS, reason="no cuda backend"))]
RNG = np.random.default_rng(11)


def load_from(ours: nn.Module, theirs, backend: str) -> None:
    """Copy a torch module's state dict into ours (strict: the keys must be the same)."""
    ours.load_state_dict({k: mt.tensor(v.detach().numpy(), backend=backend) for k, v in theirs.state_dict().items()})


def close(a, b, tol: float = 1e-10) -> None:
    a = a.to_numpy() if isinstance(a, mt.Tensor) else a
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else b
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def forward_backward(ours, theirs, shape: tuple[int, ...], backend: str):
    """Both modules on the same input; the weighted-sum loss's gradients; returns (ours, theirs) outputs."""
    x = RNG.standard_normal(shape)
    xo, xt = mt.tensor(x, backend=backend, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = ours(xo), theirs(xt)
    w = RNG.standard_normal(tuple(yt.shape))
    (yo * mt.tensor(w, backend=backend)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    close(yo, yt)
    close(xo.grad, xt.grad)
    return yo, yt


def grads_match(ours: nn.Module, theirs) -> None:
    mine = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        assert name in mine, (name, list(mine))
        close(mine[name].grad, p.grad)


# --- norms ---


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3.0])
def test_get_total_norm_and_clip_grads_with_norm_match_torch(norm_type: float) -> None:
    arrays = [RNG.standard_normal((2, 3)), RNG.standard_normal(4)]
    ours = [nn.Parameter(mt.tensor(a)) for a in arrays]
    theirs = [torch.nn.Parameter(torch.tensor(a)) for a in arrays]
    for o, t, a in zip(ours, theirs, arrays):
        o.grad, t.grad = mt.tensor(2 * a), torch.tensor(2 * a)
    total = utils.get_total_norm([o.grad for o in ours], norm_type)
    expected = torch.nn.utils.get_total_norm([t.grad for t in theirs], norm_type)
    close(total, expected)
    utils.clip_grads_with_norm_(ours, 0.5, total)
    torch.nn.utils.clip_grads_with_norm_(theirs, 0.5, expected)
    for o, t in zip(ours, theirs):
        close(o.grad, t.grad)
    assert utils.get_total_norm(mt.tensor(arrays[0])).item() == pytest.approx(np.linalg.norm(arrays[0]))


def test_total_norm_edge_cases() -> None:
    assert utils.get_total_norm([]).item() == 0.0
    with pytest.raises(RuntimeError, match="non-finite"):
        utils.get_total_norm([mt.tensor([math.inf, 1.0])], error_if_nonfinite=True)
    p = nn.Parameter(mt.ones(2))
    utils.clip_grads_with_norm_([p], 1.0, mt.tensor(4.0))  # no gradient: nothing to do
    p.grad = mt.ones(2)
    with pytest.raises(TypeError, match="total_norm must be a Tensor"):
        utils.clip_grads_with_norm_(p, 1.0, 4.0)  # type: ignore[arg-type]


# --- forward pre-hooks ---


def test_forward_pre_hooks_follow_torch() -> None:
    calls: list[str] = []
    layer = nn.Linear(2, 2)
    h1 = layer.register_forward_pre_hook(lambda m, args: calls.append("a") or (args[0] * 0.0,))
    layer.register_forward_pre_hook(lambda m, args: calls.append("b"), prepend=True)
    out = layer(mt.ones(1, 2))
    assert calls == ["b", "a"]
    close(out, layer.bias.detach().view(1, 2))
    h1.remove()
    layer.register_forward_pre_hook(lambda m, args: args[0] + 1.0)  # a non-tuple result becomes (result,)
    layer.register_forward_pre_hook(lambda m, args, kwargs: ((args[0] * 2.0,), kwargs), with_kwargs=True)
    w, b = layer.weight.detach().to_numpy(), layer.bias.detach().to_numpy()
    close(layer(mt.zeros(1, 2)), np.full((1, 2), 2.0) @ w.T + b, 1e-6)
    with layer.register_forward_pre_hook(lambda m, args, kwargs: "bad", with_kwargs=True):
        with pytest.raises(RuntimeError, match="must return None or a tuple"):
            layer(mt.zeros(1, 2))
    close(layer(mt.zeros(1, 2)), np.full((1, 2), 2.0) @ w.T + b, 1e-6)  # the with block removed it


# --- weight_norm (hooks) ---

LAYERS = {
    "linear": (lambda L, **k: L.nn.Linear(4, 3, **k), (2, 4)),
    "conv1d": (lambda L, **k: L.nn.Conv1d(2, 3, 3, **k), (2, 2, 5)),
    "conv_transpose1d": (lambda L, **k: L.nn.ConvTranspose1d(2, 3, 3, **k), (2, 2, 4)),
}


def pair(kind: str, backend: str):
    make, shape = LAYERS[kind]
    return make(mt, dtype="float64", backend=backend), make(torch, dtype=torch.float64), shape


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("kind, dim", [("linear", 0), ("linear", None), ("conv1d", 1), ("conv_transpose1d", 2)])
def test_weight_norm_matches_torch(backend: str, kind: str, dim: int | None) -> None:
    ours, theirs, shape = pair(kind, backend)
    with pytest.warns(FutureWarning):
        torch.nn.utils.weight_norm(theirs, dim=dim)
    assert utils.weight_norm(ours, dim=dim) is ours
    assert list(ours.state_dict()) == list(theirs.state_dict())
    load_from(ours, theirs, backend)
    forward_backward(ours, theirs, shape, backend)
    grads_match(ours, theirs)
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        utils.weight_norm(ours)
    utils.remove_weight_norm(ours)
    torch.nn.utils.remove_weight_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) and isinstance(ours.weight, nn.Parameter)
    close(ours.weight, theirs.weight)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        utils.remove_weight_norm(ours)


# --- spectral_norm (hooks) ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("kind, iterations", [("linear", 1), ("conv1d", 3), ("conv_transpose1d", 1)])
def test_spectral_norm_matches_torch(backend: str, kind: str, iterations: int) -> None:
    ours, theirs, shape = pair(kind, backend)
    torch.nn.utils.spectral_norm(theirs, n_power_iterations=iterations)
    utils.spectral_norm(ours, n_power_iterations=iterations)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    load_from(ours, theirs, backend)
    for _ in range(2):  # training: the power iteration updates the buffers in place each forward
        forward_backward(ours, theirs, shape, backend)
        close(ours.weight_u, theirs.weight_u)
        close(ours.weight_v, theirs.weight_v)
    grads_match(ours, theirs)
    ours.eval()
    theirs.eval()
    u = ours.weight_u.to_numpy().copy()
    forward_backward(ours, theirs, shape, backend)
    np.testing.assert_array_equal(ours.weight_u.to_numpy(), u)  # eval: no power iteration
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        utils.spectral_norm(ours)
    utils.remove_spectral_norm(ours)
    torch.nn.utils.remove_spectral_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    close(ours.weight, theirs.weight)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        utils.remove_spectral_norm(ours)


def test_spectral_norm_errors() -> None:
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(ValueError, match="no parameter named 'kernel'"):
        utils.spectral_norm(nn.Linear(2, 2), name="kernel")
    with pytest.raises(ValueError, match="at least 2 dims"):
        utils.spectral_norm(nn.Linear(2, 2), name="bias")


# --- parametrize ---


class Symmetric(torch.nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(0, 1)

    def right_inverse(self, a):
        return a.triu()


class OurSymmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(0, 1)

    def right_inverse(self, a):
        return a.triu()


class Scale(nn.Module):
    def forward(self, x):
        return x * 2.0


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_register_parametrization_matches_torch(backend: str) -> None:
    theirs = torch.nn.Linear(3, 3, dtype=torch.float64)
    ours = nn.Linear(3, 3, dtype="float64", backend=backend)
    load_from(ours, theirs, backend)
    torch.nn.utils.parametrize.register_parametrization(theirs, "weight", Symmetric())
    original = ours.weight
    parametrize.register_parametrization(ours, "weight", OurSymmetric())
    assert type(ours).__name__ == "ParametrizedLinear" and parametrize.type_before_parametrizations(ours) is nn.Linear
    assert parametrize.is_parametrized(ours) and parametrize.is_parametrized(ours, "weight")
    assert not parametrize.is_parametrized(ours, "bias") and not parametrize.is_parametrized(nn.Linear(1, 1))
    assert ours.parametrizations.weight.original is original  # the same Parameter, now holding right_inverse(weight)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    close(ours.weight, theirs.weight)
    forward_backward(ours, theirs, (2, 3), backend)
    grads_match(ours, theirs)
    value = RNG.standard_normal((3, 3))
    ours.weight = mt.tensor(value, backend=backend)  # stored through right_inverse
    theirs.weight = torch.tensor(value)
    close(ours.parametrizations.weight.original, theirs.parametrizations.weight.original)
    with parametrize.cached():
        assert ours.weight is ours.weight
    assert ours.weight is not ours.weight
    parametrize.remove_parametrizations(ours, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(theirs, "weight")
    assert type(ours) is nn.Linear and ours.weight is original and list(ours.state_dict()) == list(theirs.state_dict())
    close(ours.weight, theirs.weight)


def test_parametrizations_chain_and_leave_unparametrized() -> None:
    layer = nn.Linear(3, 3, dtype="float64")
    start = layer.weight.to_numpy().copy()
    parametrize.register_parametrization(layer, "weight", OurSymmetric())
    parametrize.register_parametrization(layer, "weight", Scale())
    sym = np.triu(start) + np.triu(start, 1).T
    close(layer.weight, 2 * sym)
    assert len(layer.parametrizations.weight) == 2
    with pytest.raises(RuntimeError, match="Scale does not implement right_inverse"):
        layer.weight = mt.zeros(3, 3, dtype="float64")
    parametrize.register_parametrization(layer, "bias", Scale())
    parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
    close(layer.weight, np.triu(start))  # the original (right_inverse of the first parametrization)
    assert parametrize.is_parametrized(layer) and type(layer).__name__ == "ParametrizedLinear"
    parametrize.remove_parametrizations(layer, "bias")
    assert type(layer) is nn.Linear and "parametrizations" not in layer._modules


def test_parametrize_errors() -> None:
    layer = nn.Linear(2, 3)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element with name 'kernel'"):
        parametrize.register_parametrization(layer, "kernel", Scale())

    class Flatten(nn.Module):
        def forward(self, x):
            return x.reshape(-1)

    with pytest.raises(ValueError, match="must return a tensor of the original's shape"):
        parametrize.register_parametrization(layer, "weight", Flatten())
    assert not parametrize.is_parametrized(layer)
    parametrize.register_parametrization(layer, "weight", Flatten(), unsafe=True)
    assert layer.weight.shape == (6,)
    with pytest.raises(ValueError, match="does not have a parametrization on bias"):
        parametrize.remove_parametrizations(layer, "bias")
    with pytest.raises(TypeError, match="must be a Module"):
        parametrize.register_parametrization(layer, "bias", lambda x: x)  # type: ignore[arg-type]


# --- parametrizations.weight_norm / spectral_norm ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("kind", ["linear", "conv1d"])
def test_parametrized_weight_norm_matches_torch(backend: str, kind: str) -> None:
    ours, theirs, shape = pair(kind, backend)
    torch.nn.utils.parametrizations.weight_norm(theirs)
    parametrizations.weight_norm(ours)
    assert list(ours.state_dict()) == list(theirs.state_dict())  # original0 (g), original1 (v)
    load_from(ours, theirs, backend)
    forward_backward(ours, theirs, shape, backend)
    grads_match(ours, theirs)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("kind", ["linear", "conv_transpose1d"])
def test_parametrized_spectral_norm_matches_torch(backend: str, kind: str) -> None:
    ours, theirs, shape = pair(kind, backend)
    torch.nn.utils.parametrizations.spectral_norm(theirs, n_power_iterations=2)
    parametrizations.spectral_norm(ours, n_power_iterations=2)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    load_from(ours, theirs, backend)
    for training in (True, True, False):
        ours.train(training)
        theirs.train(training)
        forward_backward(ours, theirs, shape, backend)
        close(ours.parametrizations.weight[0]._u, theirs.parametrizations.weight[0]._u)
        close(ours.parametrizations.weight[0]._v, theirs.parametrizations.weight[0]._v)
    grads_match(ours, theirs)
    bias = nn.Linear(2, 3, dtype="float64")
    parametrizations.spectral_norm(bias, name="bias")  # a 1-D tensor is normalized
    close(bias.bias.norm(), 1.0)
    with pytest.raises(ValueError, match="no parameter or buffer with name 'kernel'"):
        parametrizations.spectral_norm(nn.Linear(2, 2), name="kernel")


# --- pad_sequence ---


@pytest.mark.parametrize("backend", CPU_BACKENDS + CUDA)
def test_pad_sequence_matches_torch(backend: str) -> None:
    arrays = [RNG.standard_normal((n, 2)) for n in (3, 1, 4)]
    ours = [mt.tensor(a, backend=backend, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    options = [{}, {"batch_first": True, "padding_value": -1.5}, {"padding_side": "left"}]
    for kwargs in options[:1] if backend == "cuda" else options:
        got, want = rnn.pad_sequence(ours, **kwargs), torch.nn.utils.rnn.pad_sequence(theirs, **kwargs)
        assert got.shape == tuple(want.shape)
        close(got, want)
        w = RNG.standard_normal(tuple(want.shape))
        (got * mt.tensor(w, backend=backend)).sum().backward()
        (want * torch.tensor(w)).sum().backward()
        for o, t in zip(ours, theirs):
            close(o.grad, t.grad)
    padded = rnn.pad_sequence(ours, batch_first=True)
    for o, back in zip(ours, rnn.unpad_sequence(padded, mt.tensor([3, 1, 4]), batch_first=True)):
        close(back, o.detach())


def test_pad_sequence_errors() -> None:
    with pytest.raises(ValueError, match="empty list"):
        rnn.pad_sequence([])
    with pytest.raises(ShapeError, match=r"trailing shape \(2,\).*sequences\[1\] has shape \(1, 3\)"):
        rnn.pad_sequence([mt.ones(2, 2), mt.ones(1, 3)])
    with pytest.raises(ValueError, match="padding_side must be 'left' or 'right'"):
        rnn.pad_sequence([mt.ones(2)], padding_side="up")
    assert rnn.pad_sequence(mt.ones(2, 3)).shape == (3, 2)  # a tensor is a batch of its rows


# --- fusion and skip_init ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_fuse_conv_and_linear_bn_eval_match_torch(backend: str) -> None:
    for make, bn_cls, shape in ((lambda L, **k: L.nn.Conv2d(2, 3, 3, **k), "BatchNorm2d", (2, 2, 5, 5)),
                                (lambda L, **k: L.nn.Linear(4, 3, **k), "BatchNorm1d", (5, 4))):
        layer_t, bn_t = make(torch, dtype=torch.float64), getattr(torch.nn, bn_cls)(3, dtype=torch.float64)
        with torch.no_grad():
            bn_t.running_mean.uniform_(-1, 1)
            bn_t.running_var.uniform_(0.5, 2)
            bn_t.weight.uniform_(0.5, 1.5)
            bn_t.bias.uniform_(-1, 1)
        layer, bn = make(mt, dtype="float64", backend=backend), getattr(nn, bn_cls)(3, dtype="float64", backend=backend)
        load_from(layer, layer_t, backend)
        load_from(bn, bn_t, backend)
        for m in (layer, bn, layer_t, bn_t):
            m.eval()
        fuse = utils.fuse_conv_bn_eval if bn_cls == "BatchNorm2d" else utils.fuse_linear_bn_eval
        fused, fused_t = fuse(layer, bn), getattr(torch.nn.utils, fuse.__name__)(layer_t, bn_t)
        assert fused is not layer and isinstance(fused.weight, nn.Parameter)
        close(fused.weight, fused_t.weight)
        close(fused.bias, fused_t.bias)
        x = RNG.standard_normal(shape)
        close(fused(mt.tensor(x, backend=backend)), bn(layer(mt.tensor(x, backend=backend))))
    weights = [RNG.standard_normal(s) for s in ((2, 3, 2, 2), (3,), (3,), (3,), (3,))]
    got = utils.fuse_conv_bn_weights(mt.tensor(weights[0]), None, *(mt.tensor(w) for w in weights[1:3]), 1e-3,
                                     mt.tensor(weights[3]), None, transpose=True)
    want = torch.nn.utils.fuse_conv_bn_weights(torch.tensor(weights[0]), None, *(torch.tensor(w) for w in weights[1:3]),
                                               1e-3, torch.tensor(weights[3]), None, transpose=True)
    for g, w in zip(got, want):
        close(g, w)
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        utils.fuse_linear_bn_eval(nn.Linear(2, 3), nn.BatchNorm1d(3))


def test_skip_init() -> None:
    layer = utils.skip_init(nn.Linear, 3, 2, dtype="float64")
    assert isinstance(layer, nn.Linear) and layer.weight.shape == (2, 3) and layer.weight.dtype == mt.float64

    class NoDevice(nn.Module):
        def __init__(self, n: int) -> None:
            super().__init__()

    with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
        utils.skip_init(NoDevice, 2)
    with pytest.raises(TypeError, match="expected a Module class"):
        utils.skip_init(len)


@pytest.mark.parametrize("backend", CUDA)
def test_weight_norm_on_cuda(backend: str) -> None:
    ours, theirs, shape = pair("linear", backend)
    parametrizations.weight_norm(ours)
    torch.nn.utils.parametrizations.weight_norm(theirs)
    load_from(ours, theirs, backend)
    forward_backward(ours, theirs, shape, backend)
    grads_match(ours, theirs)
