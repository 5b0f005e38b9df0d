"""Numba kernel template for the ``fast`` backend.

This file is real, importable Python, but the backend never calls these functions from here:
:mod:`minitensor.backends.fast_codegen` copies this text into one module per (op, compute type)
(rebinding the ``UNARY``/``BINARY``/``REDUCE`` and ``COMPUTE`` names below), so each gets
module-level kernels that Numba can cache on disk (``cache=True``) and a second process loads
instead of compiling.

Calling conventions (all positions are storage offsets in elements, all index arrays int64):

* element-wise kernels walk ``shape`` (the coalesced output shape, >= 1 dim) with ``strides`` a
  2-D array with one row per operand, ``out`` first. Work is split into ``n_chunks`` chunks of
  ``rows_per_chunk`` rows (a row is the innermost dim); each chunk finds its start index once
  with ``to_index`` and then moves position by adding strides: no division per element.
* the flat kernels (``map_flat_kernel``, ``zip_flat_kernel``, ``reduce_rows_kernel``) serve calls whose operands
  are one contiguous run each from position 0: they take an element (or row) count instead of a shape and strides,
  and compile in about a quarter of the general kernels' time (most of a cold first run's kernels are these).
* values are read as ``COMPUTE`` (int64 when every input is an integer or bool tensor, else
  float64, like the ``simple`` backend) and converted on store to ``out``'s dtype (to bool:
  nonzero is True; float to int: truncation toward zero).
* unit-stride inner loops index slices, not ``storage[pos + k]``: Numba then needs no negative-index
  check per element and LLVM vectorises the loop.
* ``exp``, ``log``, ``tanh``, ``sigmoid`` and the backward ops built on them come from
  :mod:`minitensor.backends.fast_math` (branch-free, so those loops vectorise too; within an ulp), the other
  scalar functions from :mod:`minitensor.operators`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from minitensor import operators as _operators
from minitensor.backends import fast_math as _fast_math
from minitensor.tensor_data import index_to_position as _index_to_position
from minitensor.tensor_data import to_index as _to_index

# Rebound per generated module (see fast_codegen.generate_source).
UNARY = "id"
BINARY = "add"
REDUCE = "sum"
COMPUTE = "float64"
# "serial" builds the same kernels without a thread pool (cheaper to compile and to call).
PARALLEL = "parallel"


VECTOR_MATH = ("exp", "log", "tanh", "sigmoid", "exp_back", "tanh_back", "sigmoid_back")
"""Operators whose :mod:`minitensor.backends.fast_math` versions replace the ``math``-module ones in kernels."""


def _jit_operators() -> dict:
    """njit every scalar function of :mod:`minitensor.operators`, resolving their calls to each other, with the
    :data:`VECTOR_MATH` names bound to :mod:`minitensor.backends.fast_math` (so other operators calling them get
    those too)."""
    namespace = dict(vars(_operators))
    for name, value in vars(_operators).items():
        if callable(value) and getattr(value, "__module__", None) == _operators.__name__ and hasattr(value, "__code__"):
            fn = type(value)(value.__code__, namespace, name, value.__defaults__)
            namespace[name] = njit(inline="always")(fn)
    for name in VECTOR_MATH:
        namespace[name] = getattr(_fast_math, name)
    return namespace


_OPS = _jit_operators()
index_to_position = njit(inline="always")(_index_to_position)
to_index = njit(inline="always")(_to_index)
unary = _OPS[_operators.UNARY_OPS[UNARY].__name__]
binary = _OPS[_operators.BINARY_OPS[BINARY].__name__]
fold = _OPS[_operators.REDUCE_OPS[REDUCE][0].__name__]
compute = np.int64 if COMPUTE == "int64" else np.float64  # the type every kernel reads values as
# unary_into(element, out.dtype): unary(compute(element)), or for fast_math's ops into float32 outputs their
# float32-accurate version (computed in float32 when the element is float32 too).
if UNARY in _fast_math.OPS:
    unary_into = _fast_math.by_output(unary, _fast_math.FLOAT32_VERSIONS.get(UNARY, unary),
                                      _fast_math.FLOAT32_NATIVE.get(UNARY), compute)
else:  # the plain call (by_output's overload around a branching op such as div trips Numba's SSA check warning)

    @njit(inline="always")
    def unary_into(x, dtype):  # type: ignore[no-untyped-def]
        return unary(compute(x))
vector_hint = _fast_math.prefer_wide if UNARY in _fast_math.OPS else _fast_math.no_hint
FOLD_START = compute(_operators.reduce_start(REDUCE, integer=COMPUTE == "int64"))
# Reassociation only changes a sum or product by float rounding; max/min handle nan, so no fastmath.
REDUCE_FASTMATH = {"reassoc"} if REDUCE in ("sum", "prod") else False


@njit(inline="always")
def advance(index, shape, strides, pos, first_dim):
    """Odometer step over dims ``first_dim``..0 of ``index``, keeping ``pos[j]`` in step for operand j."""
    d = first_dim
    while d >= 0:
        index[d] += 1
        for j in range(pos.size):
            pos[j] += strides[j, d]
        if index[d] < shape[d]:
            return
        for j in range(pos.size):
            pos[j] -= strides[j, d] * shape[d]
        index[d] = 0
        d -= 1


@njit(inline="always")
def start_positions(ordinal, shape, strides, index, pos):
    """Set ``index`` to the ``ordinal``-th index of ``shape`` and ``pos`` to each operand's position."""
    to_index(ordinal, shape, index)
    for j in range(pos.size):
        pos[j] = index_to_position(index, strides[j])


# --- map and zip ---------------------------------------------------------------------------------
# One kernel per op covers every layout: chunks are runs of elements in row-major order of the
# coalesced shape, so a contiguous (or identically strided) call is one flat dim split into chunks
# and takes the unit-stride loop, while broadcast/permuted calls walk rows with the odometer.


@njit(inline="always")
def same_run(x, y):
    """Whether unit-stride runs ``x`` and ``y`` are one run of memory (an in-place call such as ``w.add_(g)``).

    LLVM vectorises a loop over runs that may overlap only after a run-time check that they do not; an in-place
    call fails it and runs scalar (~5x slower). Reading the element through the output run instead leaves one
    read-modify-write run, which vectorises, and reads the same values."""
    return x.ctypes.data == y.ctypes.data and x.dtype == y.dtype


@njit(inline="always")
def next_row(index, shape, strides, pos, start):
    """Rewind the innermost dim from ``start`` to 0 and step the odometer to the next row."""
    nd = shape.size
    for j in range(pos.size):
        pos[j] -= start * strides[j, nd - 1]
    index[nd - 1] = 0
    advance(index, shape, strides, pos, nd - 2)


@njit(parallel=PARALLEL == "parallel", cache=True)
def map_kernel(a, out, shape, strides, n_chunks, per_chunk):
    """out = f(a) over ``shape``; ``strides`` rows are (out, a); chunks hold ``per_chunk`` elements."""
    nd = shape.size
    inner = shape[nd - 1]
    total = 1
    for d in range(nd):
        total *= shape[d]
    so = strides[0, nd - 1]
    sa = strides[1, nd - 1]
    for c in prange(n_chunks):
        vector_hint()
        e = c * per_chunk
        end = min(e + per_chunk, total)
        index = np.empty(nd, np.int64)
        pos = np.empty(2, np.int64)
        start_positions(e, shape, strides, index, pos)
        while e < end:
            start = index[nd - 1]
            run = min(inner - start, end - e)
            po = pos[0]
            pa = pos[1]
            if so == 1 and sa == 1:
                out_run = out[po : po + run]
                a_run = a[pa : pa + run]
                if same_run(out_run, a_run):
                    for k in range(run):
                        out_run[k] = unary_into(out_run[k], out_run.dtype)
                else:
                    for k in range(run):
                        out_run[k] = unary_into(a_run[k], out_run.dtype)
            else:
                for k in range(run):
                    out[po + k * so] = unary_into(a[pa + k * sa], out.dtype)
            e += run
            next_row(index, shape, strides, pos, start)


@njit(parallel=PARALLEL == "parallel", cache=True)
def zip_kernel(a, b, out, shape, strides, n_chunks, per_chunk):
    """out = f(a, b) over ``shape``; ``strides`` rows are (out, a, b); chunks hold ``per_chunk`` elements."""
    nd = shape.size
    inner = shape[nd - 1]
    total = 1
    for d in range(nd):
        total *= shape[d]
    so = strides[0, nd - 1]
    sa = strides[1, nd - 1]
    sb = strides[2, nd - 1]
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
                if same_run(out_run, a_run):
                    for k in range(run):
                        out_run[k] = binary(compute(out_run[k]), compute(b_run[k]))
                elif same_run(out_run, b_run):
                    for k in range(run):
                        out_run[k] = binary(compute(a_run[k]), compute(out_run[k]))
                else:
                    for k in range(run):
                        out_run[k] = binary(compute(a_run[k]), compute(b_run[k]))
            elif so == 1 and sa == 1 and sb == 0:
                out_run = out[po : po + run]
                a_run = a[pa : pa + run]
                y = compute(b[pb])
                if same_run(out_run, a_run):
                    for k in range(run):
                        out_run[k] = binary(compute(out_run[k]), y)
                else:
                    for k in range(run):
                        out_run[k] = binary(compute(a_run[k]), y)
            else:
                for k in range(run):
                    out[po + k * so] = binary(compute(a[pa + k * sa]), compute(b[pb + k * sb]))
            e += run
            next_row(index, shape, strides, pos, start)


# --- map and zip over contiguous operands -------------------------------------------------------
# The flat case of the two kernels above (every operand one contiguous run from element 0, the commonest call):
# about a quarter of their compile time (a cold first run compiles these for most ops), the same loops and values.


@njit(parallel=PARALLEL == "parallel", cache=True)
def map_flat_kernel(a, out, total, n_chunks, per_chunk):
    """out[i] = f(a[i]) for i < ``total``; chunks hold ``per_chunk`` elements."""
    for c in prange(n_chunks):
        vector_hint()
        e = c * per_chunk
        out_run = out[e : min(e + per_chunk, total)]
        a_run = a[e : e + out_run.size]
        if same_run(out_run, a_run):
            for k in range(out_run.size):
                out_run[k] = unary_into(out_run[k], out_run.dtype)
        else:
            for k in range(out_run.size):
                out_run[k] = unary_into(a_run[k], out_run.dtype)


@njit(parallel=PARALLEL == "parallel", cache=True)
def zip_flat_kernel(a, b, out, total, n_chunks, per_chunk):
    """out[i] = f(a[i], b[i]) for i < ``total``; chunks hold ``per_chunk`` elements."""
    for c in prange(n_chunks):
        e = c * per_chunk
        out_run = out[e : min(e + per_chunk, total)]
        a_run = a[e : e + out_run.size]
        b_run = b[e : e + out_run.size]
        if same_run(out_run, a_run):
            for k in range(out_run.size):
                out_run[k] = binary(compute(out_run[k]), compute(b_run[k]))
        elif same_run(out_run, b_run):
            for k in range(out_run.size):
                out_run[k] = binary(compute(a_run[k]), compute(out_run[k]))
        else:
            for k in range(out_run.size):
                out_run[k] = binary(compute(a_run[k]), compute(b_run[k]))


# --- reduce --------------------------------------------------------------------------------------


@njit(parallel=PARALLEL == "parallel", cache=True, fastmath=REDUCE_FASTMATH)
def reduce_inner(a, out, shape, strides, length, stride, n_chunks, per_chunk):
    """One output element per step, folding ``length`` values of ``a`` ``stride`` apart.

    ``shape``/``strides`` (rows: out, a) describe the output elements; chunks hold ``per_chunk`` of them.
    """
    nd = shape.size
    total = 1
    for d in range(nd):
        total *= shape[d]
    for c in prange(n_chunks):
        e0 = c * per_chunk
        e1 = min(e0 + per_chunk, total)
        index = np.empty(nd, np.int64)
        pos = np.empty(2, np.int64)
        start_positions(e0, shape, strides, index, pos)
        for _ in range(e0, e1):
            pa = pos[1]
            acc = FOLD_START
            if stride == 1:
                a_run = a[pa : pa + length]
                for k in range(length):
                    acc = fold(acc, compute(a_run[k]))
            else:
                for k in range(length):
                    acc = fold(acc, compute(a[pa + k * stride]))
            out[pos[0]] = acc
            advance(index, shape, strides, pos, nd - 1)


@njit(parallel=PARALLEL == "parallel", cache=True, fastmath=REDUCE_FASTMATH)
def reduce_rows_kernel(a, out, rows, length, n_chunks, per_chunk):
    """out[r] = the fold of a[r * length : (r + 1) * length] for r < ``rows`` (the flat case of reduce_inner: rows
    that follow each other in ``a``, outputs that follow each other in ``out``); chunks hold ``per_chunk`` rows."""
    for c in prange(n_chunks):
        for r in range(c * per_chunk, min(c * per_chunk + per_chunk, rows)):
            acc = FOLD_START
            a_run = a[r * length : r * length + length]
            for k in range(length):
                acc = fold(acc, compute(a_run[k]))
            out[r] = acc


@njit(parallel=PARALLEL == "parallel", cache=True, fastmath=REDUCE_FASTMATH)
def reduce_outer(a, out, outer_shape, outer_strides, inner, so, sa, length, stride, tile):
    """Fold along a dim that is not the innermost: the inner loop runs along the output's last dim.

    Output is ``outer_shape`` (rows: out, a strides) times a last dim of ``inner`` elements with
    strides ``so``/``sa``; it is split into tiles of ``tile`` elements, each accumulated in a buffer.
    """
    nd = outer_shape.size
    n_rows = 1
    for d in range(nd):
        n_rows *= outer_shape[d]
    n_tiles = (inner + tile - 1) // tile
    for t in prange(n_rows * n_tiles):
        row = t // n_tiles
        j0 = (t - row * n_tiles) * tile
        width = min(tile, inner - j0)
        index = np.empty(nd, np.int64)
        pos = np.empty(2, np.int64)
        start_positions(row, outer_shape, outer_strides, index, pos)
        acc = np.full(width, FOLD_START)
        base = pos[1] + j0 * sa
        for k in range(length):
            p = base + k * stride
            if sa == 1:
                a_run = a[p : p + width]
                for j in range(width):
                    acc[j] = fold(acc[j], compute(a_run[j]))
            else:
                for j in range(width):
                    acc[j] = fold(acc[j], compute(a[p + j * sa]))
        po = pos[0] + j0 * so
        for j in range(width):
            out[po + j * so] = acc[j]


@njit(parallel=PARALLEL == "parallel", cache=True)
def scan_kernel(a, out, shape, strides, length, sa, so, n_chunks, per_chunk):
    """Inclusive prefix fold along rows of ``length`` values (strides ``sa`` in a, ``so`` in out).

    ``shape``/``strides`` (rows: out, a) describe the row starts; chunks hold ``per_chunk`` rows. Each
    value is read before its output is written, so ``out`` may be ``a`` itself.
    """
    nd = shape.size
    total = 1
    for d in range(nd):
        total *= shape[d]
    for c in prange(n_chunks):
        e0 = c * per_chunk
        e1 = min(e0 + per_chunk, total)
        index = np.empty(nd, np.int64)
        pos = np.empty(2, np.int64)
        start_positions(e0, shape, strides, index, pos)
        for _ in range(e0, e1):
            po = pos[0]
            pa = pos[1]
            acc = FOLD_START
            for k in range(length):
                acc = fold(acc, compute(a[pa + k * sa]))
                out[po + k * so] = acc
            advance(index, shape, strides, pos, nd - 1)


# --- matmul --------------------------------------------------------------------------------------


@njit(inline="always")
def batch_positions(batch, batch_shape, batch_strides, pos):
    """Positions of the ``batch``-th matrix of each operand (rows of ``batch_strides``: out, a, b)."""
    index = np.empty(batch_shape.size, np.int64)
    start_positions(batch, batch_shape, batch_strides, index, pos)


@njit(parallel=PARALLEL == "parallel", cache=True)
def matmul_tiled(a, b, out, batch_shape, batch_strides, mat_strides, m, k, n, tile_m, tile_n):
    """General strided batched matmul, parallel over (batch, row tile, column tile).

    ``mat_strides`` rows are (out, a, b), columns (row stride, column stride) of each matrix.
    """
    n_batches = 1
    for d in range(batch_shape.size):
        n_batches *= batch_shape[d]
    tiles_m = (m + tile_m - 1) // tile_m
    tiles_n = (n + tile_n - 1) // tile_n
    som, son = mat_strides[0, 0], mat_strides[0, 1]
    sam, sak = mat_strides[1, 0], mat_strides[1, 1]
    sbk, sbn = mat_strides[2, 0], mat_strides[2, 1]
    for t in prange(n_batches * tiles_m * tiles_n):
        batch = t // (tiles_m * tiles_n)
        rest = t - batch * tiles_m * tiles_n
        i0 = (rest // tiles_n) * tile_m
        j0 = (rest - (rest // tiles_n) * tiles_n) * tile_n
        rows = min(tile_m, m - i0)
        cols = min(tile_n, n - j0)
        pos = np.empty(3, np.int64)
        batch_positions(batch, batch_shape, batch_strides, pos)
        acc = np.zeros((rows, cols), compute)
        for kk in range(k):
            pb = pos[2] + kk * sbk + j0 * sbn
            for i in range(rows):
                x = compute(a[pos[1] + (i0 + i) * sam + kk * sak])
                if sbn == 1:
                    b_run = b[pb : pb + cols]
                    acc_row = acc[i]
                    for j in range(cols):
                        acc_row[j] += x * compute(b_run[j])
                else:
                    for j in range(cols):
                        acc[i, j] += x * compute(b[pb + j * sbn])
        for i in range(rows):
            po = pos[0] + (i0 + i) * som + j0 * son
            for j in range(cols):
                out[po + j * son] = acc[i, j]
