"""Row and run helpers of the ``fast`` backend's fused kernels (:mod:`minitensor.backends.fast_fused_kernels`): the
work on one row of layer_norm (forward, backward) and softmax (the older strided rows, and the one-pass unit-stride
rows addressed by unsigned offsets), and the exact GELU's Phi/phi over one run (float32 in float32, vectorised).

Not a template: the fused kernel module (copied into the kernel cache by :mod:`minitensor.backends.fast_codegen`)
imports these, and the cache fingerprint hashes this file, as it does :mod:`minitensor.backends.fast_math`. Each
helper is compiled where a kernel first calls it; LLVM vectorises a helper before inlining it, so those that loop ask
for wide vectors themselves (``prefer_wide``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.core.extending import overload

from minitensor.backends.fast_intrinsics import as_bits, fdiv, fma, from_bits, select
from minitensor.backends.fast_math import exp, prefer_wide
from minitensor.backends.fast_math32 import by_output, exp32, exp_f32

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


@njit(error_model="numpy", fastmath=ROW_FASTMATH)
def layer_norm_backward_row(g, gb, sg, x, xb, sx, w, gi, ib, si, n, mu, r, p_weight, p_bias, has_weight, need_input,
                            need_params):
    """One row of n of the layer_norm backward (rows addressed as in ``layer_norm_row``): gi = r (h - mean(h) -
    xhat mean(h xhat)) with h = g w, xhat = (x - mu) r; adds g xhat and g into the 1-D ``p_weight`` and ``p_bias``
    (1-D rows, not one 2-D array: indexing a 2-D array kept the loop from vectorising, 2.5x slower)."""
    prefer_wide()
    m1 = 0.0
    m2 = 0.0
    for k in range(n):
        gk = g[gb + at(k, sg)]
        xhat = (x[xb + at(k, sx)] - mu) * r
        h = gk * w[k] if has_weight else np.float64(gk)
        m1 += h
        m2 += h * xhat
        if need_params:
            p_weight[k] += gk * xhat
            p_bias[k] += gk
    if need_input:
        m1 /= n
        m2 /= n
        for k in range(n):
            gk = g[gb + at(k, sg)]
            xhat = (x[xb + at(k, sx)] - mu) * r
            h = gk * w[k] if has_weight else np.float64(gk)
            gi[ib + at(k, si)] = r * (h - m1 - xhat * m2)


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
    """The sum of o[ob + k] for k < span (float64, reassociated: vectorised): a row's sum, and a gradient row's."""
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


@njit(error_model="numpy", fastmath=ROW_FASTMATH)
def dot_row(g, gb, y, yb, n):
    """The sum of g[gb + k] y[yb + k] for k < n (float64, reassociated: vectorised)."""
    prefer_wide()
    acc = 0.0
    for k in range(n):
        acc += np.float64(g[gb + k]) * np.float64(y[yb + k])
    return acc


@njit(error_model="numpy")
def softmax_grad_row(g, gb, y, yb, out, ob, n, scale):
    """out = scale y (g - sum(g y)) over a unit-stride row of softmax's result y, in the data's dtype after the
    float64 dot product (vectorised; :func:`softmax_backward_row` reads slices and works in float64)."""
    prefer_wide()
    acc = like(dot_row(g, gb, y, yb, n), out)
    for k in range(n):
        out[ob + k] = scale * y[yb + k] * (g[gb + k] - acc)


@njit(error_model="numpy")
def log_softmax_grad_row(g, gb, y, yb, out, ob, n, scale):
    """out = scale (g - exp(y) sum(g)) over a row of log_softmax's result y (exp vectorised, unlike libm's)."""
    prefer_wide()
    acc = like(sum_row(g, gb, n), out)
    for k in range(n):
        out[ob + k] = scale * (g[gb + k] - exp_into(y[yb + k], out.dtype) * acc)


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
    t = fdiv(F_ONE, fma(F_P, select(z > F_Z_MAX, F_Z_MAX, z), F_ONE))  # (nan passes)
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


@njit(error_model="numpy")
def adam_run(p, g, m, v, decay, weight, rest, beta2, gain2, correction2, eps, neg_step, lo, hi, decoupled, small):
    """One run [lo, hi) of Adam's update in place, each operation rounded to the data's dtype in the order of the
    optimizer's element-wise calls (so the same bits): p *= decay (``decoupled``); m = lerp(m, g); v = v beta2 +
    (g gain2) g; p += (m neg_step) / (sqrt(v) / correction2 + eps)."""
    prefer_wide()
    for i in range(lo, hi):
        gi = g[i]
        diff = gi - m[i]
        mi = m[i] + diff * weight if small else gi - diff * rest
        m[i] = mi
        vi = v[i] * beta2 + (gi * gain2) * gi
        v[i] = vi
        pi = p[i] * decay if decoupled else p[i]
        p[i] = pi + (mi * neg_step) / (np.sqrt(vi) / correction2 + eps)
