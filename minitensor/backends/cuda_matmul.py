"""Register-blocked matmul kernel of the ``cuda`` backend (any strides, batched, float32/float64/int64 accumulate).

A block computes a ``bm x bn`` tile of one batch's output with ``(bm / tm) x (bn / tn)`` threads; each thread
accumulates a ``tm x tn`` block of outputs in registers (rows ``ty + r * (bm / tm)``, columns
``tx + c * (bn / tn)``: a warp's columns are adjacent, so its shared-memory reads and global writes are
contiguous). The inner dim goes ``bk`` at a time through shared memory: the block loads a ``bm x bk`` slab of
``a`` and a ``bk x bn`` slab of ``b`` (each thread a few elements, in the order that reads global memory
contiguously for the operand's layout: ``a_k_contiguous`` / ``b_n_contiguous``), then every thread does
``bk * tm * tn`` multiply-adds from registers. The slabs are stored k-major with one element of padding per
row, so neither the stores nor the reads conflict on shared-memory banks.

Kernel signature::

    (out, a, b, batches, batch_shape, out_batch, a_batch, b_batch, m, n, inner,
     out_rs, out_cs, a_rs, a_cs, b_rs, b_cs, a_k_contiguous, b_n_contiguous)

``batch_shape`` and the ``*_batch`` strides are the coalesced broadcast batch dims (at least one; a broadcast
operand has stride 0); ``*_rs`` / ``*_cs`` are the row and column strides of each matrix. Grid: (column tiles,
row tiles, batches), each dim grid-strided, so any size runs under the grid caps.
"""

from __future__ import annotations

from collections.abc import Callable

from numba import cuda, float32, float64, int64

from .cuda_kernels import index_to_position, to_index

ACCUMULATORS = {"float32": float32, "float64": float64, "int64": int64}
"""Accumulator (and shared slab) types by name: int64 makes integer products exact."""


def make_matmul(batch_dims: int, acc: str, bm: int, bn: int, bk: int, tm: int, tn: int) -> Callable[..., None]:
    """The kernel for ``batch_dims`` coalesced batch dims, accumulator ``acc`` and tile (bm, bn, bk, tm, tn)."""
    if bm % tm or bn % tn:
        raise ValueError(f"matmul tile {bm}x{bn} is not a multiple of the per-thread block {tm}x{tn}")
    acc_t = ACCUMULATORS[acc]
    ty_count, tx_count = bm // tm, bn // tn
    threads = ty_count * tx_count
    a_slab, b_slab = bm * bk, bk * bn
    a_shape, b_shape = (bk, bm + 1), (bk, bn + 1)  # one element of padding per row (constants for Numba)

    def matmul_kernel(out, a, b, batches, batch_shape, out_batch, a_batch, b_batch, m, n, inner,  # type: ignore[no-untyped-def]
                      out_rs, out_cs, a_rs, a_cs, b_rs, b_cs, a_k_contiguous, b_n_contiguous):
        a_tile = cuda.shared.array(a_shape, acc_t)
        b_tile = cuda.shared.array(b_shape, acc_t)
        total = cuda.local.array((tm, tn), acc_t)
        a_reg = cuda.local.array(tm, acc_t)
        b_reg = cuda.local.array(tn, acc_t)
        batch_index = cuda.local.array(batch_dims, int64)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        tid = ty * tx_count + tx
        tiles_m = (m + bm - 1) // bm
        tiles_n = (n + bn - 1) // bn
        # Trip counts depend on block indices only: every thread of a block reaches every syncthreads.
        for batch in range(cuda.blockIdx.z, batches, cuda.gridDim.z):
            to_index(batch, batch_shape, batch_index)
            out_base = index_to_position(batch_index, out_batch)
            a_base = index_to_position(batch_index, a_batch)
            b_base = index_to_position(batch_index, b_batch)
            for tile_i in range(cuda.blockIdx.y, tiles_m, cuda.gridDim.y):
                i0 = tile_i * bm
                for tile_j in range(cuda.blockIdx.x, tiles_n, cuda.gridDim.x):
                    j0 = tile_j * bn
                    for r in range(tm):
                        for c in range(tn):
                            total[r, c] = 0
                    for k0 in range(0, inner, bk):
                        for e in range(tid, a_slab, threads):
                            if a_k_contiguous:
                                ii, kk = e // bk, e % bk
                            else:
                                ii, kk = e % bm, e // bm
                            i, k = i0 + ii, k0 + kk
                            if i < m and k < inner:
                                a_tile[kk, ii] = a[a_base + i * a_rs + k * a_cs]
                            else:
                                a_tile[kk, ii] = 0
                        for e in range(tid, b_slab, threads):
                            if b_n_contiguous:
                                kk, jj = e // bn, e % bn
                            else:
                                kk, jj = e % bk, e // bk
                            k, j = k0 + kk, j0 + jj
                            if k < inner and j < n:
                                b_tile[kk, jj] = b[b_base + k * b_rs + j * b_cs]
                            else:
                                b_tile[kk, jj] = 0
                        cuda.syncthreads()
                        for kk in range(bk):
                            for r in range(tm):
                                a_reg[r] = a_tile[kk, ty + r * ty_count]
                            for c in range(tn):
                                b_reg[c] = b_tile[kk, tx + c * tx_count]
                            for r in range(tm):
                                for c in range(tn):
                                    total[r, c] += a_reg[r] * b_reg[c]
                        cuda.syncthreads()
                    for r in range(tm):
                        i = i0 + ty + r * ty_count
                        if i < m:
                            for c in range(tn):
                                j = j0 + tx + c * tx_count
                                if j < n:
                                    out[out_base + i * out_rs + j * out_cs] = total[r, c]

    return matmul_kernel
