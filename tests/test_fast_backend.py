"""Kernel-level tests of the ``fast`` backend against the ``simple`` backend and NumPy.

Inputs come in any layout (permuted storage, broadcast views) and outputs may be strided views
(permuted, or spaced out with untouched gaps). Every op name is checked; dtypes cover float32,
float64, int32, int64, bool and a different out dtype, with exact int64 arithmetic when every input
is an integer. where/gather/scatter_add/scan/sort are checked on shapes with zero-size dims. Large
shapes are checked against NumPy only. The codegen's input validation and its distrust of files
found in the cache directory are checked too.
"""

from __future__ import annotations

import json
import math
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitensor import operators
from minitensor.backends import fast as fast_module
from minitensor.backends import fast_codegen, fast_launch, fast_numpy, fast_plan
from minitensor.backends.base import strided_view
from minitensor.backends.fast import NUMPY_MATH, THREADED_MATH_MIN, FastBackend
from minitensor.backends.fast import backend as fast
from minitensor.backends.fast_codegen import generate_source, kernel_module, module_stem
from minitensor.backends.fast_plan import matrix_layout
from minitensor.backends.layout import chunking, coalesce, planned_layout, tiled
from minitensor.backends.simple import backend as simple
from minitensor.operators import BINARY_OPS, REDUCE_OPS, UNARY_OPS
from minitensor.tensor_data import TensorData

SENTINEL = 12345.0
OUT_KINDS = ("contiguous", "permuted", "spaced")
fast_no_blas = FastBackend(use_blas=False)
INTEGER_ONLY = frozenset(op for op in (*UNARY_OPS, *BINARY_OPS) if op.startswith("bitwise_"))
"""Ops defined for integer compute only (their float kernels are never requested)."""
FLOAT_UNARY = sorted(set(UNARY_OPS) - INTEGER_ONLY)
FLOAT_BINARY = sorted(set(BINARY_OPS) - INTEGER_ONLY)


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
        assert np.all(out.storage[1::2] == np.array(SENTINEL).astype(out.dtype))


def assert_same(fast_out: TensorData, ref: np.ndarray) -> None:
    got = fast.to_numpy(fast_out)
    assert got.dtype == fast_out.dtype and got.shape == np.shape(ref)
    if fast_out.dtype.kind in "iub":
        np.testing.assert_array_equal(got, ref)
    else:
        rtol = 1e-5 if fast_out.dtype == np.float32 else 1e-10
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol, equal_nan=True)
    check_gaps(fast_out)


def twin_outs(shape: tuple[int, ...], dtype: np.dtype, kind: str) -> tuple[TensorData, TensorData]:
    return make_out(shape, dtype, kind), make_out(shape, dtype, kind)


@st.composite
def arrays(draw: st.DrawFn, shape: tuple[int, ...], dtype: np.dtype = np.float64) -> TensorData:
    """Values with repeats and zeros (for eq/lt/div), stored in a random dim order."""
    seed = draw(st.integers(0, 2**31 - 1))
    floats = np.round(np.random.default_rng(seed).standard_normal(shape) * 2, 1)
    values = floats > 0 if np.dtype(dtype) == np.bool_ else np.asarray(floats, dtype=dtype)
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


@given(data=st.data(), op=st.sampled_from(FLOAT_UNARY), shape=shapes, kind=st.sampled_from(OUT_KINDS))
def test_map_matches_simple(data: st.DataObject, op: str, shape: tuple[int, ...], kind: str) -> None:
    a = data.draw(arrays(data.draw(broadcast_of(shape))))
    out, ref = twin_outs(shape, np.float64, kind)
    fast.map(op, a, out)
    simple.map(op, a, ref)
    assert_same(out, simple.to_numpy(ref))


@given(data=st.data(), op=st.sampled_from(FLOAT_BINARY), shape=shapes, kind=st.sampled_from(OUT_KINDS))
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


@pytest.mark.parametrize("op", FLOAT_UNARY)
def test_every_unary_op(op: str) -> None:
    x = np.round(np.linspace(-3, 3, 60), 1).reshape(3, 4, 5)
    for a, kind in ((laid_out(x, (0, 1, 2)), "contiguous"), (laid_out(x, (2, 0, 1)), "spaced")):
        out, ref = twin_outs((3, 4, 5), np.float64, kind)
        fast.map(op, a, out)
        simple.map(op, a, ref)
        assert_same(out, simple.to_numpy(ref))


@pytest.mark.parametrize("op", FLOAT_BINARY)
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


@given(st.integers(1, 10**8), st.sampled_from([1, 7, 64]))
def test_chunks_cover_the_work_once_and_keep_alignment(total: int, align: int) -> None:
    """Chunks (n, per_chunk) cover every element exactly once (the last may be short, none empty), number at most
    256, and hold a multiple of ``align`` elements."""
    n, per_chunk = chunking(np.array([total], dtype=np.int64), align=align)
    assert 1 <= n <= 256 and per_chunk % align == 0
    assert (n - 1) * per_chunk < total <= n * per_chunk


def test_coalesce_merges_contiguous_dims_and_keeps_strided_ones() -> None:
    shape, strides = coalesce([(2, [12, 12]), (3, [4, 4]), (4, [1, 1])], 2)
    assert shape.tolist() == [24] and strides.tolist() == [[1], [1]]
    shape, strides = coalesce([(2, [12, 0]), (3, [4, 1]), (4, [1, 3])], 2)
    assert shape.tolist() == [2, 3, 4]
    shape, strides = coalesce([], 3)
    assert shape.tolist() == [1] and strides.tolist() == [[0], [0], [0]]


def _walk(shape: np.ndarray, strides: np.ndarray) -> list[tuple[int, ...]]:
    """Every element's (position per operand), in the kernels' row-major order of ``shape``."""
    index = np.indices(shape.tolist()).reshape(shape.size, -1).T
    return [tuple(int(p) for p in row) for row in index @ strides.T]


@given(st.integers(1, 40), st.integers(1, 40), st.sampled_from([0, 1, 2]))
def test_tiled_layout_visits_the_same_positions(rows: int, cols: int, kind: int) -> None:
    """Tiling a crossed 2-D layout (thresholds lowered so small shapes tile) visits exactly the (out, a, b) position
    triples of the untiled walk, each once: the kernels compute the same values, in a new order."""
    out = [cols, 1]
    crossed = [1, rows]  # a transposed (rows, cols) operand
    other = {0: [cols, 1], 1: [0, 1], 2: [2 * cols, 2]}[kind]  # contiguous, broadcast row, every other
    strides = np.array([out, crossed, other], dtype=np.int64)
    shape = np.array([rows, cols], dtype=np.int64)
    tiles, tile_strides = tiled(shape, strides, min_run=1, min_step=1)
    assert sorted(_walk(tiles, tile_strides)) == sorted(_walk(shape, strides))
    tr, tc = (int(tiles[2]), int(tiles[3])) if tiles.size == 4 else (rows, cols)
    if tiles.size == 4:  # a tile's row is a run of the output
        assert tile_strides[0].tolist() == [tr * cols, tc, cols, 1] and rows % tr == 0 and cols % tc == 0


def test_big_transposed_operands_are_tiled_with_numpy_values() -> None:
    """A transposed operand wide enough to walk a page per element takes the tiled layout (map and zip, float32 and
    float64, serial and parallel builds): values equal NumPy's; a dim with no tile divisor (2053, prime) is not tiled
    and still gives NumPy's values."""
    rng = np.random.default_rng(5)
    for rows, cols, dtype in ((576, 2304, np.float32), (512, 2048, np.float64), (512, 2053, np.float64)):
        base = rng.standard_normal((cols, rows)).astype(dtype)  # stored transposed
        crossed = TensorData(base.reshape(-1), (cols, rows)).permute(1, 0)
        x = rng.standard_normal((rows, cols)).astype(dtype)
        out = fast.empty((rows, cols), np.dtype(dtype))
        layout = planned_layout(out, [crossed])
        assert layout[0].size == (2 if cols == 2053 else 4), layout[0]
        fast.map("neg", crossed, out)
        np.testing.assert_array_equal(fast.to_numpy(out), -base.T)
        fast.zip("add", TensorData(x.reshape(-1), (rows, cols)), crossed, out)
        np.testing.assert_array_equal(fast.to_numpy(out), x + base.T)
        fast.zip("mul", crossed, crossed, out)  # both inputs crossed, through the same storage
        np.testing.assert_array_equal(fast.to_numpy(out), base.T * base.T)


def test_matrix_layout() -> None:
    assert matrix_layout(3, 4, 4, 1) == "row"
    assert matrix_layout(3, 4, 1, 3) == "col"
    assert matrix_layout(3, 4, 8, 2) is None
    assert matrix_layout(1, 4, 0, 1) == "row"
    assert matrix_layout(3, 4, 16, 1) == "row"  # 4 columns of a (3, 16) row-major matrix: lda 16
    assert matrix_layout(3, 4, 1, 8) == "col"  # 3 rows of an (8, 4) column-major matrix
    assert matrix_layout(3, 4, 3, 1) is None  # rows overlap
    assert matrix_layout(3, 4, 0, 1) is None  # broadcast rows


def test_generated_source_sets_the_op() -> None:
    source = generate_source("zip", "pow")
    assert 'BINARY = "pow"' in source and 'UNARY = "id"' in source and 'COMPUTE = "float64"' in source
    source = generate_source("reduce", "max", "int64")
    assert 'REDUCE = "max"' in source and 'COMPUTE = "int64"' in source
    assert module_stem("map", "exp") == "map_exp_f" and module_stem("map", "neg", "int64") == "map_neg_i"
    assert module_stem("matmul", "", "int64") == "matmul_i" and module_stem("extra") == "extra"
    assert module_stem("map", "exp", parallel=False) == "map_exp_f_s" and module_stem("extra", parallel=False) == "extra_s"
    serial = generate_source("map", "exp", parallel=False)
    assert 'PARALLEL = "serial"' in serial and 'PARALLEL = "parallel"' in generate_source("map", "exp")


WARM_SCRIPT = """
import json, numpy as np
from minitensor.backends.fast import FastBackend
fast = FastBackend(use_numpy_twins=False)  # small "neg" calls would run its NumPy twin, not the kernel
from minitensor.backends.fast_codegen import kernel_module
fast.map("neg", fast.from_numpy(np.ones(5)), fast.empty((5,), np.float64))
from minitensor.backends.fast_compile import _c_functions
stats = kernel_module("walk", parallel=False).map_flat_kernel.stats
loop = next(f for key, f in _c_functions.items() if "map_neg" in key[0])  # neg's loop, a C function
print(json.dumps({"hits": sum(stats.cache_hits.values()), "misses": sum(stats.cache_misses.values()),
                  "loop hits": loop.cache_hits}))
"""


def test_second_process_loads_kernels_from_the_disk_cache() -> None:
    kernels = FastBackend(use_numpy_twins=False)
    kernels.map("neg", fast.from_numpy(np.ones(5)), fast.empty((5,), np.float64))  # compiled (or loaded) here
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run([sys.executable, "-c", WARM_SCRIPT], env=env, capture_output=True, text=True, check=True, timeout=120)
    stats = json.loads(result.stdout.strip().splitlines()[-1])
    assert stats == {"hits": 1, "misses": 0, "loop hits": 1}
    assert fast_codegen.COMPILE_NOTICE not in result.stderr  # nothing compiled: no notice


TRAINING_SCRIPT = """
import json, sys
import numpy as np
import minitensor as mt
from minitensor import nn, optim
mt.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10))
opt = optim.Adam(model.parameters(), lr=1e-2)
rng = np.random.default_rng(0)
x = mt.tensor(rng.standard_normal((300, 64)).astype(np.float32))  # 300x256 hidden: the parallel build runs too
y = mt.tensor(rng.integers(0, 10, 300))
for _ in range(3):
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
from minitensor.backends import fast_launch
fast_launch.measure_break_even()  # its own two cached kernels
print(json.dumps({"loss": loss.item(), "weight": model[0].weight.sum().item(), "refreshed": "numba.np.arraymath" in sys.modules}))
"""


def test_warm_process_loads_kernels_without_refreshing_numba() -> None:
    """A second process trains from the disk cache without Numba's context refresh (its registries, SciPy's linalg:
    0.6 s of a warm start) and gets the first process's bits; the parallel build's thread pool and the runtime's
    allocator work in kernels loaded that way."""
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, MINITENSOR_BACKEND="fast", MINITENSOR_PARALLEL_FROM="1024",
               PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    runs = [json.loads(subprocess.run([sys.executable, "-c", TRAINING_SCRIPT], env=env, capture_output=True, text=True,
                                      check=True, timeout=300).stdout.strip().splitlines()[-1]) for _ in range(2)]
    assert runs[1] == {**runs[0], "refreshed": False}, runs  # the first process may have compiled (and refreshed)
    assert math.isfinite(runs[1]["loss"])


def test_first_compile_prints_one_notice(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, MINITENSOR_CACHE_DIR=str(tmp_path), PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    first = 'fast.map("abs", fast.from_numpy(np.ones(5)), fast.empty((5,), np.float64)); '
    script = WARM_SCRIPT.replace('fast.map("neg"', first + 'fast.map("neg"')
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True, timeout=120)
    assert result.stderr.count(fast_codegen.COMPILE_NOTICE) == 1, result.stderr  # two modules compiled, one line


def test_stale_fingerprint_directories_are_pruned(tmp_path: Path) -> None:
    old = 1_000_000_000  # 2001
    for name in ("0123456789abcdef", "fedcba9876543210", "aaaaaaaaaaaaaaaa", "notafingerprint"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "map_neg_f.py").write_text("x = 1\n")
    for name in ("0123456789abcdef", "fedcba9876543210", "notafingerprint"):
        os.utime(tmp_path / name, (old, old))
    removed = fast_codegen.prune_stale(tmp_path, keep="fedcba9876543210")
    assert removed == [tmp_path / "0123456789abcdef"]  # the one we use, a recent one and a foreign name stay
    assert sorted(p.name for p in tmp_path.iterdir()) == ["aaaaaaaaaaaaaaaa", "fedcba9876543210", "notafingerprint"]


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


# --- integer and bool storage: int64 compute when every input is an integer ------------------------

I64, I32, BOOL, F32, F64 = (np.dtype(t) for t in (np.int64, np.int32, np.bool_, np.float32, np.float64))
# (op, input dtype(s), out dtype). Every (op, dtypes) is one Numba compile on a cold cache, which
# dominates this file's run time: the cases are few, and the exactness tests reuse their dtypes.
INT_MAP_CASES = [
    ("id", BOOL, F32),
    ("neg", I64, I64),
    ("abs", I32, I64),
    ("bitwise_not", I64, I64),
    ("logical_not", BOOL, BOOL),
    ("exp", I32, F64),
]
INT_ZIP_CASES = [
    ("add", I64, I64, I64),
    ("sub", I64, I64, I64),
    ("max", I64, I64, I64),
    ("min", I64, I64, I64),
    ("mul", BOOL, I32, I32),
    ("lt", I64, I32, BOOL),
    ("floordiv", I64, I64, F64),
    ("remainder", I32, I64, F64),
    ("bitwise_xor", I64, I64, I64),
]
shapes0 = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)
ranked_shapes0 = st.lists(st.integers(0, 4), min_size=1, max_size=4).map(tuple)


def case_id(case: object) -> str:
    return "-".join(str(part) for part in case) if isinstance(case, tuple) else str(case)


@pytest.mark.parametrize("case", [c for c in INT_MAP_CASES if c[0] in UNARY_OPS], ids=case_id)
@given(data=st.data(), shape=shapes0, kind=st.sampled_from(OUT_KINDS))
def test_integer_map_matches_simple(data: st.DataObject, case: tuple, shape: tuple[int, ...], kind: str) -> None:
    op, in_dtype, out_dtype = case
    a = data.draw(arrays(data.draw(broadcast_of(shape)), in_dtype))
    out, ref = twin_outs(shape, out_dtype, kind)
    fast.map(op, a, out)
    simple.map(op, a, ref)
    assert_same(out, simple.to_numpy(ref))


@pytest.mark.parametrize("case", [c for c in INT_ZIP_CASES if c[0] in BINARY_OPS], ids=case_id)
@given(data=st.data(), shape=shapes0, kind=st.sampled_from(OUT_KINDS))
def test_integer_zip_matches_simple(data: st.DataObject, case: tuple, shape: tuple[int, ...], kind: str) -> None:
    op, a_dtype, b_dtype, out_dtype = case
    a = data.draw(arrays(data.draw(broadcast_of(shape)), a_dtype))
    b = data.draw(arrays(data.draw(broadcast_of(shape)), b_dtype))
    out, ref = twin_outs(shape, out_dtype, kind)
    fast.zip(op, a, b, out)
    simple.zip(op, a, b, ref)
    assert_same(out, simple.to_numpy(ref))


@pytest.mark.parametrize("op", sorted(REDUCE_OPS))
@given(data=st.data(), shape=nonempty_shapes, kind=st.sampled_from(OUT_KINDS), bools=st.booleans())
def test_integer_reduce_matches_simple(data: st.DataObject, op: str, shape: tuple[int, ...], kind: str, bools: bool) -> None:
    a = data.draw(arrays(shape, BOOL if bools and op == "sum" else I64))
    for dim in range(len(shape)):
        out, ref = twin_outs(tuple(1 if i == dim else s for i, s in enumerate(shape)), I64, kind)
        fast.reduce(op, a, dim, out)
        simple.reduce(op, a, dim, ref)
        assert_same(out, simple.to_numpy(ref))


def int_data(values: list | np.ndarray, dtype: np.dtype = I64) -> TensorData:
    return fast.from_numpy(np.array(values, dtype=dtype))


def test_integer_arithmetic_is_exact() -> None:
    big = 2**62
    x = np.array([big + 1, -big - 3, 2**53 + 1, 7], dtype=np.int64)
    y = np.array([1, -1, 2, -(2**40)], dtype=np.int64)
    for op, expected in (("add", x + y), ("sub", x - y), ("max", np.maximum(x, y)), ("min", np.minimum(x, y))):
        out = fast.empty((4,), I64)
        fast.zip(op, int_data(x), int_data(y), out)
        np.testing.assert_array_equal(fast.to_numpy(out), expected, err_msg=op)
    negated = fast.empty((4,), I64)
    fast.map("neg", int_data(x), negated)
    np.testing.assert_array_equal(fast.to_numpy(negated), -x)
    rows = np.array([[big, 1, 1, -3], [2**31 + 1, 2**31 - 1, 1, 1]], dtype=np.int64)
    for op, fn in (("sum", np.sum), ("max", np.max), ("min", np.min), ("prod", np.prod)):
        for dim in (0, 1):
            out = fast.empty((1, 4) if dim == 0 else (2, 1), I64)
            fast.reduce(op, laid_out(rows, (1, 0)), dim, out)
            np.testing.assert_array_equal(fast.to_numpy(out), fn(rows, axis=dim, keepdims=True), err_msg=op)
    scanned = fast.empty((2, 4), I64)
    fast.scan("sum", int_data(rows), 1, scanned)
    np.testing.assert_array_equal(fast.to_numpy(scanned), np.cumsum(rows, axis=1))


@pytest.mark.parametrize("backend", [fast, fast_no_blas], ids=["blas", "tiled"])
def test_integer_matmul_is_exact(backend: FastBackend) -> None:
    a = np.array([[2**40, 1, -3], [3, 4, 2**20]], dtype=np.int64)
    b = np.array([[2**20 + 1, 0], [1, 1], [5, -(2**30)]], dtype=np.int64)
    expected = np.array([[int(sum(int(a[i, k]) * int(b[k, j]) for k in range(3))) for j in range(2)] for i in range(2)])
    out = fast.empty((2, 2), I64)
    backend.matmul(int_data(a), laid_out(b, (1, 0)), out)
    np.testing.assert_array_equal(fast.to_numpy(out), expected)


def test_long_integer_reduction_is_exact() -> None:
    x = 2**44 + np.random.default_rng(7).integers(0, 1000, 3 * 2**16)  # float64 partial sums would round
    out = fast.empty((1,), I64)
    fast.reduce("sum", int_data(x), 0, out)
    assert int(fast.to_numpy(out)[0]) == sum(int(v) for v in x)


def test_stores_convert_to_bool_and_int() -> None:
    x = np.array([-1.7, 2.9, -0.2, 0.0, -0.0, np.nan, 3.0])
    to_bool = fast.empty((7,), BOOL)
    fast.map("id", fast.from_numpy(x), to_bool)
    np.testing.assert_array_equal(fast.to_numpy(to_bool), x != 0)  # nonzero (nan too) is True
    to_int = fast.empty((6,), I32)
    fast.map("id", fast.from_numpy(x[:6][[0, 1, 2, 3, 4, 0]]), to_int)
    np.testing.assert_array_equal(fast.to_numpy(to_int), [-1, 2, 0, 0, 0, -1])  # truncation toward zero
    y = np.array([0.5, 2.9, -0.2, 1.0, np.nan, 3.0])
    for op, fn in (("lt", np.less), ("ne", np.not_equal)):
        out = make_out((2, 3), BOOL, "spaced")
        fast.zip(op, fast.from_numpy(x[:6].reshape(2, 3)), fast.from_numpy(y.reshape(2, 3)), out)
        assert_same(out, fn(x[:6], y).reshape(2, 3))
    ints = make_out((2, 3), BOOL, "permuted")
    fast.zip("lt", int_data(np.arange(6).reshape(2, 3)), int_data([[2], [4]], I32), ints)
    assert_same(ints, np.arange(6).reshape(2, 3) < [[2], [4]])


# --- where / gather / scatter_add / scan / sort -----------------------------------------------------


def via_simple(method: str, *args: object) -> bool:
    """Run the simple backend's ``method`` if it has one (False when it is not implemented)."""
    try:
        getattr(simple, method)(*args)
    except NotImplementedError:
        return False
    return True


WHERE_CASES = [(BOOL, F64, F64, F64), (BOOL, I64, I64, I64), (F64, I32, I64, F32), (I64, BOOL, BOOL, BOOL)]


@pytest.mark.parametrize("dtypes", WHERE_CASES, ids=case_id)
@given(data=st.data(), shape=shapes0, kind=st.sampled_from(OUT_KINDS))
def test_where(data: st.DataObject, dtypes: tuple[np.dtype, ...], shape: tuple[int, ...], kind: str) -> None:
    cond_dtype, a_dtype, b_dtype, out_dtype = dtypes
    cond, a, b = (data.draw(arrays(data.draw(broadcast_of(shape)), dt)) for dt in (cond_dtype, a_dtype, b_dtype))
    out, ref = twin_outs(shape, out_dtype, kind)
    fast.where(cond, a, b, out)
    c, x, y = (fast.to_numpy(v) for v in (cond, a, b))
    expected = np.broadcast_to(np.where(c != 0, x, y), shape).astype(out_dtype)
    assert_same(out, expected)
    if via_simple("where", cond, a, b, ref):
        assert_same(out, simple.to_numpy(ref))


@st.composite
def dim_of(draw: st.DrawFn, shape: tuple[int, ...]) -> int:
    return draw(st.integers(0, len(shape) - 1))


def random_order(draw: st.DrawFn, dims: int) -> tuple[int, ...]:
    return tuple(draw(st.permutations(range(dims))))


@pytest.mark.parametrize("dtype", [F64, I64, BOOL], ids=str)
@given(data=st.data(), shape=ranked_shapes0, kind=st.sampled_from(OUT_KINDS))
def test_gather(data: st.DataObject, dtype: np.dtype, shape: tuple[int, ...], kind: str) -> None:
    dim = data.draw(dim_of(shape))
    a = data.draw(arrays(shape, dtype))
    picked = data.draw(st.integers(0, 4)) if shape[dim] else 0
    index_shape = shape[:dim] + (picked,) + shape[dim + 1 :]
    idx = np.random.default_rng(data.draw(st.integers(0, 99))).integers(0, max(shape[dim], 1), index_shape)
    index = laid_out(idx, random_order(data.draw, len(shape)))
    out, ref = twin_outs(index_shape, dtype, kind)
    fast.gather(a, dim, index, out)
    assert_same(out, np.take_along_axis(fast.to_numpy(a), idx, dim))
    if via_simple("gather", a, dim, index, ref):
        assert_same(out, simple.to_numpy(ref))


def scatter_add_reference(start: np.ndarray, src: np.ndarray, dim: int, idx: np.ndarray) -> np.ndarray:
    expected = start.copy()
    where = tuple(idx if d == dim else grid for d, grid in enumerate(np.indices(src.shape)))
    np.add.at(expected, where, src)
    return expected


@pytest.mark.parametrize("dtype", [F64, F32, I64], ids=str)
@given(data=st.data(), shape=ranked_shapes0, kind=st.sampled_from(OUT_KINDS))
def test_scatter_add(data: st.DataObject, dtype: np.dtype, shape: tuple[int, ...], kind: str) -> None:
    dim = data.draw(dim_of(shape))
    targets = data.draw(st.integers(1, 4)) if shape[dim] else data.draw(st.integers(0, 3))
    out_shape = shape[:dim] + (targets,) + shape[dim + 1 :]
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    src = data.draw(arrays(shape, dtype))
    idx = rng.integers(0, max(targets, 1), shape)
    index = laid_out(idx, random_order(data.draw, len(shape)))
    start = np.asarray(rng.integers(-5, 6, out_shape), dtype=dtype)
    out, ref = twin_outs(out_shape, dtype, kind)
    for target in (out, ref):
        strided_view(target, writeable=True)[...] = start
    fast.scatter_add(src, dim, index, out)
    assert_same(out, scatter_add_reference(start, fast.to_numpy(src), dim, idx))
    if via_simple("scatter_add", src, dim, index, ref):
        assert_same(out, simple.to_numpy(ref))


SCAN_REFERENCE = {"sum": np.cumsum, "prod": np.cumprod, "max": np.maximum.accumulate, "min": np.minimum.accumulate}
SCAN_CASES = [("sum", F64), ("sum", I64), ("sum", BOOL), ("prod", F32), ("max", F64), ("max", I32), ("min", F64)]


@pytest.mark.parametrize("op,dtype", SCAN_CASES, ids=case_id)
@given(data=st.data(), shape=ranked_shapes0, kind=st.sampled_from(OUT_KINDS))
def test_scan(data: st.DataObject, op: str, dtype: np.dtype, shape: tuple[int, ...], kind: str) -> None:
    dim = data.draw(dim_of(shape))
    a = data.draw(arrays(shape, dtype))
    integer = dtype.kind in "iub"
    out_dtype = I64 if integer else dtype
    out, ref = twin_outs(shape, out_dtype, kind)
    fast.scan(op, a, dim, out)
    values = fast.to_numpy(a).astype(I64 if integer else F64)
    assert_same(out, SCAN_REFERENCE[op](values, axis=dim).astype(out_dtype))
    if via_simple("scan", op, a, dim, ref):
        assert_same(out, simple.to_numpy(ref))


def sort_reference(x: np.ndarray, dim: int, descending: bool) -> tuple[np.ndarray, np.ndarray]:
    """Stable sort with NaN largest; descending keeps ties in order too (a stable sort of the reversed row, reversed)."""
    moved = np.moveaxis(x, dim, -1)
    if descending:
        order = (moved.shape[-1] - 1 - np.argsort(moved[..., ::-1], axis=-1, kind="stable"))[..., ::-1]
    else:
        order = np.argsort(moved, axis=-1, kind="stable")
    values = np.take_along_axis(moved, order, -1)
    return np.moveaxis(values, -1, dim), np.moveaxis(order, -1, dim)


def sortable(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Values with many ties, and for floats NaNs and both zeros."""
    values = rng.integers(-3, 4, shape).astype(F64)
    if dtype.kind == "f":
        values[rng.random(shape) < 0.15] = np.nan
        values[values == 0] = np.where(rng.random(shape) < 0.5, -0.0, 0.0)[values == 0]
    return values > 0 if dtype == BOOL else values.astype(dtype)


@pytest.mark.parametrize("dtype", [F64, F32, I64, BOOL], ids=str)
@given(data=st.data(), shape=ranked_shapes0, descending=st.booleans(), kind=st.sampled_from(OUT_KINDS))
def test_sort(data: st.DataObject, dtype: np.dtype, shape: tuple[int, ...], descending: bool, kind: str) -> None:
    dim = data.draw(dim_of(shape))
    if data.draw(st.booleans()):
        shape = shape[:dim] + (data.draw(st.integers(0, 40)),) + shape[dim + 1 :]  # rows long enough to merge
    x = sortable(np.random.default_rng(data.draw(st.integers(0, 99))), shape, dtype)
    a = laid_out(x, random_order(data.draw, len(shape)))
    values, indices = make_out(shape, dtype, kind), make_out(shape, I64, data.draw(st.sampled_from(OUT_KINDS)))
    fast.sort(a, dim, descending, values, indices)
    expected_values, expected_indices = sort_reference(x, dim, descending)
    assert_same(indices, expected_indices)
    assert_same(values, expected_values)
    if dtype.kind == "f":  # -0.0 and 0.0 are equal but must stay where the stable order puts them
        np.testing.assert_array_equal(np.signbit(fast.to_numpy(values)), np.signbit(expected_values))
    ref_values, ref_indices = make_out(shape, dtype, "contiguous"), make_out(shape, I64, "contiguous")
    if via_simple("sort", a, dim, descending, ref_values, ref_indices):
        np.testing.assert_array_equal(fast.to_numpy(indices), simple.to_numpy(ref_indices))


def test_new_kernels_on_zero_size_and_0d() -> None:
    empty_rows = fast.from_numpy(np.zeros((3, 0)))
    for dim in (0, 1):
        fast.scan("sum", empty_rows, dim, fast.empty((3, 0), F64))
        fast.sort(empty_rows, dim, True, fast.empty((3, 0), F64), fast.empty((3, 0), I64))
    a = fast.from_numpy(np.arange(6.0).reshape(2, 3))
    fast.gather(a, 1, fast.from_numpy(np.zeros((2, 0), np.int64)), fast.empty((2, 0), F64))
    untouched = fast.from_numpy(np.ones((2, 3)))
    fast.scatter_add(fast.from_numpy(np.zeros((2, 0))), 1, fast.from_numpy(np.zeros((2, 0), np.int64)), untouched)
    np.testing.assert_array_equal(fast.to_numpy(untouched), np.ones((2, 3)))
    fast.where(fast.from_numpy(np.zeros((0, 3), bool)), a, a, fast.empty((0, 3), F64))
    scalar = fast.from_numpy(np.array(2.5))
    out, indices = fast.empty((), F64), fast.empty((), I64)
    fast.sort(scalar, 0, False, out, indices)
    assert fast.to_numpy(out) == 2.5 and fast.to_numpy(indices) == 0
    fast.scan("prod", scalar, -1, out)
    assert fast.to_numpy(out) == 2.5
    fast.gather(scalar, 0, fast.from_numpy(np.array(0)), out)
    assert fast.to_numpy(out) == 2.5
    fast.scatter_add(scalar, 0, fast.from_numpy(np.array(0)), out)
    assert fast.to_numpy(out) == 5.0
    fast.where(fast.from_numpy(np.array(False)), scalar, fast.from_numpy(np.array(-1.0)), out)
    assert fast.to_numpy(out) == -1.0


def test_large_new_kernels_against_numpy() -> None:
    """Sizes above the serial threshold, so the kernels run their parallel loops."""
    rng = np.random.default_rng(8)
    x = sortable(rng, (300, 257), F64)
    for order in ((0, 1), (1, 0)):
        source = laid_out(x, order)
        for dim in (0, 1):
            for descending in (False, True):
                values, indices = make_out(x.shape, F64, "permuted"), fast.empty(x.shape, I64)
                fast.sort(source, dim, descending, values, indices)
                expected_values, expected_indices = sort_reference(x, dim, descending)
                np.testing.assert_array_equal(fast.to_numpy(indices), expected_indices)
                np.testing.assert_array_equal(fast.to_numpy(values), expected_values)
            for op in ("sum", "max"):
                scanned = fast.empty(x.shape, F64)
                fast.scan(op, source, dim, scanned)
                np.testing.assert_allclose(fast.to_numpy(scanned), SCAN_REFERENCE[op](x, axis=dim), rtol=1e-12, equal_nan=True)
    chosen = fast.empty(x.shape, F64)
    fast.where(fast.from_numpy(x > 0), laid_out(x, (1, 0)), fast.from_numpy(np.full(257, -9.0)), chosen)
    np.testing.assert_array_equal(fast.to_numpy(chosen), np.where(x > 0, x, -9.0))
    idx = rng.integers(0, 257, (300, 400))
    gathered = fast.empty((300, 400), F64)
    fast.gather(laid_out(x, (1, 0)), 1, laid_out(idx, (1, 0)), gathered)
    np.testing.assert_array_equal(fast.to_numpy(gathered), np.take_along_axis(x, idx, 1))
    # Many repeated targets per row, rows spread over threads: integer counts show any lost update.
    for dim, shape in ((1, (64, 2000)), (0, (2000, 64))):
        idx = rng.integers(0, 5, shape)
        counts = fast.zeros((64, 5) if dim == 1 else (5, 64), I64)
        fast.scatter_add(fast.from_numpy(np.ones(shape, np.int64)), dim, fast.from_numpy(idx), counts)
        np.testing.assert_array_equal(
            fast.to_numpy(counts), scatter_add_reference(np.zeros(counts.shape, np.int64), np.ones(shape, np.int64), dim, idx)
        )


# --- codegen: validation and untrusted cache files ------------------------------------------------------


@pytest.mark.parametrize(
    "family,op,compute",
    [
        ("map", "nope", "float64"),
        ("map", 'id"\nimport os\nX = "', "float64"),
        ("zip", "neg", "float64"),  # a unary op is not a binary one
        ("reduce", "add", "float64"),
        ("bogus", "", "float64"),
        ("../map", "id", "float64"),
        ("matmul", "add", "float64"),
        ("map", "id", "int8"),
        ("map", "id", 'float64"\nimport os'),
        ("extra", "", "int64"),
        ("map", ["id"], "float64"),
    ],
)
def test_codegen_rejects_unknown_names(family: str, op: str, compute: str) -> None:
    for fn in (generate_source, module_stem, kernel_module):
        with pytest.raises(ValueError):
            fn(family, op, compute)


def test_codegen_rejects_an_op_name_that_is_not_an_identifier(monkeypatch: pytest.MonkeyPatch) -> None:
    evil = 'id"\nimport os\nUNARY = "id'
    monkeypatch.setitem(UNARY_OPS, evil, operators.id)
    with pytest.raises(ValueError):
        generate_source("map", evil)


def test_planted_or_empty_cache_files_are_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fast_codegen, "_directory", tmp_path)
    monkeypatch.setattr(fast_codegen, "_modules", {})
    monkeypatch.setattr(fast_launch, "_kernels", {})  # the backend's kernels and op loops found before
    monkeypatch.setattr(fast_launch, "_runs", {})
    for table in ("_map_plans", "_zip_plans", "_reduce_calls"):
        monkeypatch.setattr(fast_module, table, {})
    marker = tmp_path / "planted-code-ran"
    (tmp_path / "map_neg_f_s.py").write_text(f"open({str(marker)!r}, 'w').close()\n" + generate_source("map", "neg", parallel=False))
    (tmp_path / "zip_add_f_s.py").write_text("")
    x = fast.from_numpy(np.arange(4.0))
    out = fast.empty((4,), F64)
    FastBackend(use_numpy_twins=False).map("neg", x, out)  # compiled afresh from the rewritten file (no NumPy twin)
    np.testing.assert_array_equal(fast.to_numpy(out), -np.arange(4.0))
    assert callable(kernel_module("zip", "add", parallel=False).zip_run)  # imported only: no second compile
    assert not marker.exists()
    assert (tmp_path / "map_neg_f_s.py").read_text() == generate_source("map", "neg", parallel=False)
    assert (tmp_path / "zip_add_f_s.py").read_text() == generate_source("zip", "add", parallel=False)
    assert not list(tmp_path.glob(".*.tmp"))


def test_cache_directory_must_be_private(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    assert fast_codegen._private(shared)  # ours: group/other write access is dropped
    assert stat.S_IMODE(shared.stat().st_mode) & 0o022 == 0
    if hasattr(os, "getuid") and os.getuid() == 0:
        theirs = tmp_path / "theirs"
        theirs.mkdir()
        os.chown(theirs, 65534, 65534)
        assert not fast_codegen._private(theirs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_of_column_and_row_slices_goes_to_blas(monkeypatch: pytest.MonkeyPatch, dtype: type) -> None:
    """One attention head's columns (rows further apart than they are long) are still BLAS operands."""
    import minitensor.backends.fast as fast_module

    def no_tiled(*args: object) -> None:
        raise AssertionError(f"tiled kernel used for BLAS-able operands: {args[:2]}")

    monkeypatch.setattr(fast_module, "launch", no_tiled)
    rng = np.random.default_rng(8)
    A, B = rng.standard_normal((2, 5, 16)).astype(dtype), rng.standard_normal((2, 16, 12)).astype(dtype)
    a = fast.from_numpy(A).slice((slice(None), slice(None), slice(4, 8)))  # (2, 5, 4), row stride 16
    b = fast.from_numpy(B).slice((slice(None), slice(0, 4), slice(3, 9)))  # (2, 4, 6), row stride 12
    bt = fast.from_numpy(np.ascontiguousarray(B.transpose(0, 2, 1))).permute(0, 2, 1).slice((slice(None), slice(0, 4), slice(3, 9)))
    for right in (b, bt):  # a row slice of a row-major and of a column-major matrix
        out = fast.empty((2, 5, 6), np.dtype(dtype))
        fast.matmul(a, right, out)
        want = A[:, :, 4:8] @ B[:, :4, 3:9]
        np.testing.assert_allclose(fast.to_numpy(out), want, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_concurrent_processes_compile_a_kernel_once(tmp_path: Path) -> None:
    """Two processes that need the same new kernel at the same time: one compiles it, the other waits on the
    module's lock file and loads it from Numba's disk cache (pytest-xdist workers and MPI ranks start together)."""
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, MINITENSOR_CACHE_DIR=str(tmp_path), PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = [subprocess.Popen([sys.executable, "-c", WARM_SCRIPT], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    stats = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        stats.append(json.loads(out.strip().splitlines()[-1]))
    assert sorted(s["misses"] for s in stats) == [0, 1], stats  # compiled once in all
    assert sorted(s["hits"] for s in stats) == [0, 1], stats


@pytest.mark.parametrize("op", sorted(NUMPY_MATH))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_math_path_and_numba_kernel_agree_with_simple(op: str, dtype: type) -> None:
    """``exp``, ``log``, ``tanh``, ``sigmoid`` on float tensors go to NumPy's loops; the Numba kernel
    (use_numpy_math=False) stays tested too, on contiguous and strided layouts, in place, with overflow, underflow
    and special values (nan/inf where the reference has them, else within 4 ulps)."""
    kernel_only = FastBackend(use_numpy_math=False)
    x = np.array([0.0, -0.0, 1.0, -1.0, 88.5, -88.5, 709.5, 710.0, -745.2, -760.0, 1e-30, np.inf, -np.inf, np.nan] * 3)
    rng = np.random.default_rng(3)
    x = np.concatenate([x, rng.normal(0, 20, 51), rng.normal(0, 2, 51)]).astype(dtype).reshape(12, 12)
    for layout in (lambda t: t, lambda t: t.permute(1, 0)):
        want = simple.empty(layout(simple.from_numpy(x)).shape, np.dtype(dtype))
        simple.map(op, layout(simple.from_numpy(x)), want)
        expected = simple.to_numpy(want)
        for backend in (fast, kernel_only):
            out = backend.empty(want.shape, np.dtype(dtype))
            backend.map(op, layout(backend.from_numpy(x)), out)
            np.testing.assert_allclose(backend.to_numpy(out), expected, rtol=4 * np.finfo(dtype).eps, atol=0)
            inplace = layout(backend.from_numpy(x))
            backend.map(op, inplace, inplace)
            np.testing.assert_allclose(backend.to_numpy(inplace), expected, rtol=4 * np.finfo(dtype).eps, atol=0)


@pytest.mark.parametrize("op", sorted(set(NUMPY_MATH) - set(fast_numpy.KERNEL_BEATS_SIMD)))
def test_numpy_math_long_calls_split_over_threads_and_blocks(op: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long contiguous call runs in one piece per thread (and sigmoid in cache blocks): same values as one call
    (on a CPU whose NumPy loops are SIMD, where long tanh calls take them; long exp and log calls take the kernel)."""
    monkeypatch.setattr(fast_module.numba, "get_num_threads", lambda: 3)
    monkeypatch.setattr(fast_numpy, "NUMPY_SIMD_MATH", True)
    monkeypatch.setattr(fast_module, "_map_plans", {})
    x = np.random.default_rng(4).normal(0, 30, THREADED_MATH_MIN + 7)
    x[::1000] = [np.nan, np.inf, -np.inf, 0.0] * (len(x[::1000]) // 4) + [0.5] * (len(x[::1000]) % 4)
    out = fast.empty(x.shape, np.dtype(np.float64))
    fast.map(op, fast.from_numpy(x), out)
    want = np.empty_like(x)
    with np.errstate(all="ignore"):
        NUMPY_MATH[op](x, want)
    np.testing.assert_array_equal(fast.to_numpy(out), want)
    if op == "sigmoid":
        with np.errstate(over="ignore"):
            np.testing.assert_allclose(want, 1 / (1 + np.exp(-x)), rtol=4 * np.finfo(np.float64).eps, atol=0)


@pytest.mark.parametrize("simd", [True, False])
@pytest.mark.parametrize("op", sorted(NUMPY_MATH))
def test_long_math_calls_take_the_kernel_where_it_is_faster(op: str, simd: bool,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls of KERNEL_MATH_FROM elements or more of exp and log run the Numba kernel, bit for bit kernel_only's
    result, and so does tanh without AVX-512F (NumPy's float64 tanh loop is scalar there); with it, and below that
    size, NumPy's loop, bit for bit NumPy's. sigmoid takes NumPy's formula but for float32 from that size. The
    kernel's values are NumPy's within 2 ulps (float32: 1 ulp of the correctly rounded value, where NumPy's float32
    loops are 2-3 ulps off)."""
    monkeypatch.setattr(fast_numpy, "NUMPY_SIMD_MATH", simd)
    monkeypatch.setattr(fast_module, "_map_plans", {})
    kernel_only = FastBackend(use_numpy_math=False)
    rng = np.random.default_rng(6)
    for dtype in (np.float32, np.float64):
        for size in (fast_numpy.KERNEL_MATH_FROM - 1, fast_numpy.KERNEL_MATH_FROM):
            x = rng.uniform(-20.0, 20.0, size).astype(dtype)
            x = np.abs(x) if op == "log" else x
            got, kernel = fast.empty((size,), np.dtype(dtype)), kernel_only.empty((size,), np.dtype(dtype))
            fast.map(op, fast.from_numpy(x), got)
            kernel_only.map(op, kernel_only.from_numpy(x), kernel)
            numpy_values = np.empty_like(x)
            NUMPY_MATH[op](x, numpy_values)
            kernel_ops = ["exp", "log"] + ([] if simd else ["tanh"]) + (["sigmoid"] if dtype == np.float32 else [])
            takes_kernel = size >= fast_numpy.KERNEL_MATH_FROM and op in kernel_ops
            want = fast.to_numpy(kernel) if takes_kernel else numpy_values
            np.testing.assert_array_equal(fast.to_numpy(got), want)
            np.testing.assert_allclose(fast.to_numpy(kernel), numpy_values, rtol=3 * np.finfo(dtype).eps, atol=0)


def test_numpy_simd_flag_follows_the_cpu() -> None:
    """NUMPY_SIMD_MATH is whether NumPy itself reports AVX-512F (its exp/log/tanh dispatch), read independently."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # NumPy 1.x
        from numpy.core._multiarray_umath import __cpu_features__

    assert fast_numpy.NUMPY_SIMD_MATH == bool(__cpu_features__.get("AVX512F"))


TORCH_FIRST_SCRIPT = r"""
import json, sys, threading
import torch
a = torch.rand(256, 256)
(a @ a).sum().item()  # PyTorch's OpenMP runtime starts (and spins) before minitensor is imported
if sys.argv[1] == "numba-first":
    import numba
    @numba.njit(parallel=True)
    def touch(x):
        for i in numba.prange(x.size):
            x[i] += 1.0
    import numpy as np
    touch(np.zeros(4))  # Numba's pool starts on that runtime before minitensor's import
import warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import numpy as np
    from minitensor.backends import fast as f, fast_launch
x = f.backend.from_numpy(np.arange(1 << 16, dtype=np.float64))
rows = np.random.default_rng(0).normal(size=(256, 256))
s = f.backend.from_numpy(rows)
outs = [f.backend.empty((1 << 16,), np.dtype(np.float64)) for _ in range(4)]
softmaxes = [f.backend.empty((256, 256), np.dtype(np.float64)) for _ in range(4)]
def work(out, soft):
    for _ in range(20):
        f.backend.zip("mul", x, x, out)
        f.backend.softmax(s, 1, soft)  # a fused kernel's parallel build, launched through the same lock
threads = [threading.Thread(target=work, args=pair) for pair in zip(outs, softmaxes)]
[t.start() for t in threads]
[t.join() for t in threads]
import numba
want = np.exp(rows - rows.max(1, keepdims=True))
want /= want.sum(1, keepdims=True)
ok = all((f.backend.to_numpy(out) == np.arange(1 << 16) ** 2).all() for out in outs)
ok = ok and all(np.allclose(f.backend.to_numpy(soft), want, rtol=1e-12, atol=0) for soft in softmaxes)
print(json.dumps({"layer": numba.threading_layer(), "serialized": fast_launch.SERIALIZE_PARALLEL, "ok": bool(ok),
                  "warned": [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]}))
"""


@pytest.mark.parametrize("order", ["torch-first", "numba-first"])
def test_pytorch_started_first_gets_sleeping_workers_or_a_warning(order: str) -> None:
    """PyTorch's OpenMP runtime started before minitensor's import: Numba's pool runs on the workqueue layer (its
    workers sleep; parallel launches from several threads are serialised, not aborted), or, when Numba's pool already
    runs on that runtime, one RuntimeWarning says what to do."""
    pytest.importorskip("torch")
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "NUMBA_THREADING_LAYER")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    result = subprocess.run([sys.executable, "-c", TORCH_FIRST_SCRIPT, order], env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout.strip().splitlines()[-1])
    assert got["ok"]
    if order == "torch-first":
        assert (got["layer"], got["serialized"], got["warned"]) == ("workqueue", True, [])
    else:
        assert got["layer"] == "omp" and not got["serialized"]
        assert len(got["warned"]) == 1 and "OMP_WAIT_POLICY=PASSIVE" in got["warned"][0]


def test_repeated_layouts_reuse_plans_with_new_values() -> None:
    """map/zip/reduce/matmul plans are cached per layout: a second call of the same layout on other storage (a
    transposed operand, a broadcast batch, a column slice for BLAS) computes from its own values."""
    rng = np.random.default_rng(5)
    for _ in range(2):
        a = rng.standard_normal((3, 4, 5)).astype(np.float32)
        b = rng.standard_normal((6, 5)).astype(np.float32)
        ta, tb = fast.from_numpy(a), fast.from_numpy(b).permute(1, 0)  # (5, 6) transposed
        out = fast.empty((3, 4, 6), np.dtype(np.float32))
        fast.matmul(ta, tb.unsqueeze(0).expand((3, 5, 6)), out)
        np.testing.assert_allclose(fast.to_numpy(out), a @ b.T, rtol=1e-5, atol=1e-5)
        wide = fast.from_numpy(rng.standard_normal((5, 9)).astype(np.float32))
        cols = wide.slice((slice(None), slice(2, 8)))
        fast.matmul(ta, cols.unsqueeze(0).expand((3, 5, 6)), out)
        np.testing.assert_allclose(fast.to_numpy(out), a @ fast.to_numpy(cols), rtol=1e-5, atol=1e-5)
        s = fast.empty((3, 1, 5), np.dtype(np.float32))
        fast.reduce("sum", ta, 1, s)
        np.testing.assert_allclose(fast.to_numpy(s), a.sum(1, keepdims=True), rtol=1e-5)
        z = fast.empty((3, 4, 5), np.dtype(np.float32))
        fast.zip("mul", ta, fast.from_numpy(b[0]), z)
        fast.map("neg", z, z)
        np.testing.assert_array_equal(fast.to_numpy(z), -(a * b[0]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_add_scaled_is_one_rounding_of_a_plus_alpha_b(dtype: type) -> None:
    """add_scaled (SGD's p.add_(g, alpha=-lr)): a + alpha * b computed in float64 and rounded once, on contiguous,
    permuted and broadcast operands and in place; the default (simple) rounds alpha * b first, within an ulp."""
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal((6, 7)).astype(dtype), rng.standard_normal((6, 7)).astype(dtype)
    alpha = np.array(-0.37, dtype=dtype)
    want = (a.astype(np.float64) + np.float64(alpha) * b.astype(np.float64)).astype(dtype)
    for a_data, b_data in ((laid_out(a, (0, 1)), laid_out(b, (0, 1))), (laid_out(a, (1, 0)), laid_out(b, (1, 0)))):
        out = fast.empty((6, 7), np.dtype(dtype))
        fast.add_scaled(a_data, b_data, fast.from_numpy(alpha), out)
        np.testing.assert_array_equal(fast.to_numpy(out), want)
        ref = simple.empty((6, 7), np.dtype(dtype))
        simple.add_scaled(a_data, b_data, simple.from_numpy(alpha), ref)
        np.testing.assert_allclose(simple.to_numpy(ref), want, rtol=2 * np.finfo(dtype).eps)
    row = laid_out(b[:1], (0, 1))  # broadcast along dim 0
    out = fast.empty((6, 7), np.dtype(dtype))
    fast.add_scaled(laid_out(a, (0, 1)), row, fast.from_numpy(alpha), out)
    np.testing.assert_array_equal(fast.to_numpy(out), (a.astype(np.float64) + np.float64(alpha) * b[:1].astype(np.float64)).astype(dtype))
    in_place = laid_out(a, (0, 1))
    fast.add_scaled(in_place, laid_out(b, (0, 1)), fast.from_numpy(alpha), in_place)
    np.testing.assert_array_equal(fast.to_numpy(in_place), want)


IN_PLACE_CASES = [("map", "neg", "a"), ("map", "sqrt", "a"), ("zip", "sub", "a"), ("zip", "sub", "b"),
                  ("zip", "mul", "a"), ("zip", "div", "scalar"), ("add_scaled", "", "a")]


@pytest.mark.parametrize("family,op,written,dtype",
                         [(*case, dtype) for case in IN_PLACE_CASES for dtype in (np.float32, np.float64, np.int64)
                          if dtype != np.int64 or case[1] != "sqrt" and case[0] != "add_scaled"])
def test_in_place_kernel_calls_match_out_of_place(family: str, op: str, written: str, dtype: type) -> None:
    """A kernel writing into one of its inputs (out is a, or b) takes its read-modify-write loop: the same values as
    writing a fresh output, on whole storages and on views that start inside a larger array, in several chunks."""
    kernels = FastBackend(use_numpy_twins=False)
    rng = np.random.default_rng(5)
    n = 3 * 2**17 + 11  # parallel build, several chunks, a ragged end
    a = (rng.random(n) * 50 + 1).astype(dtype)
    b = (rng.random(n) * 50 + 1).astype(dtype)

    def call(x: TensorData, y: TensorData, out: TensorData) -> None:
        if family == "map":
            kernels.map(op, x, out)
        elif family == "zip":
            kernels.zip(op, x, y, out)
        else:
            kernels.add_scaled(x, y, kernels.from_numpy(np.array(-0.37, dtype=dtype)), out)

    for offset in (0, 3):
        shape = (n - offset,)
        x, y = TensorData(a.copy()[offset:], shape), TensorData(b.copy()[offset:], shape)
        if written == "scalar":
            y = TensorData(b[:1].copy(), shape, (0,))
        fresh = kernels.empty(shape, np.dtype(dtype))
        call(x, y, fresh)
        target = y if written == "b" else x
        call(x, y, target)
        np.testing.assert_array_equal(strided_view(target), strided_view(fresh))


@pytest.mark.parametrize("family,op,dtype", [("map", "neg", np.int64), ("map", "exp", np.float32), ("map", "sqrt", np.float64),
                                             ("zip", "relu_back", np.float32), ("zip", "div", np.float64),
                                             ("zip", "mul", np.int64)])
def test_flat_calls_take_the_flat_kernel_with_the_general_kernels_bits(family: str, op: str, dtype: type) -> None:
    """Contiguous operands take the flat map/zip kernel, a spaced output the general one; the two write the same
    bits (several chunks and a ragged end), and only the contiguous call takes the flat kernel."""
    kernels = FastBackend(use_numpy_twins=False, use_numpy_math=False)
    n = 50_000 + 13
    rng = np.random.default_rng(11)
    inputs = [TensorData((rng.standard_normal(n) * 20).astype(dtype), (n,)) for _ in range(1 if family == "map" else 2)]
    flat, spaced = make_out((n,), np.dtype(dtype), "contiguous"), make_out((n,), np.dtype(dtype), "spaced")
    with np.errstate(all="ignore"):
        for out in (flat, spaced):
            getattr(kernels, family)(op, *inputs, out)
            kernel, _ = fast_plan.elementwise_kernel(family, op, inputs, out, lazy=False)
            kernel = getattr(kernel, "__wrapped__", kernel)  # a general walker is called on bytes
            name = getattr(kernel, "py_func", kernel).__name__
            assert name == (f"{family}_flat_kernel" if out is flat else f"{family}_kernel")
    got, want = strided_view(flat), np.ascontiguousarray(strided_view(spaced))
    if got.dtype.kind == "f":  # bits, zero signs included; any nan equals any nan (a vector sqrt(-1) is -nan)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        got, want = np.where(np.isnan(got), 0, got), np.where(np.isnan(want), 0, want)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    check_gaps(spaced)
    scalars = [TensorData(x.storage[3:4].copy(), ()) for x in inputs]  # 0-d operands: one element, flat too
    one = make_out((), np.dtype(dtype), "contiguous")
    with np.errstate(all="ignore"):
        getattr(kernels, family)(op, *scalars, one)
    kernel, _ = fast_plan.elementwise_kernel(family, op, scalars, one, lazy=False)
    assert getattr(kernel, "py_func", kernel).__name__ == f"{family}_flat_kernel"
    np.testing.assert_array_equal(one.storage, flat.storage[3:4])  # nan equals nan here


@pytest.mark.parametrize("op,dtype", [("sum", np.float32), ("sum", np.float64), ("max", np.float64), ("prod", np.int64)])
def test_contiguous_rows_take_the_rows_kernel_with_the_inner_kernels_bits(op: str, dtype: type) -> None:
    """A fold of contiguous rows into a contiguous output takes the rows kernel; a spaced output the general inner
    kernel. The two give the same bits (float sums reassociate the same way), over several chunks, and a fold of a
    whole tensor into one element takes the rows kernel too."""
    kernels = FastBackend(use_numpy_twins=False, use_numpy_math=False)
    rng = np.random.default_rng(12)
    rows, length = 3001, 37
    a = TensorData((rng.standard_normal(rows * length) * (1 if op == "prod" else 20)).astype(dtype), (rows, length))
    flat, spaced = make_out((rows, 1), np.dtype(dtype), "contiguous"), make_out((rows, 1), np.dtype(dtype), "spaced")
    for out in (flat, spaced):
        kernels.reduce(op, a, 1, out)
        assert fast_plan.reduce_plan(a, 1, out)[0] == ("reduce_rows_kernel" if out is flat else "reduce_inner")
    np.testing.assert_array_equal(strided_view(flat).view(np.uint8), np.ascontiguousarray(strided_view(spaced)).view(np.uint8))
    check_gaps(spaced)
    whole, one = TensorData(a.storage, (rows * length,)), make_out((1,), np.dtype(dtype), "contiguous")
    kernels.reduce(op, whole, 0, one)
    assert fast_plan.reduce_plan(whole, 0, one)[0] == "reduce_rows_kernel"
    simple.reduce(op, whole, 0, ref := make_out((1,), np.dtype(dtype), "contiguous"))
    np.testing.assert_allclose(strided_view(one), strided_view(ref), rtol=1e-4 if dtype == np.float32 else 1e-12)
