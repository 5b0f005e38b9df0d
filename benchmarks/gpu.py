"""Benchmark the ``cuda`` backend on a real GPU: map/zip bandwidth (GB/s) and matmul GFLOP/s.

Usage: python benchmarks/gpu.py [--repeats 20] [--dtype float32] [--quick]

Each kernel is timed as the median over ``--repeats`` runs (after a warm-up run that compiles it),
each run bracketed by ``synchronize()``. When CuPy or PyTorch (with CUDA) is installed, the same
operations run there too, on the same sizes, and the table shows our time relative to theirs
(``ours/torch = 2.0`` means we take twice as long). Exits with status 2 and a message when no real
CUDA GPU is present; Numba's simulator does not count (``--allow-simulator`` runs tiny sizes to
test this script only: its numbers mean nothing).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ELEMENTWISE_SIZES = [1 << 16, 1 << 20, 1 << 24, 1 << 26]
MATMUL_SIZES = [128, 512, 1024, 2048, 4096]


def fail(message: str) -> None:
    print(f"benchmarks/gpu.py: {message}", file=sys.stderr)
    raise SystemExit(2)


def median_seconds(fn: Callable[[], object], sync: Callable[[], None], repeats: int) -> float:
    """Median wall time of ``fn`` with the device synchronized before and after each run."""
    fn()  # warm-up: JIT compilation, allocator
    sync()
    times = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class Reference:
    """The same ops in CuPy or PyTorch: ``neg``, ``add``, ``matmul`` into preallocated outputs."""

    def __init__(self, name: str, module: object) -> None:
        self.name = name
        self.module = module

    @staticmethod
    def load() -> list[Reference]:
        refs = []
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() > 0:
                refs.append(Reference("cupy", cupy))
        except Exception:  # not installed or no device
            pass
        try:
            import torch

            if torch.cuda.is_available():
                refs.append(Reference("torch", torch))
        except Exception:
            pass
        return refs

    def array(self, x: np.ndarray) -> object:
        if self.name == "cupy":
            return self.module.asarray(x)
        return self.module.from_numpy(x).cuda()

    def sync(self) -> None:
        if self.name == "cupy":
            self.module.cuda.runtime.deviceSynchronize()
        else:
            self.module.cuda.synchronize()

    def op(self, name: str) -> Callable[..., object]:
        m = self.module
        return {"neg": m.negative if self.name == "cupy" else m.neg, "add": m.add, "matmul": m.matmul}[name]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--quick", action="store_true", help="only the smaller sizes")
    parser.add_argument("--allow-simulator", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    simulated = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
    if simulated and not args.allow_simulator:
        fail("NUMBA_ENABLE_CUDASIM is set: the CUDA simulator is not a GPU, nothing to benchmark (unset it on a GPU machine)")
    from minitensor.errors import BackendUnavailableError

    try:
        from minitensor.backends import get_backend

        backend = get_backend("cuda")
    except BackendUnavailableError as error:
        reason = "numba-cuda is not installed" if "pip install" in str(error) else "numba.cuda.is_available() is False"
        fail(f"no real CUDA GPU found ({reason}), nothing to benchmark")
    from numba import cuda

    dtype = np.dtype(args.dtype)
    sizes, mm_sizes, repeats = ELEMENTWISE_SIZES, MATMUL_SIZES, args.repeats
    if args.quick:
        sizes, mm_sizes = sizes[:2], mm_sizes[:3]
    if simulated:
        sizes, mm_sizes, repeats = [64], [8], 1
    refs = Reference.load()
    device = "simulator" if simulated else cuda.get_current_device().name
    device = device.decode() if isinstance(device, bytes) else device
    names = ", ".join(r.name for r in refs) or "none installed"
    print(f"device: {device}; dtype {dtype}; median of {repeats}; references (CuPy/PyTorch): {names}")

    rng = np.random.default_rng(0)
    header = f"{'kernel':8} {'size':>12} {'ms':>9} {'rate':>14}" + "".join(f" {'ours/' + r.name:>12}" for r in refs)
    print(header)
    print("-" * len(header))

    def report(kernel: str, size: str, seconds: float, rate: str, ref_seconds: list[float]) -> None:
        ratios = "".join(f" {seconds / s:12.2f}" for s in ref_seconds)
        print(f"{kernel:8} {size:>12} {seconds * 1e3:9.3f} {rate:>14}{ratios}", flush=True)

    for op, arity in (("neg", 1), ("add", 2)):
        for n in sizes:
            hosts = [rng.standard_normal(n).astype(dtype) for _ in range(arity)]
            ins = [backend.from_numpy(h) for h in hosts]
            out = backend.empty((n,), dtype)
            if arity == 1:
                run = lambda: backend.map(op, ins[0], out)  # noqa: B023 - used within this iteration
            else:
                run = lambda: backend.zip(op, ins[0], ins[1], out)  # noqa: B023
            seconds = median_seconds(run, backend.synchronize, repeats)
            moved = (arity + 1) * n * dtype.itemsize
            ref_seconds = []
            for ref in refs:
                r_ins, r_out, fn = [ref.array(h) for h in hosts], ref.array(np.empty(n, dtype)), ref.op(op)
                ref_seconds.append(median_seconds(lambda: fn(*r_ins, out=r_out), ref.sync, repeats))  # noqa: B023
            report(("map " if arity == 1 else "zip ") + op, f"{n:,}", seconds, f"{moved / seconds / 1e9:9.1f} GB/s", ref_seconds)

    for n in mm_sizes:
        a_host, b_host = (rng.standard_normal((n, n)).astype(dtype) for _ in range(2))
        a, b, out = backend.from_numpy(a_host), backend.from_numpy(b_host), backend.empty((n, n), dtype)
        seconds = median_seconds(lambda: backend.matmul(a, b, out), backend.synchronize, repeats)  # noqa: B023
        ref_seconds = []
        for ref in refs:
            ra, rb, rout, fn = ref.array(a_host), ref.array(b_host), ref.array(np.empty((n, n), dtype)), ref.op("matmul")
            ref_seconds.append(median_seconds(lambda: fn(ra, rb, out=rout), ref.sync, repeats))  # noqa: B023
        report("matmul", f"{n}x{n}x{n}", seconds, f"{2 * n**3 / seconds / 1e9:8.1f} GFLOP/s", ref_seconds)
        np.testing.assert_allclose(backend.to_numpy(out), a_host @ b_host, rtol=1e-2, atol=1e-2 * np.sqrt(n))


if __name__ == "__main__":
    main()
