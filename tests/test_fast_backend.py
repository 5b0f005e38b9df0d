"""Kernel-level tests of the ``fast`` backend against the ``simple`` backend and NumPy.

Inputs come in any layout (permuted storage, broadcast views) and outputs may be strided views
(permuted, or spaced out with untouched gaps). Every op name is checked; dtypes cover float32,
float64 and a different out dtype. Large shapes are checked against NumPy only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitensor.backends.fast import FastBackend, coalesce, matrix_layout
from minitensor.backends.fast import backend as fast
from minitensor.backends.fast_codegen import generate_source
from minitensor.backends.simple import backend as simple
from minitensor.operators import BINARY_OPS, REDUCE_OPS, UNARY_OPS
from minitensor.tensor_data import TensorData

SENTINEL = 12345.0
OUT_KINDS = ("contiguous", "permuted", "spaced")
fast_no_blas = FastBackend(use_blas=False)


# --- helpers ---------------------------------------------------------------------------------------


def laid_out(array: np.ndarray, order: tuple[int, ...]) -> TensorData:
    """TensorData holding ``array``'s values with storage in dim order ``order`` (a permutation)."""
    stored = np.array(np.asarray(array).transpose(order), order="C")  # keeps 0-d arrays 0-d
    return TensorData(stored.reshape(-1), stored.shape).permute(*np.argsort(order).tolist())


def make_out(shape: tuple[int, ...], dtype: np.dtype, kind: str) -> TensorData:
    """An output of ``shape``: contiguous, permuted (reversed dims in storage) or spaced (stride x2)."""
    size = int(np.prod(shape, dtype=np.int64))
    if kind == "contiguous":
        return TensorData(np.full(size, SENTINEL, dtype=dtype), shape)
    if kind == "permuted":
        order = tuple(reversed(range(len(shape))))
        return TensorData(np.full(size, SENTINEL, dtype=dtype), [shape[o] for o in order]).permute(*np.argsort(order).tolist())
    dense = TensorData(np.empty(0), shape)
    return TensorData(np.full(2 * size + 1, SENTINEL, dtype=dtype), shape, [2 * s for s in dense.strides])


def check_gaps(out: TensorData) -> None:
    """Storage not covered by a spaced output must be untouched."""
    if out.size and out.storage.size > out.size:
        assert np.all(out.storage[1::2] == SENTINEL)


def assert_same(fast_out: TensorData, ref: np.ndarray) -> None:
    got = fast.to_numpy(fast_out)
    rtol = 1e-5 if fast_out.dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol, equal_nan=True)
    check_gaps(fast_out)


def twin_outs(shape: tuple[int, ...], dtype: np.dtype, kind: str) -> tuple[TensorData, TensorData]:
    return make_out(shape, dtype, kind), make_out(shape, dtype, kind)


@st.composite
def arrays(draw: st.DrawFn, shape: tuple[int, ...], dtype: np.dtype = np.float64) -> TensorData:
    """Values with repeats and zeros (for eq/lt/div), stored in a random dim order."""
    seed = draw(st.integers(0, 2**31 - 1))
    values = np.asarray(np.round(np.random.default_rng(seed).standard_normal(shape) * 2, 1), dtype=dtype)
    order = tuple(draw(st.permutations(range(len(shape)))))
    return laid_out(values, order)


shapes = st.lists(st.integers(1, 4), min_size=0, max_size=4).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


@st.composite
def broadcast_of(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts to ``shape``: some dims set to 1, some leading dims dropped."""
    small = tuple(1 if draw(st.booleans()) else s for s in shape)
    return small[draw(st.integers(0, len(small))) :]


# --- map / zip / reduce / matmul against simple -------------------------------------------------


@given(data=st.data(), op=st.sampled_from(sorted(UNARY_OPS)), shape=shapes, kind=st.sampled_from(OUT_KINDS))
def test_map_matches_simple(data: st.DataObject, op: str, shape: tuple[int, ...], kind: str) -> None:
    a = data.draw(arrays(data.draw(broadcast_of(shape))))
    out, ref = twin_outs(shape, np.float64, kind)
    fast.map(op, a, out)
    simple.map(op, a, ref)
    assert_same(out, simple.to_numpy(ref))


@given(data=st.data(), op=st.sampled_from(sorted(BINARY_OPS)), shape=shapes, kind=st.sampled_from(OUT_KINDS))
def test_zip_matches_simple(data: st.DataObject, op: str, shape: tuple[int, ...], kind: str) -> None:
    a = data.draw(arrays(data.draw(broadcast_of(shape))))
    b = data.draw(arrays(data.draw(broadcast_of(shape))))
    out, ref = twin_outs(shape, np.float64, kind)
    fast.zip(op, a, b, out)
    simple.zip(op, a, b, ref)
    assert_same(out, simple.to_numpy(ref))


@given(data=st.data(), op=st.sampled_from(sorted(REDUCE_OPS)), shape=nonempty_shapes, kind=st.sampled_from(OUT_KINDS))
def test_reduce_matches_simple(data: st.DataObject, op: str, shape: tuple[int, ...], kind: str) -> None:
    a = data.draw(arrays(shape))
    for dim in range(len(shape)):
        out_shape = tuple(1 if i == dim else s for i, s in enumerate(shape))
        out, ref = twin_outs(out_shape, np.float64, kind)
        fast.reduce(op, a, dim, out)
        simple.reduce(op, a, dim, ref)
        assert_same(out, simple.to_numpy(ref))


@st.composite
def matmul_operands(draw: st.DrawFn, dtype: np.dtype = np.float64) -> tuple[TensorData, TensorData, tuple[int, ...]]:
    """(a, b, out shape) with broadcast batch dims and a/b stored transposed or not."""
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    m, k, n = (draw(st.integers(1, 5)) for _ in range(3))
    a = draw(arrays(draw(broadcast_of(batch)) + (m, k), dtype))
    b = draw(arrays(draw(broadcast_of(batch)) + (k, n), dtype))
    pad = len(batch)
    while a.dims < pad + 2:
        a = a.unsqueeze(0)
    while b.dims < pad + 2:
        b = b.unsqueeze(0)
    return a, b, batch + (m, n)


@given(operands=matmul_operands(), kind=st.sampled_from(OUT_KINDS), use_blas=st.booleans())
def test_matmul_matches_simple(operands: tuple[TensorData, TensorData, tuple[int, ...]], kind: str, use_blas: bool) -> None:
    a, b, out_shape = operands
    out, ref = twin_outs(out_shape, np.float64, kind)
    (fast if use_blas else fast_no_blas).matmul(a, b, out)
    simple.matmul(a, b, ref)
    assert_same(out, simple.to_numpy(ref))


# --- every op name, float32 and mixed dtypes ------------------------------------------------------


@pytest.mark.parametrize("op", sorted(UNARY_OPS))
def test_every_unary_op(op: str) -> None:
    x = np.round(np.linspace(-3, 3, 60), 1).reshape(3, 4, 5)
    for a, kind in ((laid_out(x, (0, 1, 2)), "contiguous"), (laid_out(x, (2, 0, 1)), "spaced")):
        out, ref = twin_outs((3, 4, 5), np.float64, kind)
        fast.map(op, a, out)
        simple.map(op, a, ref)
        assert_same(out, simple.to_numpy(ref))


@pytest.mark.parametrize("op", sorted(BINARY_OPS))
def test_every_binary_op(op: str) -> None:
    x = np.round(np.linspace(-3, 3, 60), 1).reshape(3, 4, 5)
    y = np.round(np.linspace(2, -2, 20), 1).reshape(4, 5)
    cases = [(laid_out(x, (0, 1, 2)), laid_out(x[::-1].copy(), (0, 1, 2))), (laid_out(x, (1, 2, 0)), laid_out(y, (1, 0)))]
    for a, b in cases:
        out, ref = twin_outs((3, 4, 5), np.float64, "permuted")
        fast.zip(op, a, b, out)
        simple.zip(op, a, b, ref)
        assert_same(out, simple.to_numpy(ref))


@pytest.mark.parametrize("op", sorted(REDUCE_OPS))
def test_every_reduce_op_both_strategies(op: str) -> None:
    x = np.round(np.linspace(-1.5, 1.5, 60), 1).reshape(3, 4, 5)
    for order in ((0, 1, 2), (2, 1, 0)):
        a = laid_out(x, order)
        for dim in range(3):
            out_shape = tuple(1 if i == dim else s for i, s in enumerate(x.shape))
            out, ref = twin_outs(out_shape, np.float64, "contiguous")
            fast.reduce(op, a, dim, out)
            simple.reduce(op, a, dim, ref)
            assert_same(out, simple.to_numpy(ref))


DTYPE_PAIRS = [(np.float32, np.float32), (np.float64, np.float64), (np.float32, np.float64), (np.float64, np.float32)]


@pytest.mark.parametrize("in_dtype,out_dtype", DTYPE_PAIRS)
@given(data=st.data(), shape=nonempty_shapes)
def test_dtypes(data: st.DataObject, shape: tuple[int, ...], in_dtype: type, out_dtype: type) -> None:
    a = data.draw(arrays(shape, in_dtype))
    b = data.draw(arrays(data.draw(broadcast_of(shape)), in_dtype))
    for name, run in (
        ("map", lambda be, out: be.map("exp", a, out)),
        ("zip", lambda be, out: be.zip("mul", a, b, out)),
    ):
        out, ref = twin_outs(shape, out_dtype, "spaced")
        run(fast, out)
        run(simple, ref)
        assert out.dtype == out_dtype, name
        assert_same(out, simple.to_numpy(ref))
    out_shape = shape[:-1] + (1,)
    out, ref = twin_outs(out_shape, out_dtype, "contiguous")
    fast.reduce("sum", a, len(shape) - 1, out)
    simple.reduce("sum", a, len(shape) - 1, ref)
    assert_same(out, simple.to_numpy(ref))


@pytest.mark.parametrize("in_dtype,out_dtype", DTYPE_PAIRS)
@given(operands=st.data())
def test_matmul_dtypes(operands: st.DataObject, in_dtype: type, out_dtype: type) -> None:
    a, b, out_shape = operands.draw(matmul_operands(in_dtype))
    out, ref = twin_outs(out_shape, out_dtype, "contiguous")
    fast.matmul(a, b, out)
    simple.matmul(a, b, ref)
    assert_same(out, simple.to_numpy(ref))


# --- edge shapes ------------------------------------------------------------------------------------


def test_zero_dim_tensors() -> None:
    a = laid_out(np.array(-2.0), ())
    b = laid_out(np.array(3.0), ())
    out = fast.empty((), np.float64)
    fast.map("neg", a, out)
    assert fast.to_numpy(out) == 2.0
    fast.zip("mul", a, b, out)
    assert fast.to_numpy(out) == -6.0
    col = fast.empty((2, 3), np.float64)
    fast.zip("add", fast.from_numpy(np.ones((2, 3))), a, col)  # 0-d broadcast into a matrix
    np.testing.assert_array_equal(fast.to_numpy(col), -np.ones((2, 3)))


@pytest.mark.parametrize("op,start", [(name, start) for name, (_, start) in sorted(REDUCE_OPS.items())])
def test_empty_tensors(op: str, start: float) -> None:
    empty = fast.from_numpy(np.zeros((0, 3)))
    out = fast.empty((0, 3), np.float64)
    fast.map("exp", empty, out)
    fast.zip("add", empty, empty, out)
    fast.reduce(op, empty, 1, fast.empty((0, 1), np.float64))
    folded = fast.empty((1, 3), np.float64)
    fast.reduce(op, empty, 0, folded)  # folding nothing gives the start value
    np.testing.assert_array_equal(fast.to_numpy(folded), np.full((1, 3), start))
    for backend in (fast, fast_no_blas):
        product = fast.empty((2, 4), np.float64)
        backend.matmul(fast.from_numpy(np.zeros((2, 0))), fast.from_numpy(np.zeros((0, 4))), product)
        np.testing.assert_array_equal(fast.to_numpy(product), np.zeros((2, 4)))
        backend.matmul(fast.from_numpy(np.zeros((0, 3))), fast.from_numpy(np.zeros((3, 4))), fast.empty((0, 4), np.float64))


# --- large shapes against NumPy ----------------------------------------------------------------------


def test_large_elementwise_against_numpy() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((300, 517))
    row = rng.standard_normal(517)
    out = fast.empty((300, 517), np.float64)
    fast.map("exp", laid_out(x, (1, 0)), out)
    np.testing.assert_allclose(fast.to_numpy(out), np.exp(x), rtol=1e-12)
    fast.zip("add", laid_out(x, (1, 0)), laid_out(x, (0, 1)), out)
    np.testing.assert_allclose(fast.to_numpy(out), 2 * x, rtol=1e-12)
    fast.zip("sub", laid_out(x, (0, 1)), fast.from_numpy(row).unsqueeze(0), out)
    np.testing.assert_allclose(fast.to_numpy(out), x - row, rtol=1e-12)
    col = fast.from_numpy(row[:300].reshape(300, 1))
    fast.zip("mul", laid_out(x, (1, 0)), col, out)
    np.testing.assert_allclose(fast.to_numpy(out), x * row[:300, None], rtol=1e-12)
    flat = fast.empty((x.size,), np.float32)
    fast.map("id", fast.from_numpy(x.reshape(-1)), flat)
    np.testing.assert_array_equal(fast.to_numpy(flat), x.reshape(-1).astype(np.float32))


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 0, 1), (1, 2, 0)])
def test_large_reduce_against_numpy(order: tuple[int, ...]) -> None:
    x = np.random.default_rng(2).standard_normal((37, 53, 211))
    shifted = x * 0.1 + 1  # products of values near 1 stay finite
    cases = {"sum": (x, np.sum), "max": (x, np.max), "min": (x, np.min), "prod": (shifted, np.prod)}
    for op, (values, fn) in cases.items():
        source = laid_out(values, order)
        for dim in range(3):
            out_shape = tuple(1 if i == dim else s for i, s in enumerate(x.shape))
            out = fast.empty(out_shape, np.float64)
            fast.reduce(op, source, dim, out)
            np.testing.assert_allclose(fast.to_numpy(out), fn(values, axis=dim, keepdims=True), rtol=1e-9)
    total = fast.empty((1,), np.float64)
    fast.reduce("sum", fast.from_numpy(x.reshape(-1)), 0, total)
    np.testing.assert_allclose(fast.to_numpy(total), [x.sum()], rtol=1e-9)


@pytest.mark.parametrize("backend", [fast, fast_no_blas], ids=["blas", "tiled"])
@pytest.mark.parametrize("a_order,b_order", [((0, 1, 2, 3), (0, 1, 2, 3)), ((0, 1, 3, 2), (1, 0, 3, 2)), ((3, 2, 1, 0), (2, 3, 0, 1))])
def test_large_matmul_against_numpy(backend: FastBackend, a_order: tuple[int, ...], b_order: tuple[int, ...]) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 130, 70))
    y = rng.standard_normal((1, 3, 70, 90))
    out = fast.empty((2, 3, 130, 90), np.float64)
    backend.matmul(laid_out(x, a_order), laid_out(y, b_order), out)
    np.testing.assert_allclose(fast.to_numpy(out), x @ y, rtol=1e-9, atol=1e-9)
    spaced = make_out((2, 3, 130, 90), np.float64, "spaced")
    backend.matmul(laid_out(x, a_order), laid_out(y, b_order), spaced)
    assert_same(spaced, x @ y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_square_matmul_against_numpy(dtype: type) -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((256, 256)).astype(dtype)
    y = rng.standard_normal((256, 256)).astype(dtype)
    out = fast.empty((256, 256), dtype)
    fast.matmul(laid_out(x, (1, 0)), fast.from_numpy(y), out)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(fast.to_numpy(out), x.astype(np.float64) @ y.astype(np.float64), rtol=tol, atol=tol)


# --- planning helpers and warm start -------------------------------------------------------------------


def test_coalesce_merges_contiguous_dims_and_keeps_strided_ones() -> None:
    shape, strides = coalesce([(2, [12, 12]), (3, [4, 4]), (4, [1, 1])], 2)
    assert shape.tolist() == [24] and strides.tolist() == [[1], [1]]
    shape, strides = coalesce([(2, [12, 0]), (3, [4, 1]), (4, [1, 3])], 2)
    assert shape.tolist() == [2, 3, 4]
    shape, strides = coalesce([], 3)
    assert shape.tolist() == [1] and strides.tolist() == [[0], [0], [0]]


def test_matrix_layout() -> None:
    assert matrix_layout(3, 4, 4, 1) == "row"
    assert matrix_layout(3, 4, 1, 3) == "col"
    assert matrix_layout(3, 4, 8, 2) is None
    assert matrix_layout(1, 4, 0, 1) == "row"


def test_generated_source_sets_the_op() -> None:
    source = generate_source("zip", "pow")
    assert 'BINARY = "pow"' in source and 'UNARY = "id"' in source


WARM_SCRIPT = """
import json, numpy as np
from minitensor.backends.fast import backend as fast
from minitensor.backends.fast_codegen import kernel_module
fast.map("neg", fast.from_numpy(np.ones(5)), fast.empty((5,), np.float64))
stats = kernel_module("map", "neg").map_kernel.stats
print(json.dumps({"hits": sum(stats.cache_hits.values()), "misses": sum(stats.cache_misses.values())}))
"""


def test_second_process_loads_kernels_from_the_disk_cache() -> None:
    fast.map("neg", fast.from_numpy(np.ones(5)), fast.empty((5,), np.float64))  # compiled (or loaded) here
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run([sys.executable, "-c", WARM_SCRIPT], env=env, capture_output=True, text=True, check=True, timeout=120)
    stats = json.loads(result.stdout.strip().splitlines()[-1])
    assert stats == {"hits": 1, "misses": 0}


@pytest.mark.parametrize("op", ["sum", "max"])
@pytest.mark.parametrize("length", [3 * 2**16, 2**16 + 1])  # split into parts, and a prime-ish length that is not
def test_long_reduction_into_one_value(op: str, length: int) -> None:
    x = np.random.default_rng(5).standard_normal((2, length))
    out = fast.empty((2, 1), np.float64)
    fast.reduce(op, laid_out(x, (1, 0)), 1, out)
    np.testing.assert_allclose(fast.to_numpy(out), getattr(np, op)(x, axis=1, keepdims=True), rtol=1e-9)


def test_big_batched_matmul_with_transposed_operand() -> None:
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((2, 200, 120)), rng.standard_normal((2, 90, 120))
    out = fast.empty((2, 200, 90), np.float64)
    fast.matmul(fast.from_numpy(x), fast.from_numpy(y).permute(0, 2, 1), out)
    np.testing.assert_allclose(fast.to_numpy(out), x @ y.transpose(0, 2, 1), rtol=1e-10, atol=1e-10)
