"""torch.utils.checkpoint: activation checkpointing gives torch's values and gradients (both variants), replays the
random state, keeps fewer activations alive, and raises and warns as torch does.

Models are small float64 MLPs whose weights are copied into torch's; gradients are compared with torch's
checkpointed run and with minitensor's run without checkpointing.
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tcp
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor import GradientError, HigherOrderGradError
from minitensor.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

RNG = np.random.default_rng(70)
X0 = RNG.standard_normal((3, 4))


def mt_mlp(backend: str, widths: tuple[int, ...] = (4, 6, 5, 2), dropout: float = 0.0) -> mt.nn.Sequential:
    layers: list[Any] = []
    for a, b in zip(widths, widths[1:]):
        layers += [mt.nn.Linear(a, b, backend=backend, dtype=mt.float64), mt.nn.Tanh()]
        if dropout:
            layers.append(mt.nn.Dropout(dropout))
    return mt.nn.Sequential(*layers)


def torch_copy(net: mt.nn.Sequential) -> torch.nn.Sequential:
    """torch's MLP with the weights of ``net`` (Linear and Tanh layers)."""
    layers: list[torch.nn.Module] = []
    for m in net.children():
        if isinstance(m, mt.nn.Linear):
            lin = torch.nn.Linear(m.in_features, m.out_features, dtype=torch.float64)
            lin.weight.data = torch.tensor(m.weight.to_numpy())
            lin.bias.data = torch.tensor(m.bias.to_numpy())
            layers.append(lin)
        else:
            layers.append(torch.nn.Tanh())
    return torch.nn.Sequential(*layers)


def close(a: Any, b: Any) -> None:
    a = a.detach().numpy() if isinstance(a, torch.Tensor) else a.to_numpy()
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else b.to_numpy()
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def grads_of(net: Any) -> list[Any]:
    return [p.grad for p in net.parameters()]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_matches_torch(backend: str, use_reentrant: bool) -> None:
    net = mt_mlp(backend)
    tnet = torch_copy(net)
    x = mt.tensor(X0, backend=backend, dtype=mt.float64, requires_grad=True)
    tx = torch.tensor(X0, requires_grad=True)
    y = checkpoint(net, x, use_reentrant=use_reentrant)
    ty = tcp.checkpoint(tnet, tx, use_reentrant=use_reentrant)
    close(y, ty)
    assert y.grad_fn.name() == "CheckpointFunctionBackward"
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    close(x.grad, tx.grad)
    for g, tg in zip(grads_of(net), grads_of(tnet)):
        close(g, tg)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_sequential_matches_torch(use_reentrant: bool) -> None:
    net = mt_mlp("fast", (4, 5, 5, 5, 3))
    tnet = torch_copy(net)
    x = mt.tensor(X0, backend="fast", dtype=mt.float64, requires_grad=True)
    tx = torch.tensor(X0, requires_grad=True)
    y = checkpoint_sequential(net, 3, x, use_reentrant=use_reentrant, preserve_rng_state=False)
    ty = tcp.checkpoint_sequential(tnet, 3, tx, use_reentrant=use_reentrant, preserve_rng_state=False)
    close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    close(x.grad, tx.grad)
    for g, tg in zip(grads_of(net), grads_of(tnet)):
        close(g, tg)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        checkpoint_sequential(net, 2, x, use_reentrant=False, foo=1)


@pytest.mark.parametrize("use_reentrant", [True, False])
@pytest.mark.parametrize("preserve", [True, False])
def test_dropout_masks_replayed(use_reentrant: bool, preserve: bool) -> None:
    """With preserve_rng_state the recomputation draws the first run's masks (the gradients equal an unchecked run's),
    and the generator ends where an unchecked run leaves it; without it, the masks differ."""
    net = mt_mlp("fast", (4, 8, 8, 2), dropout=0.5)

    def run(checkpointed: bool) -> tuple[list[np.ndarray], np.ndarray]:
        for p in net.parameters():
            p.grad = None
        x = mt.tensor(X0, backend="fast", dtype=mt.float64, requires_grad=True)
        mt.manual_seed(11)
        y = checkpoint(net, x, use_reentrant=use_reentrant, preserve_rng_state=preserve) if checkpointed else net(x)
        mt.rand(2)  # draws between forward and backward must not leak into the recomputation
        (y * y).sum().backward()
        return [x.grad.to_numpy(), *(g.to_numpy() for g in grads_of(net))], mt.rand(3).to_numpy()

    plain, plain_after = run(False)
    got, after = run(True)
    same = all(np.array_equal(a, b) for a, b in zip(plain, got))
    assert same == preserve
    assert np.array_equal(after, plain_after) == preserve


def test_non_reentrant_kwargs_multiple_outputs_and_captured_tensors() -> None:
    """Keyword arguments, nested outputs with non-tensors, an output that is an input, and tensors the function
    captures (a leaf, and a non-leaf made before the call and used after it too) all get torch's gradients."""
    w0, v0 = RNG.standard_normal((4,)), RNG.standard_normal((3, 4))

    def make(lib: Any) -> tuple[Any, ...]:
        f64 = lib.float64
        x = lib.tensor(X0, dtype=f64, requires_grad=True)
        w = lib.tensor(w0, dtype=f64, requires_grad=True)
        v = lib.tensor(v0, dtype=f64, requires_grad=True)
        c = v * 2.0  # a non-leaf from before the call, captured by the function

        def f(a: Any, *, scale: Any) -> Any:
            h = lib.sin(a * w) + c
            return {"h": h * scale, "n": 3, "pair": (h.sum(dim=1), a)}

        cp = checkpoint if lib is mt else tcp.checkpoint
        s = lib.tensor(1.5, dtype=f64, requires_grad=True)
        out = cp(f, x, use_reentrant=False, scale=s)
        loss = (out["h"] ** 2).sum() + (out["pair"][0] * 3).sum() + (out["pair"][1] ** 3).sum() + (c * c).sum()
        assert out["n"] == 3 and out["pair"][1] is x
        loss.backward()
        return x.grad, w.grad, v.grad, s.grad

    for g, tg in zip(make(mt), make(torch)):
        close(g, tg)


def test_non_reentrant_autograd_grad_and_hooks_run_once() -> None:
    net = mt_mlp("fast")
    x = mt.tensor(X0, backend="fast", dtype=mt.float64, requires_grad=True)
    calls: list[tuple[int, ...]] = []
    w = next(net.parameters())
    w.register_hook(lambda g: calls.append(g.shape))
    h = x * 1.0
    h.register_hook(lambda g: calls.append(g.shape))
    y = checkpoint(net, h, use_reentrant=False)
    params = list(net.parameters())
    got = mt.autograd.grad((y * y).sum(), [x, *params])
    assert all(p.grad is None for p in params)  # autograd.grad touches no .grad
    assert calls == [(6, 4), (3, 4)] or calls == [(3, 4), (6, 4)]
    ref = mt.autograd.grad((net(x * 1.0) ** 2).sum(), [x, *params])
    for a, b in zip(got, ref):
        close(a, b)


def test_reentrant_semantics() -> None:
    """Only positional tensors that require grad get gradients through the node; parameters get theirs by the nested
    backward pass; no keyword arguments, context_fn or debug; a warning without use_reentrant or a grad input."""
    net = mt_mlp("fast")
    x = mt.tensor(X0, dtype=mt.float64, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant"):
        y = checkpoint(net, x)
    y.sum().backward()
    assert x.grad is not None and all(g is not None for g in grads_of(net))
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda a, scale: a * scale, x, use_reentrant=True, scale=2.0)
    with pytest.raises(ValueError, match="context_fn"):
        checkpoint(net, x, use_reentrant=True, debug=True)
    frozen = mt.tensor(X0, dtype=mt.float64)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad"):
        out = checkpoint(net, frozen, use_reentrant=True)
    assert not out.requires_grad  # as torch: the parameters get no gradient through such a call
    same = checkpoint(lambda a: a, x, use_reentrant=True)
    assert same is not x and x.is_leaf and same.grad_fn.name() == "CheckpointFunctionBackward"


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_errors_and_modes(use_reentrant: bool) -> None:
    x = mt.tensor(X0, dtype=mt.float64, requires_grad=True)
    with mt.no_grad():
        y = checkpoint(mt.sin, x, use_reentrant=use_reentrant)
    assert y.grad_fn is None and not y.requires_grad
    h = x * 1.0
    y = checkpoint(mt.sin, h, use_reentrant=use_reentrant)
    with mt.no_grad():
        h.add_(1.0)  # the saved input changed: backward refuses, as for any saved tensor
    with pytest.raises(GradientError, match="modified by an in-place operation"):
        y.sum().backward()
    with pytest.raises(HigherOrderGradError):
        mt.autograd.grad(checkpoint(mt.sin, x, use_reentrant=use_reentrant).sum(), x, create_graph=True)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_nested_checkpoints_and_retain_graph(use_reentrant: bool) -> None:
    """A checkpoint inside a checkpointed call, and a second backward through a retained graph, give torch's
    gradients."""
    def run(lib: Any) -> Any:
        cp = checkpoint if lib is mt else tcp.checkpoint
        x = lib.tensor(X0, dtype=lib.float64, requires_grad=True)
        inner = lambda a: cp(lambda b: lib.tanh(b * 3.0), a, use_reentrant=use_reentrant) ** 2  # noqa: E731
        y = cp(inner, lib.sin(x), use_reentrant=use_reentrant).sum()
        y.backward(retain_graph=True)
        y.backward()
        return x.grad

    close(run(mt), run(torch))


def test_determinism_check() -> None:
    x = mt.tensor(X0, dtype=mt.float64, requires_grad=True)
    calls = []

    def shifty(a: mt.Tensor) -> mt.Tensor:
        calls.append(1)
        return mt.sin(a[: 4 - len(calls)])  # one row fewer on the recomputation

    with pytest.raises(CheckpointError, match="recomputation"):
        checkpoint(shifty, x, use_reentrant=False).sum().backward()
    assert issubclass(CheckpointError, RuntimeError)
    calls.clear()
    checkpoint(mt.sin, x, use_reentrant=False, determinism_check="none").sum().backward()
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        checkpoint(mt.sin, x, use_reentrant=False, determinism_check="strict")
    entered: list[str] = []

    class Note:
        def __init__(self, name: str) -> None:
            self.name = name

        def __enter__(self) -> None:
            entered.append(self.name)

        def __exit__(self, *exc: object) -> None:
            pass

    y = checkpoint(mt.sin, x, use_reentrant=False, context_fn=lambda: (Note("forward"), Note("recompute")))
    y.sum().backward()
    assert entered == ["forward", "recompute"]
    with pytest.raises(ValueError, match="debug=True is incompatible"):
        checkpoint(mt.sin, x, use_reentrant=False, debug=True, context_fn=lambda: (Note("a"), Note("b")))


def _tracked_mlp(depth: int, width: int) -> tuple[list[Any], list[weakref.ref[mt.Tensor]], list[Any]]:
    """``depth`` blocks (Linear then tanh) that record a weak reference to every activation they make."""
    layers = [mt.nn.Linear(width, width, backend="fast", dtype=mt.float64) for _ in range(depth)]
    made: list[weakref.ref[mt.Tensor]] = []

    def block(layer: Any) -> Any:
        def run(h: mt.Tensor) -> mt.Tensor:
            z = layer(h)
            a = mt.tanh(z)
            made.extend([weakref.ref(z), weakref.ref(a)])
            return a
        return run

    return [block(layer) for layer in layers], made, layers


def _alive(made: list[weakref.ref[mt.Tensor]]) -> int:
    """How many of the tracked activations are alive (no gc.collect: memory must come back as soon as it is free)."""
    return sum(r() is not None for r in made)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_memory_fewer_activations_alive(use_reentrant: bool) -> None:
    """Between forward and backward an unchecked 16-block MLP keeps all 32 activations alive (the graph holds them);
    checkpointing each block keeps only the 16 block outputs, checkpoint_sequential in 4 segments only the 3 segment
    outputs and the last segment's 8; the gradients are the same."""
    depth = 16
    x0 = RNG.standard_normal((2, 8))
    blocks, made, layers = _tracked_mlp(depth, 8)
    results = {}
    for mode in ("plain", "each", "sequential"):
        made.clear()
        for layer in layers:
            layer.weight.grad = layer.bias.grad = None
        x = mt.tensor(x0, backend="fast", dtype=mt.float64, requires_grad=True)
        if mode == "sequential":
            y = checkpoint_sequential(blocks, 4, x, use_reentrant=use_reentrant)
        else:
            y = x
            for block in blocks:
                y = block(y) if mode == "plain" else checkpoint(block, y, use_reentrant=use_reentrant)
        results[mode] = _alive(made)
        (y * y).sum().backward()
        results[mode + " grads"] = [x.grad.to_numpy(), *(layer.weight.grad.to_numpy() for layer in layers)]
        del y
        assert _alive(made) == 0  # nothing outlives backward
    assert (results["plain"], results["each"], results["sequential"]) == (2 * depth, depth, 3 + 8)
    for mode in ("each", "sequential"):
        for a, b in zip(results[mode + " grads"], results["plain grads"]):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_memory_view_output_frees_the_cut_graph() -> None:
    """An output that views one of the call's tensors does not keep the call's graph (and its intermediates) alive."""
    x = mt.tensor(X0, dtype=mt.float64, requires_grad=True)
    made: list[weakref.ref[mt.Tensor]] = []

    def f(a: mt.Tensor) -> mt.Tensor:
        z = a * 3.0
        t = mt.tanh(z)
        made.extend([weakref.ref(z), weakref.ref(t)])
        return t[1:]

    y = checkpoint(f, x, use_reentrant=False)
    assert _alive(made) == 0
    y.sum().backward()
    close(x.grad, mt.tensor(np.concatenate([np.zeros((1, 4)), 3 / np.cosh(3 * X0[1:]) ** 2])))


@pytest.mark.skipif("cuda" not in BACKENDS, reason="no cuda backend")
@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_on_cuda(use_reentrant: bool) -> None:
    net = mt_mlp("cuda", (2, 3, 1))
    tnet = torch_copy(net)
    x = mt.tensor(X0[:2, :2], backend="cuda", dtype=mt.float64, requires_grad=True)
    tx = torch.tensor(X0[:2, :2], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = checkpoint(net, x, use_reentrant=use_reentrant)
    assert y.backend.name == "cuda"
    y.sum().backward()
    tcp.checkpoint(tnet, tx, use_reentrant=use_reentrant).sum().backward()
    close(x.grad, tx.grad)
    for g, tg in zip(grads_of(net), grads_of(tnet)):
        close(g, tg)
