"""Launch plans of the ``cuda`` backend: tunable sizes, dim coalescing, compute types, launch geometry.

Pure Python over shapes and strides (no device calls). Element-wise layouts reuse the ``fast`` backend's dim
coalescing (:func:`minitensor.backends.layout.elementwise_layout` and :func:`~minitensor.backends.layout.coalesce`),
turned into tuples: kernel arguments passed by value (a NumPy array argument would be copied to the device at
every launch). Plans are cached per operand layout. The sizes below are module attributes read at every call, so
tests lower them to reach multi-block and multi-pass paths at tiny shapes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..operators import INTEGER_KINDS
from ..tensor_data import TensorData, prod
from .cuda_allocator import SIMULATED
from .layout import coalesce, elementwise_layout

THREADS_PER_BLOCK = 256
"""Threads per block for map, zip and fill (fewer for tiny tensors)."""
SIMULATOR_THREADS = 4
"""Most threads per element-wise block on Numba's simulator, where each is a Python thread (the cuda tests of
test_tensor_reduce and test_tensor_math: 64 s with 8, 44 s with 4; with two blocks the grid-stride loops still
take several threads and blocks)."""
SIMULATOR_BLOCKS = 2
"""Most blocks along grid dim x of an element-wise kernel or of a reduction's rows on the simulator, which starts a
block's Python threads anew for each block: the grid-stride loops then give each thread more elements (a 64x64
``exp``: 0.29 -> 0.10 s), and two blocks keep the stride path taken."""
# On Numba's simulator every CUDA thread is a Python thread and every block and barrier costs a polling loop, so
# the simulator defaults use few threads, few blocks and few barriers (tests lower caps to reach every path).
WARP = 4 if SIMULATED else 32
"""Lanes of a reduction warp: the hardware's 32 (shuffles), fewer on the simulator (shared memory, faster)."""
WARPS_PER_BLOCK = 1 if SIMULATED else 8
"""Warps (so rows) per block of the warp-per-row reduction (one on the simulator, where each thread is a Python thread:
reductions there run 2-3x faster; a test sets several to reach that path)."""
REDUCE_BLOCK = 4 * WARP if SIMULATED else 256
"""Threads of the block-per-row reduction: a multiple of WARP, at most WARP * WARP."""
WARP_ROW_MAX = 1024
"""Longest row folded by one warp; longer rows get a block."""
THREAD_ROWS_MIN = 1 if SIMULATED else 64
"""Fewest rows for the thread-per-row reduction (folds along a dim that is not the innermost)."""
TARGET_THREADS = 256 if SIMULATED else 1 << 16
TARGET_BLOCKS = 8 if SIMULATED else 1024
"""Rows are split into chunks until about this many threads (thread kernel) or blocks (block kernel) run (few on
the simulator: a sum of 4x4096 there 3.8 -> 0.29 s; still more than one chunk, so the second pass runs)."""
MIN_CHUNK = 64
MIN_CHUNK_PER_THREAD = 4
"""Shortest chunk of a split row: elements per thread (thread kernel) or per thread of a block."""
MAX_REDUCE_CHUNKS = 1024
"""Most chunks one reduced row is split into in one pass (then reduced again)."""
MATMUL_LARGE = (32, 32, 32, 16, 16) if SIMULATED else (128, 128, 8, 8, 8)
MATMUL_SMALL = (32, 32, 32, 16, 16) if SIMULATED else (64, 64, 16, 4, 4)
"""Matmul tiles (bm, bn, bk, tm, tn): a block computes bm x bn outputs, each thread tm x tn of them, the inner
dim bk at a time (on the simulator 2 x 2 threads per block: few blocks and barriers)."""
LARGE_FROM = 256
"""Smallest output side (both m and n) for the large matmul tile."""
MAX_GRID = 65535
"""Cap on every grid dimension; kernels loop (grid-stride) over the rest."""
FLAT_PER_THREAD = 4
"""Elements per thread of the flat (contiguous) map and zip, which load four at a time."""
LAYOUT_CACHE_SIZE = 512
"""Most cached element-wise layouts (a training loop repeats a few); the cache empties when full."""

FLOAT32 = np.dtype(np.float32)

_LAYOUTS: dict[tuple[Any, ...], tuple[int, tuple[tuple[int, ...], ...]]] = {}
_REDUCE_LAYOUTS: dict[tuple[Any, ...], tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = {}


def elementwise_launch(size: int, per_thread: int = 1) -> tuple[int, int]:
    """(blocks, threads) for ``size`` elements, about ``per_thread`` of them per thread: whole warps, or on the
    simulator (one Python thread per CUDA thread) at most SIMULATOR_THREADS; every element-wise kernel is a
    grid-stride loop, correct for any launch."""
    if SIMULATED:
        threads = min(THREADS_PER_BLOCK, SIMULATOR_THREADS, size)
    else:
        threads = min(THREADS_PER_BLOCK, -(-size // 32) * 32)
    return min(-(-size // (threads * per_thread)), grid_cap()), threads


def grid_cap() -> int:
    """Most blocks along grid dim x of a grid-stride launch: MAX_GRID, on the simulator SIMULATOR_BLOCKS."""
    return min(SIMULATOR_BLOCKS, MAX_GRID) if SIMULATED else MAX_GRID


def layout(out: TensorData, inputs: tuple[TensorData, ...]) -> tuple[int, tuple[tuple[int, ...], ...]]:
    """(dims, (shape, out_strides, *input_strides)) of an element-wise kernel, cached per operand layouts.

    The fast backend's dim coalescing (:func:`minitensor.backends.layout.elementwise_layout`), as tuples (kernel
    arguments by value: NumPy arrays would be copied to the device at every launch). ``dims`` is 0 when every
    operand is dense in the same order (the kernel's flat path), else the number of coalesced dims.
    """
    key = (out.shape, out.strides, *[(x.shape, x.strides) for x in inputs])
    plan = _LAYOUTS.get(key)
    if plan is None:
        shape, strides = elementwise_layout(out, inputs)
        layout = (tuple(shape.tolist()), *[tuple(row) for row in strides.tolist()])
        flat = len(shape) == 1 and all(row[0] == 1 for row in layout[1:])
        if len(_LAYOUTS) >= LAYOUT_CACHE_SIZE:
            _LAYOUTS.clear()
        plan = _LAYOUTS[key] = (0 if flat else len(shape), layout)
    return plan


def compute_type(out: TensorData, *inputs: TensorData) -> str:
    """Element-wise compute type: int64 when every input is integer or bool (exact), float32 when ``out`` is
    float32 and every input float32 or bool (float32 stays float32), else float64."""
    if integer_compute(*inputs):
        return "int64"
    if out.dtype == FLOAT32 and all(x.dtype == FLOAT32 or x.dtype.kind == "b" for x in inputs):
        return "float32"
    return "float64"


def reduce_launch(a: TensorData, dim: int, rows: int) -> tuple[str, int, int, int]:
    """(kernel kind, chunks per row, blocks, threads) of a reduction of ``a`` along ``dim`` into ``rows`` outputs.

    "thread" when the reduced dim is not a's innermost (one thread per row: neighbours read neighbours) and there
    are enough rows; else "warp" for rows up to WARP_ROW_MAX long, "block" beyond. Rows are split into chunks
    (grid dim y) until about TARGET_THREADS threads (thread kernel) or TARGET_BLOCKS blocks (block kernel) run.
    """
    length = a.shape[dim]
    step = abs(a.strides[dim]) if length > 1 else 0
    kept = [abs(a.strides[i]) for i in range(a.dims) if i != dim and a.shape[i] > 1]
    outer = bool(kept) and length > 1 and min(kept) < step
    cap = min(MAX_REDUCE_CHUNKS, MAX_GRID)
    if outer and rows >= THREAD_ROWS_MIN:
        threads = min(SIMULATOR_THREADS if SIMULATED else THREADS_PER_BLOCK, rows)
        chunks = max(1, min(cap, TARGET_THREADS // rows, length // MIN_CHUNK))
        return "thread", chunks, min(-(-rows // threads), grid_cap()), threads
    if length <= WARP_ROW_MAX:
        warps = WARPS_PER_BLOCK
        return "warp", 1, min(-(-rows // warps), grid_cap()), WARP * warps
    threads = REDUCE_BLOCK
    chunks = max(1, min(cap, TARGET_BLOCKS // rows, length // (threads * MIN_CHUNK_PER_THREAD)))
    return "block", chunks, min(rows, grid_cap()), threads


def reduce_layout(a: TensorData, dim: int, dst: TensorData) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Coalesced rows of a reduction: (row_shape, dst strides, a strides) over the dims other than ``dim``,
    a's most contiguous dim innermost; cached per layout."""
    key = ("reduce", a.shape, a.strides, dst.strides, dim)
    plan = _REDUCE_LAYOUTS.get(key)
    if plan is None:
        dims = [(a.shape[i], [dst.strides[i], a.strides[i]]) for i in range(a.dims) if i != dim and a.shape[i] != 1]
        dims.sort(key=lambda d: -abs(d[1][1]))
        shape, strides = coalesce(dims, 2)
        if len(_REDUCE_LAYOUTS) >= LAYOUT_CACHE_SIZE:
            _REDUCE_LAYOUTS.clear()
        plan = _REDUCE_LAYOUTS[key] = (tuple(shape.tolist()), tuple(strides[0].tolist()), tuple(strides[1].tolist()))
    return plan


def integer_compute(*datas: TensorData) -> bool:
    """True when every input has an integer or bool dtype: the kernel then computes in int64."""
    return all(data.dtype.kind in INTEGER_KINDS for data in datas)


def rows_along(shape: tuple[int, ...], dim: int) -> tuple[tuple[int, ...], int]:
    """``shape`` with ``dim`` set to 1 and its size: one "row" along ``dim`` per element."""
    row_shape = shape[:dim] + (1,) + shape[dim + 1 :]
    return row_shape, prod(row_shape)
