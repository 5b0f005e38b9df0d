"""Numba kernels of the ``fast`` backend that take no op: where, add_scaled, gather, scatter_add and sort.

Like the op template :mod:`minitensor.backends.fast_kernels`, this file is copied by
:mod:`minitensor.backends.fast_codegen` into the fingerprinted cache directory (family "extra") and
imported from there, so the compiled code is cached on disk and never outlives a change to the code
it inlines. Values keep their storage types (nothing is computed on them except scatter_add's adds)
and are converted on store to the output's dtype.

Calling conventions follow the template:

* element-wise kernels (``where``, ``add_scaled``, ``gather``) walk ``shape`` (the coalesced output shape) with
  ``strides`` one row per operand, ``out`` first, in ``n_chunks`` chunks of ``per_chunk`` elements.
* row kernels (``scatter_add``, ``sort``) walk rows along one dim: ``shape``/``strides`` describe the
  coalesced other dims (one row of strides per operand, the written one first), chunks hold
  ``per_chunk`` rows, and the per-operand stride along the dim is passed separately. Each row is
  handled by one thread, so writes along a row never race.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from minitensor.backends.fast_kernels import advance, next_row, same_run, start_positions, threads

# Rebound to "serial" for the thread-pool-free build (see fast_codegen).
PARALLEL = "parallel"
SORT_RUN = 16  # rows are insertion-sorted in runs of this many before merging


@njit(parallel=threads(PARALLEL), cache=True)
def where_kernel(cond, a, b, out, shape, strides, n_chunks, per_chunk):
    """out = a if cond != 0 else b over ``shape``; ``strides`` rows are (out, cond, a, b)."""
    nd = shape.size
    inner = shape[nd - 1]
    total = 1
    for d in range(nd):
        total *= shape[d]
    so = strides[0, nd - 1]
    sc = strides[1, nd - 1]
    sa = strides[2, nd - 1]
    sb = strides[3, nd - 1]
    for c in prange(n_chunks):
        e = c * per_chunk
        end = min(e + per_chunk, total)
        index = np.empty(nd, np.int64)
        pos = np.empty(4, np.int64)
        start_positions(e, shape, strides, index, pos)
        while e < end:
            start = index[nd - 1]
            run = min(inner - start, end - e)
            po = pos[0]
            pc = pos[1]
            pa = pos[2]
            pb = pos[3]
            for k in range(run):
                if cond[pc + k * sc] != 0:
                    out[po + k * so] = a[pa + k * sa]
                else:
                    out[po + k * so] = b[pb + k * sb]
            e += run
            next_row(index, shape, strides, pos, start)


@njit(parallel=threads(PARALLEL), cache=True)
def add_scaled_kernel(a, b, alpha, out, shape, strides, n_chunks, per_chunk):
    """out = a + alpha[0] * b over ``shape`` in float64, rounded once on store; ``strides`` rows are (out, a, b)."""
    nd = shape.size
    inner = shape[nd - 1]
    total = 1
    for d in range(nd):
        total *= shape[d]
    so = strides[0, nd - 1]
    sa = strides[1, nd - 1]
    sb = strides[2, nd - 1]
    scale = np.float64(alpha[0])
    for c in prange(n_chunks):
        e = c * per_chunk
        end = min(e + per_chunk, total)
        index = np.empty(nd, np.int64)
        pos = np.empty(3, np.int64)
        start_positions(e, shape, strides, index, pos)
        while e < end:
            start = index[nd - 1]
            run = min(inner - start, end - e)
            po = pos[0]
            pa = pos[1]
            pb = pos[2]
            if so == 1 and sa == 1 and sb == 1:
                out_run = out[po : po + run]
                a_run = a[pa : pa + run]
                b_run = b[pb : pb + run]
                if same_run(out_run, a_run):  # the optimizers' p.add_(g, alpha=-lr)
                    for k in range(run):
                        out_run[k] = np.float64(out_run[k]) + scale * np.float64(b_run[k])
                else:
                    for k in range(run):
                        out_run[k] = np.float64(a_run[k]) + scale * np.float64(b_run[k])
            else:
                for k in range(run):
                    out[po + k * so] = np.float64(a[pa + k * sa]) + scale * np.float64(b[pb + k * sb])
            e += run
            next_row(index, shape, strides, pos, start)


@njit(parallel=threads(PARALLEL), cache=True)
def gather_kernel(a, index_values, out, shape, strides, n_chunks, per_chunk, a_dim_stride):
    """out = a[..., index, ...] over ``shape``; ``strides`` rows are (out, index, a with stride 0 along the dim).

    The gathered position is a's position plus ``index * a_dim_stride``.
    """
    nd = shape.size
    inner = shape[nd - 1]
    total = 1
    for d in range(nd):
        total *= shape[d]
    so = strides[0, nd - 1]
    si = strides[1, nd - 1]
    sa = strides[2, nd - 1]
    for c in prange(n_chunks):
        e = c * per_chunk
        end = min(e + per_chunk, total)
        index = np.empty(nd, np.int64)
        pos = np.empty(3, np.int64)
        start_positions(e, shape, strides, index, pos)
        while e < end:
            start = index[nd - 1]
            run = min(inner - start, end - e)
            po = pos[0]
            pi = pos[1]
            pa = pos[2]
            for k in range(run):
                out[po + k * so] = a[pa + k * sa + index_values[pi + k * si] * a_dim_stride]
            e += run
            next_row(index, shape, strides, pos, start)


@njit(parallel=threads(PARALLEL), cache=True)
def scatter_add_kernel(src, index_values, out, shape, strides, length, ss, si, so, n_chunks, per_chunk, compute):
    """out[..., index, ...] += src along rows of ``length``; ``strides`` rows are (out, src, index).

    ``ss``/``si`` step src/index along the dim, ``so`` is out's stride along it; adds are done in
    ``compute`` (np.int64 or np.float64) and stored back in out's dtype. A row's adds all land in
    one row of out, and one thread does them in order, so repeated indices cannot race.
    """
    nd = shape.size
    total = 1
    for d in range(nd):
        total *= shape[d]
    for c in prange(n_chunks):
        e0 = c * per_chunk
        e1 = min(e0 + per_chunk, total)
        index = np.empty(nd, np.int64)
        pos = np.empty(3, np.int64)
        start_positions(e0, shape, strides, index, pos)
        for _ in range(e0, e1):
            po = pos[0]
            ps = pos[1]
            pi = pos[2]
            for k in range(length):
                p = po + index_values[pi + k * si] * so
                out[p] = compute(out[p]) + compute(src[ps + k * ss])
            advance(index, shape, strides, pos, nd - 1)


@njit(inline="always")
def before(x, y, descending):
    """True when ``x`` sorts strictly before ``y``: NaN is above every number, equal values never are."""
    if descending:
        return x > y or (x != x and y == y)
    return x < y or (x == x and y != y)


@njit
def stable_argsort(keys, order, scratch, descending):
    """Write into ``order`` the stable sorting permutation of ``keys`` (``scratch``: same size, clobbered).

    Insertion sort of runs of SORT_RUN, then bottom-up merges that take from the left run unless the
    right value sorts strictly before: equal values keep their order in both directions.
    """
    n = keys.size
    for k in range(n):
        order[k] = k
    for lo in range(0, n, SORT_RUN):
        hi = min(lo + SORT_RUN, n)
        for i in range(lo + 1, hi):
            moving = order[i]
            x = keys[moving]
            j = i
            while j > lo and before(x, keys[order[j - 1]], descending):
                order[j] = order[j - 1]
                j -= 1
            order[j] = moving
    src = order
    dst = scratch
    width = SORT_RUN
    passes = 0
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            for k in range(lo, hi):
                if j < hi and (i >= mid or before(keys[src[j]], keys[src[i]], descending)):
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
        src, dst = dst, src
        width *= 2
        passes += 1
    if passes % 2 == 1:
        order[:] = scratch  # an odd number of merge passes left the result in scratch


@njit(parallel=threads(PARALLEL), cache=True)
def sort_kernel(a, values, indices, shape, strides, length, sa, sv, si, n_chunks, per_chunk, descending):
    """Stable sort of rows of ``length`` along one dim; ``strides`` rows are (values, indices, a).

    ``sa``/``sv``/``si`` are the strides along the dim. A row is copied out before it is written,
    so ``values`` may be ``a`` itself.
    """
    nd = shape.size
    total = 1
    for d in range(nd):
        total *= shape[d]
    for c in prange(n_chunks):
        e0 = c * per_chunk
        e1 = min(e0 + per_chunk, total)
        index = np.empty(nd, np.int64)
        pos = np.empty(3, np.int64)
        start_positions(e0, shape, strides, index, pos)
        keys = np.empty(length, a.dtype)
        order = np.empty(length, np.int64)
        scratch = np.empty(length, np.int64)
        for _ in range(e0, e1):
            pv = pos[0]
            pi = pos[1]
            pa = pos[2]
            for k in range(length):
                keys[k] = a[pa + k * sa]
            stable_argsort(keys, order, scratch, descending)
            for k in range(length):
                values[pv + k * sv] = keys[order[k]]
                indices[pi + k * si] = order[k]
            advance(index, shape, strides, pos, nd - 1)


@njit(cache=True, nogil=True)
def sigmoid_finish_kernel(x, t, out):
    """out = (1 if x >= 0 else t) / (1 + t) for t = e^-|x|, on contiguous 1-D blocks: the last pass of the
    NumPy-delegated sigmoid (the exp is NumPy's), vectorised by LLVM; nan stays nan (nan >= 0 is False)."""
    for i in range(x.size):
        ti = t[i]
        out[i] = (1.0 if x[i] >= 0.0 else ti) / (1.0 + ti)
