"""Benchmark the ``cuda`` backend on a real GPU against the targets of issue 16, in one run.

Usage: python benchmarks/gpu.py [--repeats 20] [--quick] [--skip-training]

1. Bandwidth: contiguous ``map neg`` and ``zip add`` (float32, 2^26 elements) in GB/s, as a share of the
   device-to-device copy bandwidth measured in the same run (target >= 70 %); a transposed (strided) map, a
   float64 zip and the time per call of a tiny zip (Python planning plus Numba's launch) for information.
2. Matmul: float32 4096 x 4096 x 4096 in TFLOP/s, as a share of PyTorch's CUDA matmul (cuBLAS) in the same run,
   or CuPy's when PyTorch has no CUDA (target >= 25 %); float64 and a batched product for information.
3. Training steps: the digits CNN (``projects/run_digits.py --model cnn`` defaults: batch 32, Adam) and the
   default GPT of ``projects/run_gpt.py`` (as ``benchmarks/training.py`` times it), ms per step on ``cuda``
   and on ``fast`` (target: cuda faster).

Every kernel is timed as the median over ``--repeats`` runs after a warm-up run (which compiles it), each run
bracketed by ``synchronize()``. The last lines list every target with its measured value and PASS/FAIL.
Exits with status 2 and a message when no real CUDA GPU is present (Numba's simulator does not count;
``--allow-simulator`` runs tiny sizes to test this script only: its numbers mean nothing).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "projects"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from run_digits import build_model  # noqa: E402
from training import gpt_step_fn  # noqa: E402

import minitensor  # noqa: E402
from minitensor import nn, optim  # noqa: E402
from minitensor.backends import get_backend  # noqa: E402
from minitensor.errors import BackendUnavailableError  # noqa: E402

BANDWIDTH_TARGET, MATMUL_TARGET = 0.70, 0.25


def fail(message: str) -> None:
    print(f"benchmarks/gpu.py: {message}", file=sys.stderr)
    raise SystemExit(2)


def median_seconds(fn: Callable[[], object], sync: Callable[[], None], repeats: int, warmup: int = 1) -> float:
    """Median wall time of ``fn`` with the device synchronized before and after each run."""
    for _ in range(warmup):  # JIT compilation, allocator warm-up
        fn()
    sync()
    times = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def load_reference() -> tuple[str, Any] | None:
    """("torch", torch) when PyTorch sees a GPU, else ("cupy", cupy) when CuPy does, else None."""
    try:
        import torch

        if torch.cuda.is_available():
            return "torch", torch
    except Exception:  # noqa: BLE001 - not installed, or a broken CUDA install
        pass
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            return "cupy", cupy
    except Exception:  # noqa: BLE001
        pass
    return None


class Report:
    """Rows as they are measured, and the targets checked at the end."""

    def __init__(self) -> None:
        self.targets: list[tuple[str, str, bool | None]] = []

    def row(self, what: str, ms: float, rate: str, note: str = "") -> None:
        print(f"  {what:44} {ms:10.3f} ms {rate:>16}  {note}", flush=True)

    def target(self, name: str, value: str, ok: bool | None) -> None:
        self.targets.append((name, value, ok))

    def summary(self) -> None:
        print("\ntargets (issue 16):")
        for name, value, ok in self.targets:
            verdict = "n/a" if ok is None else ("PASS" if ok else "FAIL")
            print(f"  {verdict:4}  {name:58} {value}")


def bandwidth(backend: Any, cuda: Any, n: int, repeats: int, report: Report) -> None:
    """Copy, map and zip bandwidth (bytes read + written per second)."""
    print(f"\n1. bandwidth, {n:,} elements")
    rng = np.random.default_rng(0)
    f32 = np.dtype(np.float32)
    host = rng.standard_normal(n).astype(f32)
    a, b, out = backend.from_numpy(host), backend.from_numpy(host[::-1].copy()), backend.empty((n,), f32)
    copy_s = median_seconds(lambda: out.storage.copy_to_device(a.storage), backend.synchronize, repeats)
    copy_bw = 2 * n * 4 / copy_s
    report.row("device-to-device copy (float32)", copy_s * 1e3, f"{copy_bw / 1e9:8.1f} GB/s", "reference")
    runs = {
        "map neg (float32, contiguous)": (lambda: backend.map("neg", a, out), 2 * n * 4),
        "zip add (float32, contiguous)": (lambda: backend.zip("add", a, b, out), 3 * n * 4),
    }
    for what, (fn, moved) in runs.items():
        seconds = median_seconds(fn, backend.synchronize, repeats)
        share = moved / seconds / copy_bw
        report.row(what, seconds * 1e3, f"{moved / seconds / 1e9:8.1f} GB/s", f"{share:6.1%} of copy")
        report.target(f"{what.split(' (')[0]} >= {BANDWIDTH_TARGET:.0%} of copy bandwidth", f"{share:.1%}", share >= BANDWIDTH_TARGET)
    np.testing.assert_allclose(backend.to_numpy(out), host + host[::-1], rtol=1e-6)
    side = max(32, int(np.sqrt(n)) // 32 * 32)
    square = backend.from_numpy(rng.standard_normal((side, side)).astype(f32)).permute(1, 0)
    square_out = backend.empty((side, side), f32)
    seconds = median_seconds(lambda: backend.map("neg", square, square_out), backend.synchronize, repeats)
    report.row(f"map neg of a transposed {side}x{side} (strided)", seconds * 1e3, f"{2 * side * side * 4 / seconds / 1e9:8.1f} GB/s")
    d64 = backend.from_numpy(host.astype(np.float64)[: n // 2])
    out64 = backend.empty((n // 2,), np.dtype(np.float64))
    seconds = median_seconds(lambda: backend.zip("mul", d64, d64, out64), backend.synchronize, repeats)
    report.row("zip mul (float64, contiguous)", seconds * 1e3, f"{3 * n // 2 * 8 / seconds / 1e9:8.1f} GB/s")
    tiny_a, tiny_out = backend.from_numpy(host[:32]), backend.empty((32,), f32)
    seconds = median_seconds(lambda: [backend.zip("add", tiny_a, tiny_a, tiny_out) for _ in range(100)], backend.synchronize, repeats)
    report.row("launch overhead: zip add of 32 elements", seconds * 10, "", "per call (ms), host-bound")
    del cuda


def matmul(backend: Any, size: int, repeats: int, reference: tuple[str, Any] | None, report: Report, batch: int = 64) -> None:
    """Square float32 (and float64, batched) products against cuBLAS through PyTorch or CuPy."""
    print(f"\n2. matmul, reference: {reference[0] if reference else 'none (install torch with CUDA or cupy)'}")
    rng = np.random.default_rng(1)
    for dtype in (np.float32, np.float64):
        n = size if dtype == np.float32 else size // 2
        x, y = (rng.standard_normal((n, n)).astype(dtype) for _ in range(2))
        a, b, out = backend.from_numpy(x), backend.from_numpy(y), backend.empty((n, n), np.dtype(dtype))
        seconds = median_seconds(lambda: backend.matmul(a, b, out), backend.synchronize, repeats)  # noqa: B023
        flops = 2 * n**3 / seconds
        note, share = "", None
        if reference is not None:
            ref_seconds = reference_matmul(reference, x, y, repeats)
            share = ref_seconds / seconds
            note = f"{share:6.1%} of {reference[0]} ({2 * n**3 / ref_seconds / 1e12:.1f} TFLOP/s)"
        report.row(f"matmul {np.dtype(dtype).name} {n}x{n}x{n}", seconds * 1e3, f"{flops / 1e12:8.2f} TFLOP/s", note)
        if dtype == np.float32:
            value = f"{share:.1%}" if share is not None else "no reference"
            ok = None if share is None else share >= MATMUL_TARGET
            report.target(f"float32 matmul {n}^3 >= {MATMUL_TARGET:.0%} of cuBLAS", value, ok)
        rows = slice(0, min(n, 64))
        np.testing.assert_allclose(backend.to_numpy(out)[rows], x[rows].astype(np.float64) @ y, rtol=1e-3, atol=1e-3 * np.sqrt(n))
    n = max(size // 16, 8)
    x, y = (rng.standard_normal((batch, n, n)).astype(np.float32) for _ in range(2))
    a, b, out = backend.from_numpy(x), backend.from_numpy(y), backend.empty((batch, n, n), np.dtype(np.float32))
    seconds = median_seconds(lambda: backend.matmul(a, b, out), backend.synchronize, repeats)
    report.row(f"batched matmul float32 {batch}x{n}x{n}x{n}", seconds * 1e3, f"{2 * batch * n**3 / seconds / 1e12:8.2f} TFLOP/s")


def reference_matmul(reference: tuple[str, Any], x: np.ndarray, y: np.ndarray, repeats: int) -> float:
    name, module = reference
    if name == "torch":
        a, b = module.from_numpy(x).cuda(), module.from_numpy(y).cuda()
        out = module.empty_like(a)
        return median_seconds(lambda: module.matmul(a, b, out=out), module.cuda.synchronize, repeats)
    a, b = module.asarray(x), module.asarray(y)
    out = module.empty_like(a)
    return median_seconds(lambda: module.matmul(a, b, out=out), module.cuda.runtime.deviceSynchronize, repeats)


def digits_cnn_step(backend: str) -> Callable[[], None]:
    """One step of run_digits.py's default CNN (8x8 digits, batch 32, Adam lr 0.01) on random images."""
    minitensor.manual_seed(0)
    model = build_model("cnn", (1, 8, 8), 256, backend, "float32")
    opt = optim.Adam(model.parameters(), lr=0.01)
    rng = np.random.default_rng(0)
    x = rng.random((32, 1, 8, 8), dtype=np.float32)
    y = rng.integers(0, 10, 32)

    def step() -> None:
        loss = nn.functional.cross_entropy(model(minitensor.tensor(x, backend=backend)), minitensor.tensor(y, backend=backend))
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()  # waits for the device

    return step


def training(repeats: int, report: Report) -> None:
    """Training steps on cuda and on fast, each built fresh (the first steps compile)."""
    print("\n3. training steps (ms per step, median)")
    for name, make in (("digits CNN", digits_cnn_step), ("GPT (run_gpt defaults)", gpt_step_fn)):
        times = {}
        for backend in ("cuda", "fast"):
            step = make(backend)
            start = time.perf_counter()
            step()
            first = time.perf_counter() - start
            times[backend] = median_seconds(step, lambda: None, repeats, warmup=2)
            report.row(f"{name} on {backend}", times[backend] * 1e3, "", f"first step {first:.1f} s (compiles)")
        ratio = times["fast"] / times["cuda"]
        report.target(f"{name} step faster on cuda than on fast", f"{ratio:.2f}x fast's speed", ratio > 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (2^24 elements, 2048^3 matmul)")
    parser.add_argument("--skip-training", action="store_true", help="only the kernel benchmarks")
    parser.add_argument("--allow-simulator", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    simulated = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
    if simulated and not args.allow_simulator:
        fail("NUMBA_ENABLE_CUDASIM is set: the CUDA simulator is not a GPU, nothing to benchmark (unset it on a GPU machine)")
    try:
        backend = get_backend("cuda")
    except BackendUnavailableError as error:
        reason = "numba-cuda is not installed" if "pip install" in str(error) else "numba.cuda.is_available() is False"
        fail(f"no real CUDA GPU found ({reason}), nothing to benchmark")
    from numba import cuda

    elements, size, repeats = (1 << 24, 2048, args.repeats) if args.quick else (1 << 26, 4096, args.repeats)
    if simulated:
        elements, size, repeats = 256, 16, 1
    device = "simulator" if simulated else cuda.get_current_device().name
    device = device.decode() if isinstance(device, bytes) else device
    reference = None if simulated else load_reference()
    print(f"device: {device}; median of {repeats} runs after a warm-up")
    report = Report()
    started = time.perf_counter()
    bandwidth(backend, cuda, elements, repeats, report)
    matmul(backend, size, repeats, reference, report, batch=2 if simulated else 64)
    if not (args.skip_training or simulated):
        training(max(3, repeats // 4), report)
    report.summary()
    stats = backend.memory_stats()
    print(f"\nallocator: {stats['segment.all.allocated']} device mallocs, {stats['num_cache_hits']} cache hits, "
          f"{stats['reserved_bytes.all.peak'] / 2**30:.2f} GiB peak reserved; run took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
