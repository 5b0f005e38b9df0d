"""The torch oracle of the composite-op tests: run one function on minitensor and on torch and compare values, dtypes,
shapes and gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")


def dtype_name(t: Any) -> str:
    return str(t.dtype).removeprefix("torch.") if isinstance(t, torch.Tensor) else t.dtype.name


def _outputs(out: Any) -> list[Any]:
    """The tensors of a result: nested tuples (tensor_split's, named (values, indices) pairs) flattened."""
    return [t for item in out for t in _outputs(item)] if isinstance(out, tuple) else [out]


def check(backend: str, fn: Callable[..., Any], *arrays: np.ndarray, grad: bool = True, rtol: float = 1e-5,
          atol: float = 1e-6) -> list[Any]:
    """fn(lib, *inputs) with lib = mt and torch: equal values (nan where torch has nan), dtypes and shapes; and, when
    ``grad``, equal gradients of a fixed weighted sum of the outputs for every float input (an input that gets no
    gradient at all must have an all-zero one in torch)."""
    needs = [grad and a.dtype.kind == "f" for a in arrays]
    ours = [mt.tensor(a, backend=backend, requires_grad=g) for a, g in zip(arrays, needs)]
    theirs = [torch.tensor(a, requires_grad=g) for a, g in zip(arrays, needs)]
    got, want = _outputs(fn(mt, *ours)), _outputs(fn(torch, *theirs))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape), (g.shape, w.shape)
        assert dtype_name(g) == dtype_name(w)
        np.testing.assert_allclose(g.to_numpy(), w.detach().numpy(), rtol=rtol, atol=atol, equal_nan=True)
    if not any(needs):
        return got
    total_ours: Any = 0
    total_theirs: Any = 0
    for g, w in zip(got, want):
        if w.dtype.is_floating_point and w.requires_grad:
            weights = np.linspace(-1.3, 2.0, max(w.numel(), 1))[: w.numel()].reshape(tuple(w.shape))
            total_ours = total_ours + (g * mt.tensor(weights, dtype=g.dtype, backend=backend)).sum()
            total_theirs = total_theirs + (w * torch.tensor(weights, dtype=w.dtype)).sum()
    if not isinstance(total_theirs, torch.Tensor):  # no float output (signbit): nothing to differentiate
        return got
    assert isinstance(total_ours, mt.Tensor) and total_ours.requires_grad
    total_ours.backward()
    total_theirs.backward()
    for o, t in zip(ours, theirs):
        if t.requires_grad:
            expected = (t.grad if t.grad is not None else torch.zeros_like(t)).numpy()
            if o.grad is None:
                assert not expected.any(), "minitensor gave no gradient where torch's is nonzero"
                continue
            assert o.grad.shape == tuple(t.shape) and o.grad.dtype == o.dtype
            np.testing.assert_allclose(o.grad.to_numpy(), expected, rtol=rtol, atol=atol, equal_nan=True)
    return got


def index(L: Any, like: Any, values: Any) -> Any:
    """An int64 index tensor of ``values`` for library L, on ``like``'s backend."""
    array = np.array(values, np.int64)
    return torch.tensor(array) if L is torch else mt.tensor(array, backend=like.backend.name)


Case = tuple[Callable[..., Any], tuple[np.ndarray, ...], dict[str, Any]]


def case(fn: Callable[..., Any], *arrays: np.ndarray, **options: Any) -> Case:
    """One :func:`check` call: fn, its input arrays and check's options."""
    return fn, arrays, options


CUDA_EVERY = 3
"""On ``cuda`` :func:`run` checks every CUDA_EVERY-th case: the simulator runs each GPU thread in Python (a case costs
seconds there), and the composites are the same compositions on every backend, so what cuda adds is its kernels,
which the other cases and the cuda kernel tests exercise."""


def run(backend: str, cases: list[Case]) -> None:
    """:func:`check` every case on ``backend`` (every :data:`CUDA_EVERY`-th on cuda), naming the failing case's
    position."""
    for i, (fn, arrays, options) in enumerate(cases):
        if backend == "cuda" and i % CUDA_EVERY:
            continue
        try:
            check(backend, fn, *arrays, **options)
        except AssertionError as error:
            raise AssertionError(f"case {i}: {error}") from error
