"""Kernel benchmark: the ``fast`` backend against NumPy on the same machine, in the same run.

Run ``python benchmarks/kernels.py [--repeat N] [--quick] [--threads N] [--only TEXT]``. Prints a Markdown table with the
median time of each case and ``ratio``, the median over alternating pairs of calls of NumPy time / minitensor time
(higher is better), then the
first-call (compile or cache-load) time of each kernel family in fresh subprocesses, cold (empty
kernel cache) and warm (the cache the cold run just filled); "zip, 2nd op" is a second op in the same layout, which
compiles only that op's loop (the map/zip walkers are shared by every op).

The backend kernels are called directly on TensorData (``from_numpy``/``empty``), so this measures
kernels, not Python tensor overhead. ``exp``, ``log``, ``tanh`` and ``sigmoid`` on float arrays delegate to
NumPy's SIMD loops (split over the Numba threads when long), except long exp/log/tanh calls on a CPU without
AVX-512F, whose NumPy loops are scalar: each has a row for the default route (the row names which) and one for the
Numba kernel (``FastBackend(use_numpy_math=False)``: the vectorised ``minitensor.backends.fast_math``
functions, float32-accurate ones for float32 outputs), against the same NumPy call (for sigmoid, the expression
``1 / (1 + np.exp(-x))``). While minitensor's element-wise and reduction kernels are
timed, BLAS is limited to one thread with threadpoolctl (so idle OpenBLAS threads cannot steal a core
from Numba's); its matmul, which calls BLAS itself and manages BLAS threads, runs with the same
default BLAS threads NumPy is timed with.

A contiguous call whose output is at least 3/4 of the last-level cache (``fast_launch.STREAM_FROM``; 10^7 float64
is 80 MB) writes it with non-temporal stores (``map_stream_run``/``zip_stream_run``) on CPUs where that pays (not
AMD's Zen: ``fast_launch.streaming_pays``); the "plain stores" rows time the same calls with the ordinary loop; the
math rows never stream (``fast_launch.COMPUTE_BOUND``).

``OPENBLAS_CORETYPE`` and ``OPENBLAS_L2_SIZE`` are removed from this process's environment before
NumPy loads (they can pin OpenBLAS to slow kernels), and ``OMP_WAIT_POLICY`` defaults to ``PASSIVE``
so Numba's idle OpenMP workers sleep rather than spin and steal the cores NumPy's BLAS threads are
timed on (it matters on small, busy machines); nothing else is changed.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
    os.environ.pop(_var, None)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # idle Numba threads sleep instead of spinning against NumPy's BLAS

import argparse  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minitensor.backends import fast_launch  # noqa: E402
from minitensor.backends.fast import FastBackend  # noqa: E402
from minitensor.backends.fast import backend as fast  # noqa: E402
from minitensor.backends.fast_numpy import math_route  # noqa: E402
from minitensor.backends.fast_plan import elementwise_kernel  # noqa: E402

numba_math = FastBackend(use_numpy_math=False)  # the path that does not delegate exp/log/tanh/sigmoid to NumPy
from minitensor.tensor_data import TensorData  # noqa: E402

Case = tuple[str, Callable[[], object], Callable[[], object]]  # (name, NumPy call, minitensor call)


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_times(
    numpy_fn: Callable[[], object], fast_fn: Callable[[], object], repeat: int, limit_blas: bool = True
) -> tuple[float, float, float]:
    """Median wall times of ``repeat`` calls of each, alternating so both see the same machine load, and the median of
    the per-pair ratios (NumPy / minitensor: a pair shares the load of its moment, so drifting load cancels)."""
    limit = (lambda: threadpool_limits(limits=1, user_api="blas")) if limit_blas else contextlib.nullcontext
    for _ in range(3):  # a fresh buffer's first touches fault slowly on these VMs for a while: warm both up
        numpy_fn()
        with limit():
            fast_fn()
    numpy_times, fast_times = [], []
    for _ in range(repeat):
        numpy_times.append(timed(numpy_fn))
        with limit():
            fast_times.append(timed(fast_fn))
    ratios = [n / f for n, f in zip(numpy_times, fast_times)]
    return float(np.median(numpy_times)), float(np.median(fast_times)), float(np.median(ratios))


def td(array: np.ndarray) -> TensorData:
    return fast.from_numpy(array)


def plain_stores(family: str, op: str, inputs: list[TensorData], out: TensorData) -> Callable[[], object]:
    """The call ``fast.map``/``fast.zip`` makes, planned with streaming stores off (the ordinary loop)."""
    saved = fast_launch.STREAM_FROM
    fast_launch.STREAM_FROM = fast_launch.STREAM_NEVER
    try:
        kernel, layout = elementwise_kernel(family, op, inputs, out, lazy=False)
    finally:
        fast_launch.STREAM_FROM = saved
    storages = [x.storage for x in (*inputs, out)]
    return lambda: kernel(*storages, *layout)


def elementwise_cases(rng: np.random.Generator, n: int) -> list[Case]:
    side = int(round(n**0.5))
    rows, cols = n // 1000, 1000
    x = rng.standard_normal(n)
    y = rng.standard_normal(n)
    sq_x = rng.standard_normal((side, side))
    sq_y = rng.standard_normal((side, side))
    mat = rng.standard_normal((rows, cols))
    row = rng.standard_normal(cols)
    out_flat, out_sq, out_mat = np.empty(n), np.empty((side, side)), np.empty((rows, cols))
    tx, ty, tsq_x, tmat, trow = td(x), td(y), td(sq_x), td(mat), td(row)
    tsq_yt = td(np.ascontiguousarray(sq_y.T)).permute(1, 0)  # same values as sq_y, transposed storage
    sq_yt = np.ascontiguousarray(sq_y.T).T
    to_flat, to_sq = fast.empty((n,), np.float64), fast.empty((side, side), np.float64)
    to_mat = fast.empty((rows, cols), np.float64)
    trow2 = trow.unsqueeze(0)
    x32, out32 = x.astype(np.float32), np.empty(n, np.float32)
    tx32, to32 = td(x32), fast.empty((n,), np.float32)
    return [
        ("map neg, contiguous", lambda: np.negative(x, out=out_flat), lambda: fast.map("neg", tx, to_flat)),
        ("map neg, contiguous, plain stores", lambda: np.negative(x, out=out_flat), plain_stores("map", "neg", [tx], to_flat)),
        *math_cases(x, out_flat, tx, to_flat, "float64"),
        *math_cases(x32, out32, tx32, to32, "float32"),
        ("map neg, transposed", lambda: np.negative(sq_yt, out=out_sq), lambda: fast.map("neg", tsq_yt, to_sq)),
        ("zip add, contiguous", lambda: np.add(x, y, out=out_flat), lambda: fast.zip("add", tx, ty, to_flat)),
        ("zip add, contiguous, plain stores", lambda: np.add(x, y, out=out_flat), plain_stores("zip", "add", [tx, ty], to_flat)),
        ("zip mul, contiguous", lambda: np.multiply(x, y, out=out_flat), lambda: fast.zip("mul", tx, ty, to_flat)),
        ("zip add, one transposed", lambda: np.add(sq_x, sq_yt, out=out_sq), lambda: fast.zip("add", tsq_x, tsq_yt, to_sq)),
        ("zip add, one broadcast", lambda: np.add(mat, row, out=out_mat), lambda: fast.zip("add", tmat, trow2, to_mat)),
    ]


NUMPY_REFERENCE: dict[str, Callable[[np.ndarray, np.ndarray], object]] = {
    "exp": lambda x, out: np.exp(x, out=out),
    "log": lambda x, out: np.log(x, out=out),
    "tanh": lambda x, out: np.tanh(x, out=out),
    "sigmoid": lambda x, out: np.divide(1.0, 1.0 + np.exp(-x), out=out),  # how NumPy users write it
}
"""What each transcendental case times on the NumPy side (log gets |x| on both sides)."""


def math_cases(x: np.ndarray, out: np.ndarray, tx: TensorData, tout: TensorData, dtype: str) -> list[Case]:
    """exp, log, tanh, sigmoid on contiguous ``dtype``: the default backend's route (NumPy's loop or, for long calls
    where NumPy's loops are not SIMD, the Numba kernel: ``fast_numpy.math_route``) and the Numba kernel, each a row."""
    abs_x = np.abs(x)
    t_abs = td(abs_x)
    cases: list[Case] = []
    for op, reference in NUMPY_REFERENCE.items():
        arg, targ = (abs_x, t_abs) if op == "log" else (x, tx)
        route = "NumPy's loop" if math_route(op, x.size, x.dtype) is not None else "Numba kernel"
        cases.append((f"map {op} {dtype}, contiguous (default: {route})", lambda r=reference, a=arg: r(a, out),
                      lambda op=op, t=targ: fast.map(op, t, tout)))
        cases.append((f"map {op} {dtype}, contiguous (Numba kernel)", lambda r=reference, a=arg: r(a, out),
                      lambda op=op, t=targ: numba_math.map(op, t, tout)))
    return cases


def reduce_cases(rng: np.random.Generator, shape: tuple[int, ...]) -> list[Case]:
    x = rng.standard_normal(shape)
    tx = td(x)
    cases = []
    for dim in range(len(shape)):
        out_shape = tuple(1 if i == dim else s for i, s in enumerate(shape))
        out, tout = np.empty(out_shape), fast.empty(out_shape, np.float64)
        cases.append(
            (
                f"sum dim {dim} of {shape}",
                lambda dim=dim, out=out: np.sum(x, axis=dim, keepdims=True, out=out),
                lambda dim=dim, tout=tout: fast.reduce("sum", tx, dim, tout),
            )
        )
    return cases


def matmul_cases(rng: np.random.Generator, sizes: list[int]) -> list[Case]:
    cases = []
    for dtype in (np.float32, np.float64):
        for n in sizes:
            a = rng.standard_normal((n, n)).astype(dtype)
            b = rng.standard_normal((n, n)).astype(dtype)
            out, tout = np.empty((n, n), dtype), fast.empty((n, n), dtype)
            ta, tb = td(a), td(b)
            cases.append(
                (
                    f"matmul n={n} {np.dtype(dtype).name}",
                    lambda a=a, b=b, out=out: np.matmul(a, b, out=out),
                    lambda ta=ta, tb=tb, tout=tout: fast.matmul(ta, tb, tout),
                )
            )
    return cases


FIRST_CALL_SCRIPT = r"""
import json, sys, time
start = time.perf_counter()
import numpy as np
from minitensor.backends.fast import FastBackend
imported = time.perf_counter()
# Kernels only: with the NumPy twins, NumPy math and BLAS on, these small calls would never compile anything.
fast = FastBackend(use_blas=False, use_numpy_math=False, use_numpy_twins=False)
x = fast.from_numpy(np.ones((64, 64)))
out = fast.empty((64, 64), np.float64)
col = fast.empty((64, 1), np.float64)
times = {"import": imported - start}
for name, call in [
    ("map", lambda: fast.map("exp", x, out)),
    ("zip", lambda: fast.zip("add", x, x.permute(1, 0), out)),
    ("zip, 2nd op", lambda: fast.zip("mul", x, x.permute(1, 0), out)),  # the walkers are compiled: only mul's loop
    ("reduce", lambda: (fast.reduce("sum", x, 1, col), fast.reduce("sum", x.permute(1, 0), 1, col))),
    ("matmul", lambda: fast.matmul(x, x, out)),
]:
    t = time.perf_counter()
    call()
    times[name] = time.perf_counter() - t
print(json.dumps(times))
"""


def first_call_times(cache_dir: str) -> dict[str, float]:
    """Import and first-call times of each kernel family in a fresh process using ``cache_dir``."""
    env = dict(os.environ, MINITENSOR_CACHE_DIR=cache_dir, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-c", FIRST_CALL_SCRIPT], env=env, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="timed calls per case (median reported)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--threads", type=int, default=None, help="Numba threads (default: all cores; NumPy runs on one)")
    parser.add_argument("--only", default=None, help="only the cases whose name contains this text (e.g. 'map')")
    args = parser.parse_args()
    if args.threads:
        numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    rng = np.random.default_rng(0)
    n = 10**6 if args.quick else 10**7
    red_shape = (20, 50, 100) if args.quick else (100, 100, 1000)
    sizes = [64, 128] if args.quick else [256, 512, 1024]
    cases = elementwise_cases(rng, n) + reduce_cases(rng, red_shape) + matmul_cases(rng, sizes)

    print(f"numba threads: {numba.get_num_threads()}, repeats: {args.repeat}, elements: {n:.0e}\n")
    print("| case | NumPy ms | minitensor ms | ratio |")
    print("|---|---:|---:|---:|")
    cases = [case for case in cases if args.only is None or args.only in case[0]]
    for name, numpy_fn, fast_fn in cases:
        numpy_t, fast_t, ratio = median_times(numpy_fn, fast_fn, args.repeat, limit_blas=not name.startswith("matmul"))
        print(f"| {name} | {numpy_t * 1e3:.2f} | {fast_t * 1e3:.2f} | {ratio:.2f} |", flush=True)

    if args.only is not None:
        return
    with tempfile.TemporaryDirectory(prefix="minitensor-bench-cache-") as cache_dir:
        cold = first_call_times(cache_dir)
        warm = first_call_times(cache_dir)
    print("\nFirst call in a fresh process (s): cold = empty kernel cache, warm = second process")
    print("| | " + " | ".join(cold) + " | first calls total |")
    print("|---|" + "---:|" * (len(cold) + 1))
    for label, times in (("cold", cold), ("warm", warm)):
        total = sum(v for k, v in times.items() if k != "import")
        print(f"| {label} | " + " | ".join(f"{v:.2f}" for v in times.values()) + f" | {total:.2f} |")


if __name__ == "__main__":
    main()
