"""Layout planning shared by the ``fast`` and ``cuda`` backends: an element-wise call's dims broadcast to the output,
ordered by the output's strides and merged where contiguous for every operand (so a contiguous call is one flat
dim); the rows of a row kernel (reductions, scans, softmax, layer_norm); and how the work splits into chunks. Plans
are cached per layout: a training loop repeats the same few.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..tensor_data import TensorData

Dims = list[tuple[int, list[int]]]  # (size, stride of each operand) per dim


def coalesce(dims: Dims, operands: int) -> tuple[np.ndarray, np.ndarray]:
    """Merge neighbouring dims that are contiguous for every operand.

    ``dims`` lists the (size > 1) dims outermost first. Returns ``shape`` (int64, >= 1 dim) and
    ``strides`` (int64, one row per operand); no dims at all becomes shape (1,) with stride 0.
    """
    merged: Dims = []
    for size, strides in dims:
        if merged and all(prev == cur * size for prev, cur in zip(merged[-1][1], strides)):
            merged[-1] = (merged[-1][0] * size, list(strides))
        else:
            merged.append((size, list(strides)))
    if not merged:
        merged = [(1, [0] * operands)]
    shape = np.array([size for size, _ in merged], dtype=np.int64)
    table = np.array([[s[j] for _, s in merged] for j in range(operands)], dtype=np.int64).reshape(operands, len(merged))
    return shape, table


LAYOUT_CACHE_SIZE = 512
ELEMENT_ALIGN = 64
"""Element-wise chunks hold a multiple of this many elements (256 bytes of float32)."""
ROW_GROUP = 8
"""The fast walkers gather a transposed operand this many whole rows at a time (``fast_walk_kernels.GROUP``), so
such a layout's chunks hold a multiple of that many rows too (:func:`element_align`)."""
_layouts: dict[tuple, tuple[np.ndarray, np.ndarray, int, int]] = {}
_row_plans: dict[tuple, tuple[np.ndarray, np.ndarray, int, int]] = {}


def cached(table: dict, key: tuple, make: Callable[[], Any]) -> Any:
    """``table[key]``, made by ``make()`` on a miss; the table empties when it holds LAYOUT_CACHE_SIZE plans.

    A training loop repeats the same few layouts; kernels only read the plans' arrays, never write them.
    """
    plan = table.get(key)
    if plan is None:
        if len(table) >= LAYOUT_CACHE_SIZE:
            table.clear()
        plan = table[key] = make()
    return plan


def planned_layout(out: TensorData, inputs: Sequence[TensorData]) -> tuple[np.ndarray, np.ndarray, int, int]:
    """``elementwise_layout`` plus ``chunking`` of it, cached per operand shapes and strides."""

    def make() -> tuple[np.ndarray, np.ndarray, int, int]:
        shape, strides = tiled(*elementwise_layout(out, inputs))
        return (shape, strides, *chunking(shape, align=element_align(shape, strides)))

    return cached(_layouts, (out.shape, out.strides, *[(x.shape, x.strides) for x in inputs]), make)


def element_align(shape: np.ndarray, strides: np.ndarray) -> int:
    """The chunk alignment of an element-wise layout: ELEMENT_ALIGN elements, and whole groups of ROW_GROUP rows when
    an input steps 1 along the next-outer dim and neither 0 nor 1 along the row (a transposed operand, gathered in
    row groups: a chunk boundary inside a group would send its rows down the slower one-row path)."""
    if shape.size >= 2:
        along, across = strides[1:, -1], strides[1:, -2]
        if ((across == 1) & (along != 0) & (along != 1)).any():
            return math.lcm(ELEMENT_ALIGN, ROW_GROUP * int(shape[-1]))
    return ELEMENT_ALIGN


def elementwise_layout(out: TensorData, inputs: Sequence[TensorData]) -> tuple[np.ndarray, np.ndarray]:
    """Coalesced shape and (out, *inputs) strides for an element-wise op writing ``out``.

    Inputs are broadcast to ``out.shape``; dims are ordered by ``out``'s strides (largest first),
    which is free for element-wise ops and makes same-layout operands merge into one flat dim.
    """
    views = [x if x.shape == out.shape else x.expand(out.shape) for x in inputs]
    dims = [(size, [out.strides[i]] + [v.strides[i] for v in views]) for i, size in enumerate(out.shape) if size != 1]
    dims.sort(key=lambda d: -abs(d[1][0]))
    return coalesce(dims, 1 + len(views))


TILE_MIN_RUN, TILE_MIN_STEP = 2048, 512
TILE_ROWS, TILE_COLS = range(64, 15, -1), range(256, 15, -1)
"""A crossed 2-D layout is tiled when a row walk would read at least TILE_MIN_RUN elements at least TILE_MIN_STEP
elements apart from one operand (each on its own page: more pages than the TLB holds); a tile takes the largest
height in TILE_ROWS and width in TILE_COLS that divide the dims (a width of 256 lines fits L1). Measured on one
thread, (n, n) float64 with one operand transposed, n = 2048-4096: map 1.3-1.7x and zip 1.4-1.8x NumPy, against
0.8-1.2x untiled (Ice Lake); on a Zen 5 EPYC, n = 3162, 0.55x with scalar gathers, 1.15-1.23x with the walkers'
block transposes (:data:`fast_walk_kernels.GROUP`)."""


def tiled(shape: np.ndarray, strides: np.ndarray, min_run: int = TILE_MIN_RUN,
          min_step: int = TILE_MIN_STEP) -> tuple[np.ndarray, np.ndarray]:
    """A coalesced 2-D layout (R, C) in which some operand steps ``min_step`` or more elements along C (a transpose,
    walked down its columns: a page per element) as 4-D tiles (R/tr, C/tc, tr, tc), so a tile's rows reuse the same
    tc pages and cache lines while they are in the TLB and L1. The same (out, inputs) positions are visited, so every
    value is unchanged. Other layouts, and dims with no divisor in TILE_ROWS / TILE_COLS, are returned as they are."""
    if shape.size != 2 or shape[1] < min_run or (strides < 0).any() or not (strides[:, 1] >= min_step).any():
        return shape, strides
    rows, cols = int(shape[0]), int(shape[1])
    tr = next((t for t in TILE_ROWS if rows % t == 0), None)
    tc = next((t for t in TILE_COLS if cols % t == 0), None)
    if tr is None or tc is None or rows < 2 * tr:
        return shape, strides
    tiles = np.array([rows // tr, cols // tc, tr, tc], dtype=np.int64)
    return tiles, np.stack([strides[:, 0] * tr, strides[:, 1] * tc, strides[:, 0], strides[:, 1]], axis=1)


def row_plan(shape: tuple[int, ...], dim: int, operands: Sequence[TensorData],
             natural: bool = False) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Rows along ``dim``: the coalesced other dims of ``shape`` (one strides row per operand) and their chunking.

    Operands share ``shape`` except along ``dim``; the last operand's most contiguous dim goes innermost, or, when
    ``natural``, the dims keep their order (rows are visited in row-major order, as a causal mask needs).
    Chunks hold at least 16k elements of work (rows times the row length). Cached like ``planned_layout``.
    """

    def make() -> tuple[np.ndarray, np.ndarray, int, int]:
        dims = [(size, [x.strides[i] for x in operands]) for i, size in enumerate(shape) if i != dim and size != 1]
        if not natural:
            dims.sort(key=lambda d: -abs(d[1][-1]))
        rows, strides = coalesce(dims, len(operands))
        return (rows, strides, *chunking(rows, min_chunk=max(1, 16384 // max(shape[dim], 1))))

    return cached(_row_plans, (shape, dim, natural, *[x.strides for x in operands]), make)


def chunking(shape: np.ndarray, min_chunk: int = 16384, max_chunks: int = 256, align: int = 1) -> tuple[int, int]:
    """(number of chunks, elements per chunk) for a parallel loop over the elements of ``shape``; with ``align``, a
    chunk holds a multiple of ``align`` elements (every chunk's vector loop then starts at the same alignment: a 10^7
    float64 add with 39,063-element chunks ran 5-7% slower than with 32,768 on one thread)."""
    total = math.prod(shape.tolist())
    wanted = max(1, min(total // min_chunk, max_chunks))
    per_chunk = -(-total // wanted)
    per_chunk = -(-per_chunk // align) * align
    return -(-total // per_chunk), per_chunk
