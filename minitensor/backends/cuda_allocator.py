"""A caching device allocator for the ``cuda`` backend (the idea of PyTorch's caching allocator, much simplified).

``cudaMalloc``/``cudaFree`` are slow and synchronise the device, and a training step allocates the same few
sizes over and over. :class:`CachingAllocator` rounds each request up to a *size class* (512 B, then four
classes per power of two: 2^k, 1.25 * 2^k, 1.5 * 2^k, 1.75 * 2^k; at most 25 % waste) and keeps one free list
of raw device blocks per class. A request pops a block of its class (a *cache hit*) or allocates a fresh one;
when the storage handed out for a block is garbage collected (the typed device array and every slice or view of
it), the block goes back on its free list. :meth:`CachingAllocator.empty_cache` gives the free blocks back to
the driver. Kernels run on the default stream in issue order, so a block freed by the host and reused by the
next kernel is never read and written out of order.

How a block's lifetime is tracked (the one place that differs between a real GPU and Numba's simulator):

- GPU: the block is a ``uint8`` device array; the storage is a ``DeviceNDArray`` whose memory is a
  reference-counted ``AutoFreePointer`` into the block. Numba's slices take counted references to it, so the
  pointer's finalizer (which returns the block) runs when the last view dies.
- Simulator: the block is a NumPy buffer; the storage wraps an array made from a small *lease* object that
  exposes the block through ``__array_interface__``. NumPy's views keep that array (their base) alive, and it
  keeps the lease alive; a ``weakref.finalize`` on the lease returns the block.
"""

from __future__ import annotations

import ctypes
import itertools
import weakref
from collections import defaultdict, deque
from typing import Any

import numpy as np
from numba import config, cuda

SIMULATED = bool(config.ENABLE_CUDASIM)  # type: ignore[attr-defined]
if SIMULATED:
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
else:
    from numba.cuda.cudadrv.devicearray import DeviceNDArray
    from numba.cuda.cudadrv.driver import AutoFreePointer
MIN_BLOCK = 512
"""Smallest size class in bytes (every block is a multiple of it, which keeps storage aligned for any dtype)."""


def size_class(nbytes: int) -> int:
    """The block size serving ``nbytes``: 512 for up to 512 bytes, else the next of 2^k * (1, 1.25, 1.5, 1.75)."""
    if nbytes <= MIN_BLOCK:
        return MIN_BLOCK
    power = 1 << (nbytes - 1).bit_length() - 1  # largest power of two below nbytes
    step = max(power // 4, MIN_BLOCK)
    return -(-nbytes // step) * step


class _SimLease:
    """Simulator only: exposes ``nbytes`` of a NumPy block as an array of ``dtype`` (see the module docstring)."""

    def __init__(self, block: np.ndarray, count: int, dtype: np.dtype) -> None:
        self.block = block
        self.__array_interface__ = {
            "shape": (count,),
            "typestr": dtype.str,
            "data": (block.ctypes.data, False),
            "version": 3,
        }


class CachingAllocator:
    """Size-class free lists of device blocks; see the module docstring. One per process (``ALLOCATOR``)."""

    def __init__(self) -> None:
        self._free: dict[int, list[Any]] = defaultdict(list)
        self._live: dict[int, Any] = {}  # GPU only: the counted pointers of blocks in use, by lease number
        self._returned: deque[tuple[Any, int, int, int]] = deque()  # blocks freed by finalizers, not yet filed
        self._leases = itertools.count()
        self.reset_stats()

    def reset_stats(self) -> None:
        """Zero the counters (the byte totals of blocks in use and cached are kept)."""
        live = getattr(self, "allocated_bytes", 0), getattr(self, "active_bytes", 0), getattr(self, "reserved_bytes", 0)
        self.allocated_bytes, self.active_bytes, self.reserved_bytes = live
        self.peak_allocated_bytes = self.allocated_bytes
        self.peak_reserved_bytes = self.reserved_bytes
        self.num_allocs = 0  # storages handed out
        self.num_frees = 0  # storages returned
        self.num_cache_hits = 0  # requests served from a free list
        self.num_device_mallocs = 0  # fresh device allocations
        self.num_device_frees = 0  # blocks given back to the driver (empty_cache)
        self.num_alloc_retries = 0  # allocations that failed, emptied the cache and tried again
        self.num_host_to_device = 0  # host -> device copies (counted by the backend)
        self.bytes_host_to_device = 0
        self.num_device_to_host = 0
        self.bytes_device_to_host = 0

    # --- allocation ---

    def empty(self, count: int, dtype: np.dtype) -> Any:
        """A 1-D device array of ``count`` elements of ``dtype`` (contents undefined), from the cache when possible."""
        dtype = np.dtype(dtype)
        self._file_returned()
        if count == 0:
            return cuda.device_array(0, dtype=dtype)  # no memory behind it, nothing to pool
        nbytes = count * dtype.itemsize
        size = size_class(nbytes)
        free = self._free[size]
        if free:
            block = free.pop()
            self.num_cache_hits += 1
        else:
            block = self._malloc(size)
        self.num_allocs += 1
        self.allocated_bytes += size
        self.active_bytes += nbytes
        self.peak_allocated_bytes = max(self.peak_allocated_bytes, self.allocated_bytes)
        return self._lease(block, size, count, dtype)

    def _malloc(self, size: int) -> Any:
        try:
            block = cuda.device_array(size, dtype=np.uint8)
        except Exception as error:  # out of memory (CudaAPIError / MemoryError): free the cache and retry once
            if not any(self._free.values()):
                raise
            del error
            self.num_alloc_retries += 1
            self.empty_cache()
            block = cuda.device_array(size, dtype=np.uint8)
        self.num_device_mallocs += 1
        self.reserved_bytes += size
        self.peak_reserved_bytes = max(self.peak_reserved_bytes, self.reserved_bytes)
        return block

    def _release(self, block: Any, size: int, nbytes: int, key: int) -> None:
        """Finalizer of a storage. Finalizers run at any point (garbage collection), so this only queues the
        block (``deque.append`` is atomic); :meth:`_file_returned` files it at the next allocator call."""
        self._returned.append((block, size, nbytes, key))

    def _file_returned(self) -> None:
        """Put queued blocks back on the free lists of their size classes and update the totals."""
        while self._returned:
            block, size, nbytes, key = self._returned.popleft()
            self._live.pop(key, None)
            self._free[size].append(block)
            self.num_frees += 1
            self.allocated_bytes -= size
            self.active_bytes -= nbytes

    def _lease(self, block: Any, size: int, count: int, dtype: np.dtype) -> Any:
        nbytes = count * dtype.itemsize
        key = next(self._leases)
        if SIMULATED:
            lease = _SimLease(block._ary, count, dtype)
            weakref.finalize(lease, self._release, block, size, nbytes, key)
            return FakeCUDAArray(np.asarray(lease))
        pointer = ctypes.c_void_p(int(block.device_ctypes_pointer.value))
        memory = AutoFreePointer(block.gpu_data.context, pointer, nbytes, finalizer=_Returner(self, block, size, nbytes, key))
        self._live[key] = memory
        return DeviceNDArray((count,), (dtype.itemsize,), dtype, gpu_data=memory.own())

    def empty_cache(self) -> None:
        """Give every free block back to the driver (storages in use are untouched)."""
        self._file_returned()
        for size, blocks in self._free.items():
            self.reserved_bytes -= size * len(blocks)
            self.num_device_frees += len(blocks)
            blocks.clear()

    def stats(self) -> dict[str, int]:
        """Counters and byte totals, named like ``torch.cuda.memory_stats()`` where PyTorch has the same number."""
        self._file_returned()
        return {
            "allocated_bytes.all.current": self.allocated_bytes,
            "allocated_bytes.all.peak": self.peak_allocated_bytes,
            "reserved_bytes.all.current": self.reserved_bytes,
            "reserved_bytes.all.peak": self.peak_reserved_bytes,
            "active_bytes.all.current": self.active_bytes,
            "allocation.all.allocated": self.num_allocs,
            "allocation.all.freed": self.num_frees,
            "allocation.all.current": self.num_allocs - self.num_frees,
            "segment.all.allocated": self.num_device_mallocs,
            "segment.all.freed": self.num_device_frees,
            "num_alloc_retries": self.num_alloc_retries,
            "num_cache_hits": self.num_cache_hits,
            "num_host_to_device": self.num_host_to_device,
            "bytes_host_to_device": self.bytes_host_to_device,
            "num_device_to_host": self.num_device_to_host,
            "bytes_device_to_host": self.bytes_device_to_host,
        }


class _Returner:
    """GPU only: the finalizer of a storage's counted pointer (holds the block, never the pointer itself)."""

    def __init__(self, allocator: CachingAllocator, block: Any, size: int, nbytes: int, key: int) -> None:
        self.args = (block, size, nbytes, key)
        self.allocator = allocator

    def __call__(self) -> None:
        self.allocator._release(*self.args)


ALLOCATOR = CachingAllocator()
"""The process's allocator (the ``cuda`` backend allocates every storage here)."""
