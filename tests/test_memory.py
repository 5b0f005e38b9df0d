"""Memory: after ``loss.backward()`` nothing of a training step's graph stays reachable (only ``.grad``), and many
training steps of a small MLP do not grow the process's resident memory."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np

import minitensor as mt


def _rss_bytes() -> int:
    """Resident set size of this process (Linux /proc, else the peak from getrusage)."""
    try:
        with open("/proc/self/statm") as f:
            import os

            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _model(backend: str) -> tuple[Any, Any]:
    mt.manual_seed(0)
    model = mt.nn.Sequential(mt.nn.Linear(4, 8), mt.nn.Tanh(), mt.nn.Linear(8, 3)).to(backend)
    return model, mt.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def test_graph_of_a_step_is_unreachable_after_backward() -> None:
    model, opt = _model("fast")
    x = mt.tensor(np.linspace(-1, 1, 20).reshape(5, 4), backend="fast")
    target = mt.tensor([0, 1, 2, 1, 0], backend="fast")
    refs: list[weakref.ref[Any]] = []
    for _ in range(2):
        opt.zero_grad()
        h = model[0](x)
        a = model[1](h)
        logits = model[2](a)
        loss = mt.nn.functional.cross_entropy(logits, target)
        nodes = [t.history for t in (h, a, logits, loss)]
        refs = [weakref.ref(t) for t in (h, a, logits, loss)]
        refs += [weakref.ref(n) for n in nodes] + [weakref.ref(n.ctx) for n in nodes if n is not None and n.ctx is not None]
        del nodes
        loss.backward()
        opt.step()
        del h, a, logits, loss
        gc.collect()
        alive = [r() for r in refs if r() is not None]
        assert not alive, f"{len(alive)} objects of the step's graph are still reachable: {[type(o).__name__ for o in alive]}"
    assert all(p.grad is not None for p in model.parameters())


def test_backward_frees_saved_values_even_while_the_loss_is_alive() -> None:
    w = mt.tensor([0.5, -0.25], dtype=mt.float64, requires_grad=True)
    h = w * 3.0
    e = h.exp()  # saves its output: a cycle the backward pass must break
    loss = (e * h).sum()
    saved = weakref.ref(loss.history.ctx)
    loss.backward()
    assert saved() is None and e.history is not None and e.history.ctx is None


def test_rss_stays_flat_over_1000_training_steps() -> None:
    model, opt = _model("fast")
    rng = np.random.default_rng(0)
    x = mt.tensor(rng.normal(size=(8, 4)), backend="fast", dtype=mt.float32)
    target = mt.tensor(rng.integers(0, 3, size=8), backend="fast")

    def step() -> None:
        opt.zero_grad()
        loss = mt.nn.functional.cross_entropy(model(x), target)
        loss.backward()
        opt.step()

    for _ in range(100):  # warm-up: JIT, caches, allocator pools
        step()
    gc.collect()
    before = _rss_bytes()
    for _ in range(1000):
        step()
    gc.collect()
    after = _rss_bytes()
    assert after < before * 1.05, f"RSS grew from {before / 2**20:.1f} MiB to {after / 2**20:.1f} MiB over 1000 steps"
