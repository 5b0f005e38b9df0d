"""The ``cuda`` backend: Numba CUDA kernels over device-resident storage.

``TensorData.storage`` is a 1-D numba device array (a slice of one is a view, which is how offsets
work) from the caching allocator (:mod:`minitensor.backends.cuda_allocator`). Data crosses to the host only in
:meth:`CudaBackend.from_numpy` (one-element arrays not even there: a fill kernel takes the value as a launch
argument) and :meth:`CudaBackend.to_numpy`. Launch plans (coalesced layouts, compute types, grid sizes) come
from :mod:`minitensor.backends.cuda_plan`; kernels (:mod:`~minitensor.backends.cuda_kernels`,
:mod:`~minitensor.backends.cuda_reduce`, :mod:`~minitensor.backends.cuda_matmul`) are built per op name,
layout and compute type (int64 when every input is an integer or bool tensor; float32 for element-wise ops on
float32 tensors; else float64) on first use and cached; Numba specialises each on the storage dtypes it is
called with.

Importing this module raises :class:`~minitensor.errors.BackendUnavailableError` when numba-cuda
is missing or no CUDA GPU is present (``NUMBA_ENABLE_CUDASIM=1`` runs the kernels on the CPU
simulator instead).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import BackendUnavailableError, ShapeError
from ..flags import deterministic_algorithms_enabled
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


from .cuda_allocator import ALLOCATOR, SIMULATED  # noqa: E402 - numba.cuda imports, no device needed

if not _gpu_available():
    raise BackendUnavailableError(
        "the cuda backend found no CUDA GPU (numba.cuda.is_available() is False); "
        "set NUMBA_ENABLE_CUDASIM=1 before starting Python to run it on Numba's CUDA simulator (slow)"
    )

from . import cuda_kernels as kernels  # noqa: E402 - only once a device is known to exist
from . import cuda_matmul, cuda_reduce  # noqa: E402
from . import cuda_plan as plan  # noqa: E402
from .base import Backend  # noqa: E402
from .layout import coalesce  # noqa: E402

if SIMULATED:
    from .cuda_simulator import install as _install_simulator_fixes  # noqa: E402

    _install_simulator_fixes()

# Small tensors legitimately launch small grids; Numba would warn on each new launch site.
warnings.filterwarnings("ignore", message=r"Grid size \d+ will likely result in GPU under-utilization")

ATOMIC_ADD_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))
"""Out dtypes scatter_add adds into with ``cuda.atomic.add``; others (bool) take one thread per row."""

CACHE_KERNELS = True
"""Cache compiled kernels on disk across processes (see :func:`_kernel`)."""
WRITE_VALUES_MAX = 64
"""Most numbers one :meth:`CudaBackend.write_values` call passes as a kernel argument."""
CONSTANT_CACHE_SIZE = 256
"""Most cached device constants (see :meth:`CudaBackend.constant`); the cache empties when full."""

_KERNELS: dict[tuple[Any, ...], Any] = {}
_CONSTANTS: dict[tuple[Any, ...], TensorData] = {}


def _kernel(key: tuple[Any, ...], factory: Callable[..., Any]) -> Any:
    """The jitted kernel for ``key`` = (kind, *factory args), built on first use.

    Compiled kernels are cached on disk (``cache=True``; in ``__pycache__`` beside the kernel module, else in
    Numba's user-wide cache), so later processes load them instead of compiling. The kernels are closures of the
    ``make_*`` factories: Numba keys each cache entry by the kernel's bytecode *and* a hash of its closure cells
    (the op's device function, dims, compute type, tile sizes), so every specialisation has its own entry; the
    entries are invalidated when the kernel module's file changes. The simulator ignores ``cache``.
    """
    if key not in _KERNELS:
        _KERNELS[key] = cuda.jit(factory(*key[1:]), cache=CACHE_KERNELS)
    return _KERNELS[key]


def _geometry(data: TensorData) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Shape and strides for a kernel; a 0-d tensor is treated as shape (1,) (same single element)."""
    if data.dims == 0:
        return (1,), (0,)
    return data.shape, data.strides


def _strides(data: TensorData) -> tuple[int, ...]:
    """Strides for a kernel (those of :func:`_geometry`)."""
    return _geometry(data)[1]


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
        """Storage from the caching allocator (:mod:`minitensor.backends.cuda_allocator`): no cudaMalloc once warm."""
        return TensorData(ALLOCATOR.empty(prod(shape), np.dtype(dtype)), shape)

    def zeros(self, shape: tuple[int, ...], dtype: np.dtype) -> TensorData:
        """Allocated and zero-filled on the device (no host transfer)."""
        data = self.empty(shape, dtype)
        if data.size:
            blocks, threads = plan.elementwise_launch(data.size)
            self._launch(_kernel(("fill", 0.0), kernels.make_fill), blocks, threads, data.storage)
        return data

    def from_numpy(self, array: np.ndarray) -> TensorData:
        """A copy on the device. One element is written by a fill kernel that takes the value as a launch
        argument (no host-to-device copy, which would also wait for every queued kernel); more are copied."""
        array = np.asarray(array)
        data = self.empty(array.shape, array.dtype)
        if array.size == 1:
            value = array.reshape(-1)[0].item()
            kernel = _kernel(("fill_value",), kernels.make_fill_value)
            self._launch(kernel, 1, 1, data.storage, value)
        elif array.size:
            data.storage.copy_to_device(np.ascontiguousarray(array).reshape(-1))
            ALLOCATOR.num_host_to_device += 1
            ALLOCATOR.bytes_host_to_device += array.nbytes
        return data

    def write_values(self, data: TensorData, values: Sequence[float | int | bool]) -> None:
        """Write a few host numbers into the first len(values) elements of contiguous ``data`` with one kernel whose
        argument is the tuple of values: no host-to-device copy, so nothing waits for queued kernels (for per-step
        scalars such as an optimizer's bias corrections). At most WRITE_VALUES_MAX numbers."""
        _check_device(data)
        if len(values) > min(WRITE_VALUES_MAX, data.size):
            raise ShapeError(f"write_values takes at most {min(WRITE_VALUES_MAX, data.size)} values here, got {len(values)}")
        if not values:
            return
        kind = data.dtype.kind
        convert = float if kind == "f" else (bool if kind == "b" else int)
        kernel = _kernel(("fill_tuple",), kernels.make_fill_tuple)
        self._launch(kernel, 1, len(values), data.storage, tuple(convert(v) for v in values))

    def constant(self, value: float | int | bool, dtype: np.dtype) -> TensorData:
        """A read-only 0-d device tensor holding ``value`` as ``dtype``, cached per (value, dtype): ``x * 2.0``
        then neither uploads nor launches anything after the first time. Callers must never write into it."""
        dtype = np.dtype(dtype)
        key = (type(value), value, dtype, bool(value != value or (value == 0 and str(value).startswith("-"))))
        data = _CONSTANTS.get(key)
        if data is None:
            if len(_CONSTANTS) >= CONSTANT_CACHE_SIZE:
                _CONSTANTS.clear()
            data = _CONSTANTS[key] = self.from_numpy(np.asarray(value, dtype=dtype))
        return data

    def to_numpy(self, data: TensorData) -> np.ndarray:
        if data.size == 0:
            return np.zeros(data.shape, dtype=data.dtype)
        if not data.is_contiguous():
            packed = self.empty(data.shape, data.dtype)
            self.map("id", data, packed)
            data = packed
        ALLOCATOR.num_device_to_host += 1
        ALLOCATOR.bytes_device_to_host += data.size * data.dtype.itemsize
        return data.storage[: data.size].copy_to_host().reshape(data.shape)

    def memory_stats(self) -> dict[str, int]:
        """The caching allocator's counters (see :meth:`CachingAllocator.stats`)."""
        return ALLOCATOR.stats()

    def empty_cache(self) -> None:
        """Give the allocator's free blocks back to the driver."""
        ALLOCATOR.empty_cache()

    def synchronize(self) -> None:
        cuda.synchronize()

    def _launch(self, kernel: Any, grid: Any, block: Any, *args: Any) -> None:
        """Launch ``kernel`` on ``grid`` blocks of ``block`` threads with ``args``: every launch of this backend goes
        through here, so a subclass can note the launches instead of running them (the compiler's pre-bound calls,
        :mod:`minitensor.compiler.plan_cuda`)."""
        kernel[grid, block](*args)

    # --- kernels ---

    def map(self, op: str, a: TensorData, out: TensorData) -> None:
        _check_device(a, out)
        if out.size == 0:
            return
        dims, layout = plan.layout(out, (a,))
        kernel = _kernel(("map", op, dims, plan.compute_type(out, a)), kernels.make_map)
        blocks, threads = plan.elementwise_launch(out.size, plan.FLAT_PER_THREAD if dims == 0 else 1)
        self._launch(kernel, blocks, threads, out.storage, a.storage, out.size, *layout)

    def zip(self, op: str, a: TensorData, b: TensorData, out: TensorData) -> None:
        _check_device(a, b, out)
        if out.size == 0:
            return
        dims, layout = plan.layout(out, (a, b))
        kernel = _kernel(("zip", op, dims, plan.compute_type(out, a, b)), kernels.make_zip)
        blocks, threads = plan.elementwise_launch(out.size, plan.FLAT_PER_THREAD if dims == 0 else 1)
        self._launch(kernel, blocks, threads, out.storage, a.storage, b.storage, out.size, *layout)

    def reduce(self, op: str, a: TensorData, dim: int, out: TensorData) -> None:
        """A thread, a warp or a block per row (see :mod:`minitensor.backends.cuda_reduce`); a long row with few
        rows is split into chunks whose partials go to a scratch tensor (int64 for integer compute, else
        float64) that is reduced again."""
        _check_device(a, out)
        expected = a.shape[:dim] + (1,) + a.shape[dim + 1 :]
        if out.shape != expected:
            raise ShapeError(f"reduce of shape {a.shape} over dim {dim} needs out shape {expected}, got {out.shape}")
        if out.size == 0:
            return
        rows, length = out.size, a.shape[dim]
        integer = plan.integer_compute(a)
        kind, chunks, blocks, threads = plan.reduce_launch(a, dim, rows)
        scratch = np.dtype(np.int64 if integer else np.float64)
        dst = out if chunks == 1 else self.empty(a.shape[:dim] + (chunks,) + a.shape[dim + 1 :], scratch)
        row_shape, dst_strides, a_strides = plan.reduce_layout(a, dim, dst)
        if kind == "thread":
            kernel = _kernel(("reduce_thread", op, len(row_shape), integer), cuda_reduce.make_reduce_thread)
        else:
            warps = threads // plan.WARP
            factory = cuda_reduce.make_reduce_warp if kind == "warp" else cuda_reduce.make_reduce_block
            kernel = _kernel((f"reduce_{kind}", op, len(row_shape), integer, plan.WARP, warps, not SIMULATED), factory)
        step = a.strides[dim] if length > 1 else 0
        self._launch(
            kernel, (blocks, chunks), threads,
            dst.storage, a.storage, rows, row_shape, dst_strides, a_strides, length, step, dst.strides[dim]
        )
        if chunks > 1:
            self.reduce(op, dst, dim, out)

    def matmul(self, a: TensorData, b: TensorData, out: TensorData) -> None:
        """Register-blocked tiles (:mod:`minitensor.backends.cuda_matmul`), batched over broadcast batch dims.

        Accumulates in int64 when both inputs are integer or bool (exact), else in NumPy's result type of the
        two dtypes (float32 only for float32 with float32 or bool; float64 otherwise). Tiles: plan.MATMUL_LARGE when
        both output dims are at least plan.LARGE_FROM, else plan.MATMUL_SMALL (fewer idle threads on small products).
        """
        _check_device(a, b, out)
        if not (a.dims == b.dims == out.dims >= 2):
            raise ShapeError(f"matmul needs operands with the same number (>= 2) of dims, got {a.shape} @ {b.shape}")
        if a.shape[-1] != b.shape[-2] or out.shape[-2:] != (a.shape[-2], b.shape[-1]):
            raise ShapeError(f"matmul shapes {a.shape} @ {b.shape} do not give {out.shape}")
        if out.size == 0:
            return
        m, inner = a.shape[-2:]
        n = b.shape[-1]
        batch = out.shape[:-2]
        a = a if a.shape[:-2] == batch else a.expand(batch + (m, inner))
        b = b if b.shape[:-2] == batch else b.expand(batch + (inner, n))
        if plan.integer_compute(a, b):
            acc = "int64"
        else:
            acc = "float64" if np.result_type(a.dtype, b.dtype) == np.float64 else "float32"
        dims = [(size, [out.strides[i], a.strides[i], b.strides[i]]) for i, size in enumerate(batch) if size != 1]
        batch_shape, batch_strides = coalesce(dims, 3)
        batches = out.size // (m * n)
        tile = plan.MATMUL_LARGE if min(m, n) >= plan.LARGE_FROM else plan.MATMUL_SMALL
        bm, bn, _, tm, tn = tile
        kernel = _kernel(("matmul", len(batch_shape), acc, *tile), cuda_matmul.make_matmul)
        grid = (min(-(-n // bn), plan.MAX_GRID), min(-(-m // bm), plan.MAX_GRID), min(batches, plan.MAX_GRID))
        a_k = inner == 1 or a.strides[-1] == 1
        b_n = n == 1 or b.strides[-1] == 1
        self._launch(
            kernel, grid, (bn // tn, bm // tm),
            out.storage, a.storage, b.storage, batches, tuple(batch_shape.tolist()),
            *[tuple(row) for row in batch_strides.tolist()], m, n, inner,
            *out.strides[-2:], *a.strides[-2:], *b.strides[-2:], a_k, b_n,
        )

    def where(self, cond: TensorData, a: TensorData, b: TensorData, out: TensorData) -> None:
        _check_device(cond, a, b, out)
        if out.size == 0:
            return
        dims, layout = plan.layout(out, (cond, a, b))
        kernel = _kernel(("where", dims), kernels.make_where)
        blocks, threads = plan.elementwise_launch(out.size)
        self._launch(kernel, blocks, threads, out.storage, cond.storage, a.storage, b.storage, out.size, *layout)

    def gather(self, a: TensorData, dim: int, index: TensorData, out: TensorData) -> None:
        """One thread per out element."""
        _check_device(a, index, out)
        if index.shape != out.shape or a.dims != out.dims:
            raise ShapeError(f"gather from {a.shape} along dim {dim} needs index and out of one shape, got {index.shape}, {out.shape}")
        if out.size == 0:
            return
        out_shape, out_strides = _geometry(out)
        kernel = _kernel(("gather", len(out_shape)), kernels.make_gather)
        blocks, threads = plan.elementwise_launch(out.size)
        args = (out.storage, out_shape, out_strides, out.size, a.storage, _strides(a), index.storage, _strides(index), dim)
        self._launch(kernel, blocks, threads, *args)

    def scatter_add(self, src: TensorData, dim: int, index: TensorData, out: TensorData) -> None:
        """Atomic adds, one thread per src element, for outs in :data:`ATOMIC_ADD_DTYPES`; other outs
        (bool), and float outs under ``use_deterministic_algorithms(True)``, get one thread per row along ``dim``
        that adds the row's values in order (race-free, so the same bits every run)."""
        _check_device(src, index, out)
        if index.shape != src.shape or src.dims != out.dims:
            raise ShapeError(f"scatter_add into {out.shape} along dim {dim} needs index and src of one shape: {index.shape}, {src.shape}")
        if src.size == 0:
            return
        src_shape, src_strides = _geometry(src)
        indexing = (index.storage, _strides(index))
        if out.dtype in ATOMIC_ADD_DTYPES and not (out.dtype.kind == "f" and deterministic_algorithms_enabled()):
            kernel = _kernel(("scatter_add", len(src_shape)), kernels.make_scatter_add)
            blocks, threads = plan.elementwise_launch(src.size)
            self._launch(kernel, blocks, threads, out.storage, _strides(out), src.storage, src_shape, src_strides, src.size, *indexing, dim)
            return
        row_shape, rows = plan.rows_along(src_shape, dim)
        kernel = _kernel(("scatter_add_rows", len(src_shape)), kernels.make_scatter_add_rows)
        blocks, threads = plan.elementwise_launch(rows)
        args = (out.storage, _strides(out), src.storage, src_strides, *indexing, row_shape, rows, dim, src_shape[dim])
        self._launch(kernel, blocks, threads, *args)

    def scan(self, op: str, a: TensorData, dim: int, out: TensorData) -> None:
        """One thread per row along ``dim`` (rows in parallel), int64 compute for integer inputs."""
        _check_device(a, out)
        if out.shape != a.shape:
            raise ShapeError(f"scan of shape {a.shape} needs out of the same shape, got {out.shape}")
        if out.size == 0:
            return
        a_shape, a_strides = _geometry(a)
        row_shape, rows = plan.rows_along(a_shape, dim)
        kernel = _kernel(("scan", op, len(a_shape), plan.integer_compute(a)), kernels.make_scan)
        blocks, threads = plan.elementwise_launch(rows)
        self._launch(kernel, blocks, threads, out.storage, _strides(out), a.storage, a_strides, row_shape, rows, dim, a_shape[dim])

    def sort(self, a: TensorData, dim: int, descending: bool, values: TensorData, indices: TensorData) -> None:
        """One thread per row along ``dim``: a stable insertion sort in place in ``values``/``indices``;
        O(n^2) work per row of length n, rows in parallel (fine for short rows)."""
        _check_device(a, values, indices)
        if values.shape != a.shape or indices.shape != a.shape:
            raise ShapeError(f"sort of shape {a.shape} needs values and indices of that shape, got {values.shape}, {indices.shape}")
        if a.size == 0:
            return
        a_shape, a_strides = _geometry(a)
        row_shape, rows = plan.rows_along(a_shape, dim)
        kernel = _kernel(("sort", len(a_shape), bool(descending), plan.integer_compute(a)), kernels.make_sort)
        blocks, threads = plan.elementwise_launch(rows)
        outs = (values.storage, _strides(values), indices.storage, _strides(indices))
        self._launch(kernel, blocks, threads, *outs, a.storage, a_strides, row_shape, rows, dim, a_shape[dim])

backend = CudaBackend()
