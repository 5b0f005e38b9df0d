"""Numba kernels of the ``fast`` backend for torch eager's composite ops: layer_norm forward and backward (one pass
per row instead of a chain of element-wise kernels), softmax / log_softmax in one pass per row (scale, causal mask,
row max, exp, sum, normalize, with :mod:`minitensor.backends.fast_math`'s exp, which vectorises) and the exact GELU
(one element-wise pass; float32 computed in float32).

Copied by :mod:`minitensor.backends.fast_codegen` into the fingerprinted cache directory (family "fused") and
imported from there, like :mod:`minitensor.backends.fast_extra_kernels`, so the compiled code is cached on disk.
The older row kernels read values as float64 and convert on store to the output's dtype; arithmetic follows IEEE (``error_model=
"numpy"``: x / 0 is inf or NaN, never an exception).

Row kernels walk rows along the last dim: ``shape``/``strides`` describe the coalesced other dims (one row of strides
per operand), chunks hold ``per_chunk`` rows, and the per-operand stride along the row (>= 1, the caller copies
other layouts) is passed separately. A row is handed to a helper as a 1-D slice, unit-stride when every operand is,
so LLVM vectorizes the common contiguous case. One thread does a whole row.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange, types
from numba.core.extending import overload

from minitensor.backends.fast_intrinsics import as_bits, fdiv32, fma, from_bits, select
from minitensor.backends.fast_kernels import advance, start_positions
from minitensor.backends.fast_math import by_output, exp, exp32, exp_f32, prefer_wide

# Rebound to "serial" for the thread-pool-free build (see fast_codegen).
PARALLEL = "parallel"
ERFCX_P = 0.328125  # 21/64: exact in float32 too
ERFCX_T = (0.011294474486095185, -0.010597687902552444, -0.13890623883066364, 0.35209562216419815,
           -0.29005296018072085, 0.32439270723065516, 0.02766229802706891, 0.18320631948162613, 0.1701676693078436,
           0.1856359877226791, 0.18510180999207218)
"""erfc(z) e^(z^2) ~ t P(t), t = 1 / (1 + ERFCX_P z), P's coefficients highest first: a weighted least-squares fit
(Lawson iterations towards minimax) of the relative error over 0 <= z <= 10, where it is below 1.6e-9."""
INV_SQRT_2PI = 0.3989422804014327
SQRT1_2 = 0.7071067811865476
exp_into = by_output(exp, exp32, exp_f32, np.float64)
"""exp_into(x, out.dtype): exp_f32 for float32 data into float32, else the float64 exp."""
MAG = 0x7FFFFFFFFFFFFFFF  # a float64's bits but the sign
BLOCK, BLOCK_M1 = np.uint64(16), np.uint64(15)  # exp_row's block: 16 float32 (or 2 x 8 float64) lanes (unsigned:
# uint64 - int64 is float64 in Numba)
ROW_FASTMATH = {"reassoc", "contract", "nsz", "arcp"}
"""Row sums may be reordered (vectorized); NaN and inf keep their IEEE meaning (no "nnan"/"ninf")."""


@njit(inline="always")
def row(values, start, length, step):
    """The ``length`` elements of ``values`` from ``start`` on, ``step`` apart (``step`` >= 1)."""
    if step == 1:
        return values[start : start + length]
    return values[start : start + (length - 1) * step + 1 : step]


def at(k, step):  # type: ignore[no-untyped-def]
    """Offset of element k of a row: ``k * step``, or ``k`` when ``step`` is None (unit stride, known to LLVM)."""


@overload(at, inline="always")
def _at(k, step):  # type: ignore[no-untyped-def]
    if isinstance(step, types.NoneType):
        return lambda k, step: k
    return lambda k, step: k * step


@njit(error_model="numpy", fastmath=ROW_FASTMATH)
def layer_norm_row(x, xb, sx, w, b, out, ob, so, n, eps, has_weight, has_bias):
    """Normalize the row of n at x[xb + at(k, sx)]: returns (mean, rstd) and writes (x - mean) rstd w + b into
    out[ob + at(k, so)] (rows addressed by unsigned offsets, not slices: see the one-pass softmax below)."""
    acc = 0.0
    for k in range(n):
        acc += x[xb + at(k, sx)]
    mu = acc / n
    acc = 0.0
    for k in range(n):
        d = x[xb + at(k, sx)] - mu
        acc += d * d
    r = 1.0 / math.sqrt(acc / n + eps)
    for k in range(n):
        v = (x[xb + at(k, sx)] - mu) * r
        if has_weight:
            v *= w[k]
        if has_bias:
            v += b[k]
        out[ob + at(k, so)] = v
    return mu, r


@njit(parallel=PARALLEL == "parallel", cache=True, error_model="numpy")
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


@njit(error_model="numpy", fastmath=ROW_FASTMATH)
def layer_norm_backward_row(g, gb, sg, x, xb, sx, w, gi, ib, si, n, mu, r, partial, has_weight, need_input,
                            need_params):
    """One row of n of the layer_norm backward (rows addressed as in ``layer_norm_row``): gi = r (h - mean(h) -
    xhat mean(h xhat)) with h = g w, xhat = (x - mu) r; adds g xhat and g into ``partial[0]`` and ``partial[1]``."""
    m1 = 0.0
    m2 = 0.0
    for k in range(n):
        gk = g[gb + at(k, sg)]
        xhat = (x[xb + at(k, sx)] - mu) * r
        h = gk * w[k] if has_weight else np.float64(gk)
        m1 += h
        m2 += h * xhat
        if need_params:
            partial[0, k] += gk * xhat
            partial[1, k] += gk
    if need_input:
        m1 /= n
        m2 /= n
        for k in range(n):
            gk = g[gb + at(k, sg)]
            xhat = (x[xb + at(k, sx)] - mu) * r
            h = gk * w[k] if has_weight else np.float64(gk)
            gi[ib + at(k, si)] = r * (h - m1 - xhat * m2)


@njit(parallel=PARALLEL == "parallel", cache=True, error_model="numpy")
def layer_norm_backward_kernel(grad, a, mean, rstd, weight, grad_input, partials, shape, strides, length, sg, sa, sgi,
                               n_chunks, per_chunk, has_weight, need_input, need_params):
    """Rows of ``length``: the layer_norm gradients (see ``layer_norm_backward_row``); ``strides`` rows are
    (grad_input, grad, a, mean, rstd). Chunk c adds its rows' g * xhat and g into ``partials[c]`` (float64, zeroed by
    the caller, who sums them into the weight and bias gradients)."""
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
        partial = partials[c]
        for _ in range(r0, r1):
            mu = np.float64(mean[pos[3]])
            r = np.float64(rstd[pos[4]])
            gb, ab, ib = np.uint64(pos[1]), np.uint64(pos[2]), np.uint64(pos[0])
            if unit:
                layer_norm_backward_row(grad, gb, None, a, ab, None, weight, grad_input, ib, None, n, mu, r, partial,
                                        has_weight, need_input, need_params)
            else:
                layer_norm_backward_row(grad, gb, ug, a, ab, ua, weight, grad_input, ib, ui, n, mu, r, partial,
                                        has_weight, need_input, need_params)
            advance(index, shape, strides, pos, nd - 1)


@njit(error_model="numpy")
def softmax_shift_row(x, out, scale, keep):
    """out = scale * x - max over the first ``keep`` entries, -inf after them (NaN entries do not count for the max:
    they make their row NaN later anyway; a row whose max is +-inf becomes NaN as inf - inf)."""
    top = -np.inf
    for k in range(keep):
        v = scale * x[k]
        if v > top:
            top = v
    if top == np.inf or top == -np.inf:
        top = np.nan
    for k in range(keep):
        out[k] = scale * x[k] - top
    for k in range(keep, x.size):
        out[k] = -np.inf


@njit(error_model="numpy", fastmath=ROW_FASTMATH)
def finish_row(o, log):
    """A shifted row ``o`` (entries <= 0) becomes exp(o) / sum(exp(o)), or o - log(sum(exp(o))) when ``log``."""
    acc = 0.0
    if log:
        for k in range(o.size):
            acc += math.exp(o[k])
        lse = math.log(acc)
        for k in range(o.size):
            o[k] = o[k] - lse
        return
    for k in range(o.size):
        e = math.exp(o[k])
        o[k] = e
        acc += o[k]
    inv = 1.0 / acc
    for k in range(o.size):
        o[k] = o[k] * inv


@njit(parallel=PARALLEL == "parallel", cache=True, error_model="numpy")
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


# --- one-pass softmax over unit-stride rows, addressed by unsigned offsets (no per-row slices: Numba's reference
# counting of a slice costs more than a 64-wide row of work; unsigned indices skip the negative-index check, so the
# loops vectorise).


def like(value, array):  # type: ignore[no-untyped-def]
    """``value`` converted to ``array``'s dtype (float32 or float64), in jitted code."""


@overload(like, inline="always")
def _like(value, array):  # type: ignore[no-untyped-def]
    if array.dtype == types.float32:
        return lambda value, array: np.float32(value)
    return lambda value, array: np.float64(value)


@njit(error_model="numpy")
def scaled_max(x, base, scale, keep):
    """max of scale * x[base + k] over k < keep, as float64 (its bits ordered as integers, a reduction that
    vectorises: a positive NaN counts as the largest value, a negative one as the smallest)."""
    prefer_wide()
    m = -MAG - 1
    for k in range(keep):
        b = as_bits(np.float64(scale * x[base + k]))
        m = max(m, b ^ ((b >> 63) & MAG))
    return from_bits(m ^ ((m >> 63) & MAG))


@njit(error_model="numpy")
def exp_row(x, xb, out, ob, scale, neg, keep, span):
    """out[k] = exp(scale x[k] + neg) for k < keep and 0 for keep <= k < span (whole blocks of 16, so the vector
    loop runs without a scalar remainder in causal rows)."""
    prefer_wide()
    zero = like(0.0, out)
    for k in range(span):
        e = exp_into(fma(x[xb + k], scale, neg), out.dtype)
        out[ob + k] = select(k < keep, e, zero)


@njit(error_model="numpy", fastmath=ROW_FASTMATH)
def sum_row(o, ob, span):
    """The sum of o[ob + k] for k < span (float64, reassociated: vectorised)."""
    prefer_wide()
    acc = 0.0
    for k in range(span):
        acc += o[ob + k]
    return acc


@njit(error_model="numpy")
def softmax_row(x, xb, out, ob, length, scale, keep, log):
    """One row: out = softmax(scale x) over its first ``keep`` entries (0 after them), or log_softmax (-inf)."""
    prefer_wide()
    top = scaled_max(x, xb, scale, keep)
    top = top + (top - top)  # nan for a row whose max is +-inf or nan (inf - inf)
    neg = like(-top, x)
    span = min(length, (keep + BLOCK_M1) // BLOCK * BLOCK)
    exp_row(x, xb, out, ob, scale, neg, keep, span)
    acc = sum_row(out, ob, span)
    if log:
        lse = math.log(acc)
        for k in range(keep):
            out[ob + k] = fma(x[xb + k], scale, neg) - lse
        fill = -np.inf
    else:
        inv = like(1.0 / acc, out)
        for k in range(span):
            out[ob + k] = out[ob + k] * inv
        fill = 0.0
    for k in range(keep if log else span, length):
        out[ob + k] = fill


@njit(parallel=PARALLEL == "parallel", cache=True, error_model="numpy")
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


@njit(error_model="numpy", fastmath=ROW_FASTMATH)
def softmax_backward_row(g, y, out, scale, log):
    """out = scale * y * (g - sum(g y)) for one row of softmax's result y; with ``log`` (y is log_softmax's result)
    out = scale * (g - exp(y) sum(g))."""
    acc = 0.0
    if log:
        for k in range(y.size):
            acc += g[k]
        for k in range(y.size):
            out[k] = scale * (g[k] - math.exp(y[k]) * acc)
        return
    for k in range(y.size):
        acc += g[k] * y[k]
    for k in range(y.size):
        out[k] = scale * y[k] * (g[k] - acc)


@njit(cache=True, error_model="numpy")
def softmax_backward_dense_rows_kernel(grad, y, out, rows, length, log):
    """``softmax_backward_row`` over ``rows`` consecutive rows of ``length`` (all three contiguous, dim last, scale 1):
    ``softmax_backward_kernel``'s arithmetic in a loop that compiles in a fraction of its time."""
    for r in range(rows):
        lo, hi = r * length, (r + 1) * length
        softmax_backward_row(grad[lo:hi], y[lo:hi], out[lo:hi], 1.0, log)


@njit(parallel=PARALLEL == "parallel", cache=True, error_model="numpy")
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


@njit(error_model="numpy", fastmath=ROW_FASTMATH)
def sum_of(g, gb, n):
    """sum(g) over the row of n at g[gb:] (float64, reassociated: vectorised)."""
    prefer_wide()
    acc = 0.0
    for k in range(n):
        acc += g[gb + k]
    return acc


@njit(error_model="numpy")
def log_softmax_grad_row(g, gb, y, yb, out, ob, n, scale):
    """out = scale (g - exp(y) sum(g)) over a row of log_softmax's result y (exp vectorised, unlike libm's)."""
    prefer_wide()
    acc = like(sum_of(g, gb, n), out)
    for k in range(n):
        out[ob + k] = scale * (g[gb + k] - exp_into(y[yb + k], out.dtype) * acc)


@njit(parallel=PARALLEL == "parallel", cache=True, error_model="numpy")
def log_softmax_grad_kernel(grad, y, out, shape, strides, length, n_chunks, per_chunk, scale):
    """``softmax_backward_kernel``'s contract with ``log`` for unit-stride rows (``strides`` rows: out, grad, y;
    ``scale`` of the data's dtype), rows addressed by offsets (:func:`log_softmax_grad_row`). (softmax's own backward
    stays with ``softmax_backward_kernel``: measured as fast or faster there.)"""
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
            log_softmax_grad_row(grad, np.uint64(pos[1]), y, np.uint64(pos[2]), out, np.uint64(pos[0]), n, scale)
            advance(index, shape, strides, pos, nd - 1)


F32 = np.float32
F_ERFCX_T = tuple(F32(c) for c in ERFCX_T)
F_ONE, F_HALF, F_ZERO, F_P, F_SQRT1_2 = F32(1.0), F32(0.5), F32(0.0), F32(ERFCX_P), F32(SQRT1_2)
F_INV_SQRT_2PI, F_H_MAX, F_Z_MAX = F32(INV_SQRT_2PI), F32(208.0), F32(30.0)


@njit(error_model="numpy")
def gauss32(x):
    """(Phi(x), phi(x)) for float32 ``x`` in float32 (16 SIMD lanes), branch-free: Phi(-|x|) = e t P(t) / 2 with
    e = exp(-x^2 / 2) (x^2 split exactly by an fma, so e is good to ~1 ulp), z = |x| / sqrt 2 and
    t = 1 / (1 + ERFCX_P z) (:data:`ERFCX_T`). e is 0 for x^2 > 208, where Phi(-|x|) underflows float32 (so
    GELU(-inf) is nan, as in torch). Measured: x Phi(x) within 6 ulp of the exact value (0.54 ulp on average)."""
    h = x * x
    e = exp_f32(-F_HALF * h)
    e = fma(-F_HALF * fma(x, x, -h), e, e)  # e^(-(h + lo) / 2) = e^(-h / 2) (1 - lo / 2)
    e = select(h > F_H_MAX, F_ZERO, e)
    z = abs(x) * F_SQRT1_2
    t = fdiv32(F_ONE, fma(F_P, select(z > F_Z_MAX, F_Z_MAX, z), F_ONE))  # (nan passes)
    q = fma(F_ERFCX_T[0], t, F_ERFCX_T[1])
    q = fma(q, t, F_ERFCX_T[2])
    q = fma(q, t, F_ERFCX_T[3])
    q = fma(q, t, F_ERFCX_T[4])
    q = fma(q, t, F_ERFCX_T[5])
    q = fma(q, t, F_ERFCX_T[6])
    q = fma(q, t, F_ERFCX_T[7])
    q = fma(q, t, F_ERFCX_T[8])
    q = fma(q, t, F_ERFCX_T[9])
    q = fma(q, t, F_ERFCX_T[10])
    tail = F_HALF * e * t * q
    return select(x >= F_ZERO, F_ONE - tail, tail), e * F_INV_SQRT_2PI


@njit(error_model="numpy")
def gauss_exact(v):
    """(Phi(v), phi(v)) by libm's erf and exp (float64), Phi as PyTorch writes it, 0.5 (1 + erf(v / sqrt 2)), so
    float64 values are PyTorch's to rounding (its 1 + erf rounds to 0 below v ~ -8.3, where erfc would keep the tiny
    true value: PyTorch's -0.0 at v = -30, not -1.5e-196)."""
    return 0.5 * (1.0 + math.erf(v * SQRT1_2)), math.exp(-0.5 * v * v) * INV_SQRT_2PI


gauss = by_output(gauss_exact, gauss_exact, gauss32, np.float64)
"""gauss(x, out.dtype): gauss32 for float32 data into float32, else gauss_exact."""


@njit(error_model="numpy")
def gelu_run(x, grad, out, slope, mode):
    """:func:`gelu_kernel` over one run (one loop per mode, so each vectorises)."""
    prefer_wide()  # (per function: LLVM vectorises each before inlining it)
    if mode == 0:
        for i in range(x.size):
            cdf, pdf = gauss(x[i], out.dtype)
            out[i] = x[i] * cdf
    elif mode == 1:
        for i in range(x.size):
            cdf, pdf = gauss(x[i], out.dtype)
            out[i] = x[i] * cdf
            slope[i] = fma(x[i], pdf, cdf)
    else:
        for i in range(x.size):
            cdf, pdf = gauss(x[i], out.dtype)
            out[i] = grad[i] * fma(x[i], pdf, cdf)


@njit(parallel=PARALLEL == "parallel", cache=True, error_model="numpy")
def gelu_kernel(x, grad, out, slope, mode, n_chunks, per_chunk):
    """Exact GELU over contiguous data of one dtype, one pass, in chunks of ``per_chunk`` elements. ``mode`` 0:
    out = x Phi(x); 1: that and slope = Phi(x) + x phi(x) (the derivative); 2: out = grad * slope. float32:
    :func:`gauss32` (vectorised); float64: libm's erf (scalar calls)."""
    for c in prange(n_chunks):
        prefer_wide()
        lo = c * per_chunk
        hi = min(lo + per_chunk, x.size)
        gelu_run(x[lo:hi], grad[lo:hi], out[lo:hi], slope[lo:hi], mode)
