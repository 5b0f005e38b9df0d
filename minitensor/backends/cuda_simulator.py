"""Two fixes to Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``), installed when the ``cuda`` backend runs on it.

The simulator runs every CUDA thread of a block as a Python thread, one block after another. Its block manager waits
for the block by polling its threads in a loop that never gives up the GIL, so the poller holds it for whole switch
intervals (5 ms) while the threads that do the work wait: most of a simulated launch is spent polling (measured on a
64x64 float64 tensor: ``exp`` 1.28 s, a row sum 3.3 s). :func:`run_block` polls the same way (a thread blocked in
``syncthreads`` counts as waiting, and the block is released when every live thread waits) but yields the GIL before
each poll (``exp`` 0.30 s, the row sum 0.22 s).

The simulator's ``cuda.shared.array`` finds a block's array by the calling line and creates it on a miss without a
lock, so two threads of a block can each create one and then share nothing (seen as uninitialised reduction results,
about once in 3,000 launches). :func:`shared_array` does the lookup and the creation under a lock.

Both replace methods of the simulator's own classes; :func:`install` leaves a simulator whose classes lack the
attributes these rely on as it is (a later numba-cuda), and does nothing on a real GPU.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

import numpy as np
from numba.core import types
from numba.np import numpy_support

_shared_lock = threading.Lock()


def run_block(manager: Any, grid_point: tuple[int, ...], *args: Any) -> None:
    """Run one block of ``manager`` (a simulator ``BlockManager``) at ``grid_point`` to completion: start a thread
    per block point, release them from ``syncthreads`` whenever every live one waits there, and re-raise the first
    exception a thread hit (after telling the others to abort)."""
    from numba.cuda.simulator.kernel import BlockThread

    def body() -> None:
        manager._f(*args)

    threads = [BlockThread(body, manager, grid_point, point, manager._debug) for point in np.ndindex(*manager._block_dim)]
    for thread in threads:
        thread.start()
    while True:
        time.sleep(0)  # give the GIL to the block's threads before each poll
        failed = next((thread for thread in threads if thread.exception), None)
        if failed is not None:
            for thread in threads:
                thread.abort = True
                thread.syncthreads_blocked = False
                thread.syncthreads_event.set()
            error, trace = failed.exception
            raise error.with_traceback(trace)
        alive = [thread for thread in threads if thread.is_alive()]
        if not alive:
            return
        if all(thread.syncthreads_blocked for thread in alive):
            for thread in alive:
                thread.syncthreads_blocked = False
                thread.syncthreads_event.set()


def shared_array(shared: Any, shape: Any, dtype: Any, alignment: Any = None) -> np.ndarray:
    """``cuda.shared.array(shape, dtype)`` on the simulator: one array per calling line and launch, created under a
    lock so every thread of the block gets the same one. Dynamic shared memory (shape 0) as the simulator has it."""
    if alignment is not None:
        raise RuntimeError("array alignment is not supported on the CUDA simulator")
    if isinstance(dtype, types.Type):
        dtype = numpy_support.as_dtype(dtype)
    if shape == 0:
        count = shared._dynshared_size // dtype.itemsize
        return np.frombuffer(shared._dynshared.data, dtype=dtype, count=count)
    caller = sys._getframe(1)
    key = (caller.f_code.co_filename, caller.f_lineno)
    with _shared_lock:
        found = shared._allocations.get(key)
        if found is None:
            found = shared._allocations[key] = np.empty(shape, dtype)
    return found


def install() -> bool:
    """Put :func:`run_block` and :func:`shared_array` in the simulator's classes; False (nothing changed) when this
    numba-cuda's simulator lacks what they rely on."""
    from numba.cuda.simulator import kernel, kernelapi

    try:  # a thread and a shared-memory object as the simulator makes them (3-d grid and block points)
        probe = kernel.BlockThread(lambda: None, kernel.BlockManager(None, (1, 1, 1), (1, 1, 1), False),
                                   (0, 0, 0), (0, 0, 0), False)
        shared = kernelapi.FakeCUDAShared(0)
    except (AttributeError, TypeError):
        return False
    thread_fields = ("syncthreads_event", "syncthreads_blocked", "exception", "abort", "is_alive")
    shared_fields = ("_allocations", "_dynshared_size", "_dynshared")
    if not (all(hasattr(probe, name) for name in thread_fields) and all(hasattr(shared, name) for name in shared_fields)):
        return False
    kernel.BlockManager.run = run_block  # type: ignore[method-assign]
    kernelapi.FakeCUDAShared.array = shared_array  # type: ignore[method-assign]
    return True
