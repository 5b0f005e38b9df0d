"""Gradient accumulation in backward: a tensor that gets several contributions (residual streams, slices of one
tensor, Add's one gradient handed to both inputs) sums them in buffers autodiff owns, in place, and a slice's
gradient is added into its parent's buffer (``Function.backward_into``). Every gradient, hook value and retained
``.grad`` is compared with PyTorch on the same inputs (float64), on every backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import minitensor as mt

pytestmark = pytest.mark.filterwarnings(
    "ignore:Using backward\\(\\) with create_graph:UserWarning",
    "ignore:The .grad attribute of a Tensor that is not a leaf:UserWarning",
)

RNG = np.random.default_rng(7)
A0 = RNG.standard_normal((3, 6))
B0 = RNG.standard_normal((3, 6))


def _np(v: Any) -> np.ndarray:
    return v.to_numpy() if isinstance(v, mt.Tensor) else v.detach().numpy() if isinstance(v, torch.Tensor) else v


def close(a: Any, b: Any) -> None:
    np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12)


def pair(backend: str) -> tuple[list[mt.Tensor], list[torch.Tensor]]:
    mine = [mt.tensor(x, backend=backend, dtype=mt.float64, requires_grad=True) for x in (A0, B0)]
    theirs = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in (A0, B0)]
    return mine, theirs


# f(a, b) -> (loss, intermediates to hook/retain): written once in method syntax both libraries share
GRAPHS: dict[str, Callable[[Any, Any], tuple[Any, list[Any]]]] = {}


def graph(fn: Callable[[Any, Any], tuple[Any, list[Any]]]) -> Callable[[Any, Any], tuple[Any, list[Any]]]:
    GRAPHS[fn.__name__] = fn
    return fn


@graph
def residual(a: Any, b: Any) -> tuple[Any, list[Any]]:
    h = a * b
    h = h + (h * h).tanh()
    h = h + h.sin() * 0.5
    return (h * h).sum(), [h]


@graph
def split_qkv(a: Any, b: Any) -> tuple[Any, list[Any]]:
    x = a * b
    q, k, v = x.split(2, dim=1)
    return (q * k + v.exp() + q.sin()).sum(), [x, q]


@graph
def narrow_index_overlap(a: Any, b: Any) -> tuple[Any, list[Any]]:
    x = a + b
    left, right = x.narrow(1, 0, 4), x[:, 2:6]  # columns 2..3 in both
    row, col = x[1], x[:, 3]
    return ((left * right).sum() + (row * row).sum() + col.exp().sum() + x.sum()), [x, left]


@graph
def shared_add_grad(a: Any, b: Any) -> tuple[Any, list[Any]]:
    y = a + b  # backward hands one gradient to a and b
    z = y * 2 + a  # and again to y * 2 and a
    w = z.sin() + z.cos() + y[:, 1:4].sum() + a[0].exp().sum()
    return (w * w).sum(), [y, z]


@graph
def slice_of_slice(a: Any, b: Any) -> tuple[Any, list[Any]]:
    x = a * b
    s = x[:, 1:5]
    t = s[1:, :2] * s[:2, 1:3]
    return t.sum() + (s * s).sum() + x[2].sum(), [x, s]


def run(fn: Callable[[Any, Any], tuple[Any, list[Any]]], ab: list[Any], hooks: bool) -> tuple[Any, list[Any], list[Any]]:
    """Loss, intermediates (retain_grad) and the values the hooks saw."""
    loss, mids = fn(*ab)
    seen: list[Any] = []
    if hooks:
        for m in mids:
            m.retain_grad()
            m.register_hook(seen.append)
    return loss, mids, seen


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_gradients_hooks_retain_grad(backend: str, name: str) -> None:
    """Leaf gradients, every hook's value (still unchanged after the whole pass) and retained .grad match PyTorch."""
    mine, theirs = pair(backend)
    loss, mids, seen = run(GRAPHS[name], mine, hooks=True)
    tloss, tmids, tseen = run(GRAPHS[name], theirs, hooks=True)
    loss.backward()
    tloss.backward()
    close(loss, tloss)
    for x, tx in zip(mine, theirs):
        close(x.grad, tx.grad)
    assert len(seen) == len(tseen) == len(mids)
    for g, tg in zip(seen, tseen):
        close(g, tg)
    for m, tm in zip(mids, tmids):
        close(m.grad, tm.grad)


@pytest.mark.parametrize("name", ["shared_add_grad", "narrow_index_overlap"])
def test_retain_graph_twice_accumulates(backend: str, name: str) -> None:
    """Two backward passes through one retained graph add up in .grad (twice PyTorch's single pass)."""
    mine, theirs = pair(backend)
    loss, _, _ = run(GRAPHS[name], mine, hooks=False)
    tloss, _, _ = run(GRAPHS[name], theirs, hooks=False)
    loss.backward(retain_graph=True)
    first = [x.grad.to_numpy().copy() for x in mine]
    loss.backward()
    tloss.backward(retain_graph=True)
    for tx, f in zip(theirs, first):
        close(f, tx.grad)
    tloss.backward()
    for x, tx in zip(mine, theirs):
        close(x.grad, tx.grad)


@pytest.mark.parametrize("name", ["split_qkv", "shared_add_grad", "slice_of_slice"])
def test_create_graph_second_derivative(backend: str, name: str) -> None:
    """create_graph=True: first gradients, then d/d(a, b) of sum(grad_a * grad_a) + sum(grad_b), against PyTorch."""
    mine, theirs = pair(backend)
    results = []
    for lib, ab in ((mt, mine), (torch, theirs)):
        loss, _ = GRAPHS[name](*ab)
        ga, gb = lib.autograd.grad(loss, ab, create_graph=True)
        (ga * ga).sum().add(gb.sum()).backward()
        results.append([ga, gb, ab[0].grad, ab[1].grad])
    for m, t in zip(*results):
        close(m, t)



def test_in_place_paths_taken_and_bits_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """float32 on fast: the in-place adds and backward_into run, and the gradients have the bits of the out-of-place
    sums (the same pass with both switched off)."""
    import minitensor.backward as ad
    from minitensor import functions_views as fv

    x0 = RNG.standard_normal((5, 8)).astype(np.float32)
    calls = {"add": 0, "into": 0}
    add_into, slice_into = ad._add_into, fv.Slice.backward_into
    assert slice_into is not None

    def counted_add(buf: Any, g: Any) -> bool:
        done = add_into(buf, g)
        calls["add"] += done
        return done

    def counted_into(ctx: Any, d: Any, into: Any) -> Any:
        calls["into"] += into is not None
        return slice_into(ctx, d, into)

    def grads() -> np.ndarray:
        x = mt.tensor(x0, backend="fast", requires_grad=True)
        h = x * 1.5
        y = (h.sin() + h.cos() + h.tanh()).sum()  # three contributions to h: one in-place add
        q, k, v = x.split([3, 3, 2], dim=1)
        (y + (q * k).sum() + v.exp().sum() + x[1:4, 2:7].sum()).backward()
        assert x.grad is not None
        return x.grad.to_numpy().view(np.uint32)

    monkeypatch.setattr(ad, "_add_into", counted_add)
    monkeypatch.setattr(fv.Slice, "backward_into", staticmethod(counted_into))
    fast = grads()
    assert calls["add"] >= 1 and calls["into"] >= 3
    monkeypatch.setattr(ad, "_add_into", lambda buf, g: False)
    monkeypatch.setattr(fv.Slice, "backward_into", None)
    np.testing.assert_array_equal(fast, grads())
