"""CUDA kernel factories for the ``cuda`` backend.

Each ``make_*`` function returns a plain Python kernel function (not yet jitted) specialised by
closure constants: the op's device function, the number of dims (so index buffers are
``cuda.local.array`` of exactly that length), the read conversion and, for reduce/matmul, the
shared-memory size and type (reductions: :mod:`minitensor.backends.cuda_reduce`, matmul:
:mod:`minitensor.backends.cuda_matmul`). :mod:`minitensor.backends.cuda` jits and caches them; tests can also
type-check them for the real CUDA target with ``numba.cuda.compiler.compile_cuda`` on a machine
without a GPU.

Shapes and strides are passed as tuples of ints (kernel arguments by value: nothing to upload).
Element arithmetic follows the ``simple`` reference: values are read as int64 (``int``) when the
kernel computes on integers (every input has an integer or bool dtype), as float32 by map/zip when the output
and every input are float32 (or bool; exact ops give the same bits as float64 arithmetic rounded to float32),
and as float64 (``float``) otherwise; the result is converted on store to the output's dtype (to bool: nonzero
is True; float to int truncates). The index math is the shared code of :mod:`minitensor.tensor_data`,
compiled as device functions.

This module needs ``numba.cuda`` but not a GPU.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from numba import cuda, float32, int64

from .. import operators, tensor_data

# --- device functions ---------------------------------------------------------------------------

to_index = cuda.jit(device=True)(tensor_data.to_index)
broadcast_index = cuda.jit(device=True)(tensor_data.broadcast_index)
index_to_position = cuda.jit(device=True)(tensor_data.index_to_position)

_DEVICE_OPS: dict[str, Any] = {}


def device_op(fn: Callable[..., float]) -> Any:
    """``fn`` from the operator modules (``operators.JIT_MODULES``) as a CUDA device function (cached by name).

    Operators may call each other (``inv`` calls ``div``); a plain Python global cannot be called
    from device code, so the function is rebuilt with globals in which every operator it names is
    itself a device function.
    """
    name = fn.__name__
    if name not in _DEVICE_OPS:
        env = dict(fn.__globals__)
        for ref in fn.__code__.co_names:
            value = env.get(ref)
            if isinstance(value, types.FunctionType) and value.__module__ in operators.JIT_MODULES and value is not fn:
                env[ref] = device_op(value)
        clone = types.FunctionType(fn.__code__, env, name, fn.__defaults__, fn.__closure__)
        clone.__doc__ = fn.__doc__
        _DEVICE_OPS[name] = cuda.jit(device=True)(clone)
    return _DEVICE_OPS[name]


def reader(integer: bool) -> Callable[[Any], Any]:
    """The read conversion of a kernel: ``int`` (int64 on the device) for integer compute, else ``float`` (float64)."""
    return int if integer else float


READERS: dict[str, Callable[[Any], Any]] = {"int64": int, "float64": float, "float32": float32}
"""Read conversion of element-wise kernels by compute type: float32 keeps float32 tensors in float32 arithmetic."""


@cuda.jit(device=True)
def _before_ascending(x: Any, y: Any) -> bool:
    """x sorts strictly before y, ascending, NaN last."""
    return x < y or (y != y and x == x)


@cuda.jit(device=True)
def _before_descending(x: Any, y: Any) -> bool:
    """x sorts strictly before y, descending, NaN first."""
    return x > y or (x != x and y == y)


# --- element-wise -------------------------------------------------------------------------------


def make_fill(value: float) -> Callable[..., None]:
    """Kernel ``(out)``: out[i] = value for every element of the 1-D array ``out``."""

    def fill(out: Any) -> None:
        for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):  # type: ignore[call-arg]
            out[i] = value

    return fill


def make_fill_value() -> Callable[..., None]:
    """Kernel ``(out, value)``: out[i] = value (converted on store) for every element of the 1-D array ``out``."""

    def fill_value(out: Any, value: Any) -> None:
        for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):  # type: ignore[call-arg]
            out[i] = value

    return fill_value


def make_fill_tuple() -> Callable[..., None]:
    """Kernel ``(out, values)``: out[i] = values[i] for i < len(values) (a tuple passed by value: no copy)."""

    def fill_tuple(out, values):  # type: ignore[no-untyped-def]
        i = cuda.grid(1)
        if i < len(values):
            out[i] = values[i]

    return fill_tuple


def make_map(op: str, dims: int, compute: str) -> Callable[..., None]:
    """Kernel ``(out, a, size, shape, out_strides, a_strides)``: out = f(a) over ``size`` elements.

    ``shape`` and the strides are the coalesced layout of :func:`minitensor.backends.layout.elementwise_layout`
    (``dims`` entries; a broadcast dim has stride 0). ``dims == 0`` is the contiguous fast path: every operand
    is dense in the same order, element i is at position i (no index math; the layout tuples are ignored), and
    each thread handles elements four grid-strides apart at once (loads before stores: in place is safe, as
    every element is read and written by one thread only).
    ``compute`` (a key of :data:`READERS`) is the type values are read as.
    """
    fn = device_op(operators.UNARY_OPS[op])
    read = READERS[compute]
    if dims == 0:

        def map_flat(out, a, size, shape, out_strides, a_strides):  # type: ignore[no-untyped-def]
            step = cuda.gridsize(1)
            i = cuda.grid(1)
            while i + 3 * step < size:  # four independent loads in flight per thread, then their stores
                x0, x1, x2, x3 = a[i], a[i + step], a[i + 2 * step], a[i + 3 * step]
                out[i] = fn(read(x0))
                out[i + step] = fn(read(x1))
                out[i + 2 * step] = fn(read(x2))
                out[i + 3 * step] = fn(read(x3))
                i += 4 * step
            while i < size:
                out[i] = fn(read(a[i]))
                i += step

        return map_flat
    if dims == 1:

        def map_strided(out, a, size, shape, out_strides, a_strides):  # type: ignore[no-untyped-def]
            so, sa = out_strides[0], a_strides[0]
            for i in range(cuda.grid(1), size, cuda.gridsize(1)):
                out[i * so] = fn(read(a[i * sa]))

        return map_strided

    def map_kernel(out, a, size, shape, out_strides, a_strides):  # type: ignore[no-untyped-def]
        index = cuda.local.array(dims, int64)
        for i in range(cuda.grid(1), size, cuda.gridsize(1)):
            to_index(i, shape, index)
            out[index_to_position(index, out_strides)] = fn(read(a[index_to_position(index, a_strides)]))

    return map_kernel


def make_zip(op: str, dims: int, compute: str) -> Callable[..., None]:
    """Kernel ``(out, a, b, size, shape, out_strides, a_strides, b_strides)``: out = f(a, b); layouts as in
    :func:`make_map` (``dims == 0``: all three contiguous in the same order)."""
    fn = device_op(operators.BINARY_OPS[op])
    read = READERS[compute]
    if dims == 0:

        def zip_flat(out, a, b, size, shape, out_strides, a_strides, b_strides):  # type: ignore[no-untyped-def]
            step = cuda.gridsize(1)
            i = cuda.grid(1)
            while i + 3 * step < size:  # as map_flat: eight loads in flight, then four stores
                x0, x1, x2, x3 = a[i], a[i + step], a[i + 2 * step], a[i + 3 * step]
                y0, y1, y2, y3 = b[i], b[i + step], b[i + 2 * step], b[i + 3 * step]
                out[i] = fn(read(x0), read(y0))
                out[i + step] = fn(read(x1), read(y1))
                out[i + 2 * step] = fn(read(x2), read(y2))
                out[i + 3 * step] = fn(read(x3), read(y3))
                i += 4 * step
            while i < size:
                out[i] = fn(read(a[i]), read(b[i]))
                i += step

        return zip_flat
    if dims == 1:

        def zip_strided(out, a, b, size, shape, out_strides, a_strides, b_strides):  # type: ignore[no-untyped-def]
            so, sa, sb = out_strides[0], a_strides[0], b_strides[0]
            for i in range(cuda.grid(1), size, cuda.gridsize(1)):
                out[i * so] = fn(read(a[i * sa]), read(b[i * sb]))

        return zip_strided

    def zip_kernel(out, a, b, size, shape, out_strides, a_strides, b_strides):  # type: ignore[no-untyped-def]
        index = cuda.local.array(dims, int64)
        for i in range(cuda.grid(1), size, cuda.gridsize(1)):
            to_index(i, shape, index)
            x = read(a[index_to_position(index, a_strides)])
            y = read(b[index_to_position(index, b_strides)])
            out[index_to_position(index, out_strides)] = fn(x, y)

    return zip_kernel


def make_where(dims: int) -> Callable[..., None]:
    """Kernel ``(out, c, a, b, size, shape, out_strides, c_strides, a_strides, b_strides)``: out = a if c != 0
    else b (the chosen value copied, cast on store); layouts as in :func:`make_map`."""

    length = max(dims, 1)

    def where_kernel(out, c, a, b, size, shape, out_strides, c_strides, a_strides, b_strides):  # type: ignore[no-untyped-def]
        index = cuda.local.array(length, int64)
        for i in range(cuda.grid(1), size, cuda.gridsize(1)):
            if dims == 0:
                po, pc, pa, pb = i, i, i, i
            else:
                to_index(i, shape, index)
                po = index_to_position(index, out_strides)
                pc = index_to_position(index, c_strides)
                pa = index_to_position(index, a_strides)
                pb = index_to_position(index, b_strides)
            if c[pc] != 0:
                out[po] = a[pa]
            else:
                out[po] = b[pb]

    return where_kernel


# --- indexing along a dim -----------------------------------------------------------------------


def make_gather(dims: int) -> Callable[..., None]:
    """Kernel ``(out, out_shape, out_strides, size, a, a_strides, index, index_strides, dim)``, one thread per out
    element: out[..., j, ...] = a[..., index[..., j, ...], ...] (``index`` has out's shape)."""

    def gather_kernel(out, out_shape, out_strides, size, a, a_strides, index, index_strides, dim):  # type: ignore[no-untyped-def]
        at = cuda.local.array(dims, int64)
        for i in range(cuda.grid(1), size, cuda.gridsize(1)):
            to_index(i, out_shape, at)
            position = index_to_position(at, out_strides)
            at[dim] = index[index_to_position(at, index_strides)]
            out[position] = a[index_to_position(at, a_strides)]

    return gather_kernel


def make_scatter_add(dims: int) -> Callable[..., None]:
    """Kernel ``(out, out_strides, src, src_shape, src_strides, size, index, index_strides, dim)``, one thread per
    src element: out[..., index[..., j, ...], ...] += src[..., j, ...] with ``cuda.atomic.add``.

    For outs of float32, float64, int32 or int64 (the dtypes atomic add supports); src values are
    converted to out's dtype before the add.
    """

    def scatter_add_kernel(out, out_strides, src, src_shape, src_strides, size, index, index_strides, dim):  # type: ignore[no-untyped-def]
        at = cuda.local.array(dims, int64)
        for i in range(cuda.grid(1), size, cuda.gridsize(1)):
            to_index(i, src_shape, at)
            value = src[index_to_position(at, src_strides)]
            at[dim] = index[index_to_position(at, index_strides)]
            cuda.atomic.add(out, index_to_position(at, out_strides), value)

    return scatter_add_kernel


def make_scatter_add_rows(dims: int) -> Callable[..., None]:
    """Kernel ``(out, out_strides, src, src_strides, index, index_strides, row_shape, rows, dim, length)``, one thread
    per row (position along the dims other than ``dim``), which adds its ``length`` src values one after the
    other: race-free without atomics (for any out dtype, e.g. bool); ``row_shape`` is src's shape with dim set to 1."""

    def scatter_add_rows_kernel(out, out_strides, src, src_strides, index, index_strides, row_shape, rows, dim, length):  # type: ignore[no-untyped-def]
        at = cuda.local.array(dims, int64)
        for row in range(cuda.grid(1), rows, cuda.gridsize(1)):
            to_index(row, row_shape, at)
            for k in range(length):
                at[dim] = k
                value = src[index_to_position(at, src_strides)]
                at[dim] = index[index_to_position(at, index_strides)]
                position = index_to_position(at, out_strides)
                out[position] = out[position] + value

    return scatter_add_rows_kernel


# --- scan and sort ----------------------------------------------------------------------------


def make_scan(op: str, dims: int, integer: bool) -> Callable[..., None]:
    """Kernel ``(out, out_strides, a, a_strides, row_shape, rows, dim, length)``, one thread per row: the
    inclusive prefix fold out[..., j, ...] = fold of a[..., 0..j, ...] along ``dim`` from the op's start value
    (int64 compute for integer inputs). ``row_shape`` is a's shape with dim set to 1; O(length) per row."""
    fn = device_op(operators.REDUCE_OPS[op][0])
    start = operators.reduce_start(op, integer)
    read = reader(integer)

    def scan_kernel(out, out_strides, a, a_strides, row_shape, rows, dim, length):  # type: ignore[no-untyped-def]
        at = cuda.local.array(dims, int64)
        for row in range(cuda.grid(1), rows, cuda.gridsize(1)):
            to_index(row, row_shape, at)
            a_base = index_to_position(at, a_strides)
            out_base = index_to_position(at, out_strides)
            acc = start
            for k in range(length):
                acc = fn(acc, read(a[a_base + k * a_strides[dim]]))
                out[out_base + k * out_strides[dim]] = acc

    return scan_kernel


def make_sort(dims: int, descending: bool, integer: bool) -> Callable[..., None]:
    """Kernel ``(values, values_strides, indices, indices_strides, a, a_strides, row_shape, rows, dim, length)``,
    one thread per row: copies the row of ``a`` into ``values`` (and 0..length-1 into ``indices``), then sorts
    both in place with a stable insertion sort in global memory. O(length^2) work per row, rows in parallel.

    NaN sorts above every number (last ascending, first descending); equal values keep their order in both
    directions. Keys are compared as int64 for integer compute (exact near 2**63), else as float64.
    """
    before = _before_descending if descending else _before_ascending
    read = reader(integer)

    def sort_kernel(values, values_strides, indices, indices_strides, a, a_strides, row_shape, rows, dim, length):  # type: ignore[no-untyped-def]
        at = cuda.local.array(dims, int64)
        for row in range(cuda.grid(1), rows, cuda.gridsize(1)):
            to_index(row, row_shape, at)
            a_base = index_to_position(at, a_strides)
            v_base = index_to_position(at, values_strides)
            i_base = index_to_position(at, indices_strides)
            a_step = a_strides[dim]
            v_step = values_strides[dim]
            i_step = indices_strides[dim]
            for k in range(length):
                values[v_base + k * v_step] = a[a_base + k * a_step]
                indices[i_base + k * i_step] = k
            for k in range(1, length):
                value = values[v_base + k * v_step]
                key = read(value)
                original = indices[i_base + k * i_step]
                j = k
                while j > 0 and before(key, read(values[v_base + (j - 1) * v_step])):
                    values[v_base + j * v_step] = values[v_base + (j - 1) * v_step]
                    indices[i_base + j * i_step] = indices[i_base + (j - 1) * i_step]
                    j -= 1
                values[v_base + j * v_step] = value
                indices[i_base + j * i_step] = original

    return sort_kernel
