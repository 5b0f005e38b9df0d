"""Property tests for every tensor op on every backend: forward against NumPy, backward against
central differences of the NumPy function, over random shapes, non-contiguous layouts and broadcasts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import strategies as st
from strategies import broadcast_shapes, central_difference, drawn_tensors, make_tensor, run_property, shapes

import minitensor as mt


def sigmoid_np(a: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-a))


# name -> (minitensor fn, NumPy fn, drawing options)
UNARY: dict[str, tuple[Callable, Callable, dict[str, Any]]] = {
    "neg": (lambda t: -t, lambda a: -a, {}),
    "exp": (lambda t: t.exp(), np.exp, {}),
    "log": (lambda t: t.log(), np.log, {"low": 0.1, "high": 4.0}),
    "sigmoid": (lambda t: t.sigmoid(), sigmoid_np, {}),
    "relu": (lambda t: t.relu(), lambda a: np.maximum(a, 0.0), {"away_from_zero": 1e-3}),
    "tanh": (lambda t: t.tanh(), np.tanh, {}),
    "abs": (lambda t: t.abs(), np.abs, {"away_from_zero": 1e-3}),
    "sqrt": (lambda t: t.sqrt(), np.sqrt, {"low": 0.1, "high": 4.0}),
    "reciprocal": (lambda t: t.reciprocal(), lambda a: 1.0 / a, {"low": 0.5, "high": 3.0}),
    "square": (lambda t: t * t, lambda a: a * a, {}),
    "pow_const": (lambda t: t**2.5, lambda a: a**2.5, {"low": 0.1, "high": 3.0}),
    "scalar_mix": (lambda t: 2.0 - t * 3.0 + 1.5 / (t * t + 1.0), lambda a: 2.0 - a * 3.0 + 1.5 / (a * a + 1.0), {}),
    "contiguous": (lambda t: t.contiguous(), lambda a: a, {}),
    "transpose": (lambda t: t.T, lambda a: a.T, {}),
}

BINARY: dict[str, tuple[Callable, Callable, dict[str, Any]]] = {
    "add": (lambda a, b: a + b, lambda a, b: a + b, {}),
    "sub": (lambda a, b: a - b, lambda a, b: a - b, {}),
    "mul": (lambda a, b: a * b, lambda a, b: a * b, {}),
    "div": (lambda a, b: a / b, lambda a, b: a / b, {"low": 0.5, "high": 2.0}),
    "pow": (lambda a, b: a**b, lambda a, b: a**b, {"low": 0.2, "high": 2.0}),
    "maximum": (lambda a, b: a.maximum(b), np.maximum, {"unique": True}),
}

COMPARE: dict[str, tuple[Callable, Callable]] = {
    "lt": (lambda a, b: a < b, lambda a, b: a < b),
    "gt": (lambda a, b: a > b, lambda a, b: a > b),
    "le": (lambda a, b: a <= b, lambda a, b: a <= b),
    "ge": (lambda a, b: a >= b, lambda a, b: a >= b),
    "eq": (lambda a, b: a == b, lambda a, b: a == b),
    "ne": (lambda a, b: a != b, lambda a, b: a != b),
}


def check_backward(fn: Callable, np_fn: Callable, drawn: list[Any], seed: int = 0) -> None:
    """Gradient of sum(w * fn(inputs)) matches central differences of the NumPy function."""
    out = fn(*[d.tensor for d in drawn])
    weight = np.random.default_rng(seed).uniform(-1.0, 1.0, out.shape)
    loss = (out * mt.tensor(weight, backend=out.backend, dtype=out.dtype)).sum()
    loss.backward()
    expected = central_difference(np_fn, [d.array for d in drawn], weight)
    for d, g in zip(drawn, expected):
        assert d.tensor.grad is not None, "no gradient reached the input"
        assert d.tensor.grad.shape == d.array.shape
        np.testing.assert_allclose(d.tensor.grad.to_numpy(), g, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_forward_and_backward(backend: str, name: str) -> None:
    fn, np_fn, opts = UNARY[name]

    def body(data: st.DataObject) -> None:
        a = data.draw(drawn_tensors(backend, **opts))
        out = fn(a.tensor)
        np.testing.assert_allclose(out.to_numpy(), np_fn(a.array), rtol=1e-10, atol=1e-12)
        assert out.shape == np_fn(a.array).shape
        check_backward(fn, np_fn, [a])

    run_property(backend, body)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcast_forward_and_backward(backend: str, name: str) -> None:
    fn, np_fn, opts = BINARY[name]

    def body(data: st.DataObject) -> None:
        shape_a, shape_b = data.draw(broadcast_shapes(backend))
        a = data.draw(drawn_tensors(backend, shape_a, **opts))
        b = data.draw(drawn_tensors(backend, shape_b, **opts))
        expected = np_fn(a.array, b.array)
        out = fn(a.tensor, b.tensor)
        assert out.shape == expected.shape
        np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-10, atol=1e-12)
        if name == "maximum" and np.any(np.abs(a.array - b.array) < 1e-4):
            return  # at (or within the finite-difference step of) a tie there is no derivative to compare against
        check_backward(fn, np_fn, [a, b])

    run_property(backend, body)


@pytest.mark.parametrize("name", sorted(COMPARE))
def test_comparisons(backend: str, name: str) -> None:
    fn, np_fn = COMPARE[name]

    def body(data: st.DataObject) -> None:
        shape_a, shape_b = data.draw(broadcast_shapes(backend))
        a = data.draw(drawn_tensors(backend, shape_a, low=-2, high=2))
        b = data.draw(drawn_tensors(backend, shape_b, low=-2, high=2))
        out = fn(a.tensor, b.tensor)
        assert out.dtype == np.bool_
        np.testing.assert_array_equal(out.to_numpy(), np_fn(a.array, b.array))

    run_property(backend, body)


@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin"])
def test_reductions(backend: str, op: str) -> None:
    def body(data: st.DataObject) -> None:
        a = data.draw(drawn_tensors(backend, unique=op in ("amax", "amin")))
        choices = [None] + list(range(a.array.ndim)) + [-1] * (a.array.ndim > 0)
        if a.array.ndim >= 2:
            choices.append((0, a.array.ndim - 1))
        dim = data.draw(st.sampled_from(choices))
        keepdim = data.draw(st.booleans())
        np_dim = tuple(dim) if isinstance(dim, tuple) else dim
        np_fn = lambda x: getattr(np, op)(x, axis=np_dim, keepdims=keepdim)  # noqa: E731
        fn = lambda t: getattr(t, op)(dim, keepdim)  # noqa: E731
        out = fn(a.tensor)
        expected = np_fn(a.array)
        assert out.shape == expected.shape
        np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-10, atol=1e-12)
        check_backward(fn, np_fn, [a])

    run_property(backend, body)


def test_matmul_batched_broadcast(backend: str) -> None:
    def body(data: st.DataObject) -> None:
        size = st.integers(1, 4)
        n, k, m = data.draw(size), data.draw(size), data.draw(size)
        batch_a, batch_b = data.draw(broadcast_shapes(backend).filter(lambda p: len(p[0]) <= 2 and len(p[1]) <= 2))
        if backend == "cuda":
            batch_a, batch_b = batch_a[-1:], batch_b[-1:]
        a = data.draw(drawn_tensors(backend, batch_a + (n, k)))
        b = data.draw(drawn_tensors(backend, batch_b + (k, m)))
        out = a.tensor @ b.tensor
        expected = a.array @ b.array
        assert out.shape == expected.shape
        np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-10, atol=1e-12)
        check_backward(lambda x, y: x @ y, lambda x, y: x @ y, [a, b])

    run_property(backend, body)


@pytest.mark.parametrize("case", ["vec@mat", "mat@vec", "vec@vec"])
def test_matmul_one_dimensional_operands(backend: str, case: str) -> None:
    rng = np.random.default_rng(1)
    shapes_for = {"vec@mat": ((3,), (3, 2)), "mat@vec": ((2, 3), (3,)), "vec@vec": ((3,), (3,))}
    sa, sb = shapes_for[case]
    a_np, b_np = rng.normal(size=sa), rng.normal(size=sb)
    a = make_tensor(a_np, backend, "contiguous")
    b = make_tensor(b_np, backend, "sliced")
    out = a @ b
    assert out.shape == (a_np @ b_np).shape
    np.testing.assert_allclose(out.to_numpy(), a_np @ b_np, rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(a.grad.to_numpy(), central_difference(lambda x, y: x @ y, [a_np, b_np], np.ones(out.shape))[0], rtol=1e-6)


def test_views_share_storage_and_differentiate(backend: str) -> None:
    def body(data: st.DataObject) -> None:
        a = data.draw(drawn_tensors(backend, data.draw(shapes(backend, min_dims=1))))
        order = data.draw(st.permutations(range(a.array.ndim)))
        fn = lambda t: t.permute(*order).contiguous().view(-1)[::2]  # noqa: E731
        np_fn = lambda x: np.transpose(x, order).reshape(-1)[::2]  # noqa: E731
        np.testing.assert_allclose(fn(a.tensor).to_numpy(), np_fn(a.array))
        check_backward(fn, np_fn, [a])
        index = tuple(data.draw(st.integers(0, s - 1)) for s in a.array.shape[:1])
        np.testing.assert_allclose(a.tensor[index].to_numpy(), a.array[index])

    run_property(backend, body)


def test_expand_and_broadcast_backward(backend: str) -> None:
    rng = np.random.default_rng(2)
    x_np = rng.normal(size=(3, 1))
    x = make_tensor(x_np, backend, "contiguous")
    out = x.expand(2, 3, 4)
    assert out.shape == (2, 3, 4) and out.strides[0] == 0 and out.strides[2] == 0
    weight = rng.normal(size=(2, 3, 4))
    (out * mt.tensor(weight, backend=backend)).sum().backward()
    np.testing.assert_allclose(x.grad.to_numpy(), weight.sum(axis=(0, 2)).reshape(3, 1), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dtypes_are_kept_and_promoted(backend: str, dtype: str) -> None:
    rng = np.random.default_rng(3)
    a_np = rng.normal(size=(2, 3))
    a = mt.tensor(a_np, backend=backend, dtype=dtype, requires_grad=True)
    out = (a.exp() * 2.0 + 1.0).sum(1)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_allclose(out.to_numpy(), (np.exp(a_np.astype(dtype)) * 2 + 1).sum(1), rtol=1e-5 if dtype == "float32" else 1e-12)
    out.sum().backward()
    assert a.grad.dtype == np.dtype(dtype)
    mixed = a + mt.tensor(a_np, backend=backend, dtype="float64")
    assert mixed.dtype == np.dtype("float64")


def test_backends_agree_with_simple(backend: str) -> None:
    """The same program on this backend and on the reference gives the same numbers and gradients."""
    rng = np.random.default_rng(4)
    x_np, w_np, b_np = rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=(2,))

    def program(name: str) -> tuple[np.ndarray, ...]:
        x = mt.tensor(x_np, backend=name)
        w = mt.tensor(w_np, backend=name, requires_grad=True)
        b = mt.tensor(b_np, backend=name, requires_grad=True)
        h = (x @ w + b).relu().sigmoid()
        loss = (h.amax(1) - h.mean(0).sum() + h.permute(1, 0).exp().sum(0)).sum()
        loss.backward()
        return loss.to_numpy(), w.grad.to_numpy(), b.grad.to_numpy()

    for got, want in zip(program(backend), program("simple")):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
