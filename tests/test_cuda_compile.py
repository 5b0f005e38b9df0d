"""The cuda backend's compilation: outside the simulator, availability errors, every kernel compiled for a real GPU
(sm_90), the hot kernels and generated fused kernels assembled by ptxas, stable on-disk cache keys, and the GPU
benchmark's refusal to run without a GPU (each in a fresh Python process without ``NUMBA_ENABLE_CUDASIM``: no GPU is
needed to compile). ``minitensor.compile``'s plans on cuda (simulator) are tested in test_cuda_compiled_plans.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("numba.cuda")

ROOT = Path(__file__).resolve().parents[1]


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    environ.update(env)
    environ["PYTHONPATH"] = str(ROOT) + os.pathsep + environ.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=environ, timeout=240)


def test_no_gpu_without_simulator_raises_backend_unavailable() -> None:
    result = run_python(
        """
        from numba import cuda
        if cuda.is_available():
            print("HAS-GPU")
            raise SystemExit
        from minitensor.errors import BackendUnavailableError
        from minitensor.backends import get_backend
        for attempt in range(2):
            try:
                get_backend("cuda")
            except BackendUnavailableError as error:
                print("RAISED", error)
        """,
        NUMBA_ENABLE_CUDASIM="0",
    )
    assert result.returncode == 0, result.stderr
    if "HAS-GPU" in result.stdout:
        pytest.skip("a real CUDA GPU is present")
    assert result.stdout.count("RAISED") == 2
    assert "no CUDA GPU" in result.stdout and "NUMBA_ENABLE_CUDASIM=1" in result.stdout


def test_missing_numba_cuda_raises_backend_unavailable() -> None:
    result = run_python(
        """
        import sys
        sys.modules["numba.cuda"] = None  # as if numba-cuda were not installed
        from minitensor.errors import BackendUnavailableError
        try:
            import minitensor.backends.cuda
        except BackendUnavailableError as error:
            print("RAISED", error)
        """
    )
    assert result.returncode == 0, result.stderr
    assert "RAISED" in result.stdout and "pip install minitensor[cuda]" in result.stdout


KERNEL_CHECKS_HEADER = """
        import types
        import numba.cuda.dispatcher as dispatcher
        from numba import types as nt
        from numba.cuda.compiler import compile_cuda

        # device functions compile for the current device's compute capability: pretend sm_90
        dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=(9, 0))
        from minitensor.backends import cuda_kernels as K, cuda_reduce as R, cuda_matmul as M
        from minitensor.operators import BINARY_OPS, REDUCE_OPS, UNARY_OPS

        T = lambda n: nt.UniTuple(nt.int64, n)
        f32, f64, i32, i64a, b1 = nt.float32[::1], nt.float64[::1], nt.int32[::1], nt.int64[::1], nt.boolean[::1]
        i64, bo = nt.int64, nt.boolean
        def check(fn, *sig):
            compile_cuda(fn, None, sig, cc=(9, 0))
"""

KERNEL_CHECKS = {
    "map, even ops": """
        for op in sorted(UNARY_OPS)[0::2]:
            if not op.startswith("bitwise_"):
                check(K.make_map(op, 2, "float64"), f32, f64, i64, T(2), T(2), T(2))
                check(K.make_map(op, 0, "float32"), f32, f32, i64, T(1), T(1), T(1))
            check(K.make_map(op, 1, "int64"), b1, i64a, i64, T(1), T(1), T(1))
""",
    "zip, even ops": """
        for op in sorted(BINARY_OPS)[0::2]:
            if not op.startswith("bitwise_"):
                check(K.make_zip(op, 2, "float64"), f64, f32, f64, i64, T(2), T(2), T(2), T(2))
                check(K.make_zip(op, 0, "float32"), f32, f32, b1, i64, T(1), T(1), T(1), T(1))
            check(K.make_zip(op, 1, "int64"), i64a, i32, b1, i64, T(1), T(1), T(1), T(1))
""",
    "others": """
        for out in (f32, i64a, b1):
            check(K.make_fill(0.0), out)
        check(K.make_fill_value(), f32, nt.float64)
        check(K.make_fill_value(), i64a, nt.int64)
        check(K.make_fill_value(), b1, nt.boolean)
        check(K.make_fill_tuple(), f32, nt.UniTuple(nt.float64, 9))
        check(K.make_fill_tuple(), i64a, nt.UniTuple(nt.int64, 2))
        for op in REDUCE_OPS:
            for integer, src, dst in ((False, f32, f64), (True, i32, i64a)):
                sig = (dst, src, i64, T(2), T(2), T(2), i64, i64, i64)
                check(R.make_reduce_thread(op, 2, integer), *sig)
                check(R.make_reduce_warp(op, 2, integer, 32, 8, True), *sig)
                check(R.make_reduce_block(op, 2, integer, 32, 8, True), *sig)
            check(K.make_scan(op, 2, False), f32, T(2), f64, T(2), T(2), i64, i64, i64)
            check(K.make_scan(op, 2, True), i64a, T(2), b1, T(2), T(2), i64, i64, i64)
        def mm(d, acc, tile, o, a, b):
            check(M.make_matmul(d, acc, *tile), o, a, b, i64, T(d), T(d), T(d), T(d), *[i64] * 9, bo, bo)
        mm(1, "float32", (128, 128, 8, 8, 8), f32, f32, f32)
        mm(2, "float64", (64, 64, 16, 4, 4), f64, f64, f32)
        mm(1, "int64", (64, 64, 16, 4, 4), i64a, i32, b1)
        check(K.make_where(2), f32, b1, f64, i64a, i64, T(2), T(2), T(2), T(2), T(2))
        check(K.make_where(0), f32, b1, f32, f32, i64, T(1), T(1), T(1), T(1), T(1))
        check(K.make_gather(2), b1, T(2), T(2), i64, b1, T(2), i64a, T(2), i64)
        for out in (f32, f64, i32, i64a):
            check(K.make_scatter_add(2), out, T(2), f64, T(2), T(2), i64, i64a, T(2), i64)
        check(K.make_scatter_add_rows(2), b1, T(2), b1, T(2), i64a, T(2), T(2), i64, i64, i64)
        for descending in (False, True):
            check(K.make_sort(2, descending, False), f32, T(2), i64a, T(2), f32, T(2), T(2), i64, i64, i64)
            check(K.make_sort(2, descending, True), i64a, T(2), i64a, T(2), i64a, T(2), T(2), i64, i64, i64)
            check(K.make_sort(2, descending, True), b1, T(2), i64a, T(2), b1, T(2), T(2), i64, i64, i64)
""",
}
for _family in ("map", "zip"):  # each op list in two halves, for balance
    _even = KERNEL_CHECKS[f"{_family}, even ops"]
    KERNEL_CHECKS[f"{_family}, odd ops"] = _even.replace("[0::2]:", "[1::2]:")
"""The kernel families :func:`test_kernels_compile_for_a_real_gpu` compiles, one subprocess each (they run in
parallel under xdist: one process for all of them took 50-140 s)."""


@pytest.mark.parametrize("part", KERNEL_CHECKS)
def test_kernels_compile_for_a_real_gpu(part: str) -> None:
    """Type-check and lower every kernel, with float64, float32 and int compute, every element-wise layout path, the
    shuffle reductions and the register-blocked matmul tiles, for the real CUDA target (sm_90), no GPU needed.

    The simulator runs kernels as Python and accepts code that nopython CUDA would reject; this
    catches that. (PTX generation needs NVVM and is skipped.)
    """
    result = run_python(KERNEL_CHECKS_HEADER + KERNEL_CHECKS[part] + '        print("COMPILED")\n')
    if result.returncode != 0 and ("No module named" in result.stderr or "CudaSupportError" in result.stderr):
        # numba-cuda internals moved (device functions asked for a driver) or the target is missing
        pytest.skip(f"cannot compile for the CUDA target without a GPU here: {result.stderr[-300:]}")
    assert result.returncode == 0 and "COMPILED" in result.stdout, result.stderr[-3000:]


ASSEMBLE = """
    import subprocess, sys, tempfile, types
    import numba.cuda.cudadrv.libs as libs
    import numba.cuda.cudadrv.nvrtc as nvrtc
    import numba.cuda.cudadrv.nvvm as nvvm
    import numba.cuda.dispatcher as dispatcher
    from numba import cuda, types as nt

    # PTX for sm_90 needs NVVM and libdevice only: no driver, no NVRTC
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=(9, 0))
    nvrtc.get_supported_ccs = lambda: ((9, 0),)
    nvvm.get_libdevice = libs.get_libdevice = lambda: sys.argv[1]
    nvvm.open_libdevice = lambda: open(sys.argv[1], "rb").read()
    from minitensor.backends import cuda_matmul as M, cuda_reduce as R

    T = lambda n: nt.UniTuple(nt.int64, n)
    f32, f64, i64, bo = nt.float32[::1], nt.float64[::1], nt.int64, nt.boolean
    mm = lambda acc, tile, x: (M.make_matmul(1, acc, *tile), x, x, x, i64, T(1), T(1), T(1), T(1), *[i64] * 9, bo, bo)
    kernels = {
        "matmul f32 128x128/8x8": mm("float32", (128, 128, 8, 8, 8), f32),
        "matmul f64 128x128/8x8": mm("float64", (128, 128, 8, 8, 8), f64),
        "reduce sum block": (R.make_reduce_block("sum", 1, False, 32, 8, True), f32, f32, i64, T(1), T(1), T(1), i64, i64, i64),
    }
    for name, (fn, *sig) in kernels.items():
        ptx, _ = cuda.compile_ptx(fn, tuple(sig), cc=(9, 0))
        with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
            f.write(ptx)
            f.flush()
            done = subprocess.run(["ptxas", "-arch=sm_90", "-v", f.name, "-o", "/dev/null"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        info = [line.split(":", 1)[-1].strip() for line in done.stderr.splitlines() if "Used" in line or "spill" in line]
        print("PTXAS", name, "|", " ".join(info))
"""


def run_with_toolkit(script: str) -> subprocess.CompletedProcess[str]:
    """``script`` run in a fresh Python without the simulator, given libdevice's path as its argument (it compiles
    for sm_90 through NVVM and calls ptxas); the test is skipped where the CUDA toolkit or NVVM is missing."""
    roots = [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"]
    libdevice = next((p for r in roots if r and (p := Path(r) / "nvvm" / "libdevice" / "libdevice.10.bc").exists()), None)
    if shutil.which("ptxas") is None or libdevice is None:
        pytest.skip("needs the CUDA toolkit's ptxas and libdevice")
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(script), str(libdevice)], capture_output=True, text=True,
                            env={**{k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"},
                                 "PYTHONPATH": str(ROOT)}, timeout=240)
    if result.returncode != 0 and ("DynamicLibNotFoundError" in result.stderr or "NvvmSupportError" in result.stderr):
        pytest.skip(f"no NVVM here: {result.stderr[-300:]}")
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def test_kernels_assemble_for_sm90_in_registers() -> None:
    """The hot kernels compiled to PTX and assembled by ptxas for sm_90 (when the CUDA toolkit's ptxas and libdevice
    are installed): the register-blocked matmul's 8x8 accumulators (float32 and float64) and the shuffle reduction
    stay in registers (no local-memory stack frame, no spills) and fit the 255-register limit."""
    result = run_with_toolkit(ASSEMBLE)
    lines = [line for line in result.stdout.splitlines() if line.startswith("PTXAS")]
    assert len(lines) == 3, result.stdout
    for line in lines:
        assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in line, line
        registers = int(line.split("Used ")[1].split(" registers")[0])
        assert registers <= 255, line


CACHE_KEYS = """
    import hashlib
    from numba.cuda.serialize import dumps
    from minitensor.backends import cuda_kernels as K, cuda_reduce as R, cuda_matmul as M
    from minitensor.operators import BINARY_OPS, REDUCE_OPS, UNARY_OPS
    fns = [K.make_map(op, d, c) for op in UNARY_OPS for d in (0, 2) for c in ("float64", "float32", "int64")]
    fns += [K.make_zip(op, 1, c) for op in BINARY_OPS for c in ("float64", "int64")]
    fns += [f(op, 2, i, 32, 8, True) for op in REDUCE_OPS for i in (False, True) for f in (R.make_reduce_warp, R.make_reduce_block)]
    fns += [M.make_matmul(1, acc, *tile) for acc in ("float32", "float64") for tile in ((128, 128, 8, 8, 8), (64, 64, 16, 4, 4))]
    digest = lambda b: hashlib.sha256(b).hexdigest()
    keys = [digest(f.__code__.co_code) + digest(dumps(tuple(c.cell_contents for c in f.__closure__))) for f in fns]
    print("KEYS", len(keys), len(set(keys)), digest("".join(keys).encode()))
"""


def test_disk_cache_keys_are_distinct_and_stable_across_processes() -> None:
    """Kernels are cached with ``cache=True`` on factory closures: Numba keys a cache entry by the bytecode and a
    pickle of the closure cells. Those keys must differ between specialisations (else one op's cached kernel would
    serve another) and be identical in every process (else nothing is ever loaded), whatever the hash seed."""
    runs = [run_python(CACHE_KEYS, PYTHONHASHSEED=seed) for seed in ("1", "2")]
    for result in runs:
        assert result.returncode == 0, result.stderr[-3000:]
    lines = [next(line for line in r.stdout.splitlines() if line.startswith("KEYS")) for r in runs]
    _, count, distinct, _ = lines[0].split()
    assert count == distinct and lines[0] == lines[1], lines


def test_gpu_benchmark_refuses_the_simulator_with_a_message() -> None:
    """benchmarks/gpu.py measures a real GPU only: on the simulator (or without a GPU) it says so and exits 2."""
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu.py")], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"})
    assert result.returncode == 2, result.stderr[-2000:]
    assert "simulator is not a GPU" in result.stderr and result.stdout == ""


FUSED_PTX = ASSEMBLE.split("    from minitensor.backends import cuda_matmul")[0] + """
    import numba
    import numpy as np
    from minitensor.compiler import fuse_cuda
    from minitensor.compiler.capture import Op
    from minitensor.tensor_data import TensorData

    def ptx_of(dtypes, calls):
        datas = [TensorData(np.zeros(8, np.dtype(d)), (8,)) for d in dtypes]
        ops = [Op(None, name, None, (op, *[datas[i] for i in args]), {}) for name, op, *args in calls]
        names = {id(d.storage): f"a{i}" for i, d in enumerate(datas)}
        text, scope = fuse_cuda.source(ops, names)
        exec(text, scope)
        sig = tuple(numba.from_dtype(np.dtype(d))[::1] for d in dtypes) + (nt.int64,)
        ptx, _ = cuda.compile_ptx(scope["fused"], sig, cc=(9, 0))
        with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
            f.write(ptx)
            f.flush()
            done = subprocess.run(["ptxas", "-arch=sm_90", f.name, "-o", "/dev/null"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return ptx

    # t = a * b, then out = t + c (float32): the product must be stored and reloaded, never contracted into an fma
    ptx = ptx_of(["float32"] * 5, [("zip", "mul", 0, 1, 2), ("zip", "add", 2, 3, 4)])
    body = [line.strip() for line in ptx.splitlines()]
    fence = next(i for i, l in enumerate(body) if l.startswith("membar.cta"))
    reload = next(i for i, l in enumerate(body) if i > fence and l.startswith("ld.global"))
    added = next(i for i, l in enumerate(body) if i > reload and l.startswith("add.f32"))
    print("MULADD", sum(l.startswith("membar.cta") for l in body), sum(l.startswith("fma") for l in body), added > reload)
    # every compute type: int64 (int inputs), float64 (mixed), float32; a one-element operand; an in-place call
    ptx_of(["int32", "int64", "float64", "float32", "float32", "bool"],
           [("zip", "add", 0, 1, 1), ("zip", "mul", 1, 3, 2), ("map", "exp", 2, 4), ("zip", "lt", 4, 3, 5)])
    print("MIXED ok")
"""


def test_fused_kernels_assemble_for_sm90_without_contraction_across_calls() -> None:
    """Generated fused cuda kernels compile to PTX for sm_90 and assemble (every compute type, one-element operands,
    in place); a float32 multiply whose result the next call adds is stored and reloaded behind a fence (no fma, which
    would round once where the separate kernels round twice)."""
    result = run_with_toolkit(FUSED_PTX)
    _, fences, fmas, reloaded = next(line for line in result.stdout.splitlines() if line.startswith("MULADD")).split()
    assert int(fences) >= 1 and int(fmas) == 0 and reloaded == "True", result.stdout
    assert "MIXED ok" in result.stdout
