"""The ``cuda`` backend: Numba CUDA kernels over device-resident storage.

``TensorData.storage`` is a 1-D numba device array (a slice of one is a view, which is how offsets
work). Data crosses to the host only in :meth:`CudaBackend.from_numpy` and
:meth:`CudaBackend.to_numpy`. Kernels (see :mod:`minitensor.backends.cuda_kernels`) are built per
op name, dims count and compute kind (int64 when every input is an integer or bool tensor, else
float64) on first use and cached; Numba specialises each on the storage dtypes it is called with.

Importing this module raises :class:`~minitensor.errors.BackendUnavailableError` when numba-cuda
is missing or no CUDA GPU is present (``NUMBA_ENABLE_CUDASIM=1`` runs the kernels on the CPU
simulator instead).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import BackendUnavailableError, ShapeError
from ..operators import INTEGER_KINDS
from ..tensor_data import TensorData, prod

try:
    from numba import cuda
except ImportError as error:  # numba-cuda (or numba) is not installed
    raise BackendUnavailableError(
        f"the cuda backend needs numba-cuda, which could not be imported ({error}); "
        "install it with `pip install minitensor[cuda]`"
    ) from error


def _gpu_available() -> bool:
    try:
        return bool(cuda.is_available())
    except Exception:  # a broken driver install reports as "no GPU"
        return False


if not _gpu_available():
    raise BackendUnavailableError(
        "the cuda backend found no CUDA GPU (numba.cuda.is_available() is False); "
        "set NUMBA_ENABLE_CUDASIM=1 before starting Python to run it on Numba's CUDA simulator (slow)"
    )

from . import cuda_kernels as kernels  # noqa: E402 - only once a device is known to exist
from .base import Backend  # noqa: E402

# Small tensors legitimately launch small grids; Numba would warn on each new launch site.
warnings.filterwarnings("ignore", message=r"Grid size \d+ will likely result in GPU under-utilization")

THREADS_PER_BLOCK = 256
"""Threads per block for map, zip and fill (fewer for tiny tensors)."""
REDUCE_BLOCK = 256
"""Largest block of a reduction (a power of two); a longer dim is split across blocks and passes."""
MAX_REDUCE_CHUNKS = 1024
"""Most blocks one reduced row is split into in one pass; threads loop over the rest."""
TILE = 16
"""Side of the square shared-memory tiles of matmul (TILE x TILE threads per block)."""
MAX_GRID = 65535
"""Cap on every grid dimension; kernels loop (grid-stride) over the rest."""
ATOMIC_ADD_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))
"""Out dtypes scatter_add adds into with ``cuda.atomic.add``; others (bool) take one thread per row."""

_KERNELS: dict[tuple[Any, ...], Any] = {}


def _kernel(key: tuple[Any, ...], factory: Callable[..., Any]) -> Any:
    """The jitted kernel for ``key`` = (kind, *factory args), built on first use."""
    if key not in _KERNELS:
        _KERNELS[key] = cuda.jit(factory(*key[1:]))
    return _KERNELS[key]


def _geometry(data: TensorData) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Shape and strides for a kernel; a 0-d tensor is treated as shape (1,) (same single element)."""
    if data.dims == 0:
        return (1,), (0,)
    return data.shape, data.strides


def _elementwise_launch(size: int) -> tuple[int, int]:
    threads = min(THREADS_PER_BLOCK, -(-size // 32) * 32)
    return min(-(-size // threads), MAX_GRID), threads


def _strides(data: TensorData) -> tuple[int, ...]:
    """Strides for a kernel (those of :func:`_geometry`)."""
    return _geometry(data)[1]


def _integer(*datas: TensorData) -> bool:
    """True when every input has an integer or bool dtype: the kernel then computes in int64."""
    return all(data.dtype.kind in INTEGER_KINDS for data in datas)


def _rows(shape: tuple[int, ...], dim: int) -> tuple[tuple[int, ...], int]:
    """``shape`` with ``dim`` set to 1 and its size: one "row" along ``dim`` per element."""
    row_shape = shape[:dim] + (1,) + shape[dim + 1 :]
    return row_shape, prod(row_shape)


def _next_pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def is_device_array(storage: Any) -> bool:
    """True for numba device arrays (real or simulated), the storage of this backend."""
    return bool(cuda.devicearray.is_cuda_ndarray(storage))


def _check_device(*datas: TensorData) -> None:
    for data in datas:
        if not is_device_array(data.storage):
            raise TypeError(f"the cuda backend got host storage {type(data.storage).__name__}; use backend.from_numpy first")


class CudaBackend(Backend):
    """Kernels on a CUDA device (or the Numba simulator)."""

    name = "cuda"

    # --- allocation and transfer ---

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> TensorData:
        return TensorData(cuda.device_array(prod(shape), dtype=np.dtype(dtype)), shape)

    def zeros(self, shape: tuple[int, ...], dtype: np.dtype) -> TensorData:
        """Allocated and zero-filled on the device (no host transfer)."""
        data = self.empty(shape, dtype)
        if data.size:
            blocks, threads = _elementwise_launch(data.size)
            _kernel(("fill", 0.0), kernels.make_fill)[blocks, threads](data.storage)
        return data

    def from_numpy(self, array: np.ndarray) -> TensorData:
        shape = np.shape(array)  # before ascontiguousarray, which turns 0-d into 1-d
        return TensorData(cuda.to_device(np.ascontiguousarray(array).reshape(-1)), shape)

    def to_numpy(self, data: TensorData) -> np.ndarray:
        if data.size == 0:
            return np.zeros(data.shape, dtype=data.dtype)
        if not data.is_contiguous():
            packed = self.empty(data.shape, data.dtype)
            self.map("id", data, packed)
            data = packed
        return data.storage[: data.size].copy_to_host().reshape(data.shape)

    def synchronize(self) -> None:
        cuda.synchronize()

    # --- kernels ---

    def map(self, op: str, a: TensorData, out: TensorData) -> None:
        _check_device(a, out)
        if out.size == 0:
            return
        out_shape, out_strides = _geometry(out)
        a_shape, a_strides = _geometry(a)
        kernel = _kernel(("map", op, len(out_shape), len(a_shape), _integer(a)), kernels.make_map)
        blocks, threads = _elementwise_launch(out.size)
        kernel[blocks, threads](out.storage, out_shape, out_strides, out.size, a.storage, a_shape, a_strides)

    def zip(self, op: str, a: TensorData, b: TensorData, out: TensorData) -> None:
        _check_device(a, b, out)
        if out.size == 0:
            return
        out_shape, out_strides = _geometry(out)
        a_shape, a_strides = _geometry(a)
        b_shape, b_strides = _geometry(b)
        kernel = _kernel(("zip", op, len(out_shape), len(a_shape), len(b_shape), _integer(a, b)), kernels.make_zip)
        blocks, threads = _elementwise_launch(out.size)
        kernel[blocks, threads](
            out.storage, out_shape, out_strides, out.size, a.storage, a_shape, a_strides, b.storage, b_shape, b_strides
        )

    def reduce(self, op: str, a: TensorData, dim: int, out: TensorData) -> None:
        """Tree reduction in shared memory; a dim longer than one block is split into chunks whose
        partials go to a scratch tensor (int64 for integer compute, else float64) that is reduced
        again (as many passes as needed)."""
        _check_device(a, out)
        expected = a.shape[:dim] + (1,) + a.shape[dim + 1 :]
        if out.shape != expected:
            raise ShapeError(f"reduce of shape {a.shape} over dim {dim} needs out shape {expected}, got {out.shape}")
        if out.size == 0:
            return
        length = a.shape[dim]
        block = REDUCE_BLOCK
        threads = max(1, min(block, _next_pow2(length)))
        chunks = max(1, min(-(-length // threads), MAX_REDUCE_CHUNKS))
        integer = _integer(a)
        scratch = np.dtype(np.int64 if integer else np.float64)
        dst = out if chunks == 1 else self.empty(a.shape[:dim] + (chunks,) + a.shape[dim + 1 :], scratch)
        kernel = _kernel(("reduce", op, a.dims, block, integer), kernels.make_reduce)
        grid = (min(out.size, MAX_GRID), chunks)
        kernel[grid, threads](dst.storage, dst.strides, a.storage, a.strides, out.shape, out.size, dim, length)
        if chunks > 1:
            self.reduce(op, dst, dim, out)

    def matmul(self, a: TensorData, b: TensorData, out: TensorData) -> None:
        """Shared-memory tiled (TILE x TILE) product, batched over broadcast batch dims.

        Accumulates in int64 when both inputs are integer or bool (exact), else in NumPy's result
        type of the two dtypes (float32 only for float32 with float32 or bool; float64 otherwise).
        """
        _check_device(a, b, out)
        if not (a.dims == b.dims == out.dims >= 2):
            raise ShapeError(f"matmul needs operands with the same number (>= 2) of dims, got {a.shape} @ {b.shape}")
        if a.shape[-1] != b.shape[-2] or out.shape[-2:] != (a.shape[-2], b.shape[-1]):
            raise ShapeError(f"matmul shapes {a.shape} @ {b.shape} do not give {out.shape}")
        if out.size == 0:
            return
        m, n = out.shape[-2], out.shape[-1]
        batches = out.size // (m * n)
        if _integer(a, b):
            acc = "int64"
        else:
            acc = "float64" if np.result_type(a.dtype, b.dtype) == np.float64 else "float32"
        kernel = _kernel(("matmul", out.dims, TILE, acc), kernels.make_matmul)
        grid = (min(-(-n // TILE), MAX_GRID), min(-(-m // TILE), MAX_GRID), min(batches, MAX_GRID))
        kernel[grid, (TILE, TILE)](
            out.storage, out.shape, out.strides, a.storage, a.shape, a.strides, b.storage, b.shape, b.strides, batches
        )

    def where(self, cond: TensorData, a: TensorData, b: TensorData, out: TensorData) -> None:
        _check_device(cond, a, b, out)
        if out.size == 0:
            return
        out_shape, out_strides = _geometry(out)
        geometries = [_geometry(x) for x in (cond, a, b)]
        kernel = _kernel(("where", len(out_shape), *(len(shape) for shape, _ in geometries)), kernels.make_where)
        blocks, threads = _elementwise_launch(out.size)
        operands = [arg for x, (shape, strides) in zip((cond, a, b), geometries) for arg in (x.storage, shape, strides)]
        kernel[blocks, threads](out.storage, out_shape, out_strides, out.size, *operands)

    def gather(self, a: TensorData, dim: int, index: TensorData, out: TensorData) -> None:
        """One thread per out element."""
        _check_device(a, index, out)
        if index.shape != out.shape or a.dims != out.dims:
            raise ShapeError(f"gather from {a.shape} along dim {dim} needs index and out of one shape, got {index.shape}, {out.shape}")
        if out.size == 0:
            return
        out_shape, out_strides = _geometry(out)
        kernel = _kernel(("gather", len(out_shape)), kernels.make_gather)
        blocks, threads = _elementwise_launch(out.size)
        kernel[blocks, threads](out.storage, out_shape, out_strides, out.size, a.storage, _strides(a), index.storage, _strides(index), dim)

    def scatter_add(self, src: TensorData, dim: int, index: TensorData, out: TensorData) -> None:
        """Atomic adds, one thread per src element, for outs in :data:`ATOMIC_ADD_DTYPES`; other outs
        (bool) get one thread per row along ``dim`` that adds the row's values in order (race-free)."""
        _check_device(src, index, out)
        if index.shape != src.shape or src.dims != out.dims:
            raise ShapeError(f"scatter_add into {out.shape} along dim {dim} needs index and src of one shape: {index.shape}, {src.shape}")
        if src.size == 0:
            return
        src_shape, src_strides = _geometry(src)
        indexing = (index.storage, _strides(index))
        if out.dtype in ATOMIC_ADD_DTYPES:
            kernel = _kernel(("scatter_add", len(src_shape)), kernels.make_scatter_add)
            blocks, threads = _elementwise_launch(src.size)
            kernel[blocks, threads](out.storage, _strides(out), src.storage, src_shape, src_strides, src.size, *indexing, dim)
            return
        row_shape, rows = _rows(src_shape, dim)
        kernel = _kernel(("scatter_add_rows", len(src_shape)), kernels.make_scatter_add_rows)
        blocks, threads = _elementwise_launch(rows)
        kernel[blocks, threads](out.storage, _strides(out), src.storage, src_strides, *indexing, row_shape, rows, dim, src_shape[dim])

    def scan(self, op: str, a: TensorData, dim: int, out: TensorData) -> None:
        """One thread per row along ``dim`` (rows in parallel), int64 compute for integer inputs."""
        _check_device(a, out)
        if out.shape != a.shape:
            raise ShapeError(f"scan of shape {a.shape} needs out of the same shape, got {out.shape}")
        if out.size == 0:
            return
        a_shape, a_strides = _geometry(a)
        row_shape, rows = _rows(a_shape, dim)
        kernel = _kernel(("scan", op, len(a_shape), _integer(a)), kernels.make_scan)
        blocks, threads = _elementwise_launch(rows)
        kernel[blocks, threads](out.storage, _strides(out), a.storage, a_strides, row_shape, rows, dim, a_shape[dim])

    def sort(self, a: TensorData, dim: int, descending: bool, values: TensorData, indices: TensorData) -> None:
        """One thread per row along ``dim``: a stable insertion sort in place in ``values``/``indices``;
        O(n^2) work per row of length n, rows in parallel (fine for short rows)."""
        _check_device(a, values, indices)
        if values.shape != a.shape or indices.shape != a.shape:
            raise ShapeError(f"sort of shape {a.shape} needs values and indices of that shape, got {values.shape}, {indices.shape}")
        if a.size == 0:
            return
        a_shape, a_strides = _geometry(a)
        row_shape, rows = _rows(a_shape, dim)
        kernel = _kernel(("sort", len(a_shape), bool(descending), _integer(a)), kernels.make_sort)
        blocks, threads = _elementwise_launch(rows)
        outs = (values.storage, _strides(values), indices.storage, _strides(indices))
        kernel[blocks, threads](*outs, a.storage, a_strides, row_shape, rows, dim, a_shape[dim])

backend = CudaBackend()
