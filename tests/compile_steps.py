"""Shared pieces of the compile tests: small MLPs and their data on each backend, a training-step factory, and
bit-for-bit comparisons of parameters and gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import minitensor as mt
from minitensor import nn, optim

F = nn.functional

# Tiny shapes on the reference and simulated backends (Python loops), bigger ones on fast.
SIZES = {"simple": (6, 5, 3, 4), "fast": (784, 32, 10, 16), "cuda": (6, 4, 3, 2)}


def mlp(backend: str, dtype: str = "float32") -> nn.Module:
    n_in, hidden, n_out, _ = SIZES[backend]
    mt.manual_seed(0)
    return nn.Sequential(nn.Linear(n_in, hidden, backend=backend, dtype=dtype), nn.ReLU(),
                         nn.Linear(hidden, n_out, backend=backend, dtype=dtype))


def batches(backend: str, count: int, dtype: str = "float32") -> list[tuple[mt.Tensor, mt.Tensor]]:
    n_in, _, n_out, batch = SIZES[backend]
    rng = np.random.default_rng(1)
    return [(mt.tensor(rng.standard_normal((batch, n_in)), dtype=dtype, backend=backend),
             mt.tensor(rng.integers(0, n_out, batch), backend=backend)) for _ in range(count)]


def train(step: Callable[..., Any], data: list[tuple[mt.Tensor, mt.Tensor]], steps: int) -> list[float]:
    return [step(*data[i % len(data)]).item() for i in range(steps)]


def assert_same_params(a: nn.Module, b: nn.Module) -> None:
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        np.testing.assert_array_equal(p.to_numpy(), q.to_numpy(), err_msg=name)
        np.testing.assert_array_equal(p.grad.to_numpy(), q.grad.to_numpy(), err_msg=f"{name}.grad")


def sgd_step(model: nn.Module, opt: optim.Optimizer) -> Callable[..., Any]:
    def step(x: mt.Tensor, y: mt.Tensor) -> mt.Tensor:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return step
