"""How the ``fast`` backend finds and launches its kernels: the serial or the parallel build of a kernel module
(:mod:`minitensor.backends.fast_codegen`), chosen by the amount of work, and the thread layer Numba's pool runs on.

Idle OpenMP workers must sleep rather than spin: spinning Numba workers and spinning BLAS threads otherwise steal
each other's cores between kernels (a 784-128-10 MLP step: 12.9 ms -> 3.8 ms on 2 cores), so ``OMP_WAIT_POLICY``
defaults to PASSIVE (an explicit setting wins; it takes effect only if no OpenMP runtime has started yet). When one
has (PyTorch's, imported first), Numba's pool moves to its "workqueue" layer and parallel launches are serialised.
Every kernel of the backend (``fast.py`` and ``fast_fused.py``) is launched through :func:`launch` or
:func:`find_kernel`, so that rule holds for all of them.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import warnings
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba  # noqa: E402
from numba.np.ufunc import parallel as _numba_parallel  # noqa: E402

from .fast_codegen import kernel_module  # noqa: E402

SERIAL_BELOW = 1 << 15  # elements (multiply-adds for matmul) of work under which a kernel runs on one thread


def openmp_runtime_loaded() -> bool:
    """Whether an OpenMP runtime (GNU libgomp, Intel libiomp5, LLVM libomp) is already mapped into this process,
    e.g. by an earlier ``import torch`` (without /proc: whether torch is imported)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            text = maps.read()
    except OSError:
        return "torch" in sys.modules
    return re.search(r"/lib(?:gomp|iomp5|omp)[-\w.]*\.so", text) is not None


# An OpenMP runtime already loaded read OMP_WAIT_POLICY before the default above: its workers spin after each
# parallel region, and Numba's "omp" layer binds to that runtime (PyTorch's libgomp, loaded first). A policy the
# user chose other than PASSIVE is kept as it is.
FOREIGN_OPENMP = os.environ["OMP_WAIT_POLICY"].upper() == "PASSIVE" and openmp_runtime_loaded()


FOREIGN_OPENMP_ADVICE = (
    "set OMP_WAIT_POLICY=PASSIVE in the environment before Python starts, or import minitensor first (before torch, "
    "and before any Numba parallel code or numba.set_num_threads call)"
)


def avoid_foreign_openmp() -> bool:
    """With a spinning OpenMP runtime started before us (``FOREIGN_OPENMP``), run Numba's thread pool on its
    "workqueue" layer (plain threads that sleep when idle) instead of on that runtime: the MLP step stays as fast as
    in a clean process instead of ~10x slower. The workqueue layer aborts the process on concurrent parallel
    launches, so this backend then serialises its parallel kernels (True). A layer the user chose
    (NUMBA_THREADING_LAYER) is kept; a pool already started on OpenMP gets one warning saying what to do."""
    if not FOREIGN_OPENMP or "NUMBA_THREADING_LAYER" in os.environ:
        return False
    if getattr(_numba_parallel, "_is_initialized", False):
        if numba.threading_layer() == "omp":
            warnings.warn(
                "minitensor fast backend: an OpenMP runtime (PyTorch's, or Numba's own) started before minitensor was "
                f"imported and Numba's threads already run on it; its spinning workers can slow kernels ~10x: "
                f"{FOREIGN_OPENMP_ADVICE}",
                RuntimeWarning,
                stacklevel=3,
            )
        return False
    numba.config.THREADING_LAYER = "workqueue"  # type: ignore[attr-defined]
    return True


SERIALIZE_PARALLEL = avoid_foreign_openmp()
_parallel_lock = threading.Lock()


def launch(work: int, kernel: str, family: str, op: str, compute: str, *args: Any) -> None:
    """Call ``kernel`` of the (family, op, compute) kernel module: its parallel build for SERIAL_BELOW
    units of work or more, else its serial build.

    Waking Numba's thread pool costs tens of microseconds on an idle machine and milliseconds on a
    busy one (a 16x16 multiply measured 8 ms with two threads under load, 0.05 ms with one); the
    serial build never touches the pool and compiles in about a third of the time.
    """
    find_kernel(kernel, family, op, compute, work >= SERIAL_BELOW)(*args)


_kernels: dict[tuple[str, str, str, str, bool], Callable[..., Any]] = {}


def find_kernel(kernel: str, family: str, op: str, compute: str, parallel: bool) -> Callable[..., Any]:
    """The compiled ``kernel`` of the (family, op, compute) module's parallel or serial build (looked up once)."""
    key = (kernel, family, op, compute, parallel)
    fn = _kernels.get(key)
    if fn is None:
        fn = getattr(kernel_module(family, op, compute, parallel=parallel), kernel)
        if parallel and SERIALIZE_PARALLEL:
            # Again: a config reload may have reset it before the pool starts.
            numba.config.THREADING_LAYER = "workqueue"  # type: ignore[attr-defined]
            fn = serialized(fn)
        _kernels[key] = fn
    return fn


def lazy_kernel(kernel: str, family: str, op: str, compute: str, parallel: bool) -> Callable[..., Any]:
    """:func:`find_kernel` at the first call instead of now: for a plan that normally takes a NumPy route, so its kernel
    module is not written, imported or announced as compiling unless the kernel does run."""

    def call(*args: Any) -> Any:
        return find_kernel(kernel, family, op, compute, parallel)(*args)

    return call


def serialized(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """``kernel`` called under one process-wide lock (the workqueue layer cannot run two parallel launches)."""

    def call(*args: Any) -> Any:
        with _parallel_lock:
            return kernel(*args)

    return call
