"""The ``fast`` backend's map and zip kernels: op-free walkers that call an op's loop by address.

An element-wise call is two things: walking the layout (chunks for the threads, rows of a broadcast or permuted
view, an odometer over the outer dims) and the per-element loop of one op. The walkers here do the first and are
compiled once for every op (the flat ones once per operand dtypes); the op's loop (``map_run``/``zip_run`` of the template
:mod:`minitensor.backends.fast_kernels`, compiled as a C function) is passed in as ``run``, an address, and called
on runs of memory: a compile per op is then a few short loops instead of a whole parallel kernel (a cold test run
compiled ~200 of those, ~3.4 s each). Like :mod:`minitensor.backends.fast_extra_kernels` this file is copied by
:mod:`minitensor.backends.fast_codegen` into the kernel cache directory (family "walk"), so Numba caches it on disk.

How a call's memory reaches ``run``, per chunk (``n_chunks`` chunks of ``per_chunk`` elements, a thread each):

* flat kernels (every operand one contiguous run from element 0): one call on the chunk.
* general kernels walk ``shape`` (the coalesced output shape) with ``strides`` (one row per operand, ``out``
  first). A row of at least ``LONG`` elements is called on directly where an operand steps by 1 (or 0: a
  broadcast element, passed with length 1); other operands are first gathered into a buffer (a transposed one 8
  rows at a time, by 8 x 8 block transposes: :data:`GROUP`), and a strided ``out`` is written from one. Shorter
  rows are gathered ``BLOCK`` elements at a time, across rows, so that a tensor of rows of 3 costs one call per
  block, not per row.

The general kernels only move elements, never look at them: they take every storage as its bytes (a ``uint8`` view,
made by :func:`minitensor.backends.fast_plan.bytes_of`) with the operands' item sizes, and copy elements as unsigned
integers of that width. So one compiled general walker serves every dtype combination (a cold test run compiled 74
typed ones, one per dtype signature and build, ~2.9 s each; one on bytes takes ~4.6 s), and a copy keeps every bit
(nan payloads too). ``run`` reads the gathered elements through its own types.

Every element is read once before its output is written and each output element is written once, so the values
are those of one loop over the elements: the same bits as the op's loop on contiguous data.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from minitensor.backends.fast_intrinsics import call_function, element_pointer, transpose8
from minitensor.backends.fast_kernels import next_row, start_positions, threads
from minitensor.backends.layout import ROW_GROUP

# Rebound to "serial" for the thread-pool-free build (see fast_codegen).
PARALLEL = "parallel"
BLOCK = 1024
"""Elements per gathered block (a few KB per operand: it stays in L1)."""
LONG = 32
"""Rows at least this long are called on row by row; shorter ones are gathered into blocks."""
GROUP, GROUP_WIDTH = ROW_GROUP, 256
"""A transposed operand (one that steps 1 along the next-outer dim and more along the row) of 4- or 8-byte elements is
gathered GROUP whole rows at a time (rows at least 8 long), GROUP_WIDTH columns at a time, by 8 x 8 block
transposes (:func:`transpose8`): a vector load per 8 elements instead of a scalar load each; such layouts' chunks hold
whole groups (:func:`layout.element_align`). (10^7 float64, one operand transposed, one thread, on a Zen 5 EPYC: map
36 -> 14 ms, zip 40 -> 17.4 ms, NumPy 17-20 ms.)"""


@njit(inline="always")
def copy_elements(source, position, stride, n, target, at, step):
    """target[at + k * step] = source[position + k * stride] for k < n."""
    for k in range(n):
        target[at + k * step] = source[position + k * stride]


@njit  # called, not inlined: compiled once for the kernels' six call sites
def move(size, source, position, stride, n, target, at, step):
    """Copy the n elements of ``size`` bytes at element ``position``, ``stride`` apart, of the byte array ``source`` to
    element ``at``, ``step`` apart, of the byte array ``target``, as unsigned integers of that width (bits unchanged)."""
    if size == 8:
        copy_elements(source.view(np.uint64), position, stride, n, target.view(np.uint64), at, step)
    elif size == 4:
        copy_elements(source.view(np.uint32), position, stride, n, target.view(np.uint32), at, step)
    elif size == 2:
        copy_elements(source.view(np.uint16), position, stride, n, target.view(np.uint16), at, step)
    else:
        copy_elements(source, position, stride, n, target, at, step)


@njit(inline="always")
def gather(size, source, position, stride, n, buffer, at):
    """Elements at..at+n of ``buffer`` = the n elements of ``source`` from ``position``, ``stride`` apart. (``at`` and
    the step go to ``move`` as int64s, here and in :func:`scatter`: a constant would compile another ``move`` for its
    literal type.)"""
    move(size, source, position, stride, n, buffer, np.int64(at), np.int64(1))


@njit(inline="always")
def transpose_rows(source, position, stride, n, target):
    """Row r < 8 of ``target`` (n elements each, one after another) = the n elements of ``source`` from ``position + r``,
    ``stride`` apart: 8 x 8 blocks, then the last n % 8 columns one element at a time."""
    c = 0
    while c + 8 <= n:
        transpose8(source, position + c * stride, stride, target, c, n)
        c += 8
    for k in range(c, n):
        for r in range(8):
            target[r * n + k] = source[position + k * stride + r]


@njit  # called, not inlined, like move
def gather_group(size, source, position, stride, n, buffer):
    """Rows r < GROUP of ``buffer`` (n elements each) = the n elements of the byte array ``source`` from element
    ``position + r``, ``stride`` apart, for 4- or 8-byte elements (:func:`groups_rows`)."""
    if size == 8:
        transpose_rows(source.view(np.uint64), position, stride, n, buffer.view(np.uint64))
    else:
        transpose_rows(source.view(np.uint32), position, stride, n, buffer.view(np.uint32))


@njit(inline="always")
def groups_rows(size, strides, operand, nd):
    """Whether the walkers gather ``operand``'s rows GROUP at a time (:data:`GROUP`): 4- or 8-byte elements, stepping 1
    along the next-outer dim and neither 0 nor 1 along the row."""
    if nd < 2 or (size != 8 and size != 4):
        return False
    along = strides[operand, nd - 1]
    return strides[operand, nd - 2] == 1 and along != 0 and along != 1


@njit(inline="always")
def group_fits(index, shape, e, end):
    """Whether GROUP whole rows from the start of the current one lie in this chunk and in the next-outer dim, and are
    at least 8 long (they are gathered GROUP_WIDTH columns at a time)."""
    nd = shape.size
    width = shape[nd - 1]
    return index[nd - 1] == 0 and width >= 8 and index[nd - 2] + GROUP <= shape[nd - 2] and e + GROUP * width <= end


@njit(inline="always")
def map_row(run, out, po, so, size_out, out_buffer, a_at, n, a_len):
    """``run`` on n elements into ``out`` from element ``po``, ``so`` apart: in place when so == 1, else through
    ``out_buffer``."""
    if so == 1:
        call_function(run, element_pointer(out, po * size_out), a_at, n, a_len)
    else:
        call_function(run, element_pointer(out_buffer, 0), a_at, n, a_len)
        scatter(size_out, out_buffer, 0, n, out, po, so)


@njit(inline="always")
def zip_row(run, out, po, so, size_out, out_buffer, a_at, b_at, n, a_len, b_len):
    """:func:`map_row` for ``zip_run``."""
    if so == 1:
        call_function(run, element_pointer(out, po * size_out), a_at, b_at, n, a_len, b_len)
    else:
        call_function(run, element_pointer(out_buffer, 0), a_at, b_at, n, a_len, b_len)
        scatter(size_out, out_buffer, 0, n, out, po, so)


@njit(inline="always")
def scatter(size, buffer, at, n, target, position, stride):
    """The n elements of ``target`` from ``position``, ``stride`` apart = elements at..at+n of ``buffer``."""
    move(size, buffer, np.int64(at), np.int64(1), n, target, position, stride)


@njit(inline="always")
def step(index, shape, strides, pos, start, n):
    """Move ``n`` elements along the current row (which began at ``start``), to the next row at its end."""
    nd = shape.size
    if start + n == shape[nd - 1]:
        next_row(index, shape, strides, pos, start)
    else:
        index[nd - 1] += n
        for j in range(pos.size):
            pos[j] += n * strides[j, nd - 1]


@njit(inline="always")
def operand(size, source, position, stride, n, buffer):
    """(pointer, length) of ``n`` elements of ``size`` bytes of ``source`` for ``run``: in place when they are one
    run (stride 1) or one element (stride 0, length 1), else gathered into ``buffer``."""
    if stride == 1:
        return element_pointer(source, position * size), n
    if stride == 0:
        return element_pointer(source, position * size), 1
    gather(size, source, position, stride, n, buffer, 0)
    return element_pointer(buffer, 0), n


@njit(parallel=threads(PARALLEL), cache=True)
def map_kernel(a, out, sizes, shape, strides, n_chunks, per_chunk, run):
    """out = f(a) over ``shape``; ``a`` and ``out`` are storages as bytes (``fast_plan.bytes_of``) with item sizes
    ``sizes`` (a, out); ``strides`` rows are (out, a), in elements; ``run`` is the op's ``map_run``."""
    nd = shape.size
    total = 1
    for d in range(nd):
        total *= shape[d]
    so, sa = strides[0, nd - 1], strides[1, nd - 1]
    size_a, size_out = sizes
    grouped = groups_rows(size_a, strides, 1, nd)
    so_row = strides[0, nd - 2] if nd >= 2 else 0  # out's step to the next row (the grouped rows)
    for c in prange(n_chunks):
        e = c * per_chunk
        end = min(e + per_chunk, total)
        index = np.empty(nd, np.int64)
        pos = np.empty(2, np.int64)
        start_positions(e, shape, strides, index, pos)
        a_buffer = np.empty(BLOCK * size_a, np.uint8)
        out_buffer = np.empty(BLOCK * size_out, np.uint8)
        rows = np.empty((BLOCK, 2), np.int64)  # (out position, length) of each row in a block
        a_group = np.empty(GROUP * GROUP_WIDTH * size_a if grouped else 0, np.uint8)
        while e < end:
            start = index[nd - 1]
            n = min(shape[nd - 1] - start, end - e)
            group = grouped and group_fits(index, shape, e, end)
            if group or n >= LONG:  # GROUP whole rows, GROUP_WIDTH columns at a time, or one row: one code path
                # for both (each copy costs the walker's compile time)
                if group:
                    n_rows, width, seg = GROUP, shape[nd - 1], GROUP_WIDTH
                else:
                    if so != 1 or (sa != 1 and sa != 0):
                        n = min(n, BLOCK)
                    n_rows, width, seg = 1, n, n
                for c0 in range(0, width, seg):
                    n = min(seg, width - c0)
                    if group:
                        gather_group(size_a, a, pos[1] + c0 * sa, sa, n, a_group)
                    for r in range(n_rows):
                        if group:
                            a_at, a_len = element_pointer(a_group, r * n * size_a), n
                        else:
                            a_at, a_len = operand(size_a, a, pos[1] + c0 * sa, sa, n, a_buffer)
                        map_row(run, out, pos[0] + r * so_row + c0 * so, so, size_out, out_buffer, a_at, n, a_len)
                for _ in range(n_rows):
                    step(index, shape, strides, pos, start, width)
                e += n_rows * width
            else:
                filled = 0
                r = 0
                while e < end and filled < BLOCK:
                    start = index[nd - 1]
                    n = min(shape[nd - 1] - start, end - e, BLOCK - filled)
                    gather(size_a, a, pos[1], sa, n, a_buffer, filled)
                    rows[r, 0] = pos[0]
                    rows[r, 1] = n
                    r += 1
                    filled += n
                    e += n
                    step(index, shape, strides, pos, start, n)
                call_function(run, element_pointer(out_buffer, 0), element_pointer(a_buffer, 0), filled, filled)
                filled = 0
                for i in range(r):
                    scatter(size_out, out_buffer, filled, rows[i, 1], out, rows[i, 0], so)
                    filled += rows[i, 1]


@njit(parallel=threads(PARALLEL), cache=True)
def zip_kernel(a, b, out, sizes, shape, strides, n_chunks, per_chunk, run):
    """out = f(a, b) over ``shape``; ``a``, ``b`` and ``out`` are storages as bytes (``fast_plan.bytes_of``) with item
    sizes ``sizes`` (a, b, out); ``strides`` rows are (out, a, b), in elements; ``run`` is the op's ``zip_run``."""
    nd = shape.size
    total = 1
    for d in range(nd):
        total *= shape[d]
    so, sa, sb = strides[0, nd - 1], strides[1, nd - 1], strides[2, nd - 1]
    size_a, size_b, size_out = sizes
    a_grouped, b_grouped = groups_rows(size_a, strides, 1, nd), groups_rows(size_b, strides, 2, nd)
    so_row, sa_row, sb_row = (strides[0, nd - 2], strides[1, nd - 2], strides[2, nd - 2]) if nd >= 2 else (0, 0, 0)
    for c in prange(n_chunks):
        e = c * per_chunk
        end = min(e + per_chunk, total)
        index = np.empty(nd, np.int64)
        pos = np.empty(3, np.int64)
        start_positions(e, shape, strides, index, pos)
        a_buffer = np.empty(BLOCK * size_a, np.uint8)
        b_buffer = np.empty(BLOCK * size_b, np.uint8)
        out_buffer = np.empty(BLOCK * size_out, np.uint8)
        rows = np.empty((BLOCK, 2), np.int64)
        a_group = np.empty(GROUP * GROUP_WIDTH * size_a if a_grouped else 0, np.uint8)
        b_group = np.empty(GROUP * GROUP_WIDTH * size_b if b_grouped else 0, np.uint8)
        while e < end:
            start = index[nd - 1]
            n = min(shape[nd - 1] - start, end - e)
            group = (a_grouped or b_grouped) and group_fits(index, shape, e, end)
            if group or n >= LONG:  # as map_kernel's
                if group:
                    n_rows, width, seg = GROUP, shape[nd - 1], GROUP_WIDTH
                else:
                    if so != 1 or (sa != 1 and sa != 0) or (sb != 1 and sb != 0):
                        n = min(n, BLOCK)
                    n_rows, width, seg = 1, n, n
                for c0 in range(0, width, seg):
                    n = min(seg, width - c0)
                    if group and a_grouped:
                        gather_group(size_a, a, pos[1] + c0 * sa, sa, n, a_group)
                    if group and b_grouped:
                        gather_group(size_b, b, pos[2] + c0 * sb, sb, n, b_group)
                    for r in range(n_rows):
                        if group and a_grouped:
                            a_at, a_len = element_pointer(a_group, r * n * size_a), n
                        else:
                            a_at, a_len = operand(size_a, a, pos[1] + r * sa_row + c0 * sa, sa, n, a_buffer)
                        if group and b_grouped:
                            b_at, b_len = element_pointer(b_group, r * n * size_b), n
                        else:
                            b_at, b_len = operand(size_b, b, pos[2] + r * sb_row + c0 * sb, sb, n, b_buffer)
                        zip_row(run, out, pos[0] + r * so_row + c0 * so, so, size_out, out_buffer, a_at, b_at, n,
                                a_len, b_len)
                for _ in range(n_rows):
                    step(index, shape, strides, pos, start, width)
                e += n_rows * width
            else:
                filled = 0
                r = 0
                while e < end and filled < BLOCK:
                    start = index[nd - 1]
                    n = min(shape[nd - 1] - start, end - e, BLOCK - filled)
                    gather(size_a, a, pos[1], sa, n, a_buffer, filled)
                    gather(size_b, b, pos[2], sb, n, b_buffer, filled)
                    rows[r, 0] = pos[0]
                    rows[r, 1] = n
                    r += 1
                    filled += n
                    e += n
                    step(index, shape, strides, pos, start, n)
                call_function(run, element_pointer(out_buffer, 0), element_pointer(a_buffer, 0),
                              element_pointer(b_buffer, 0), filled, filled, filled)
                filled = 0
                for i in range(r):
                    scatter(size_out, out_buffer, filled, rows[i, 1], out, rows[i, 0], so)
                    filled += rows[i, 1]


@njit(parallel=threads(PARALLEL), cache=True)
def map_flat_kernel(a, out, total, n_chunks, per_chunk, run):
    """out[i] = f(a[i]) for i < ``total``, one ``run`` call per chunk of ``per_chunk`` elements."""
    for c in prange(n_chunks):
        e = c * per_chunk
        n = min(per_chunk, total - e)
        call_function(run, element_pointer(out, e), element_pointer(a, e), n, n)


@njit(parallel=threads(PARALLEL), cache=True)
def zip_flat_kernel(a, b, out, total, n_chunks, per_chunk, run):
    """out[i] = f(a[i], b[i]) for i < ``total``, one ``run`` call per chunk of ``per_chunk`` elements."""
    for c in prange(n_chunks):
        e = c * per_chunk
        n = min(per_chunk, total - e)
        call_function(run, element_pointer(out, e), element_pointer(a, e), element_pointer(b, e), n, n, n)
