"""The fast backend's map/zip walkers (:mod:`minitensor.backends.fast_walk_kernels`) on every path they take: rows
called on directly, rows gathered from strided operands (split into blocks when longer than a block), transposed
operands' rows gathered 8 at a time by block transposes, short rows gathered across rows into blocks, broadcast
elements, strided and in-place outputs, serial and parallel builds.
Each layout must give the bits the flat kernel gives on contiguous copies, and those must be NumPy's values."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit, prange

from minitensor.backends import fast_walk_kernels as walk
from minitensor.backends.base import strided_view
from minitensor.backends.fast import FastBackend
from minitensor.backends.fast_kernels import threads
from minitensor.backends.fast_plan import elementwise_kernel
from minitensor.backends.layout import ELEMENT_ALIGN, planned_layout
from minitensor.tensor_data import TensorData

kernels = FastBackend(use_numpy_twins=False, use_numpy_math=False)
rng = np.random.default_rng(7)
SENTINEL = -7


def stored(values: np.ndarray, order: tuple[int, ...]) -> TensorData:
    """``values`` in storage whose dims are laid out in ``order`` (a permutation)."""
    data = np.array(values.transpose(order), order="C")  # a copy, also when order changes nothing
    return TensorData(data.reshape(-1), data.shape).permute(*np.argsort(order).tolist())


def broadcast(values: np.ndarray, shape: tuple[int, ...]) -> TensorData:
    """``values`` (fewer or size-1 dims) seen with ``shape``: zero strides where it is broadcast."""
    return TensorData(np.ascontiguousarray(values).reshape(-1), values.shape).expand(shape)


def spaced(shape: tuple[int, ...], dtype: np.dtype) -> TensorData:
    """An output with every other storage element skipped (the gaps hold SENTINEL)."""
    dense = TensorData(np.empty(0), shape)
    storage = np.full(2 * int(np.prod(shape)) + 1, SENTINEL, dtype=dtype)
    return TensorData(storage, shape, tuple(2 * s for s in dense.strides))


def values(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return (rng.standard_normal(shape) * 4).astype(dtype)


# (name, shape, how a is laid out, how b is laid out, output kind); "t": stored transposed (last two dims swapped),
# "row"/"col"/"scalar": broadcast from a last-dim row, a column, a 0-d element.
LAYOUTS = [
    ("rows of 3, broadcast row, several blocks", (700, 3), "c", "row", "contiguous"),
    ("rows of 40 called directly, broadcast column", (50, 40), "c", "col", "contiguous"),
    ("transposed rows longer than a block", (40, 1500), "t", "c", "contiguous"),
    ("spaced output, long rows", (30, 100), "c", "row", "spaced"),
    ("spaced output, short rows", (30, 5), "t", "c", "spaced"),
    ("two broadcast elements", (64,), "scalar", "scalar", "contiguous"),
    ("permuted 3-D, rows across blocks", (7, 11, 13), "p", "c", "contiguous"),
    ("parallel build, transposed", (400, 100), "t", "row", "contiguous"),
    ("transposed rows in groups, a ragged last block", (37, 13), "t", "t", "contiguous"),
    ("transposed rows in groups, spaced output", (24, 20), "t", "c", "spaced"),
    ("both transposed in groups, parallel build", (300, 120), "t", "t", "contiguous"),
]


def operand(kind: str, array: np.ndarray, shape: tuple[int, ...]) -> TensorData:
    if kind == "c":
        return stored(array, tuple(range(len(shape))))
    if kind == "t":
        return stored(array, (*range(len(shape) - 2), len(shape) - 1, len(shape) - 2))
    if kind == "p":
        return stored(array, tuple(reversed(range(len(shape)))))
    if kind == "row":
        return broadcast(array[(0,) * (len(shape) - 1)], shape)
    if kind == "col":
        return broadcast(array[..., :1], shape)
    return broadcast(array[(0,) * len(shape)].reshape(()), shape)


def reference_values(kind: str, array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return strided_view(operand(kind, array, shape))


@pytest.mark.parametrize("family,op,dtype,out_dtype", [
    ("zip", "add", np.float32, np.float32), ("zip", "mul", np.int64, np.int64), ("zip", "lt", np.float64, np.bool_),
    ("map", "exp", np.float32, np.float32), ("map", "neg", np.int32, np.int32),
    ("zip", "sub", np.int16, np.int16), ("map", "abs", np.int8, np.int8),  # every item size through one walker
])
@pytest.mark.parametrize("name,shape,a_kind,b_kind,out_kind", LAYOUTS, ids=[layout[0] for layout in LAYOUTS])
def test_every_walk_gives_the_flat_kernels_bits(name: str, shape: tuple[int, ...], a_kind: str, b_kind: str,
                                                out_kind: str, family: str, op: str, dtype: type,
                                                out_dtype: type) -> None:
    a_values, b_values = values(shape, np.dtype(dtype)), values(shape, np.dtype(dtype))
    if family == "zip":
        inputs = [operand(a_kind, a_values, shape), operand(b_kind, b_values, shape)]
    else:  # one input: the one laid out unlike a contiguous tensor
        inputs = [operand(b_kind if a_kind == "c" else a_kind, a_values, shape)]
    out_type = np.dtype(out_dtype)
    out = spaced(shape, out_type) if out_kind == "spaced" else TensorData(np.full(int(np.prod(shape)), SENTINEL, out_type), shape)
    kernel, _ = elementwise_kernel(family, op, inputs, out, lazy=False)
    assert kernel.__wrapped__.py_func.__name__ == f"{family}_kernel"  # the general walker (on bytes), not the flat one
    getattr(kernels, family)(op, *inputs, out)

    dense = [TensorData(np.ascontiguousarray(strided_view(x)).reshape(-1), shape) for x in inputs]
    flat = TensorData(np.empty(int(np.prod(shape)), out_type), shape)
    kernel, _ = elementwise_kernel(family, op, dense, flat, lazy=False)
    assert kernel.py_func.__name__ == f"{family}_flat_kernel"
    getattr(kernels, family)(op, *dense, flat)
    bits = [np.ascontiguousarray(strided_view(x)).view(np.uint8) for x in (out, flat)]
    np.testing.assert_array_equal(*bits)
    if out_kind == "spaced":
        assert (out.storage[1::2] == np.array(SENTINEL).astype(out_type)).all()

    arrays = [strided_view(x) for x in dense]
    expected = {"add": np.add, "mul": np.multiply, "lt": np.less, "exp": np.exp, "neg": np.negative, "sub": np.subtract,
                "abs": np.abs}[op](*arrays)
    if op == "exp":
        np.testing.assert_allclose(strided_view(flat), expected, rtol=2e-7)
    else:
        np.testing.assert_array_equal(strided_view(flat), expected.astype(out_type))


@pytest.mark.parametrize("transposed", [False, True])
def test_in_place_on_strided_views(transposed: bool) -> None:
    """x.add_(y) where x (the output) is a transposed view or a broadcast row adds into itself: every element read
    before it is written, long rows and short ones."""
    for shape in ((64, 50), (300, 6)):
        x_values, y_values = values(shape, np.dtype(np.float64)), values(shape, np.dtype(np.float64))
        x = stored(x_values, (1, 0) if transposed else (0, 1))
        y = broadcast(y_values[0], shape)
        kernels.zip("add", x, y, x)
        np.testing.assert_array_equal(strided_view(x), x_values + y_values[0])


def test_block_and_row_sizes_are_what_the_walk_paths_assume() -> None:
    """The layouts above reach the paths they are named for only with these sizes."""
    assert walk.LONG <= 40 and walk.LONG > 13 and walk.BLOCK < 1500 and 700 * 3 > walk.BLOCK
    # grouped: rows of 13, 20, 100 and 120 (13: one 8 x 8 block and 5 single columns), and of 1500 in segments of
    # GROUP_WIDTH columns (the last one ragged); not rows of 5
    assert walk.GROUP == 8 and 120 <= walk.GROUP_WIDTH < 1500 and 1500 % walk.GROUP_WIDTH % 8
    assert 37 % walk.GROUP and 24 % walk.GROUP == 0


def test_chunks_of_a_transposed_layout_hold_whole_row_groups() -> None:
    """A layout with an operand gathered in row groups chunks at whole groups of rows (and at ELEMENT_ALIGN); others
    at ELEMENT_ALIGN only."""
    for shape in ((400, 1500), (4096, 100)):
        x = stored(values(shape, np.dtype(np.float64)), (1, 0))
        out = TensorData(np.empty(int(np.prod(shape))), shape)
        _, strides, n_chunks, per_chunk = planned_layout(out, [x])
        assert per_chunk % (walk.GROUP * shape[1]) == 0 and per_chunk % ELEMENT_ALIGN == 0 and n_chunks > 1
        _, _, _, plain = planned_layout(out, [stored(values(shape, np.dtype(np.float64)), (0, 1))])
        assert plain % ELEMENT_ALIGN == 0 and plain % (walk.GROUP * shape[1])


@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaPerformanceWarning")  # the serial build has no parallel loop
def test_serial_builds_never_start_threads() -> None:
    """``threads("serial")`` keeps a kernel's prange loops serial for every signature it is compiled for (Numba
    empties an options dict on first use, so the second signature's loop had gone to the thread pool: 70 us per call
    instead of 2); ``threads("parallel")`` gives them to the pool (so the check below can fail)."""

    def total(x):  # type: ignore[no-untyped-def]
        s = 0.0
        for i in prange(x.size):
            s += x[i]
        return s

    serial, parallel = njit(parallel=threads("serial"))(total), njit(parallel=threads("parallel"))(total)
    for dtype in (np.float64, np.float32, np.int64):
        assert serial(np.arange(5, dtype=dtype)) == 10
    assert len(serial.signatures) == 3
    assert not any("do_scheduling" in serial.inspect_llvm(sig) for sig in serial.signatures)
    assert parallel(np.arange(5.0)) == 10 and "do_scheduling" in parallel.inspect_llvm(parallel.signatures[0])
