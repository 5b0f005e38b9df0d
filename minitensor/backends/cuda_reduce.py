"""Reduction kernels of the ``cuda`` backend: a thread, a warp or a block per row (and chunk of a row).

A reduction folds ``a`` along one dim; every position of the other dims is a *row*. The rows' dims are coalesced
(see :func:`minitensor.backends.cuda.CudaBackend.reduce`) and given as ``row_shape`` with the strides of ``a``
and of ``dst`` over them; along the row, elements are ``a_step`` apart. A long row may be split into ``chunks``
contiguous pieces (grid dim y): each writes its partial fold at ``dst[row position + chunk * dst_step]`` and the
caller folds the partials again. Three kernels share this signature:

``(dst, a, rows, row_shape, dst_strides, a_strides, length, a_step, dst_step)``

- :func:`make_reduce_thread`: one thread per (row, chunk), a serial loop; for folds along a dim that is not the
  innermost (adjacent threads read adjacent memory);
- :func:`make_reduce_warp`: one warp per (row, chunk): lanes stride over the row, then a shuffle tree; for
  short rows along the innermost dim;
- :func:`make_reduce_block`: one block per (row, chunk): every warp folds as above, warp results meet in shared
  memory and the first warp's worth is folded again; for long rows.

Values are read as int64 for integer compute and as float64 otherwise (float32 inputs too: the accumulator is
float64, rounded once on store). The warp fold uses ``cuda.shfl_down_sync``; Numba's simulator has no shuffles,
so there (``shuffle=False``) the same tree runs through shared memory, with the whole block in step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numba import cuda, float64, int64

from .. import operators
from .cuda_kernels import device_op, index_to_position, reader, to_index

FULL_MASK = 0xFFFFFFFF


def make_warp_fold(op: str, width: int, shuffle: bool, integer: bool) -> Any:
    """Device function ``(acc, cache, tid) -> fold of acc over the warp`` (valid in lane 0).

    ``width`` lanes per warp (32 with shuffles). Every thread of the block must call it together: without
    shuffles it goes through ``cache`` (shared memory, one slot per thread) with block barriers.
    """
    fn = device_op(operators.REDUCE_OPS[op][0])
    if shuffle:

        def warp_fold(acc, cache, tid):  # type: ignore[no-untyped-def]
            offset = width // 2
            while offset > 0:
                acc = fn(acc, cuda.shfl_down_sync(FULL_MASK, acc, offset))
                offset //= 2
            return acc

        return cuda.jit(device=True)(warp_fold)

    def warp_fold_shared(acc, cache, tid):  # type: ignore[no-untyped-def]
        lane = tid % width
        cache[tid] = acc
        cuda.syncthreads()
        offset = width // 2
        while offset > 0:
            if lane < offset:
                cache[tid] = fn(cache[tid], cache[tid + offset])
            cuda.syncthreads()
            offset //= 2
        result = cache[tid - lane]
        cuda.syncthreads()
        return result

    return cuda.jit(device=True)(warp_fold_shared)


def _chunk_range(chunk: int, chunks: int, length: int) -> tuple[int, int]:
    per = (length + chunks - 1) // chunks
    return chunk * per, min(length, (chunk + 1) * per)


chunk_range = cuda.jit(device=True)(_chunk_range)


def make_reduce_thread(op: str, dims: int, integer: bool) -> Callable[..., None]:
    """One thread per (row, chunk): launched with grid (x, chunks) of 1-D blocks; grid-stride over rows."""
    fn = device_op(operators.REDUCE_OPS[op][0])
    start = operators.reduce_start(op, integer)
    read = reader(integer)

    def reduce_thread(dst, a, rows, row_shape, dst_strides, a_strides, length, a_step, dst_step):  # type: ignore[no-untyped-def]
        index = cuda.local.array(dims, int64)
        chunk = cuda.blockIdx.y
        first, last = chunk_range(chunk, cuda.gridDim.y, length)
        for row in range(cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x, rows, cuda.gridDim.x * cuda.blockDim.x):
            to_index(row, row_shape, index)
            base = index_to_position(index, a_strides)
            acc = start
            for k in range(first, last):
                acc = fn(acc, read(a[base + k * a_step]))
            dst[index_to_position(index, dst_strides) + chunk * dst_step] = acc

    return reduce_thread


def make_reduce_warp(op: str, dims: int, integer: bool, width: int, warps: int, shuffle: bool) -> Callable[..., None]:
    """One warp of ``width`` lanes per (row, chunk), ``warps`` warps per block (blockDim.x = width * warps)."""
    fn = device_op(operators.REDUCE_OPS[op][0])
    start = operators.reduce_start(op, integer)
    read = reader(integer)
    fold = make_warp_fold(op, width, shuffle, integer)
    cache_t = int64 if integer else float64
    threads = width * warps

    def reduce_warp(dst, a, rows, row_shape, dst_strides, a_strides, length, a_step, dst_step):  # type: ignore[no-untyped-def]
        cache = cuda.shared.array(threads, cache_t)
        index = cuda.local.array(dims, int64)
        tid = cuda.threadIdx.x
        lane = tid % width
        warp = tid // width
        chunk = cuda.blockIdx.y
        first, last = chunk_range(chunk, cuda.gridDim.y, length)
        # The whole block takes the same trips (rows are handed out warps at a time), so the fold's barriers
        # (simulator) are reached by every thread.
        for row0 in range(cuda.blockIdx.x * warps, rows, cuda.gridDim.x * warps):
            row = row0 + warp
            acc = start
            if row < rows:
                to_index(row, row_shape, index)
                base = index_to_position(index, a_strides)
                for k in range(first + lane, last, width):
                    acc = fn(acc, read(a[base + k * a_step]))
            acc = fold(acc, cache, tid)
            if row < rows and lane == 0:
                dst[index_to_position(index, dst_strides) + chunk * dst_step] = acc

    return reduce_warp


def make_reduce_block(op: str, dims: int, integer: bool, width: int, warps: int, shuffle: bool) -> Callable[..., None]:
    """One block of ``width * warps`` threads per (row, chunk); needs ``warps <= width``."""
    if warps > width:
        raise ValueError(f"a reduce block of {warps} warps cannot fold its warp results in one warp of {width}")
    fn = device_op(operators.REDUCE_OPS[op][0])
    start = operators.reduce_start(op, integer)
    read = reader(integer)
    fold = make_warp_fold(op, width, shuffle, integer)
    cache_t = int64 if integer else float64
    threads = width * warps

    def reduce_block(dst, a, rows, row_shape, dst_strides, a_strides, length, a_step, dst_step):  # type: ignore[no-untyped-def]
        cache = cuda.shared.array(threads, cache_t)
        partials = cuda.shared.array(warps, cache_t)
        index = cuda.local.array(dims, int64)
        tid = cuda.threadIdx.x
        lane = tid % width
        warp = tid // width
        chunk = cuda.blockIdx.y
        first, last = chunk_range(chunk, cuda.gridDim.y, length)
        for row in range(cuda.blockIdx.x, rows, cuda.gridDim.x):
            to_index(row, row_shape, index)
            base = index_to_position(index, a_strides)
            acc = start
            for k in range(first + tid, last, threads):
                acc = fn(acc, read(a[base + k * a_step]))
            acc = fold(acc, cache, tid)
            if lane == 0:
                partials[warp] = acc
            cuda.syncthreads()
            acc = partials[lane] if lane < warps else start
            acc = fold(acc, cache, tid)
            if tid == 0:
                dst[index_to_position(index, dst_strides) + chunk * dst_step] = acc
            cuda.syncthreads()  # partials are rewritten by the next row

    return reduce_block
