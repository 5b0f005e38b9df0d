"""``minitensor.cuda``: the ``torch.cuda`` functions that make sense for the ``cuda`` backend.

``amp`` is the deprecated ``torch.cuda.amp`` (:mod:`minitensor.amp.cuda_amp`). Nothing here imports Numba until a
function is called: the backend module is loaded through the backend registry
(which raises :class:`~minitensor.errors.BackendUnavailableError` without numba-cuda or a GPU; set
``NUMBA_ENABLE_CUDASIM=1`` for Numba's simulator).
"""

from __future__ import annotations

import sys
from typing import Any

from .amp import cuda_amp as amp
from .backends import get_backend
from .errors import BackendUnavailableError

sys.modules[f"{__name__}.amp"] = amp  # `from minitensor.cuda.amp import GradScaler` works as with torch.cuda.amp

__all__ = ["amp", "is_available", "synchronize", "memory_stats", "memory_allocated", "memory_reserved", "empty_cache"]


def _backend() -> Any | None:
    """The cuda backend, or None when it cannot be used here."""
    try:
        return get_backend("cuda")
    except BackendUnavailableError:
        return None


def is_available() -> bool:
    """True when the ``cuda`` backend can run: numba-cuda and a GPU (or ``NUMBA_ENABLE_CUDASIM=1``)."""
    return _backend() is not None


def synchronize() -> None:
    """Wait for every kernel queued on the device (``torch.cuda.synchronize``); raises BackendUnavailableError without one."""
    get_backend("cuda").synchronize()


def memory_stats() -> dict[str, int]:
    """The caching allocator's counters (``torch.cuda.memory_stats``); {} when the backend is unavailable.

    ``allocated_bytes.all.current``: bytes of blocks held by live tensors (size classes, so >= what was asked);
    ``active_bytes.all.current``: bytes asked for by live tensors; ``reserved_bytes.all.current``: bytes held from
    the driver (in use or cached); ``allocation.all.allocated`` / ``.freed``: storages handed out / returned;
    ``segment.all.allocated``: fresh device allocations; ``num_cache_hits``: requests served from the cache;
    ``num_host_to_device`` / ``num_device_to_host`` (and ``bytes_*``): copies between host and device.
    """
    backend = _backend()
    return {} if backend is None else backend.memory_stats()


def memory_allocated() -> int:
    """Bytes of device memory held by live tensors (``torch.cuda.memory_allocated``); 0 when unavailable."""
    return memory_stats().get("allocated_bytes.all.current", 0)


def memory_reserved() -> int:
    """Bytes of device memory held by the caching allocator, used or cached (``torch.cuda.memory_reserved``)."""
    return memory_stats().get("reserved_bytes.all.current", 0)


def empty_cache() -> None:
    """Give cached, unused device blocks back to the driver (``torch.cuda.empty_cache``); a no-op when unavailable."""
    backend = _backend()
    if backend is not None:
        backend.empty_cache()
