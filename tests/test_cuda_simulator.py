"""The fixes minitensor installs into Numba's CUDA simulator (minitensor/backends/cuda_simulator.py).

Kernels here are raw Numba CUDA kernels checked against NumPy: barriers with every thread, barriers after some
threads have returned, an exception in one thread, and shared arrays created by many threads at once.
"""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import minitensor as mt
from minitensor.errors import BackendUnavailableError

try:
    mt.get_backend("cuda")
except BackendUnavailableError as error:  # no GPU and no simulator
    pytest.skip(str(error), allow_module_level=True)

from minitensor.backends import cuda_simulator  # noqa: E402
from minitensor.backends.cuda_allocator import SIMULATED  # noqa: E402

if not SIMULATED:
    pytest.skip("tests the simulator's scheduling", allow_module_level=True)

from numba import cuda  # noqa: E402
from numba.cuda.simulator import kernel as sim_kernel  # noqa: E402
from numba.cuda.simulator import kernelapi  # noqa: E402


def finishes(launch: Any, seconds: float = 60.0) -> bool:
    """Run ``launch()`` in a thread; whether it finished within ``seconds`` (a hung barrier fails, not hangs)."""
    worker = threading.Thread(target=launch, daemon=True)
    worker.start()
    worker.join(seconds)
    return not worker.is_alive()


def test_the_fixes_are_installed() -> None:
    assert sim_kernel.BlockManager.run is cuda_simulator.run_block
    assert kernelapi.FakeCUDAShared.array is cuda_simulator.shared_array


@cuda.jit
def block_sums(values, out):  # type: ignore[no-untyped-def]
    """out[b] = sum of block b's values: a shared-memory tree reduction with a barrier per level."""
    partial = cuda.shared.array(8, np.float64)
    t = cuda.threadIdx.x
    partial[t] = values[cuda.blockIdx.x * 8 + t]
    cuda.syncthreads()
    width = 4
    while width > 0:
        if t < width:
            partial[t] += partial[t + width]
        cuda.syncthreads()
        width //= 2
    if t == 0:
        out[cuda.blockIdx.x] = partial[0]


def test_barriers_release_every_thread_and_keep_block_order() -> None:
    values = np.arange(48, dtype=np.float64) ** 2
    out = np.zeros(6)
    assert finishes(lambda: block_sums[6, 8](values, out))
    np.testing.assert_array_equal(out, (values.reshape(6, 8)).sum(axis=1))


@cuda.jit
def early_exits(out):  # type: ignore[no-untyped-def]
    """Threads 2.. return at once; threads 0 and 1 pass two barriers, exchanging values through shared memory."""
    shared = cuda.shared.array(2, np.int64)
    t = cuda.threadIdx.x
    if t >= 2:
        return
    shared[t] = 10 * (t + 1)
    cuda.syncthreads()
    mine = shared[1 - t]
    cuda.syncthreads()
    out[t] = mine


def test_a_barrier_waits_only_for_the_threads_still_running() -> None:
    out = np.zeros(2, np.int64)
    assert finishes(lambda: early_exits[1, 8](out))
    np.testing.assert_array_equal(out, [20, 10])


@cuda.jit
def fails_in_one_thread(out):  # type: ignore[no-untyped-def]
    t = cuda.threadIdx.x
    cuda.syncthreads()
    out[t + 3 * (t == 5)] = t  # thread 5 writes past the end


def test_an_exception_in_one_thread_is_raised_and_the_others_stop() -> None:
    out = np.zeros(8, np.int64)
    raised: list[BaseException] = []

    def launch() -> None:
        try:
            fails_in_one_thread[1, 8](out)
        except Exception as error:  # noqa: BLE001 - the test inspects it
            raised.append(error)

    assert finishes(launch)
    assert len(raised) == 1 and isinstance(raised[0], IndexError), raised
    assert "tid=[5, 0, 0]" in str(raised[0])


def test_threads_creating_one_shared_array_at_once_all_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight threads ask for the same line's array together while creating one is slow: each gets the same array
    (the simulator's own lookup-then-create hands out several)."""

    def slow_empty(shape: Any, dtype: Any) -> np.ndarray:
        time.sleep(0.01)  # every other thread reaches the lookup meanwhile
        return np.empty(shape, dtype)

    monkeypatch.setattr(cuda_simulator, "np", SimpleNamespace(empty=slow_empty, frombuffer=np.frombuffer))
    shared = kernelapi.FakeCUDAShared(0)
    start = threading.Barrier(8)
    got: list[np.ndarray] = []

    def ask() -> None:
        start.wait()
        got.append(shared.array((4,), np.float64))  # one line for all eight threads

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(got) == 8 and all(array is got[0] for array in got)
    other = shared.array((3,), np.int64)  # another line: another array
    assert other is not got[0] and other.shape == (3,) and other.dtype == np.int64
