"""Element-wise math (tensor_math.py, tensor_arith.py) on every backend.

Property tests draw shapes that may have zero-size dims, in contiguous, permuted and sliced layouts, with
broadcasting for the binary ops: forward results are compared with NumPy, float64 gradients with central
differences of the NumPy function. PyTorch is the oracle for dtype promotion, nan/inf semantics, rounding,
the signs of remainder and floor division, nan_to_num, isclose and the gradients at the edges.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from strategies import LAYOUTS, MAX_DIMS, MAX_SIZE, Drawn, central_difference, make_tensor, run_property

import minitensor as mt
from minitensor import tensor_arith, tensor_compare, tensor_math

NAN, INF = math.nan, math.inf
REFERENCE = "simple"


def dtypes_for(backend: str, everywhere: list[str], reference_too: list[str]) -> list[str]:
    """``everywhere`` on every backend, plus ``reference_too`` on the reference one. Each further dtype costs the fast
    backend one kernel compile per op and signature; the kernels' own dtype handling is tested per backend in
    test_fast_backend.py and test_cuda_backend.py."""
    return everywhere + reference_too if backend == REFERENCE else everywhere


# --- strategies: shapes with zero-size dims, tensors of any dtype in any layout ---


def shapes0(backend: str) -> st.SearchStrategy[tuple[int, ...]]:
    """Shapes of up to MAX_DIMS dims whose sizes may be 0 (about one dim in 2 * MAX_SIZE)."""
    sizes = st.sampled_from((0,) + tuple(range(1, MAX_SIZE[backend] + 1)) * 2)
    return st.lists(sizes, max_size=MAX_DIMS[backend]).map(tuple)


@st.composite
def broadcast_to(draw: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts with ``shape``: leading dims dropped, some dims set to 1."""
    drop = draw(st.integers(0, len(shape)))
    return tuple(1 if draw(st.booleans()) else s for s in shape[drop:])


@st.composite
def broadcast_shapes0(draw: Any, backend: str, count: int = 2) -> list[tuple[int, ...]]:
    """``count`` shapes that broadcast together, in random order (one of them is the full shape)."""
    full = draw(shapes0(backend))
    found = [full] + [draw(broadcast_to(full)) for _ in range(count - 1)]
    return draw(st.permutations(found))


def laid_out(array: np.ndarray, backend: str, layout: str, seed: int = 0) -> mt.Tensor:
    """``array`` (any dtype) as a tensor in ``layout``; float tensors come back from strategies.make_tensor."""
    if array.dtype.kind == "f":
        return make_tensor(array, backend, layout, seed, array.dtype)
    if layout == "permuted" and array.ndim >= 2:
        order = np.random.default_rng(seed).permutation(array.ndim)
        return mt.tensor(np.ascontiguousarray(array.transpose(order)), backend=backend).permute(*np.argsort(order).tolist())
    if layout == "sliced" and array.ndim >= 1:
        wide = np.zeros(array.shape[:-1] + (2 * array.shape[-1],), dtype=array.dtype)
        wide[..., ::2] = array
        return mt.tensor(wide, backend=backend)[..., ::2]
    return mt.tensor(array, backend=backend)


@st.composite
def drawn(
    draw: Any, backend: str, shape: tuple[int, ...], low: float = -2.0, high: float = 2.0, away: float = 0.0, elements: Any = None
) -> Drawn:
    """A float64 tensor of ``shape`` with values in [low, high] (|v| >= away), in a random layout."""
    if elements is None:
        elements = st.floats(low, high, allow_nan=False, allow_infinity=False, width=64)
        if away:
            elements = elements.filter(lambda v: abs(v) >= away)
    array = draw(arrays(np.float64, shape, elements=elements))
    layout, seed = draw(st.sampled_from(LAYOUTS)), draw(st.integers(0, 2**16))
    return Drawn(array, laid_out(array, backend, layout, seed))


@st.composite
def drawn_ints(draw: Any, backend: str, shape: tuple[int, ...], dtype: str, low: int = -20, high: int = 20, away: int = 0) -> Drawn:
    """An integer (or bool) tensor of ``shape`` in a random layout."""
    if dtype == "bool":
        array = draw(arrays(np.bool_, shape))
    else:
        values = st.integers(low, high).filter(lambda v: abs(v) >= away)
        array = draw(arrays(np.dtype(dtype), shape, elements=values))
    layout, seed = draw(st.sampled_from(LAYOUTS)), draw(st.integers(0, 2**16))
    return Drawn(array, laid_out(array, backend, layout, seed))


def check_backward(fn: Callable, np_fn: Callable, inputs: list[Drawn], seed: int = 0) -> None:
    """The gradient of sum(w * fn(inputs)) matches central differences of the NumPy function."""
    out = fn(*[d.tensor for d in inputs])
    weight = np.random.default_rng(seed).uniform(-1.0, 1.0, out.shape)
    (out * mt.tensor(weight, backend=out.backend, dtype=out.dtype)).sum().backward()
    expected = central_difference(np_fn, [d.array for d in inputs], weight)
    for d, want in zip(inputs, expected):
        assert d.tensor.grad is not None, "no gradient reached the input"
        assert d.tensor.grad.shape == d.array.shape
        np.testing.assert_allclose(d.tensor.grad.to_numpy(), want, rtol=1e-5, atol=1e-5)


def check_zero_grad(fn: Callable, inputs: list[Drawn]) -> None:
    """A piecewise-constant op: every input gets a zero gradient of its own shape."""
    out = fn(*[d.tensor for d in inputs])
    out.sum().backward()
    for d in inputs:
        assert d.tensor.grad is not None and d.tensor.grad.shape == d.array.shape
        assert not d.tensor.grad.to_numpy().any()


def equal_arrays(got: mt.Tensor, want: np.ndarray) -> None:
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got.to_numpy(), want)


# --- unary float functions: forward vs NumPy, backward vs central differences ---

erf_np = np.vectorize(math.erf, otypes=[np.float64])

# name -> (minitensor fn, NumPy fn, drawing options); "step" ops are piecewise constant (zero gradient).
UNARY: dict[str, tuple[Callable, Callable, dict[str, Any]]] = {
    "abs": (mt.abs, np.abs, {"away": 1e-3}),
    "neg": (lambda t: t.neg(), np.negative, {}),
    "exp": (mt.exp, np.exp, {}),
    "exp2": (lambda t: t.exp2(), np.exp2, {}),
    "expm1": (mt.expm1, np.expm1, {}),
    "log": (mt.log, np.log, {"low": 0.1, "high": 4.0}),
    "log2": (lambda t: t.log2(), np.log2, {"low": 0.1, "high": 4.0}),
    "log10": (mt.log10, np.log10, {"low": 0.1, "high": 4.0}),
    "log1p": (lambda t: t.log1p(), np.log1p, {"low": -0.9, "high": 3.0}),
    "sqrt": (mt.sqrt, np.sqrt, {"low": 0.1, "high": 4.0}),
    "rsqrt": (lambda t: t.rsqrt(), lambda a: 1.0 / np.sqrt(a), {"low": 0.1, "high": 4.0}),
    "square": (mt.square, np.square, {}),
    "reciprocal": (lambda t: t.reciprocal(), np.reciprocal, {"away": 0.3}),
    "sin": (mt.sin, np.sin, {"low": -4.0, "high": 4.0}),
    "cos": (lambda t: t.cos(), np.cos, {"low": -4.0, "high": 4.0}),
    "tan": (mt.tan, np.tan, {"low": -1.3, "high": 1.3}),
    "tanh": (lambda t: t.tanh(), np.tanh, {}),
    "sigmoid": (mt.sigmoid, lambda a: 1.0 / (1.0 + np.exp(-a)), {}),
    "relu": (lambda t: t.relu(), lambda a: np.maximum(a, 0.0), {"away": 1e-3}),
    "erf": (mt.erf, erf_np, {}),
    "asin": (mt.asin, np.arcsin, {"low": -0.95, "high": 0.95}),
    "arccos": (lambda t: t.arccos(), np.arccos, {"low": -0.95, "high": 0.95}),
    "atan": (lambda t: t.atan(), np.arctan, {}),
    "sinh": (mt.sinh, np.sinh, {}),
    "cosh": (lambda t: t.cosh(), np.cosh, {}),
    "arcsinh": (mt.arcsinh, np.arcsinh, {}),
    "acosh": (lambda t: t.acosh(), np.arccosh, {"low": 1.05, "high": 4.0}),
    "atanh": (mt.atanh, np.arctanh, {"low": -0.95, "high": 0.95}),
    "clamp": (lambda t: t.clamp(-0.7, 0.9), lambda a: np.clip(a, -0.7, 0.9), {}),
    "clamp_min": (lambda t: mt.clamp(t, min=-0.3), lambda a: np.maximum(a, -0.3), {}),
    "clip_max": (lambda t: t.clip(max=0.4), lambda a: np.minimum(a, 0.4), {}),
    "pow_scalar": (lambda t: t.pow(3), lambda a: a**3, {}),
    "rpow": (lambda t: mt.pow(2.5, t), lambda a: 2.5**a, {}),
    "nan_to_num": (mt.nan_to_num, np.nan_to_num, {}),
}
STEP: dict[str, tuple[Callable, Callable]] = {
    "floor": (mt.floor, np.floor),
    "ceil": (lambda t: t.ceil(), np.ceil),
    "trunc": (mt.trunc, np.trunc),
    "round": (lambda t: t.round(), np.round),  # NumPy rounds half to even, as PyTorch does
    "round_decimals": (lambda t: mt.round(t, decimals=1), lambda a: np.round(a * 10.0) / 10.0),
    "sign": (lambda t: t.sign(), np.sign),
}
KINKS = {"clamp": (-0.7, 0.9), "clamp_min": (-0.3,), "clip_max": (0.4,)}
"""Points where an op's derivative jumps: central differences there compare against nothing."""


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_forward_and_backward(backend: str, name: str) -> None:
    fn, np_fn, opts = UNARY[name]

    def body(data: st.DataObject) -> None:
        a = data.draw(drawn(backend, data.draw(shapes0(backend)), **opts))
        out, want = fn(a.tensor), np_fn(a.array)
        assert out.dtype == np.float64 and out.shape == want.shape
        np.testing.assert_allclose(out.to_numpy(), want, rtol=1e-10, atol=1e-12)
        if not any(np.any(np.abs(a.array - k) < 1e-4) for k in KINKS.get(name, ())):
            check_backward(fn, np_fn, [a])

    run_property(backend, body)


@pytest.mark.parametrize("name", sorted(STEP))
def test_step_functions_have_zero_gradient(backend: str, name: str) -> None:
    fn, np_fn = STEP[name]
    halves = st.integers(-8, 8).map(lambda k: k / 2.0) | st.floats(-3.0, 3.0, width=64)

    def body(data: st.DataObject) -> None:
        a = data.draw(drawn(backend, data.draw(shapes0(backend)), elements=halves))
        out, want = fn(a.tensor), np_fn(a.array)
        assert out.dtype == np.float64
        np.testing.assert_allclose(out.to_numpy(), want, rtol=1e-12, atol=1e-12)
        check_zero_grad(fn, [a])

    run_property(backend, body)


# --- binary float functions with broadcasting ---


def near_integer_ratio(a: np.ndarray, b: np.ndarray) -> bool:
    """True where a / b is within 1e-4 of an integer: remainder and fmod jump there."""
    q = a / b
    return bool(np.any(np.abs(q - np.round(q)) < 1e-4))


def near_tie(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.any(np.abs(a - b) < 1e-4))


# name -> (minitensor fn, NumPy fn, options for a, options for b, skip the gradient check when)
BINARY: dict[str, tuple[Callable, Callable, dict[str, Any], dict[str, Any], Callable]] = {
    "maximum": (mt.maximum, np.maximum, {}, {}, near_tie),
    "minimum": (lambda x, y: x.minimum(y), np.minimum, {}, {}, near_tie),
    "pow": (mt.pow, np.power, {"low": 0.2, "high": 2.0}, {}, lambda a, b: False),
    "atan2": (mt.atan2, np.arctan2, {"away": 0.1}, {}, lambda a, b: False),
    "fmod": (mt.fmod, np.fmod, {}, {"away": 0.25}, near_integer_ratio),
    "remainder": (lambda x, y: x % y, np.remainder, {}, {"away": 0.25}, near_integer_ratio),
    "remainder_fn": (mt.remainder, np.remainder, {}, {"away": 0.25}, near_integer_ratio),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcast_forward_and_backward(backend: str, name: str) -> None:
    fn, np_fn, opts_a, opts_b, skip_grad = BINARY[name]

    def body(data: st.DataObject) -> None:
        shape_a, shape_b = data.draw(broadcast_shapes0(backend))
        a = data.draw(drawn(backend, shape_a, **opts_a))
        b = data.draw(drawn(backend, shape_b, **opts_b))
        out, want = fn(a.tensor, b.tensor), np_fn(a.array, b.array)
        assert out.dtype == np.float64 and out.shape == want.shape
        np.testing.assert_allclose(out.to_numpy(), want, rtol=1e-10, atol=1e-12)
        if not skip_grad(*np.broadcast_arrays(a.array, b.array)):
            check_backward(fn, np_fn, [a, b])

    run_property(backend, body)


def test_floor_divide_broadcast_has_zero_gradient(backend: str) -> None:
    def body(data: st.DataObject) -> None:
        shape_a, shape_b = data.draw(broadcast_shapes0(backend))
        a = data.draw(drawn(backend, shape_a, low=-5.0, high=5.0))
        b = data.draw(drawn(backend, shape_b, away=0.25))
        out = a.tensor // b.tensor
        np.testing.assert_allclose(out.to_numpy(), np.floor_divide(a.array, b.array), rtol=1e-12)
        check_zero_grad(mt.floor_divide, [a, b])

    run_property(backend, body)


def test_where_broadcasts_and_routes_gradients(backend: str) -> None:
    def body(data: st.DataObject) -> None:
        shape_c, shape_a, shape_b = data.draw(broadcast_shapes0(backend, 3))
        cond_np = data.draw(arrays(np.bool_, shape_c))
        cond = laid_out(cond_np, backend, data.draw(st.sampled_from(LAYOUTS)), 7)
        a, b = data.draw(drawn(backend, shape_a)), data.draw(drawn(backend, shape_b))
        equal_arrays(mt.where(cond, a.tensor, b.tensor), np.where(cond_np, a.array, b.array))
        equal_arrays(a.tensor.where(cond, b.tensor), np.where(cond_np, a.array, b.array))
        equal_arrays(mt.where(cond, a.tensor, -1.5), np.where(cond_np, a.array, -1.5))
        check_backward(lambda x, y: mt.where(cond, x, y), lambda x, y: np.where(cond_np, x, y), [a, b])

    run_property(backend, body)


def test_clamp_with_tensor_bounds(backend: str) -> None:
    """min and max broadcast like any operand; either may be above the other (then every element is max)."""

    def body(data: st.DataObject) -> None:
        shape_x, shape_lo, shape_hi = data.draw(broadcast_shapes0(backend, 3))
        x, lo, hi = data.draw(drawn(backend, shape_x)), data.draw(drawn(backend, shape_lo)), data.draw(drawn(backend, shape_hi))
        np_fn = lambda v, low, high: np.minimum(np.maximum(v, low), high)  # noqa: E731 - PyTorch's definition
        out = mt.clamp(x.tensor, lo.tensor, hi.tensor)
        np.testing.assert_array_equal(out.to_numpy(), np_fn(x.array, lo.array, hi.array))
        xs, los, his = np.broadcast_arrays(x.array, lo.array, hi.array)
        if not (near_tie(xs, los) or near_tie(xs, his) or near_tie(los, his)):
            check_backward(mt.clamp, np_fn, [x, lo, hi])

    run_property(backend, body)


# --- nan and inf: comparisons, logical ops, classification, nan_to_num, isclose ---

SPECIAL = st.sampled_from([NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5]) | st.floats(-3.0, 3.0, width=64)


def test_special_values_against_numpy(backend: str) -> None:
    def body(data: st.DataObject) -> None:
        shape_a, shape_b = data.draw(broadcast_shapes0(backend))
        a = data.draw(drawn(backend, shape_a, elements=SPECIAL)).tensor.detach()
        b = data.draw(drawn(backend, shape_b, elements=SPECIAL)).tensor.detach()
        x, y = a.to_numpy(), b.to_numpy()
        for got, want in [
            (a < b, x < y), (a <= b, x <= y), (a > b, x > y), (a >= b, x >= y), (a == b, x == y), (a != b, x != y),
            (mt.logical_and(a, b), np.logical_and(x, y)), (a.logical_or(b), np.logical_or(x, y)),
            (mt.logical_xor(a, b), np.logical_xor(x, y)), (a.logical_not(), np.logical_not(x)),
            (mt.isnan(a), np.isnan(x)), (a.isinf(), np.isinf(x)), (mt.isfinite(a), np.isfinite(x)),
            (mt.isclose(a, b), np.isclose(x, y)), (a.isclose(b, 0.1, 0.01, equal_nan=True), np.isclose(x, y, 0.1, 0.01, True)),
        ]:  # fmt: skip
            assert got.dtype == np.bool_
            equal_arrays(got, want)
        with np.errstate(invalid="ignore"):
            equal_arrays(mt.maximum(a, b), np.maximum(x, y))
            equal_arrays(a.minimum(b), np.minimum(x, y))
            equal_arrays(a.clamp(-1.0, 0.75), np.minimum(np.maximum(x, -1.0), 0.75))
        equal_arrays(mt.nan_to_num(a), np.nan_to_num(x))
        equal_arrays(a.nan_to_num(1.5, 9.0, -9.0), np.nan_to_num(x, nan=1.5, posinf=9.0, neginf=-9.0))
        equal_arrays(a.nan_to_num(posinf=7.0), np.nan_to_num(x, posinf=7.0))

    run_property(backend, body)


# --- integer and bool tensors ---


def test_integer_ops_against_numpy(backend: str) -> None:
    """Integer tensors stay integers (rounding ops copy them), division follows Python's // and %."""

    def body(data: st.DataObject) -> None:
        dtype = data.draw(st.sampled_from(dtypes_for(backend, ["int64"], ["int32"])))
        shape_a, shape_b = data.draw(broadcast_shapes0(backend))
        a = data.draw(drawn_ints(backend, shape_a, dtype))
        b = data.draw(drawn_ints(backend, shape_b, dtype, away=1))
        x, y, s, t = a.array, b.array, a.tensor, b.tensor
        for got, want in [
            (s.abs(), np.abs(x)), (-s, -x), (mt.sign(s), np.sign(x)), (s.square(), x * x), (mt.relu(s), np.maximum(x, 0)),
            (s.floor(), x), (mt.ceil(s), x), (s.round(), x), (mt.trunc(s), x), (mt.nan_to_num(s), x),
            (s & t, x & y), (s | t, x | y), (s ^ t, x ^ y), (~s, ~x),
            (s // t, x // y), (s % t, x % y), (mt.fmod(s, t), np.fmod(x, y)),
            (mt.maximum(s, t), np.maximum(x, y)), (s.minimum(t), np.minimum(x, y)), (s.clamp(-3, t), np.clip(x, -3, y)),
            (s.pow(2), x**2), (mt.where(s > 0, s, t), np.where(x > 0, x, y)),
        ]:  # fmt: skip
            assert got.dtype == np.dtype(dtype), got.dtype
            equal_arrays(got, want)
        for got, want in [(s.isnan(), np.isnan(x)), (s.isfinite(), np.isfinite(x)), (s.logical_not(), np.logical_not(x))]:
            assert got.dtype == np.bool_
            equal_arrays(got, want)

    run_property(backend, body)


def test_bool_ops_against_numpy(backend: str) -> None:
    def body(data: st.DataObject) -> None:
        shape_a, shape_b = data.draw(broadcast_shapes0(backend))
        a, b = data.draw(drawn_ints(backend, shape_a, "bool")), data.draw(drawn_ints(backend, shape_b, "bool"))
        x, y, s, t = a.array, b.array, a.tensor, b.tensor
        for got, want in [
            (s & t, x & y), (s | t, x | y), (s ^ t, x ^ y), (~s, ~x), (s + t, x | y), (mt.logical_and(s, t), x & y),
            (mt.maximum(s, t), x | y), (s.minimum(t), x & y), (s.sign(), x), (mt.where(s, t, False), x & y),
        ]:  # fmt: skip
            assert got.dtype == np.bool_, got.dtype
            equal_arrays(got, want)
        equal_arrays(s.square(), x.astype(np.int64))
        assert s.square().dtype == np.int64 and s.exp().dtype == np.float32

    run_property(backend, body)


# --- PyTorch as the oracle ---


def to_torch(value: Any) -> Any:
    return torch.from_numpy(np.array(value.to_numpy())) if isinstance(value, mt.Tensor) else value


def assert_like_torch(got: mt.Tensor, want: torch.Tensor, rtol: float = 1e-6) -> None:
    """Same dtype, shape and values (nan where PyTorch has nan; float32 results within a few ulps)."""
    assert got.dtype.name == str(want.dtype).removeprefix("torch."), f"dtype {got.dtype}, PyTorch {want.dtype}"
    assert got.shape == tuple(want.shape)
    if want.dtype.is_floating_point:
        np.testing.assert_allclose(got.to_numpy(), want.numpy(), rtol=rtol, atol=1e-30, equal_nan=True)
    else:
        np.testing.assert_array_equal(got.to_numpy(), want.numpy())


def operand(spec: Any, backend: str) -> Any:
    """("dtype", values) -> a tensor of that dtype (0-d for a scalar value); anything else is a Python number."""
    if isinstance(spec, tuple):
        return mt.tensor(np.array(spec[1], dtype=spec[0]), backend=backend)
    return spec


PROMOTION_PAIRS = [
    (("int64", [-3, 2, 5]), 2.5),  # int64 tensor + Python float -> the default float (float32)
    (("bool", [True, False, True]), ("bool", [True, True, False])),
    (("int32", [4, -7, 9]), ("int64", [3, 2, -5])),
    (("float32", [1.5, -2.25, 3.0]), ("float64", 0.5)),  # a 0-d tensor of the same category does not widen
    (("int32", [4, -7, 9]), ("int64", 3)),
    (("int32", [4, -7, 9]), ("float64", 2.5)),  # ... but one of a higher category decides
    (("bool", [True, False, True]), 3),
    (("float32", [1.5, -2.25, 3.0]), ("float64", [2.0, 0.5, -4.0])),
    (("int64", [6, -7, 9]), True),
    (7, ("int32", [3, -2, 4])),
    (("float64", [0.5, -2.0, 3.0]), ("int32", [2, 3, -1])),
]
BINARY_ORACLE: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add": lambda lib, a, b: a + b,
    "mul": lambda lib, a, b: a * b,
    "truediv": lambda lib, a, b: a / b,
    "floordiv": lambda lib, a, b: a // b,
    "mod": lambda lib, a, b: a % b,
    "pow": lambda lib, a, b: a**b,
    "maximum": lambda lib, a, b: lib.maximum(a, b),
    "minimum": lambda lib, a, b: lib.minimum(a, b),
    "fmod": lambda lib, a, b: lib.fmod(a, b),
    "atan2": lambda lib, a, b: lib.atan2(a, b),
    "clamp_min": lambda lib, a, b: lib.clamp(a, min=b),
    "clamp_max": lambda lib, a, b: lib.clamp(a, max=b),
    "where": lambda lib, a, b: lib.where(lib.tensor([True, False, True]) if lib is torch else cond_for(a, b), a, b),
    "lt": lambda lib, a, b: a < b,
    "ne": lambda lib, a, b: a != b,
    "logical_xor": lambda lib, a, b: lib.logical_xor(a, b),
}


def cond_for(a: Any, b: Any) -> mt.Tensor:
    backend = (a if isinstance(a, mt.Tensor) else b).backend
    return mt.tensor([True, False, True], backend=backend)


def compare_with_torch(fn: Callable, pairs: list[tuple[Any, Any]], backend: str) -> int:
    """fn(mt, a, b) against fn(torch, a, b) for each pair; the number of pairs compared (PyTorch may refuse some)."""
    compared = 0
    for spec_a, spec_b in pairs:
        a, b = operand(spec_a, backend), operand(spec_b, backend)
        try:
            want = fn(torch, to_torch(a), to_torch(b))
        except TypeError:
            continue  # PyTorch takes no Python number here (e.g. torch.maximum(t, 2.5)); minitensor does
        except RuntimeError:
            with pytest.raises((mt.MinitensorError, ValueError, ZeroDivisionError, TypeError)):
                fn(mt, a, b)
            continue
        assert_like_torch(fn(mt, a, b), want)
        compared += 1
    return compared


@pytest.mark.parametrize("op", sorted(BINARY_ORACLE))
def test_promotion_and_values_match_torch(op: str) -> None:
    """Every pair of PROMOTION_PAIRS gives PyTorch's dtype and values, or an error where PyTorch raises one.

    Result dtypes are decided before any kernel runs, so the reference backend stands for all here."""
    assert compare_with_torch(BINARY_ORACLE[op], PROMOTION_PAIRS, REFERENCE) >= 5


def test_every_backend_stores_the_promoted_dtype(backend: str) -> None:
    for op in ("add", "truediv", "where", "lt"):
        assert compare_with_torch(BINARY_ORACLE[op], PROMOTION_PAIRS[:4], backend) == 4


FLOAT_OF_INT = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal"]
FLOAT_OF_INT += ["sin", "cos", "tan", "tanh", "sigmoid", "erf"]
KEEP_DTYPE = ["abs", "neg", "sign", "square", "relu", "floor", "ceil", "round", "trunc", "nan_to_num"]
KEEP_DTYPE += ["isnan", "isinf", "isfinite", "logical_not", "bitwise_not"]


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool", "float32", "float64"])
def test_unary_dtypes_match_torch(dtype: str) -> None:
    """Float functions of integer and bool tensors give the default float; the rest keep (or refuse) the dtype.

    Decided before any kernel runs, so the reference backend stands for all here."""
    backend = REFERENCE
    values = np.array([-3, 0, 2, 5] if dtype != "bool" else [True, False, True, True]).astype(dtype)
    x = mt.tensor(values, backend=backend)
    for name in FLOAT_OF_INT + KEEP_DTYPE:
        try:
            want = getattr(torch, name)(torch.from_numpy(values))
        except (RuntimeError, NotImplementedError, TypeError):
            with pytest.raises(mt.DTypeError, match=dtype):
                getattr(mt, name)(x)
            continue
        with np.errstate(all="ignore"):
            assert_like_torch(getattr(mt, name)(x), want)
            assert_like_torch(getattr(x, name)(), want)


SPECIALS = [NAN, INF, -INF, 0.0, -0.0, 2.5, -1.0, 0.5, -2.5, 1.5]
SPECIALS_B = [2.0, -2.0, INF, NAN, 0.0, -INF, -0.0, 0.5, 2.0, -0.75]
UNARY_SPECIAL = ["abs", "neg", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "square"]
UNARY_SPECIAL += ["reciprocal", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "erf", "floor", "ceil", "round"]
UNARY_SPECIAL += ["trunc", "sign", "isnan", "isinf", "isfinite", "nan_to_num", "logical_not"]
BINARY_SPECIAL = ["maximum", "minimum", "fmod", "remainder", "floor_divide", "atan2", "logical_and", "logical_or"]
BINARY_SPECIAL += ["lt", "le", "gt", "ge", "eq", "ne", "isclose"]


def test_nan_inf_and_signed_zero_match_torch(backend: str) -> None:
    """nan, inf and -0.0 through every unary and binary op, including division by zero (inf or nan, no error)."""
    for dtype in dtypes_for(backend, ["float64"], ["float32"]):
        check_special_values(backend, dtype)


def check_special_values(backend: str, dtype: str) -> None:
    x_np, y_np = np.array(SPECIALS, dtype=dtype), np.array(SPECIALS_B, dtype=dtype)
    x, y = mt.tensor(x_np, backend=backend), mt.tensor(y_np, backend=backend)
    tx, ty = torch.from_numpy(x_np), torch.from_numpy(y_np)
    for name in UNARY_SPECIAL:
        assert_like_torch(getattr(mt, name)(x), getattr(torch, name)(tx))
    for name in BINARY_SPECIAL:
        assert_like_torch(getattr(mt, name)(x, y), getattr(torch, name)(tx, ty))
    for op in ("__floordiv__", "__mod__", "__truediv__"):
        assert_like_torch(getattr(x, op)(0.0), getattr(tx, op)(0.0))
    # pow: a negative base with an infinite or nan exponent is left out (operators.pow raises on math.floor(inf))
    y_pow = np.where((x_np < 0) & ~np.isfinite(y_np), np.array(3.0, dtype), y_np)
    assert_like_torch(x ** mt.tensor(y_pow, backend=backend), tx ** torch.from_numpy(y_pow))


def test_comparisons_with_nan_match_torch(backend: str) -> None:
    a_np = np.array([NAN, NAN, 1.0, INF, -INF])
    b_np = np.array([NAN, 1.0, NAN, INF, INF])
    a, b = mt.tensor(a_np, backend=backend), mt.tensor(b_np, backend=backend)
    ta, tb = torch.from_numpy(a_np), torch.from_numpy(b_np)
    for op in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
        assert_like_torch(getattr(a, op)(b), getattr(ta, op)(tb))
        assert_like_torch(getattr(a, op)(NAN), getattr(ta, op)(NAN))
    assert not mt.equal(a, a) and not torch.equal(ta, ta)  # nan is not equal to itself


def test_round_half_to_even_matches_torch(backend: str) -> None:
    values = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49999999999999994, -3.5, 1e16 + 2.0, 4503599627370497.0])
    t = mt.tensor(values, backend=backend)
    assert_like_torch(t.round(), torch.from_numpy(values).round(), rtol=0)
    for decimals in (1, 2, -1, -2):
        small = np.array([1.25, 1.35, -2.675, 1234.5, 0.05, -0.15, 15.0, 25.0])
        for dtype in dtypes_for(backend, ["float64"], ["float32"]):
            got = mt.round(mt.tensor(small.astype(dtype), backend=backend), decimals=decimals)
            assert_like_torch(got, torch.round(torch.from_numpy(small.astype(dtype)), decimals=decimals), rtol=0)


def test_division_signs_match_torch(backend: str) -> None:
    """// and % follow Python (floor; the sign of the divisor), fmod follows C (truncation; the sign of the dividend)."""
    for dtype in dtypes_for(backend, ["int64", "float64"], ["int32", "float32"]):
        check_division_signs(backend, dtype)
    tiny, one = np.array([1e-20, -1e-20, 5.0, -5.0]), np.array([-1.0, 1.0, 1e-300, -3.0])  # exact: no rounding through %
    assert_like_torch(
        mt.fmod(mt.tensor(tiny, backend=backend), mt.tensor(one, backend=backend)),
        torch.fmod(torch.from_numpy(tiny), torch.from_numpy(one)),
        rtol=0,
    )
    for x, y in [(-7, 2), (7, -2), (-7, -2), (7.5, -2), (-7.5, 2)]:  # Python's own semantics
        t = mt.tensor([x], dtype="float64" if isinstance(x, float) else "int64", backend=backend)
        assert (t // y).item() == x // y and (t % y).item() == x % y


def check_division_signs(backend: str, dtype: str) -> None:
    a_np = np.array([-7, 7, -7, 7, 0, 5, -5, 9, -1], dtype=dtype)
    b_np = np.array([2, -2, -2, 2, 3, 5, 3, -4, 7], dtype=dtype)
    if dtype.startswith("float"):
        a_np, b_np = a_np + np.array(0.5, dtype), b_np * np.array(0.75, dtype)
    a, b, ta, tb = mt.tensor(a_np, backend=backend), mt.tensor(b_np, backend=backend), torch.from_numpy(a_np), torch.from_numpy(b_np)
    assert_like_torch(a // b, ta // tb)
    assert_like_torch(a % b, ta % tb)
    assert_like_torch(mt.floor_divide(a, b), torch.floor_divide(ta, tb))
    assert_like_torch(mt.remainder(a, b), torch.remainder(ta, tb))
    assert_like_torch(mt.fmod(a, b), torch.fmod(ta, tb))
    assert_like_torch(a % 3, ta % 3)
    assert_like_torch(-7 % b, -7 % tb)
    assert_like_torch(a // -2, ta // -2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_to_num_defaults_match_torch(backend: str, dtype: str) -> None:
    values = np.array([NAN, INF, -INF, 1.5, -0.0], dtype=dtype)
    t, tt = mt.tensor(values, backend=backend), torch.from_numpy(values)
    assert_like_torch(t.nan_to_num(), tt.nan_to_num(), rtol=0)
    assert mt.nan_to_num(t).to_numpy()[1] == np.finfo(dtype).max and mt.nan_to_num(t).to_numpy()[2] == np.finfo(dtype).min
    assert_like_torch(mt.nan_to_num(t, nan=2.0, posinf=1e3), torch.nan_to_num(tt, nan=2.0, posinf=1e3), rtol=0)
    assert_like_torch(mt.nan_to_num(t, neginf=-5.0), torch.nan_to_num(tt, neginf=-5.0), rtol=0)


def torch_grads(fn: Callable, *values: list[float]) -> tuple[Any, list[np.ndarray]]:
    leaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    out = fn(torch, *leaves)
    out.backward(torch.ones_like(out))
    return out.detach().numpy(), [leaf.grad.numpy() for leaf in leaves]


def mt_grads(fn: Callable, backend: str, *values: list[float]) -> tuple[Any, list[np.ndarray]]:
    leaves = [mt.tensor(v, dtype="float64", backend=backend, requires_grad=True) for v in values]
    out = fn(mt, *leaves)
    out.sum().backward()
    return out.to_numpy(), [leaf.grad.to_numpy() for leaf in leaves]


EDGE_GRADIENTS: dict[str, tuple[Callable, list[list[float]]]] = {
    "abs at 0": (lambda lib, x: lib.abs(x), [[0.0, -0.0, 2.0, -2.0]]),
    "relu at 0": (lambda lib, x: lib.relu(x), [[0.0, -0.0, 1.0, -1.0]]),
    "sqrt at 0": (lambda lib, x: lib.sqrt(x), [[0.0, 4.0]]),
    "rsqrt at 0": (lambda lib, x: lib.rsqrt(x), [[0.0, 4.0]]),
    "log at 0": (lambda lib, x: lib.log(x), [[0.0, 2.0]]),
    "log2 at 0": (lambda lib, x: lib.log2(x), [[0.0, 2.0]]),
    "log1p at -1": (lambda lib, x: lib.log1p(x), [[-1.0, 2.0]]),
    "reciprocal at 0": (lambda lib, x: lib.reciprocal(x), [[0.0, 2.0]]),
    "clamp scalars": (lambda lib, x: lib.clamp(x, -1.0, 1.0), [[-2.0, -1.0, 0.0, 1.0, 2.0, NAN]]),
    "clamp min > max": (lambda lib, x: lib.clamp(x, 1.0, -1.0), [[-2.0, -1.0, 0.0, 1.0, 2.0]]),
    "clamp min only": (lambda lib, x: lib.clamp(x, min=0.0), [[-1.0, 0.0, 1.0]]),
    "clamp max only": (lambda lib, x: lib.clamp(x, max=0.0), [[-1.0, 0.0, 1.0]]),
    "clamp tensors": (
        lambda lib, x, lo, hi: lib.clamp(x, lo, hi),
        [[0.0, 1.0, 2.0, 3.0, 1.5, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0, 2.0, 1.0, 2.0], [2.0, 2.0, 2.0, 2.0, 1.0, 1.0, 1.0]],
    ),
    "clamp tensor min": (lambda lib, x, lo: lib.clamp(x, min=lo), [[0.0, 1.0, 2.0, NAN], [1.0, 1.0, 1.0, 0.0]]),
    "clamp tensor max": (lambda lib, x, hi: lib.clamp(x, max=hi), [[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]]),
    "pow at 0": (lambda lib, a, b: lib.pow(a, b), [[0.0, 0.0, 0.0, 2.0, -2.0], [0.0, 1.0, 2.0, 0.0, 2.0]]),
    "maximum ties and nan": (lambda lib, a, b: lib.maximum(a, b), [[1.0, 2.0, NAN, 0.0], [1.0, 1.0, 1.0, 3.0]]),
    "minimum ties and nan": (lambda lib, a, b: lib.minimum(a, b), [[1.0, 2.0, NAN, 0.0], [1.0, 1.0, 1.0, 3.0]]),
    "atan2 at the origin": (lambda lib, a, b: lib.atan2(a, b), [[0.0, 1.0, -1.0], [0.0, 0.0, 2.0]]),
    "remainder": (lambda lib, a, b: lib.remainder(a, b), [[1.5, -2.5, 7.0], [1.0, 2.0, -2.5]]),
    "fmod": (lambda lib, a, b: lib.fmod(a, b), [[1.5, -2.5, 7.0], [1.0, 2.0, -2.5]]),
    "nan_to_num": (lambda lib, x: lib.nan_to_num(x), [[NAN, INF, -INF, 1.0]]),
    "where": (lambda lib, a, b: lib.where(a > b, a, b), [[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]),
    "sign and round": (lambda lib, x: lib.sign(x) + lib.round(x) + lib.floor(x) + lib.ceil(x) + lib.trunc(x), [[0.0, 1.5, -2.5]]),
    "erf and tan": (lambda lib, x: lib.erf(x) * lib.tan(x) + lib.expm1(x) * lib.exp2(x) + lib.log10(x), [[0.5, 1.0]]),
}


@pytest.mark.parametrize("name", sorted(EDGE_GRADIENTS))
def test_edge_gradients_match_torch(backend: str, name: str) -> None:
    fn, values = EDGE_GRADIENTS[name]
    out, grads = mt_grads(fn, backend, *values)
    want_out, want_grads = torch_grads(fn, *values)
    np.testing.assert_allclose(out, want_out, rtol=1e-12, equal_nan=True)
    for got, want in zip(grads, want_grads):
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_isclose_allclose_equal_match_torch(backend: str) -> None:
    a_np = np.array([1.0, 1.0 + 1e-6, 1.0 + 1e-4, INF, INF, -INF, NAN, NAN, 0.0, 1e-9, 100.0])
    b_np = np.array([1.0, 1.0, 1.0, INF, -INF, -INF, NAN, 1.0, 1e-8, 0.0, 100.001])
    ta, tb = torch.from_numpy(a_np), torch.from_numpy(b_np)
    for dtype in dtypes_for(backend, ["float64"], ["float32"]):
        a, b = mt.tensor(a_np, dtype=dtype, backend=backend), mt.tensor(b_np, dtype=dtype, backend=backend)
        ta_, tb_ = ta.to(getattr(torch, dtype)), tb.to(getattr(torch, dtype))
        for kwargs in ({}, {"equal_nan": True}, {"rtol": 0.0, "atol": 0.0}, {"rtol": 1e-3, "atol": 1e-8}, {"rtol": 0.0, "atol": 1e-7}):
            assert_like_torch(mt.isclose(a, b, **kwargs), torch.isclose(ta_, tb_, **kwargs))
            assert mt.allclose(a[:3], b[:3], **kwargs) == torch.allclose(ta_[:3], tb_[:3], **kwargs)
    ints = mt.tensor([1, 5, 100000], backend=backend)
    assert_like_torch(
        ints.isclose(mt.tensor([1, 6, 100001], backend=backend)), torch.isclose(torch.tensor([1, 5, 100000]), torch.tensor([1, 6, 100001]))
    )
    assert_like_torch(mt.isclose(ints > 1, ints > 2), torch.isclose(torch.tensor([False, True, True]), torch.tensor([False, True, True])))
    result = mt.allclose(ints, ints)
    assert result is True and mt.allclose(ints, ints + 1) is False
    assert mt.equal(ints, ints) is True and ints.equal(mt.tensor([1.0, 5.0, 100000.0], backend=backend)) is True
    assert mt.equal(ints, ints.view(1, 3)) is False and mt.equal(ints, ints + 1) is False
    empty = mt.tensor(np.zeros((0, 2)), backend=backend)
    assert mt.allclose(empty, empty) is True and mt.equal(empty, empty) is True


def test_python_numbers_on_either_side(backend: str) -> None:
    values = np.array([0.5, -1.25, 2.0])
    t, tt = mt.tensor(values, backend=backend), torch.from_numpy(values)
    assert_like_torch(mt.pow(2.0, t), torch.pow(2.0, tt))
    assert_like_torch(2 ** mt.tensor([1, 2, 3], backend=backend), 2 ** torch.tensor([1, 2, 3]))
    assert_like_torch(mt.remainder(5.0, t), torch.remainder(5.0, tt))
    assert_like_torch(mt.where(t > 0, 1.0, 0.0), torch.where(tt > 0, 1.0, 0.0))
    assert_like_torch(mt.where(t > 0, 1, 0), torch.where(tt > 0, 1, 0))
    assert_like_torch(mt.where(t > 0, t, 3), torch.where(tt > 0, tt, 3))
    assert_like_torch(t.clamp(min=mt.tensor(0.0, backend=backend)), tt.clamp(min=torch.tensor(0.0)))
    assert_like_torch(mt.tensor([1, 5, -3], backend=backend).clamp(0.5, 2), torch.tensor([1, 5, -3]).clamp(0.5, 2))


def test_zero_size_and_zero_dim_tensors(backend: str) -> None:
    for shape in [(0,), (2, 0, 3), ()]:
        x_np = np.full(shape, 0.75)
        x = mt.tensor(x_np, backend=backend, requires_grad=True)
        out = (x.exp2() + mt.clamp(x, 0.0, 0.5) + mt.where(x > 0.5, x, 0.0) + mt.maximum(x, 1.0) + x.atan2(x) + x.nan_to_num()).sum()
        out.backward()
        assert x.grad is not None and x.grad.shape == shape
        np.testing.assert_allclose(x.grad.to_numpy(), np.full(shape, 2**0.75 * math.log(2) + 1.0 + 1.0))  # exp2, where, nan_to_num
        assert mt.isnan(x).shape == shape and mt.equal(x, x) is True


# --- bad input: typed errors naming the dtypes and shapes ---


def test_where_needs_a_bool_condition(backend: str) -> None:
    x = mt.tensor([1.0, 2.0], backend=backend)
    for cond in (
        mt.tensor([1, 0], backend=backend),
        mt.tensor([1.0, 0.0], backend=backend),
        mt.tensor([1, 0], dtype="int32", backend=backend),
    ):
        with pytest.raises(mt.DTypeError, match=f"{cond.dtype} tensor of shape \\(2,\\)"):
            mt.where(cond, x, 0.0)
        with pytest.raises(mt.DTypeError, match=str(cond.dtype)):
            x.where(cond, 0.0)
    with pytest.raises(mt.ShapeError):
        mt.where(x > 0, x, mt.tensor([1.0, 2.0, 3.0], backend=backend))


def test_bitwise_ops_need_integers(backend: str) -> None:
    f = mt.tensor([[1.0, 2.0]], backend=backend)
    i = mt.tensor([[1, 2]], backend=backend)
    for op in (lambda: f & i, lambda: i | f, lambda: f ^ f, lambda: ~f, lambda: mt.bitwise_and(i, 1.5)):
        with pytest.raises(mt.DTypeError, match=r"float(32|64) \(shape \((1, 2|)\)\)"):
            op()


def test_integer_division_by_zero_raises(backend: str) -> None:
    a = mt.tensor([[4, -3]], dtype="int32", backend=backend)
    b = mt.tensor([1, 0], backend=backend)
    for op, symbol in [(lambda: a // b, "//"), (lambda: a % b, "%"), (lambda: mt.fmod(a, b), "fmod"), (lambda: a // 0, "//")]:
        with pytest.raises(ZeroDivisionError, match=rf"int32 \(1, 2\) {symbol} int(64|32) \((2,|)\)"):
            op()
    assert math.isinf((a.float() // 0).to_numpy()[0, 0])  # floats divide by zero the IEEE way


def test_other_bad_input(backend: str) -> None:
    x = mt.tensor([1.0, 2.0], backend=backend)
    b = mt.tensor([True, False], backend=backend)
    with pytest.raises(ValueError, match="min or max"):
        x.clamp()
    for op in (lambda: -b, lambda: b.abs(), lambda: b.relu(), lambda: b.floor(), lambda: mt.round(b)):
        with pytest.raises(mt.DTypeError, match="bool"):
            op()
    with pytest.raises(mt.DTypeError, match="int64 .* float64"):
        mt.isclose(mt.tensor([1], backend=backend), mt.tensor([1.0], dtype="float64", backend=backend))
    with pytest.raises(ValueError, match="rtol"):
        mt.isclose(x, x, rtol=-1.0)
    with pytest.raises(ValueError, match="negative integer powers"):
        mt.tensor([2, 3], backend=backend) ** -1
    with pytest.raises(mt.DTypeError, match="int64"):
        mt.tensor([2, 3], backend=backend).round(decimals=1)


def test_api_surface() -> None:
    """Each element-wise function is also a Tensor method (where takes the condition first; isin is a function only
    in PyTorch too); the legacy 1e-2 ``is_close`` is gone."""
    not_methods = {"where", "isin"}
    for name in tensor_math.__all__ + tensor_arith.__all__ + tensor_compare.__all__:
        assert callable(getattr(mt, name)), name
        if name not in not_methods:
            assert hasattr(mt.Tensor, name), name
    assert not hasattr(mt.Tensor, "is_close") and not hasattr(mt, "is_close")
    assert hasattr(mt.Tensor, "where") and not hasattr(mt.Tensor, "isin")
