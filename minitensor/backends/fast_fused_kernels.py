"""Numba kernels of the ``fast`` backend for torch eager's composite ops: layer_norm forward and backward (one pass
per row instead of a chain of element-wise kernels), softmax / log_softmax in one pass per row (scale, causal mask,
row max, exp, sum, normalize, with :mod:`minitensor.backends.fast_math`'s exp, which vectorises) and the exact GELU
(one element-wise pass; float32 computed in float32).

Copied by :mod:`minitensor.backends.fast_codegen` into the fingerprinted cache directory (family "fused") and
imported from there, like :mod:`minitensor.backends.fast_extra_kernels`, so the compiled code is cached on disk. The
kernels here split the work into rows or runs; the work on one row is in :mod:`minitensor.backends.fast_fused_rows`.
The older row kernels read values as float64 and convert on store to the output's dtype; arithmetic follows IEEE (``error_model=
"numpy"``: x / 0 is inf or NaN, never an exception).

Row kernels walk rows along the last dim: ``shape``/``strides`` describe the coalesced other dims (one row of strides
per operand), chunks hold ``per_chunk`` rows, and the per-operand stride along the row (>= 1, the caller copies
other layouts) is passed separately. A row is handed to a helper as a 1-D slice, unit-stride when every operand is,
so LLVM vectorizes the common contiguous case. One thread does a whole row.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from minitensor.backends.fast_fused_rows import (
    adam_run,
    finish_row,
    gelu_run,
    layer_norm_backward_row,
    layer_norm_row,
    log_softmax_grad_row,
    row,
    softmax_backward_row,
    softmax_grad_row,
    softmax_row,
    softmax_shift_row,
)
from minitensor.backends.fast_kernels import advance, start_positions, threads
from minitensor.backends.fast_math import prefer_wide

# Rebound to "serial" for the thread-pool-free build (see fast_codegen).
PARALLEL = "parallel"


@njit(parallel=threads(PARALLEL), cache=True, error_model="numpy")
def layer_norm_kernel(a, weight, bias, out, mean, rstd, shape, strides, length, sa, so, n_chunks, per_chunk, eps,
                      has_weight, has_bias):
    """Rows of ``length`` along the last dim: mean, rstd = 1 / sqrt(biased var + eps), out = (a - mean) rstd w + b.

    ``strides`` rows are (out, a, mean, rstd); ``weight``/``bias`` are contiguous (length,) arrays.
    """
    nd = shape.size
    total = 1
    for d in range(nd):
        total *= shape[d]
    unit = sa == 1 and so == 1
    n, ua, uo = np.uint64(length), np.uint64(sa), np.uint64(so)
    for c in prange(n_chunks):
        r0 = c * per_chunk
        r1 = min(r0 + per_chunk, total)
        index = np.empty(nd, np.int64)
        pos = np.empty(4, np.int64)
        start_positions(r0, shape, strides, index, pos)
        for _ in range(r0, r1):
            ab, ob = np.uint64(pos[1]), np.uint64(pos[0])
            if unit:
                mu, r = layer_norm_row(a, ab, None, weight, bias, out, ob, None, n, eps, has_weight, has_bias)
            else:
                mu, r = layer_norm_row(a, ab, ua, weight, bias, out, ob, uo, n, eps, has_weight, has_bias)
            mean[pos[2]] = mu
            rstd[pos[3]] = r
            advance(index, shape, strides, pos, nd - 1)



@njit(parallel=threads(PARALLEL), cache=True, error_model="numpy")
def layer_norm_backward_kernel(grad, a, mean, rstd, weight, grad_input, partials, shape, strides, length, sg, sa, sgi,
                               n_chunks, per_chunk, has_weight, need_input, need_params, grad_weight, sw, grad_bias,
                               sb, write_params):
    """Rows of ``length``: the layer_norm gradients (see ``layer_norm_backward_row``); ``strides`` rows are
    (grad_input, grad, a, mean, rstd). Chunk c zeroes ``partials[c]`` (float64) and adds its rows' g * xhat and g
    into it; with ``write_params`` (0: none, bit 1: weight, bit 2: bias) the chunks' sums, in chunk order, are then
    stored at ``grad_weight[k * sw]`` and ``grad_bias[k * sb]``."""
    nd = shape.size
    total = 1
    for d in range(nd):
        total *= shape[d]
    unit = sg == 1 and sa == 1 and sgi == 1
    n, ug, ua, ui = np.uint64(length), np.uint64(sg), np.uint64(sa), np.uint64(sgi)
    for c in prange(n_chunks):
        r0 = c * per_chunk
        r1 = min(r0 + per_chunk, total)
        index = np.empty(nd, np.int64)
        pos = np.empty(5, np.int64)
        start_positions(r0, shape, strides, index, pos)
        p_weight, p_bias = partials[c, 0], partials[c, 1]
        p_weight[:] = 0.0
        p_bias[:] = 0.0
        for _ in range(r0, r1):
            mu = np.float64(mean[pos[3]])
            r = np.float64(rstd[pos[4]])
            gb, ab, ib = np.uint64(pos[1]), np.uint64(pos[2]), np.uint64(pos[0])
            if unit:
                layer_norm_backward_row(grad, gb, None, a, ab, None, weight, grad_input, ib, None, n, mu, r, p_weight,
                                        p_bias, has_weight, need_input, need_params)
            else:
                layer_norm_backward_row(grad, gb, ug, a, ab, ua, weight, grad_input, ib, ui, n, mu, r, p_weight,
                                        p_bias, has_weight, need_input, need_params)
            advance(index, shape, strides, pos, nd - 1)
    if write_params:
        for k in range(length):
            sum_w = partials[0, 0, k]
            sum_b = partials[0, 1, k]
            for c in range(1, n_chunks):
                sum_w += partials[c, 0, k]
                sum_b += partials[c, 1, k]
            if write_params & 1:
                grad_weight[k * sw] = sum_w
            if write_params & 2:
                grad_bias[k * sb] = sum_b



@njit(parallel=threads(PARALLEL), cache=True, error_model="numpy")
def softmax_shift_kernel(a, out, shape, strides, length, sa, so, n_chunks, per_chunk, scale, causal_rows, finish):
    """Rows of ``length``: out = scale * a - its row max (``softmax_shift_row``); ``strides`` rows are (out, a). With
    ``causal_rows`` > 0, row r keeps its first ``r % causal_rows + 1`` entries (rows visited in row-major order).
    ``finish`` 1 or 2 completes softmax or log_softmax in the same pass (``finish_row``, for small inputs)."""
    nd = shape.size
    total = 1
    for d in range(nd):
        total *= shape[d]
    unit = sa == 1 and so == 1
    for c in prange(n_chunks):
        r0 = c * per_chunk
        r1 = min(r0 + per_chunk, total)
        index = np.empty(nd, np.int64)
        pos = np.empty(2, np.int64)
        start_positions(r0, shape, strides, index, pos)
        for r in range(r0, r1):
            keep = min(length, r % causal_rows + 1) if causal_rows > 0 else length
            o = out[pos[0] : pos[0] + length] if unit else row(out, pos[0], length, so)
            softmax_shift_row(a[pos[1] : pos[1] + length] if unit else row(a, pos[1], length, sa), o, scale, keep)
            if finish:
                finish_row(o, finish == 2)
            advance(index, shape, strides, pos, nd - 1)


@njit(cache=True, error_model="numpy")
def softmax_dense_rows_kernel(a, out, rows, length, finish):
    """``rows`` consecutive rows of ``length`` at the start of ``a`` and ``out`` (contiguous, the softmax dim last,
    scale 1, no mask): ``softmax_shift_row`` then ``finish_row`` (1 softmax, 2 log_softmax), the same arithmetic as
    ``softmax_shift_kernel`` in a loop that compiles in a fraction of its time (small inputs: a classifier's loss)."""
    for r in range(rows):
        o = out[r * length : (r + 1) * length]
        softmax_shift_row(a[r * length : (r + 1) * length], o, 1.0, length)
        finish_row(o, finish == 2)



@njit(parallel=threads(PARALLEL), cache=True, error_model="numpy")
def softmax_kernel(a, out, shape, strides, length, n_chunks, per_chunk, scale, causal_rows, log):
    """Rows of ``length``, unit-stride (``strides`` rows: out, a): softmax, or log_softmax when ``log``, of
    scale * a, one pass per row (:func:`softmax_row`), ``scale`` of the data's dtype. With ``causal_rows`` > 0, row
    r keeps its first ``r % causal_rows + 1`` entries (rows visited in row-major order)."""
    nd = shape.size
    total = 1
    for d in range(nd):
        total *= shape[d]
    n = np.uint64(length)
    for c in prange(n_chunks):
        r0 = c * per_chunk
        r1 = min(r0 + per_chunk, total)
        index = np.empty(nd, np.int64)
        pos = np.empty(2, np.int64)
        start_positions(r0, shape, strides, index, pos)
        for r in range(r0, r1):
            keep = np.uint64(min(length, r % causal_rows + 1) if causal_rows > 0 else length)
            softmax_row(a, np.uint64(pos[1]), out, np.uint64(pos[0]), n, scale, keep, log)
            advance(index, shape, strides, pos, nd - 1)



@njit(cache=True, error_model="numpy")
def softmax_backward_dense_rows_kernel(grad, y, out, rows, length, log):
    """``softmax_backward_row`` over ``rows`` consecutive rows of ``length`` (all three contiguous, dim last, scale 1):
    ``softmax_backward_kernel``'s arithmetic in a loop that compiles in a fraction of its time."""
    for r in range(rows):
        lo, hi = r * length, (r + 1) * length
        softmax_backward_row(grad[lo:hi], y[lo:hi], out[lo:hi], 1.0, log)


@njit(parallel=threads(PARALLEL), cache=True, error_model="numpy")
def softmax_backward_kernel(grad, y, out, shape, strides, length, sg, sy, so, n_chunks, per_chunk, scale, log):
    """Rows of ``length``: the softmax (``log``: log_softmax) gradient from its result y (``softmax_backward_row``);
    ``strides`` rows are (out, grad, y)."""
    nd = shape.size
    total = 1
    for d in range(nd):
        total *= shape[d]
    unit = sg == 1 and sy == 1 and so == 1
    for c in prange(n_chunks):
        r0 = c * per_chunk
        r1 = min(r0 + per_chunk, total)
        index = np.empty(nd, np.int64)
        pos = np.empty(3, np.int64)
        start_positions(r0, shape, strides, index, pos)
        for _ in range(r0, r1):
            if unit:
                softmax_backward_row(grad[pos[1] : pos[1] + length], y[pos[2] : pos[2] + length],
                                     out[pos[0] : pos[0] + length], scale, log)
            else:
                softmax_backward_row(row(grad, pos[1], length, sg), row(y, pos[2], length, sy),
                                     row(out, pos[0], length, so), scale, log)
            advance(index, shape, strides, pos, nd - 1)



@njit(parallel=threads(PARALLEL), cache=True, error_model="numpy")
def softmax_grad_kernel(grad, y, out, shape, strides, length, n_chunks, per_chunk, scale, log):
    """``softmax_backward_kernel``'s contract for unit-stride rows (``strides`` rows: out, grad, y; ``scale`` of the
    data's dtype), rows addressed by offsets (:func:`log_softmax_grad_row` with ``log``, else
    :func:`softmax_grad_row`): no per-row slices."""
    nd = shape.size
    total = 1
    for d in range(nd):
        total *= shape[d]
    n = np.uint64(length)
    for c in prange(n_chunks):
        r0 = c * per_chunk
        r1 = min(r0 + per_chunk, total)
        index = np.empty(nd, np.int64)
        pos = np.empty(3, np.int64)
        start_positions(r0, shape, strides, index, pos)
        for _ in range(r0, r1):
            gb, yb, ob = np.uint64(pos[1]), np.uint64(pos[2]), np.uint64(pos[0])
            if log:
                log_softmax_grad_row(grad, gb, y, yb, out, ob, n, scale)
            else:
                softmax_grad_row(grad, gb, y, yb, out, ob, n, scale)
            advance(index, shape, strides, pos, nd - 1)


@njit(parallel=threads(PARALLEL), cache=True, error_model="numpy")
def gelu_kernel(x, grad, out, slope, mode, n_chunks, per_chunk):
    """Exact GELU over contiguous data of one dtype, one pass, in chunks of ``per_chunk`` elements. ``mode`` 0:
    out = x Phi(x); 1: that and slope = Phi(x) + x phi(x) (the derivative); 2: out = grad * slope. float32:
    :func:`gauss32` (vectorised); float64: libm's erf (scalar calls)."""
    for c in prange(n_chunks):
        prefer_wide()
        lo = c * per_chunk
        hi = min(lo + per_chunk, x.size)
        gelu_run(x[lo:hi], grad[lo:hi], out[lo:hi], slope[lo:hi], mode)


@njit(parallel=threads(PARALLEL), cache=True, error_model="numpy")
def adam_kernel(p, g, m, v, decay, weight, rest, beta2, gain2, correction2, eps, neg_step, n_chunks, per_chunk,
                decoupled, small):
    """Adam's update of contiguous data of one dtype in place (:func:`adam_run`), in chunks of ``per_chunk``
    elements; the scalars are read from their one-element arrays (the optimizer's per-step values)."""
    for c in prange(n_chunks):
        lo = c * per_chunk
        hi = min(lo + per_chunk, p.size)
        adam_run(p, g, m, v, decay[0], weight[0], rest[0], beta2[0], gain2[0], correction2[0], eps[0], neg_step[0], lo,
                 hi, decoupled, small)


@njit(parallel=threads(PARALLEL), cache=True, error_model="numpy")
def take_rows_kernel(a, index, step, out, width, n_chunks, per_chunk):
    """out row i = a row index[i * step] for contiguous (rows, ``width``) ``a`` and ``out`` (an embedding lookup)."""
    rows = out.size // width
    for c in prange(n_chunks):
        lo = c * per_chunk
        hi = min(lo + per_chunk, rows)
        for i in range(lo, hi):
            src = index[i * step] * width
            dst = i * width
            for k in range(width):
                out[dst + k] = a[src + k]


@njit(cache=True, error_model="numpy")
def add_rows_kernel(src, index, step, out, width):
    """out row index[i * step] += src row i, rows in order (so repeated indices add up in a fixed order), for
    contiguous (rows, ``width``) data of one dtype (an embedding's gradient)."""
    for i in range(src.size // width):
        dst = index[i * step] * width
        at = i * width
        for k in range(width):
            out[dst + k] += src[at + k]
