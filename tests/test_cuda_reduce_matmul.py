"""Reductions (thread, warp and block kernels, chunked passes) and the register-blocked matmul of the ``cuda``
backend on Numba's simulator, against NumPy and the ``simple`` reference; caps and tiles lowered to reach every
path at tiny shapes; every kernel under a grid cap of one block. Helpers come from tests/test_cuda_backend.py.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba.cuda")

from test_cuda_backend import (  # noqa: E402
    BIG,
    CUDA,
    FLOATS,
    SIMPLE,
    assert_same,
    device,
    pair,
    scatter_add_reference,
    strided,
    strided_out,
)

from minitensor.backends import cuda_matmul, cuda_plan  # noqa: E402
from minitensor.operators import REDUCE_OPS, reduce_start  # noqa: E402

# --- reduce -------------------------------------------------------------------------------------


@pytest.mark.parametrize("thread_rows", [64, 1])
@pytest.mark.parametrize("op", sorted(REDUCE_OPS))
def test_reduce_every_op_every_dim(monkeypatch: pytest.MonkeyPatch, op: str, thread_rows: int) -> None:
    """Warp kernel (default) and, with THREAD_ROWS_MIN = 1, the thread kernel for the dims that are not innermost."""
    monkeypatch.setattr(cuda_plan, "THREAD_ROWS_MIN", thread_rows)
    x = np.random.default_rng(2).uniform(0.5, 1.5, size=(4, 2, 3))
    for dim in range(3):
        order = (2, 0, 1)  # reduce a permuted view too
        base = np.ascontiguousarray(x.transpose(1, 2, 0))
        cu_a, si_a = pair(base, order)
        out_shape = cu_a.shape[:dim] + (1,) + cu_a.shape[dim + 1 :]
        cu_o, si_o = strided_out(out_shape, np.float64)
        CUDA.reduce(op, cu_a, dim, cu_o)
        SIMPLE.reduce(op, si_a, dim, si_o)
        assert_same(cu_o, si_o, rtol=1e-12)


@pytest.mark.parametrize(
    ("caps", "shape", "dim", "kind"),
    [
        ({}, (3, 37), 1, "warp"),  # a warp per row, lanes loop over the row
        ({"WARPS_PER_BLOCK": 3}, (7, 37), 1, "warp"),  # several warps per block, the last block partly idle
        ({"WARP_ROW_MAX": 8, "TARGET_BLOCKS": 64, "MIN_CHUNK_PER_THREAD": 1, "MAX_REDUCE_CHUNKS": 4}, (2, 150), 1, "block"),
        ({"WARP_ROW_MAX": 4, "TARGET_BLOCKS": 64, "MIN_CHUNK_PER_THREAD": 1}, (150,), 0, "block"),  # 9 chunks, 2 block passes
        ({"THREAD_ROWS_MIN": 2, "TARGET_THREADS": 64, "MIN_CHUNK": 2}, (37, 3), 0, "thread"),  # split rows along dim 0
    ],
)
def test_reduce_kernels_and_chunked_passes(monkeypatch: pytest.MonkeyPatch, caps: dict, shape: tuple, dim: int, kind: str) -> None:
    """Each reduction kernel (caps lowered to reach it at tiny sizes), rows split into chunks and reduced again."""
    for name, value in caps.items():
        monkeypatch.setattr(cuda_plan, name, value)
    x = np.random.default_rng(3).standard_normal(shape)
    out_shape = shape[:dim] + (1,) + shape[dim + 1 :]
    a = CUDA.from_numpy(x)
    assert cuda_plan.reduce_launch(a, dim, int(np.prod(out_shape)))[0] == kind
    for op, fn in (("sum", np.sum), ("max", np.max)):
        out = CUDA.empty(out_shape, np.float32)
        CUDA.reduce(op, a, dim, out)
        np.testing.assert_allclose(CUDA.to_numpy(out), fn(x, axis=dim, keepdims=True).astype(np.float32), rtol=1e-5)


def test_reduce_empty_dim_gives_start_and_empty_out() -> None:
    for op, (_, start) in REDUCE_OPS.items():
        out = CUDA.empty((1, 3), np.float64)
        CUDA.reduce(op, CUDA.empty((0, 3), np.float64), 0, out)
        np.testing.assert_array_equal(CUDA.to_numpy(out), np.full((1, 3), start))
    out = CUDA.empty((1, 0), np.float64)
    CUDA.reduce("sum", CUDA.empty((4, 0), np.float64), 0, out)
    assert CUDA.to_numpy(out).shape == (1, 0)


def test_reduce_float32_input() -> None:
    x = np.random.default_rng(4).standard_normal((3, 5)).astype(np.float32)
    out = CUDA.empty((3, 1), np.float32)
    CUDA.reduce("sum", CUDA.from_numpy(x), 1, out)
    np.testing.assert_allclose(CUDA.to_numpy(out), x.sum(1, keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("op", sorted(REDUCE_OPS))
def test_reduce_int64_exact_and_multi_pass(monkeypatch: pytest.MonkeyPatch, op: str) -> None:
    """Two passes (a block per row in 2 chunks, then a warp per row) through int64 scratch partials, exact near 2**62."""
    for name, value in (("WARP_ROW_MAX", 2), ("TARGET_BLOCKS", 8), ("MIN_CHUNK_PER_THREAD", 1), ("MAX_REDUCE_CHUNKS", 2)):
        monkeypatch.setattr(cuda_plan, name, value)
    x = np.ones((2, 19), dtype=np.int64)
    if op == "prod":  # products of about 61 bits
        x[0, 3], x[0, 11], x[1, 17], x[1, 0] = 2**31 + 1, 2**30 - 1, -(2**40) - 1, 2**20 + 3
    else:
        x[0, 3], x[0, 11], x[1, 17], x[1, 0] = BIG + 1, -7, BIG + 3, -BIG - 2
    fn = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}[op]
    out = CUDA.empty((2, 1), np.int64)
    CUDA.reduce(op, device(x), 1, out)
    np.testing.assert_array_equal(CUDA.to_numpy(out), fn(x, axis=1, keepdims=True))


def test_reduce_int_empty_dim_gives_int_start() -> None:
    for op in REDUCE_OPS:
        out = CUDA.empty((1, 2), np.int64)
        CUDA.reduce(op, CUDA.empty((0, 2), np.int32), 0, out)
        np.testing.assert_array_equal(CUDA.to_numpy(out), np.full((1, 2), reduce_start(op, integer=True)))


# --- matmul -------------------------------------------------------------------------------------


def run_matmul(a: np.ndarray, b: np.ndarray, out_shape: tuple[int, ...], dtype: type, transpose_b: bool = False) -> None:
    cu_a, si_a = pair(a.astype(dtype))
    if transpose_b:  # b given as a permuted view of its transpose
        order = tuple(range(b.ndim - 2)) + (b.ndim - 1, b.ndim - 2)
        cu_b, si_b = pair(np.ascontiguousarray(np.swapaxes(b, -1, -2)).astype(dtype), order)
    else:
        cu_b, si_b = pair(b.astype(dtype))
    cu_o, si_o = strided_out(out_shape, dtype)
    CUDA.matmul(cu_a, cu_b, cu_o)
    SIMPLE.matmul(si_a, si_b, si_o)
    assert_same(cu_o, si_o, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("dtype", FLOATS)
def test_matmul_sizes_not_multiple_of_tile(monkeypatch: pytest.MonkeyPatch, dtype: type) -> None:
    monkeypatch.setattr(cuda_plan, "MATMUL_SMALL", (4, 4, 2, 2, 2))  # several tiles in every direction
    rng = np.random.default_rng(5)
    run_matmul(rng.standard_normal((5, 9)), rng.standard_normal((9, 7)), (5, 7), dtype)
    run_matmul(rng.standard_normal((1, 3)), rng.standard_normal((3, 1)), (1, 1), dtype, transpose_b=True)


@pytest.mark.parametrize(("tile", "large_from"), [((6, 4, 3, 3, 2), 1), ((2, 6, 4, 1, 3), 1000), ((2, 4, 2, 2, 2), 1)])
def test_matmul_register_blocks_and_layouts(monkeypatch: pytest.MonkeyPatch, tile: tuple, large_from: int) -> None:
    """Other tile shapes (rectangular, per-thread blocks of several rows and columns), through the large or the
    small tile; a and b in both layouts (row-major loads along k / n, column-major across)."""
    monkeypatch.setattr(cuda_plan, "LARGE_FROM", large_from)
    monkeypatch.setattr(cuda_plan, "MATMUL_LARGE" if large_from == 1 else "MATMUL_SMALL", tile)
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((7, 5)), rng.standard_normal((5, 8))
    run_matmul(a, b, (7, 8), np.float64, transpose_b=True)
    cu_a = device(a, (1, 0))  # column-major a
    out = strided((7, 8), np.float64)
    CUDA.matmul(cu_a, device(b), out)
    np.testing.assert_allclose(CUDA.to_numpy(out), a @ b, rtol=1e-12)


def test_matmul_bad_tile_is_refused() -> None:
    with pytest.raises(ValueError, match="multiple"):
        cuda_matmul.make_matmul(1, "float32", 4, 4, 2, 3, 2)


def test_matmul_broadcast_batches() -> None:
    rng = np.random.default_rng(7)
    run_matmul(rng.standard_normal((2, 1, 3, 5)), rng.standard_normal((1, 3, 5, 2)), (2, 3, 3, 2), np.float64)
    run_matmul(rng.standard_normal((2, 3, 6)), rng.standard_normal((1, 6, 5)), (2, 3, 5), np.float32, transpose_b=True)


def test_matmul_empty_and_zero_inner() -> None:
    out = CUDA.empty((2, 3), np.float64)
    CUDA.matmul(CUDA.empty((2, 0), np.float64), CUDA.empty((0, 3), np.float64), out)
    np.testing.assert_array_equal(CUDA.to_numpy(out), np.zeros((2, 3)))
    out = CUDA.empty((0, 3), np.float64)
    CUDA.matmul(CUDA.empty((0, 4), np.float64), CUDA.zeros((4, 3), np.float64), out)
    assert CUDA.to_numpy(out).shape == (0, 3)


def test_matmul_integers_exact() -> None:
    rng = np.random.default_rng(8)
    a = rng.integers(-3, 4, size=(3, 5)).astype(np.int64)
    a[0, 0], a[2, 4] = 2**40 + 1, -(2**39)
    b = rng.integers(-3, 4, size=(5, 2)).astype(np.int32)
    b[0, 1], b[4, 0] = 2**21 + 3, 2**22 - 1
    out = strided((3, 2), np.int64)
    CUDA.matmul(device(a), device(b), out)
    np.testing.assert_array_equal(CUDA.to_numpy(out), a @ b.astype(np.int64))
    flags = rng.random((5, 2)) > 0.5
    out = CUDA.empty((3, 2), np.int64)
    CUDA.matmul(device(a), device(flags), out)
    np.testing.assert_array_equal(CUDA.to_numpy(out), a @ flags.astype(np.int64))


def test_every_kernel_loops_past_the_grid_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the grid capped at one block per dimension, every kernel still covers outputs larger than one grid
    (grid-stride loops on every dimension; a real GPU caps grid dims y and z at 65,535)."""
    monkeypatch.setattr(cuda_plan, "MAX_GRID", 1)
    monkeypatch.setattr(cuda_plan, "THREADS_PER_BLOCK", 32)
    monkeypatch.setattr(cuda_plan, "MATMUL_SMALL", (2, 2, 1, 1, 1))
    rng = np.random.default_rng(21)
    x = rng.standard_normal((35, 2))
    cu, si = pair(x)
    for op, args in (("map", ("exp",)), ("zip", ("add",))):
        cu_out, si_out = CUDA.empty(x.shape, np.float64), SIMPLE.empty(x.shape, np.float64)
        if op == "map":
            CUDA.map(args[0], cu, cu_out)
            SIMPLE.map(args[0], si, si_out)
        else:
            CUDA.zip(args[0], cu, cu, cu_out)
            SIMPLE.zip(args[0], si, si, si_out)
        assert_same(cu_out, si_out, rtol=1e-12)
    reduced = CUDA.empty((35, 1), np.float64)
    CUDA.reduce("sum", cu, 1, reduced)  # warp per row
    np.testing.assert_allclose(CUDA.to_numpy(reduced)[:, 0], x.sum(1), rtol=1e-12)
    monkeypatch.setattr(cuda_plan, "WARP_ROW_MAX", 1)
    CUDA.reduce("sum", cu, 1, reduced)  # block per row
    np.testing.assert_allclose(CUDA.to_numpy(reduced)[:, 0], x.sum(1), rtol=1e-12)
    monkeypatch.setattr(cuda_plan, "THREAD_ROWS_MIN", 1)
    reduced = CUDA.empty((1, 2), np.float64)
    CUDA.reduce("sum", cu, 0, reduced)  # thread per row
    np.testing.assert_allclose(CUDA.to_numpy(reduced)[0], x.sum(0), rtol=1e-12)
    run_matmul(rng.standard_normal((1, 5, 3)), rng.standard_normal((2, 3, 5)), (2, 5, 5), np.float64)  # 3x3 tiles, 2 batches
    index = rng.integers(0, 2, size=(35, 2))
    gathered = CUDA.empty((35, 2), np.float64)
    CUDA.gather(cu, 1, device(index), gathered)
    np.testing.assert_array_equal(CUDA.to_numpy(gathered), np.take_along_axis(x, index, 1))
    scattered = device(np.zeros((35, 2)))
    CUDA.scatter_add(cu, 1, device(index), scattered)
    np.testing.assert_allclose(CUDA.to_numpy(scattered), scatter_add_reference(np.zeros((35, 2)), 1, index, x), rtol=1e-12)
    scanned = CUDA.empty((35, 2), np.float64)
    CUDA.scan("sum", cu, 1, scanned)
    np.testing.assert_allclose(CUDA.to_numpy(scanned), np.cumsum(x, 1), rtol=1e-12)
    values, indices = CUDA.empty((35, 2), np.float64), CUDA.empty((35, 2), np.int64)
    CUDA.sort(cu, 1, False, values, indices)
    np.testing.assert_array_equal(CUDA.to_numpy(values), np.sort(x, 1))
