"""Numba kernel template for the ``fast`` backend.

This file is real, importable Python, but the backend never calls these functions from here:
:mod:`minitensor.backends.fast_codegen` copies this text into one module per (op, compute type)
(rebinding the ``UNARY``/``BINARY``/``REDUCE`` and ``COMPUTE`` names below), so each gets
module-level kernels that Numba can cache on disk (``cache=True``) and a second process loads
instead of compiling.

Calling conventions (all positions are storage offsets in elements, all index arrays int64):

* map and zip are the per-element loops ``map_run`` and ``zip_run`` on raw pointers, compiled as C functions per
  operand dtypes (:func:`minitensor.backends.fast_launch.run_address`) and called by the op-free walkers of
  :mod:`minitensor.backends.fast_walk_kernels`, which own the layouts and the threads.
* row kernels (reduce, scan) walk ``shape`` (the coalesced shape of the row starts, >= 1 dim) with ``strides`` a
  2-D array with one row per operand, ``out`` first. Work is split into ``n_chunks`` chunks of ``per_chunk``
  rows; each chunk finds its start index once with ``to_index`` and then moves position by adding strides: no
  division per element. ``reduce_rows_kernel`` serves folds of rows that follow each other in memory.
* ``map_stream_run``/``zip_stream_run`` are the same loops for contiguous outputs too large for the cache: they
  compute a tile at a time into a small buffer and copy it out with non-temporal stores (the same values).
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

from importlib import import_module
from typing import Any

import numpy as np
from numba import carray, njit, prange
from numba.core.cpu_options import ParallelOptions

from minitensor import operators as _operators
from minitensor.backends import fast_math as _fast_math
from minitensor.backends import fast_math32 as _fast_math32
from minitensor.backends.fast_intrinsics import STREAM_BLOCK, store_fence, stream_copy
from minitensor.tensor_data import index_to_position as _index_to_position
from minitensor.tensor_data import to_index as _to_index

# Rebound per generated module (see fast_codegen.generate_source).
UNARY = "id"
BINARY = "add"
REDUCE = "sum"
COMPUTE = "float64"
# "serial" builds the same kernels without a thread pool (cheaper to compile and to call).
PARALLEL = "parallel"
NO_THREADS = ParallelOptions({option: False for option in ("comprehension", "prange", "numpy", "reduction", "setitem",
                                                           "stencil", "fusion", "inplace_binop")})


def threads(variant: str) -> Any:  # bool or ParallelOptions (njit's stub says bool)
    """The ``njit(parallel=...)`` option of a build: True for the thread-pool build; for the serial one, Numba's
    parallel passes with every transformation off, so that no loop goes to threads (a ``prange`` is a ``range``) but
    the analysis still runs: kernels walking strided layouts run up to 4x faster so than built with ``parallel=False``
    (a zip over rows of 3: 1.5 against 6.1 ms). An options object, not a dict: Numba empties a dict it reads, and
    the next compile of the kernel would then find every transformation on."""
    return True if variant == "parallel" else NO_THREADS


VECTOR_MATH = ("exp", "log", "tanh", "sigmoid", "exp_back", "tanh_back", "sigmoid_back")
"""Operators whose :mod:`minitensor.backends.fast_math` versions replace the ``math``-module ones in kernels."""


def _jit_operators() -> dict:
    """njit every scalar function of the operator modules (``operators.JIT_MODULES``: the operators and the
    elementary and special functions they re-export), resolving their calls to each other in one namespace, with the :data:`VECTOR_MATH`
    names bound to :mod:`minitensor.backends.fast_math` (so other operators calling them get those too)."""
    namespace = {name: value for module in _operators.JIT_MODULES for name, value in vars(import_module(module)).items()}
    for name, value in list(namespace.items()):
        if callable(value) and getattr(value, "__module__", None) in _operators.JIT_MODULES and hasattr(value, "__code__"):
            fn = type(value)(value.__code__, namespace, name, value.__defaults__)
            namespace[name] = njit(inline="never" if name in _operators.OUT_OF_LINE else "always")(fn)
    for name in VECTOR_MATH:
        namespace[name] = getattr(_fast_math, name)
    return namespace


_OPS = _jit_operators()
index_to_position = njit(inline="always")(_index_to_position)
to_index = njit(inline="always")(_to_index)
unary = _OPS[_operators.UNARY_OPS[UNARY].__name__]
# The loops below call ``binary`` at eight sites (``zip_run``) and three (``zip_stream_run``): a called function, compiled
# once per module and inlined by LLVM, instead of Numba inlining its IR at every site, halves their compile time (a
# zip op's loop for one dtype signature: 0.85 -> 0.43 s on average) and runs as fast.
binary = njit(_OPS[_operators.BINARY_OPS[BINARY].__name__].py_func)
fold = _OPS[_operators.REDUCE_OPS[REDUCE][0].__name__]
compute = np.int64 if COMPUTE == "int64" else np.float64  # the type every kernel reads values as
# unary_into(element, out.dtype): unary(compute(element)), or for fast_math's ops into float32 outputs their
# float32-accurate version (computed in float32 when the element is float32 too).
if UNARY in _fast_math.OPS:
    unary_into = _fast_math32.by_output(unary, _fast_math32.FLOAT32_VERSIONS.get(UNARY, unary),
                                        _fast_math32.FLOAT32_NATIVE.get(UNARY), compute)
else:  # the plain call (by_output's overload around a branching op such as div trips Numba's SSA check warning)

    @njit(inline="always")
    def unary_into(x, dtype):  # type: ignore[no-untyped-def]
        return unary(compute(x))
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


@njit(inline="always")
def next_row(index, shape, strides, pos, start):
    """Rewind the innermost dim from ``start`` to 0 and step the odometer to the next row."""
    nd = shape.size
    for j in range(pos.size):
        pos[j] -= start * strides[j, nd - 1]
    index[nd - 1] = 0
    advance(index, shape, strides, pos, nd - 2)


# --- map and zip: the per-element loops ------------------------------------------------------------
# These two are not kernels themselves: each is compiled as a C function (a Numba ``cfunc``) per operand dtypes, and
# the op-free walkers of :mod:`minitensor.backends.fast_walk_kernels` call it by address on runs of memory (a
# contiguous call's chunks, a broadcast call's rows, or blocks they gathered). Every op shares those walkers, so an
# op costs a compile of these short loops only.


@njit(inline="always")
def same_run(x, y):
    """Whether unit-stride runs ``x`` and ``y`` are one run of memory (an in-place call such as ``w.add_(g)``).

    LLVM vectorises a loop over runs that may overlap only after a run-time check that they do not; an in-place
    call fails it and runs scalar (~5x slower). Reading the element through the output run instead leaves one
    read-modify-write run, which vectorises, and reads the same values."""
    return x.ctypes.data == y.ctypes.data and x.dtype == y.dtype


def map_run(out_p, a_p, n, a_len):  # type: ignore[no-untyped-def]
    """out[k] = f(a[k]) for k < ``n`` on runs at these pointers; ``a_len`` 1 (with n > 1): f(a[0]) everywhere."""
    _fast_math.prefer_wide()  # 512-bit vectors where the CPU has them (LLVM's default there is 256): NumPy's width
    out = carray(out_p, n)
    a = carray(a_p, a_len)
    if a_len == 1 and n != 1:
        y = unary_into(a[0], out.dtype)
        for k in range(n):
            out[k] = y
    elif same_run(out, a):
        for k in range(n):
            out[k] = unary_into(out[k], out.dtype)
    else:
        for k in range(n):
            out[k] = unary_into(a[k], out.dtype)


def zip_run(out_p, a_p, b_p, n, a_len, b_len):  # type: ignore[no-untyped-def]
    """out[k] = f(a[k], b[k]) for k < ``n`` on runs at these pointers; an operand of length 1 (with n > 1) is
    broadcast."""
    _fast_math.prefer_wide()
    out = carray(out_p, n)
    a = carray(a_p, a_len)
    b = carray(b_p, b_len)
    if a_len == 1 and b_len == 1 and n != 1:
        z = binary(compute(a[0]), compute(b[0]))
        for k in range(n):
            out[k] = z
    elif b_len == 1 and n != 1:
        y = compute(b[0])
        if same_run(out, a):
            for k in range(n):
                out[k] = binary(compute(out[k]), y)
        else:
            for k in range(n):
                out[k] = binary(compute(a[k]), y)
    elif a_len == 1 and n != 1:
        x = compute(a[0])
        if same_run(out, b):
            for k in range(n):
                out[k] = binary(x, compute(out[k]))
        else:
            for k in range(n):
                out[k] = binary(x, compute(b[k]))
    elif same_run(out, a):
        for k in range(n):
            out[k] = binary(compute(out[k]), compute(b[k]))
    elif same_run(out, b):
        for k in range(n):
            out[k] = binary(compute(a[k]), compute(out[k]))
    else:
        for k in range(n):
            out[k] = binary(compute(a[k]), compute(b[k]))


# Streaming variants of the two loops, for contiguous outputs too large to stay in the cache (the caller,
# fast_plan.elementwise_kernel, picks them): the same values, computed a tile at a time into a buffer that stays in L1 and
# copied out with non-temporal stores, so the output's lines are not first read into the cache.
STREAM_TILE = 1024
"""Elements per tile: 1-8 KB, a whole number of 64-byte lines for every dtype."""


@njit(inline="always")
def stream_head(out, n):
    """How many of ``out``'s first ``n`` elements come before its first 64-byte boundary."""
    misaligned = out.ctypes.data % STREAM_BLOCK
    return min(n, 0 if misaligned == 0 else (STREAM_BLOCK - misaligned) // out.itemsize)


def map_stream_run(out_p, a_p, n, a_len):  # type: ignore[no-untyped-def]
    """``map_run`` on contiguous runs of ``n`` elements (``a_len`` is n), streaming the output. In place too: each
    tile is read before it is written."""
    _fast_math.prefer_wide()
    out = carray(out_p, n)
    a = carray(a_p, n)
    k = stream_head(out, n)
    for j in range(k):
        out[j] = unary_into(a[j], out.dtype)
    tile = np.empty(STREAM_TILE, out.dtype)
    while k + STREAM_TILE <= n:
        src = a[k : k + STREAM_TILE]
        for j in range(STREAM_TILE):
            tile[j] = unary_into(src[j], out.dtype)
        stream_copy(out[k : k + STREAM_TILE], tile)
        k += STREAM_TILE
    out_rest, a_rest = out[k:], a[k:]
    for j in range(n - k):
        out_rest[j] = unary_into(a_rest[j], out.dtype)
    store_fence()


def zip_stream_run(out_p, a_p, b_p, n, a_len, b_len):  # type: ignore[no-untyped-def]
    """``zip_run`` on contiguous runs of ``n`` elements (``a_len`` and ``b_len`` are n), streaming the output (in
    place too)."""
    _fast_math.prefer_wide()
    out = carray(out_p, n)
    a = carray(a_p, n)
    b = carray(b_p, n)
    k = stream_head(out, n)
    for j in range(k):
        out[j] = binary(compute(a[j]), compute(b[j]))
    tile = np.empty(STREAM_TILE, out.dtype)
    while k + STREAM_TILE <= n:
        a_tile, b_tile = a[k : k + STREAM_TILE], b[k : k + STREAM_TILE]
        for j in range(STREAM_TILE):
            tile[j] = binary(compute(a_tile[j]), compute(b_tile[j]))
        stream_copy(out[k : k + STREAM_TILE], tile)
        k += STREAM_TILE
    out_rest, a_rest, b_rest = out[k:], a[k:], b[k:]
    for j in range(n - k):
        out_rest[j] = binary(compute(a_rest[j]), compute(b_rest[j]))
    store_fence()


# --- reduce --------------------------------------------------------------------------------------


@njit(parallel=threads(PARALLEL), cache=True, fastmath=REDUCE_FASTMATH)
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


@njit(parallel=threads(PARALLEL), cache=True, fastmath=REDUCE_FASTMATH)
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


@njit(parallel=threads(PARALLEL), cache=True, fastmath=REDUCE_FASTMATH)
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
        first = 0  # the first run not folded four at a time
        if sa == 1:  # four runs at a time, folded in order: four memory streams in flight (10^7 float64, one thread,
            # Zen 5: 0.8x NumPy -> 1.1-1.4x)
            while first + 4 <= length:
                p = base + first * stride
                r0, r1 = a[p : p + width], a[p + stride : p + stride + width]
                r2, r3 = a[p + 2 * stride : p + 2 * stride + width], a[p + 3 * stride : p + 3 * stride + width]
                for j in range(width):
                    acc[j] = fold(fold(fold(fold(acc[j], compute(r0[j])), compute(r1[j])), compute(r2[j])),
                                  compute(r3[j]))
                first += 4
        for k in range(first, length):
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


@njit(parallel=threads(PARALLEL), cache=True)
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


@njit(parallel=threads(PARALLEL), cache=True)
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
