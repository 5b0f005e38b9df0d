"""CUDA kernel factories for the ``cuda`` backend.

Each ``make_*`` function returns a plain Python kernel function (not yet jitted) specialised by
closure constants: the op's device function, the number of dims (so index buffers are
``cuda.local.array`` of exactly that length) and, for reduce/matmul, the shared-memory size.
:mod:`minitensor.backends.cuda` jits and caches them; tests can also type-check them for the real
CUDA target with ``numba.cuda.compiler.compile_cuda`` on a machine without a GPU.

Shapes and strides are passed as tuples of ints (kernel arguments by value: nothing to upload).
All element arithmetic is done in float64, like the ``simple`` reference, and converted on store.
The index math is the shared code of :mod:`minitensor.tensor_data`, compiled as device functions.

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


# --- element-wise -------------------------------------------------------------------------------


def make_fill(value: float) -> Callable[..., None]:
    """Kernel ``(out)``: out[i] = value for every element of the 1-D array ``out``."""

    def fill(out: Any) -> None:
        for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):  # type: ignore[call-arg]
            out[i] = value

    return fill


def make_map(op: str, out_dims: int, a_dims: int) -> Callable[..., None]:
    """Kernel ``(out, out_shape, out_strides, size, a, a_shape, a_strides)``: out = f(a), a broadcast to out."""
    fn = device_op(operators.UNARY_OPS[op])

    def map_kernel(out, out_shape, out_strides, size, a, a_shape, a_strides):  # type: ignore[no-untyped-def]
        out_index = cuda.local.array(out_dims, int64)
        a_index = cuda.local.array(a_dims, int64)
        for i in range(cuda.grid(1), size, cuda.gridsize(1)):
            to_index(i, out_shape, out_index)
            broadcast_index(out_index, out_shape, a_shape, a_index)
            x = float(a[index_to_position(a_index, a_strides)])
            out[index_to_position(out_index, out_strides)] = fn(x)

    return map_kernel


def make_zip(op: str, out_dims: int, a_dims: int, b_dims: int) -> Callable[..., None]:
    """Kernel ``(out, out_shape, out_strides, size, a, a_shape, a_strides, b, b_shape, b_strides)``: out = f(a, b)."""
    fn = device_op(operators.BINARY_OPS[op])

    def zip_kernel(out, out_shape, out_strides, size, a, a_shape, a_strides, b, b_shape, b_strides):  # type: ignore[no-untyped-def]
        out_index = cuda.local.array(out_dims, int64)
        a_index = cuda.local.array(a_dims, int64)
        b_index = cuda.local.array(b_dims, int64)
        for i in range(cuda.grid(1), size, cuda.gridsize(1)):
            to_index(i, out_shape, out_index)
            broadcast_index(out_index, out_shape, a_shape, a_index)
            broadcast_index(out_index, out_shape, b_shape, b_index)
            x = float(a[index_to_position(a_index, a_strides)])
            y = float(b[index_to_position(b_index, b_strides)])
            out[index_to_position(out_index, out_strides)] = fn(x, y)

    return zip_kernel


# --- reduce -------------------------------------------------------------------------------------


def make_reduce(op: str, dims: int, block: int) -> Callable[..., None]:
    """Kernel ``(dst, dst_strides, a, a_strides, red_shape, red_size, dim, length)``, launched with
    grid ``(rows, chunks)`` and a power-of-two ``blockDim.x <= block``.

    ``red_shape`` is ``a``'s shape with ``dim`` set to 1 (one "row" per element). Block ``(x, y)``
    folds the elements ``k = y * blockDim.x + tid (mod chunks * blockDim.x)`` of row x in
    registers, then tree-reduces the block's partials in shared memory, and writes the result to
    ``dst`` at the row's index with ``index[dim] = y``. With one chunk, ``dst`` is the output;
    otherwise it is a scratch array of chunk partials that the caller reduces again.
    """
    fn, start = operators.REDUCE_OPS[op]
    fn = device_op(fn)

    def reduce_kernel(dst, dst_strides, a, a_strides, red_shape, red_size, dim, length):  # type: ignore[no-untyped-def]
        cache = cuda.shared.array(block, float64)
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
                acc = fn(acc, float(a[index_to_position(index, a_strides)]))
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


# --- matmul -------------------------------------------------------------------------------------


def make_matmul(dims: int, tile: int, double: bool) -> Callable[..., None]:
    """Kernel ``(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides, batches)``.

    Launched with ``tile x tile`` threads and grid ``(ceil(N / tile), ceil(M / tile), <= batches)``;
    each thread computes one ``out[batch, i, j]``, staging ``tile x tile`` blocks of ``a`` and ``b``
    in shared memory. Batch dims broadcast through :func:`broadcast_index`. ``double`` picks the
    float64 (else float32) shared tiles and accumulator.
    """
    acc_t = float64 if double else float32
    row, col = dims - 2, dims - 1

    def matmul_kernel(out, out_shape, out_strides, a, a_shape, a_strides, b, b_shape, b_strides, batches):  # type: ignore[no-untyped-def]
        a_tile = cuda.shared.array((tile, tile), acc_t)
        b_tile = cuda.shared.array((tile, tile), acc_t)
        out_index = cuda.local.array(dims, int64)
        a_index = cuda.local.array(dims, int64)
        b_index = cuda.local.array(dims, int64)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        i = cuda.blockIdx.y * tile + ty
        j = cuda.blockIdx.x * tile + tx
        m = out_shape[row]
        n = out_shape[col]
        inner = a_shape[col]
        for batch in range(cuda.blockIdx.z, batches, cuda.gridDim.z):
            # index of out[batch, 0, 0]; the same batch index broadcast into a and b
            to_index(batch * m * n, out_shape, out_index)
            broadcast_index(out_index, out_shape, a_shape, a_index)
            broadcast_index(out_index, out_shape, b_shape, b_index)
            a_base = index_to_position(a_index, a_strides)
            b_base = index_to_position(b_index, b_strides)
            acc = acc_t(0.0)
            for k0 in range(0, inner, tile):
                k = k0 + tx
                if i < m and k < inner:
                    a_tile[ty, tx] = a[a_base + i * a_strides[row] + k * a_strides[col]]
                else:
                    a_tile[ty, tx] = 0.0
                k = k0 + ty
                if k < inner and j < n:
                    b_tile[ty, tx] = b[b_base + k * b_strides[row] + j * b_strides[col]]
                else:
                    b_tile[ty, tx] = 0.0
                cuda.syncthreads()
                for kk in range(tile):
                    acc += a_tile[ty, kk] * b_tile[kk, tx]
                cuda.syncthreads()
            if i < m and j < n:
                out_index[row] = i
                out_index[col] = j
                out[index_to_position(out_index, out_strides)] = acc

    return matmul_kernel
