"""CUDA kernel factories for the ``cuda`` backend.

Each ``make_*`` function returns a plain Python kernel function (not yet jitted) specialised by
closure constants: the op's device function, the number of dims (so index buffers are
``cuda.local.array`` of exactly that length), the read conversion and, for reduce/matmul, the
shared-memory size and type. :mod:`minitensor.backends.cuda` jits and caches them; tests can also
type-check them for the real CUDA target with ``numba.cuda.compiler.compile_cuda`` on a machine
without a GPU.

Shapes and strides are passed as tuples of ints (kernel arguments by value: nothing to upload).
Element arithmetic follows the ``simple`` reference: values are read as int64 (``int``) when the
kernel computes on integers (every input has an integer or bool dtype) and as float64 (``float``)
otherwise, and the result is converted on store to the output's dtype (to bool: nonzero is True;
float to int truncates). The index math is the shared code of :mod:`minitensor.tensor_data`,
compiled as device functions.

This module needs ``numba.cuda`` but not a GPU.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from numba import cuda, float32, float64, int64

from .. import operators, tensor_data

# --- device functions ---------------------------------------------------------------------------

to_index = cuda.jit(device=True)(tensor_data.to_index)
broadcast_index = cuda.jit(device=True)(tensor_data.broadcast_index)
index_to_position = cuda.jit(device=True)(tensor_data.index_to_position)

_DEVICE_OPS: dict[str, Any] = {}


def device_op(fn: Callable[..., float]) -> Any:
    """``fn`` from :mod:`minitensor.operators` as a CUDA device function (cached by name).

    Operators may call each other (``inv`` calls ``div``); a plain Python global cannot be called
    from device code, so the function is rebuilt with globals in which every operator it names is
    itself a device function.
    """
    name = fn.__name__
    if name not in _DEVICE_OPS:
        env = dict(fn.__globals__)
        for ref in fn.__code__.co_names:
            value = getattr(operators, ref, None)
            if isinstance(value, types.FunctionType) and value.__module__ == operators.__name__ and value is not fn:
                env[ref] = device_op(value)
        clone = types.FunctionType(fn.__code__, env, name, fn.__defaults__, fn.__closure__)
        clone.__doc__ = fn.__doc__
        _DEVICE_OPS[name] = cuda.jit(device=True)(clone)
    return _DEVICE_OPS[name]


def reader(integer: bool) -> Callable[[Any], Any]:
    """The read conversion of a kernel: ``int`` (int64 on the device) for integer compute, else ``float`` (float64)."""
    return int if integer else float


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


def make_map(op: str, out_dims: int, a_dims: int, integer: bool) -> Callable[..., None]:
    """Kernel ``(out, out_shape, out_strides, size, a, a_shape, a_strides)``: out = f(a), a broadcast to out."""
    fn = device_op(operators.UNARY_OPS[op])
    read = reader(integer)

    def map_kernel(out, out_shape, out_strides, size, a, a_shape, a_strides):  # type: ignore[no-untyped-def]
        out_index = cuda.local.array(out_dims, int64)
        a_index = cuda.local.array(a_dims, int64)
        for i in range(cuda.grid(1), size, cuda.gridsize(1)):
            to_index(i, out_shape, out_index)
            broadcast_index(out_index, out_shape, a_shape, a_index)
            x = read(a[index_to_position(a_index, a_strides)])
            out[index_to_position(out_index, out_strides)] = fn(x)

    return map_kernel


def make_zip(op: str, out_dims: int, a_dims: int, b_dims: int, integer: bool) -> Callable[..., None]:
    """Kernel ``(out, out_shape, out_strides, size, a, a_shape, a_strides, b, b_shape, b_strides)``: out = f(a, b)."""
    fn = device_op(operators.BINARY_OPS[op])
    read = reader(integer)

    def zip_kernel(out, out_shape, out_strides, size, a, a_shape, a_strides, b, b_shape, b_strides):  # type: ignore[no-untyped-def]
        out_index = cuda.local.array(out_dims, int64)
        a_index = cuda.local.array(a_dims, int64)
        b_index = cuda.local.array(b_dims, int64)
        for i in range(cuda.grid(1), size, cuda.gridsize(1)):
            to_index(i, out_shape, out_index)
            broadcast_index(out_index, out_shape, a_shape, a_index)
            broadcast_index(out_index, out_shape, b_shape, b_index)
            x = read(a[index_to_position(a_index, a_strides)])
            y = read(b[index_to_position(b_index, b_strides)])
            out[index_to_position(out_index, out_strides)] = fn(x, y)

    return zip_kernel


def make_where(out_dims: int, c_dims: int, a_dims: int, b_dims: int) -> Callable[..., None]:
    """Kernel ``(out, out_shape, out_strides, size, c, c_shape, c_strides, a, a_shape, a_strides, b, b_shape, b_strides)``:
    out = a if c != 0 else b, all three broadcast to out; the chosen value is copied (cast on store)."""

    def where_kernel(out, out_shape, out_strides, size, c, c_shape, c_strides, a, a_shape, a_strides, b, b_shape, b_strides):  # type: ignore[no-untyped-def]
        out_index = cuda.local.array(out_dims, int64)
        c_index = cuda.local.array(c_dims, int64)
        a_index = cuda.local.array(a_dims, int64)
        b_index = cuda.local.array(b_dims, int64)
        for i in range(cuda.grid(1), size, cuda.gridsize(1)):
            to_index(i, out_shape, out_index)
            broadcast_index(out_index, out_shape, c_shape, c_index)
            position = index_to_position(out_index, out_strides)
            if c[index_to_position(c_index, c_strides)] != 0:
                broadcast_index(out_index, out_shape, a_shape, a_index)
                out[position] = a[index_to_position(a_index, a_strides)]
            else:
                broadcast_index(out_index, out_shape, b_shape, b_index)
                out[position] = b[index_to_position(b_index, b_strides)]

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


# --- reduce and scan ----------------------------------------------------------------------------


def make_reduce(op: str, dims: int, block: int, integer: bool) -> Callable[..., None]:
    """Kernel ``(dst, dst_strides, a, a_strides, red_shape, red_size, dim, length)``, launched with
    grid ``(rows, chunks)`` and a power-of-two ``blockDim.x <= block``.

    ``red_shape`` is ``a``'s shape with ``dim`` set to 1 (one "row" per element). Block ``(x, y)``
    folds the elements ``k = y * blockDim.x + tid (mod chunks * blockDim.x)`` of row x in
    registers, then tree-reduces the block's partials in shared memory, and writes the result to
    ``dst`` at the row's index with ``index[dim] = y``. With one chunk, ``dst`` is the output;
    otherwise it is a scratch array of chunk partials (int64 for integer compute, else float64)
    that the caller reduces again. Integer compute starts from an int64 start value and keeps an
    int64 shared cache (exact); float compute uses float64.
    """
    fn = device_op(operators.REDUCE_OPS[op][0])
    start = operators.reduce_start(op, integer)
    read = reader(integer)
    cache_t = int64 if integer else float64

    def reduce_kernel(dst, dst_strides, a, a_strides, red_shape, red_size, dim, length):  # type: ignore[no-untyped-def]
        cache = cuda.shared.array(block, cache_t)
        index = cuda.local.array(dims, int64)
        tid = cuda.threadIdx.x
        threads = cuda.blockDim.x
        chunk = cuda.blockIdx.y
        chunks = cuda.gridDim.y
        for row in range(cuda.blockIdx.x, red_size, cuda.gridDim.x):
            to_index(row, red_shape, index)
            acc = start
            for k in range(chunk * threads + tid, length, chunks * threads):
                index[dim] = k
                acc = fn(acc, read(a[index_to_position(index, a_strides)]))
            cache[tid] = acc
            cuda.syncthreads()
            step = threads // 2
            while step > 0:
                if tid < step:
                    cache[tid] = fn(cache[tid], cache[tid + step])
                cuda.syncthreads()
                step //= 2
            if tid == 0:
                index[dim] = chunk
                dst[index_to_position(index, dst_strides)] = cache[0]
            cuda.syncthreads()

    return reduce_kernel


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


# --- matmul -------------------------------------------------------------------------------------

ACCUMULATORS = {"float32": float32, "float64": float64, "int64": int64}
"""Matmul accumulator (and shared tile) types by name."""


def make_matmul(dims: int, tile: int, acc: str) -> Callable[..., None]:
    """Kernel ``(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides, batches)``.

    Launched with ``tile x tile`` threads and grid ``(ceil(N / tile), ceil(M / tile), <= batches)``;
    each thread computes one ``out[batch, i, j]``, staging ``tile x tile`` blocks of ``a`` and ``b``
    in shared memory. Batch dims broadcast through :func:`broadcast_index`. ``acc`` (a key of
    :data:`ACCUMULATORS`) is the type of the shared tiles and the accumulator: int64 makes integer
    products exact.
    """
    acc_t = ACCUMULATORS[acc]
    row, col = dims - 2, dims - 1

    def matmul_kernel(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides, batches):  # type: ignore[no-untyped-def]
        a_tile = cuda.shared.array((tile, tile), acc_t)
        b_tile = cuda.shared.array((tile, tile), acc_t)
        out_index = cuda.local.array(dims, int64)
        a_index = cuda.local.array(dims, int64)
        b_index = cuda.local.array(dims, int64)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        m = out_shape[row]
        n = out_shape[col]
        inner = a_shape[col]
        tiles_m = (m + tile - 1) // tile
        tiles_n = (n + tile - 1) // tile
        # Grid-stride over batches and over tiles in both directions: no output size limit. Every thread of a
        # block takes the same trip counts (they depend on block indices only), so syncthreads stays uniform.
        for batch in range(cuda.blockIdx.z, batches, cuda.gridDim.z):
            # index of out[batch, 0, 0]; the same batch index broadcast into a and b
            to_index(batch * m * n, out_shape, out_index)
            broadcast_index(out_index, out_shape, a_shape, a_index)
            broadcast_index(out_index, out_shape, b_shape, b_index)
            a_base = index_to_position(a_index, a_strides)
            b_base = index_to_position(b_index, b_strides)
            for tile_i in range(cuda.blockIdx.y, tiles_m, cuda.gridDim.y):
                i = tile_i * tile + ty
                for tile_j in range(cuda.blockIdx.x, tiles_n, cuda.gridDim.x):
                    j = tile_j * tile + tx
                    acc = acc_t(0)
                    for k0 in range(0, inner, tile):
                        k = k0 + tx
                        if i < m and k < inner:
                            a_tile[ty, tx] = a[a_base + i * a_strides[row] + k * a_strides[col]]
                        else:
                            a_tile[ty, tx] = 0
                        k = k0 + ty
                        if k < inner and j < n:
                            b_tile[ty, tx] = b[b_base + k * b_strides[row] + j * b_strides[col]]
                        else:
                            b_tile[ty, tx] = 0
                        cuda.syncthreads()
                        for kk in range(tile):
                            acc += a_tile[ty, kk] * b_tile[kk, tx]
                        cuda.syncthreads()
                    if i < m and j < n:
                        out_index[row] = i
                        out_index[col] = j
                        out[index_to_position(out_index, out_strides)] = acc

    return matmul_kernel
