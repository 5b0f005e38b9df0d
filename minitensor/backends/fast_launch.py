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
import statistics
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba import types  # noqa: E402
from numba.np.ufunc import parallel as _numba_parallel  # noqa: E402

from .fast_codegen import kernel_module  # noqa: E402
from .fast_compile import c_function, load_without_refresh  # noqa: E402
from .fast_intrinsics import HOST_CPU, X86  # noqa: E402

SERIAL_BELOW = 1 << 15
"""Work (elements; multiply-adds for a matmul) under which a kernel always runs its serial build."""
PARALLEL_MOST = 1 << 22
"""The largest break-even :func:`parallel_from` reports: from here on a kernel always takes the parallel build."""
PARALLEL_FROM_ENV = "MINITENSOR_PARALLEL_FROM"
"""An environment variable that fixes the break-even (elements) instead of measuring it."""


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


@numba.njit(cache=True)
def _add_serial(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    for i in range(out.size):
        out[i] = a[i] + b[i]


@numba.njit(parallel=True, cache=True)
def _add_parallel(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    for i in numba.prange(out.size):
        out[i] = a[i] + b[i]


for _kernel in (_add_serial, _add_parallel):  # a warm process loads them without Numba's context refresh
    load_without_refresh(getattr(_kernel, "_cache", None))


def _median_seconds(kernel: Callable[..., Any], arrays: tuple[np.ndarray, ...], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        kernel(*arrays)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def break_even(wake: float, serial: float, parallel: float, size: int) -> int:
    """The work from which the parallel build pays, from timings of a memory-bound add: ``wake`` seconds the pool
    adds to a tiny launch, and ``serial``/``parallel`` seconds for ``size`` elements. The parallel build saves
    (serial - (parallel - wake)) / size seconds per element once the pool runs, and pays ``wake`` to start it."""
    saved = (serial - max(parallel - wake, 0.0)) / size
    if saved <= 0.0:
        return PARALLEL_MOST
    return int(min(max(wake / saved, SERIAL_BELOW), PARALLEL_MOST))


def measure_break_even(size: int = 1 << 19, repeats: int = 9) -> int:
    """:func:`break_even` measured now, with the current thread layer, wait policy and thread count: a float32 add of
    64 elements and of ``size`` elements on both builds (about 10 ms; the kernels are cached on disk)."""
    rng = np.random.default_rng(0)
    big = tuple(rng.random(size, dtype=np.float32) for _ in range(3))
    tiny = tuple(array[:64] for array in big)
    parallel = serialized(_add_parallel) if SERIALIZE_PARALLEL else _add_parallel
    for kernel in (_add_serial, parallel):  # compile (or load), start the pool, fault the pages in
        kernel(*big)
        kernel(*big)
    wake = _median_seconds(parallel, tiny, repeats) - _median_seconds(_add_serial, tiny, repeats)
    return break_even(max(wake, 0.0), _median_seconds(_add_serial, big, repeats),
                      _median_seconds(parallel, big, repeats), size)


_parallel_from: dict[int, int] = {}  # thread count -> break-even


def parallel_from() -> int:
    """The work (elements) from which a kernel runs its parallel build, for the current Numba thread count: the
    ``MINITENSOR_PARALLEL_FROM`` environment variable if set, else measured once per thread count (:func:`
    measure_break_even`); never below SERIAL_BELOW, and PARALLEL_MOST + 1 (never) with one thread.

    Waking the pool's workers costs from a few microseconds on bare metal to ~100 us on a small VM (measured here
    under OMP_WAIT_POLICY=PASSIVE: a 40K-element float32 add took 6.8 us on the serial build and 83-104 us on the
    parallel one), so one fixed threshold is either slow there or leaves cores idle elsewhere."""
    fixed = os.environ.get(PARALLEL_FROM_ENV)
    if fixed:
        try:
            return max(int(fixed), SERIAL_BELOW)
        except ValueError:
            raise ValueError(f"{PARALLEL_FROM_ENV} must be a whole number of elements, got {fixed!r}") from None
    threads = numba.get_num_threads()
    found = _parallel_from.get(threads)
    if found is None:
        found = _parallel_from[threads] = PARALLEL_MOST + 1 if threads == 1 else measure_break_even()
    return found


def use_parallel(work: int) -> bool:
    """Whether ``work`` units take a kernel's parallel build (:func:`parallel_from`; no measuring below
    SERIAL_BELOW)."""
    return work >= SERIAL_BELOW and work >= parallel_from()


def launch(work: int, kernel: str, family: str, op: str, compute: str, *args: Any) -> None:
    """Call ``kernel`` of the (family, op, compute) kernel module: its parallel build when ``work`` units pay for
    waking the thread pool (:func:`use_parallel`), else its serial build, which never touches the pool and
    compiles in about a third of the time."""
    find_kernel(kernel, family, op, compute, use_parallel(work))(*args)


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


STREAM_FROM_ENV = "MINITENSOR_STREAM_FROM"
"""An environment variable that fixes :data:`STREAM_FROM` (bytes; 0 turns streaming off)."""
STREAM_NEVER = 1 << 62
"""A limit no output reaches: streaming off."""


def last_level_cache_bytes() -> int:
    """The size of this CPU's largest cache (Linux sysfs), 0 where it cannot be read."""
    sizes = [0]
    root = "/sys/devices/system/cpu/cpu0/cache"
    try:
        entries = os.listdir(root)
    except OSError:
        return 0
    for entry in entries:
        try:
            with open(os.path.join(root, entry, "size"), encoding="ascii") as f:
                text = f.read().strip()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            sizes.append(int(digits) * scale)
    return max(sizes)


def streaming_pays(cpu: str) -> bool:
    """Whether non-temporal stores speed up a long memory-bound element-wise call on the CPU LLVM calls ``cpu``: on
    an Ice Lake Xeon a 10^7 float64 negation took 9.3 ms streamed against 12.9 plain; on a Zen 5 EPYC ("znver5")
    streaming gained nothing on one thread (0.94x NumPy streamed, 0.93-1.01 plain) and lost on two (negation 1.02
    against 1.10, add 1.40 against 1.90). So AMD's Zen cores write plainly."""
    return not cpu.startswith("znver")


def _stream_from() -> int:
    """:data:`STREAM_FROM`: the environment's value, else 3/4 of the last-level cache on x86 CPUs where streaming
    pays (:func:`streaming_pays`), else never."""
    fixed = os.environ.get(STREAM_FROM_ENV)
    if fixed:
        try:
            value = int(fixed)
        except ValueError:
            raise ValueError(f"{STREAM_FROM_ENV} must be a whole number of bytes, got {fixed!r}") from None
        return value if value > 0 else STREAM_NEVER
    cache = last_level_cache_bytes()
    return cache * 3 // 4 if X86 and cache and streaming_pays(HOST_CPU) else STREAM_NEVER


STREAM_FROM = _stream_from()
"""Output bytes from which a contiguous element-wise call writes with non-temporal stores (``map_stream_run``):
3/4 of the last-level cache, the point where glibc's memcpy streams too (the output cannot stay in the cache, and a
normal store first reads each line it writes: on an Ice Lake Xeon with 48 MB L3, a 10^7 float64 negation takes 9.3
ms streamed against 12.9 plain). x86 only, not AMD's Zen (:func:`streaming_pays`); :data:`STREAM_FROM_ENV` overrides
it."""


COMPUTE_BOUND = ("exp", "log", "tanh", "sigmoid")
"""Map ops that never stream: :mod:`minitensor.backends.fast_math`'s functions take longer than the memory traffic
they save, and their tile would be computed, then copied (10^7 float64, one thread, Ice Lake: exp 16.5 ms plain
against 17.4 streamed, log 18.2 / 19.9, tanh 35.7 / 38.5, sigmoid 24.4 / 28.1; NumPy's own loops: 16.9, 16.3, 30.5,
69.1)."""


def streams(nbytes: int, op: str) -> bool:
    """Whether an element-wise output of ``nbytes`` is written with non-temporal stores (:data:`STREAM_FROM`), for
    every op but the :data:`COMPUTE_BOUND` ones."""
    return nbytes >= STREAM_FROM and op not in COMPUTE_BOUND


_runs: dict[tuple, int] = {}


def run_address(family: str, op: str, compute: str, out: np.dtype, *inputs: np.dtype, stream: bool = False) -> int:
    """The address of ``op``'s per-element loop (``map_run`` or ``zip_run`` of its kernel module; with ``stream``,
    ``map_stream_run``/``zip_stream_run``) compiled as a C function for these output and input dtypes: what the
    walkers of :mod:`minitensor.backends.fast_walk_kernels` take as ``run``. Compiled once per machine (cached on
    disk), looked up once per process."""
    key = (family, op, compute, out, inputs, stream)
    address = _runs.get(key)
    if address is None:
        pointers = [types.CPointer(numba.from_dtype(dtype)) for dtype in (out, *inputs)]
        signature = types.void(*pointers, *[types.int64] * (1 + len(inputs)))
        module = kernel_module(family, op, compute, parallel=False)
        name = f"{family}_stream_run" if stream else f"{family}_run"
        address = _runs[key] = c_function(module, name, signature).address
    return address


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
