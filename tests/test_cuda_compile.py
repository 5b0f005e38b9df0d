"""The cuda backend's compilation: outside the simulator, availability errors, every kernel compiled for a real GPU
(sm_90), the hot kernels and generated fused kernels assembled by ptxas, stable on-disk cache keys, and the GPU
benchmark's refusal to run without a GPU (each in a fresh Python process without ``NUMBA_ENABLE_CUDASIM``: no GPU is
needed to compile); on the simulator, ``minitensor.compile`` on cuda: replays equal eager bit for bit, move no data
between host and device, allocate nothing but their result, and fuse element-wise runs only where legal.
"""

from __future__ import annotations

import collections
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn, optim
from minitensor.backends import get_backend
from minitensor.compiler.capture import Op
from minitensor.compiler.fuse import fuse
from minitensor.compiler.plan import bind
from minitensor.compiler.plan_cuda import bind_launch
from minitensor.errors import BackendUnavailableError
from minitensor.tensor_data import TensorData

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


def test_kernels_compile_for_a_real_gpu() -> None:
    """Type-check and lower every kernel, with float64, float32 and int compute, every element-wise layout path, the
    shuffle reductions and the register-blocked matmul tiles, for the real CUDA target (sm_90), no GPU needed.

    The simulator runs kernels as Python and accepts code that nopython CUDA would reject; this
    catches that. (PTX generation needs NVVM and is skipped.)
    """
    result = run_python(
        """
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
        for out in (f32, i64a, b1):
            check(K.make_fill(0.0), out)
        check(K.make_fill_value(), f32, nt.float64)
        check(K.make_fill_value(), i64a, nt.int64)
        check(K.make_fill_value(), b1, nt.boolean)
        check(K.make_fill_tuple(), f32, nt.UniTuple(nt.float64, 9))
        check(K.make_fill_tuple(), i64a, nt.UniTuple(nt.int64, 2))
        for op in UNARY_OPS:
            if not op.startswith("bitwise_"):
                check(K.make_map(op, 2, "float64"), f32, f64, i64, T(2), T(2), T(2))
                check(K.make_map(op, 0, "float32"), f32, f32, i64, T(1), T(1), T(1))
            check(K.make_map(op, 1, "int64"), b1, i64a, i64, T(1), T(1), T(1))
        for op in BINARY_OPS:
            if not op.startswith("bitwise_"):
                check(K.make_zip(op, 2, "float64"), f64, f32, f64, i64, T(2), T(2), T(2), T(2))
                check(K.make_zip(op, 0, "float32"), f32, f32, b1, i64, T(1), T(1), T(1), T(1))
            check(K.make_zip(op, 1, "int64"), i64a, i32, b1, i64, T(1), T(1), T(1), T(1))
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
        print("COMPILED")
        """
    )
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


def test_kernels_assemble_for_sm90_in_registers() -> None:
    """The hot kernels compiled to PTX and assembled by ptxas for sm_90 (when the CUDA toolkit's ptxas and libdevice
    are installed): the register-blocked matmul's 8x8 accumulators (float32 and float64) and the shuffle reduction
    stay in registers (no local-memory stack frame, no spills) and fit the 255-register limit."""
    ptxas = shutil.which("ptxas")
    roots = [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"]
    libdevice = next((p for r in roots if r and (p := Path(r) / "nvvm" / "libdevice" / "libdevice.10.bc").exists()), None)
    if ptxas is None or libdevice is None:
        pytest.skip("needs the CUDA toolkit's ptxas and libdevice")
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(ASSEMBLE), str(libdevice)], capture_output=True, text=True,
                            env={**{k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"},
                                 "PYTHONPATH": str(ROOT)}, timeout=240)
    if result.returncode != 0 and ("DynamicLibNotFoundError" in result.stderr or "NvvmSupportError" in result.stderr):
        pytest.skip(f"no NVVM here: {result.stderr[-300:]}")
    assert result.returncode == 0, result.stderr[-3000:]
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


# --- minitensor.compile on cuda (simulator): pre-bound launches, fused element-wise kernels, no host round trips ---

SIMULATED_SKIP = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") != "1"  # the counters wrap the simulator's classes
STEPS = 4  # SGD with momentum and Adam trace twice (no state, then state), then replay
SHAPES = (6, 4, 3, 2)  # inputs, hidden, classes, batch: tiny (every simulated CUDA thread is a Python thread)


def _cuda() -> Any:
    try:
        return get_backend("cuda")
    except BackendUnavailableError as error:  # no simulator and no GPU
        pytest.skip(f"no cuda backend: {error}")


def _mlp() -> nn.Module:
    n_in, hidden, n_out, _ = SHAPES
    mt.manual_seed(0)
    return nn.Sequential(nn.Linear(n_in, hidden, backend="cuda"), nn.ReLU(), nn.Linear(hidden, n_out, backend="cuda"))


def _batches(count: int) -> list[tuple[mt.Tensor, mt.Tensor]]:
    n_in, _, n_out, batch = SHAPES
    rng = np.random.default_rng(1)
    return [(mt.tensor(rng.standard_normal((batch, n_in)), dtype="float32", backend="cuda"),
             mt.tensor(rng.integers(0, n_out, batch), backend="cuda")) for _ in range(count)]


def _optimizer(name: str, model: nn.Module) -> optim.Optimizer:
    if name == "sgd":
        return optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return optim.Adam(model.parameters(), lr=0.01)


def _step(model: nn.Module, opt: optim.Optimizer) -> Callable[[mt.Tensor, mt.Tensor], mt.Tensor]:
    def step(x: mt.Tensor, y: mt.Tensor) -> mt.Tensor:
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return step


def _state(model: nn.Module) -> list[np.ndarray]:
    return [a for p in model.parameters() for a in (p.to_numpy(), p.grad.to_numpy())]


def _plans(compiled: Any) -> list[Any]:
    return [entry.plan for entries in compiled._plans.values() for entry in entries]


class Transfers:
    """Counts, inside :meth:`window`: host-to-device and device-to-host copies (of the simulator's device arrays: every
    copy the cuda backend makes), device allocations (``numba.cuda.device_array``, and the caching allocator's
    storages), and kernel launches (simulated kernels called from the host, not device functions), with any launch
    that was given a NumPy array (which the driver would copy to the device and back). Installed before anything is
    traced, so that calls bound at plan time (a bound ``copy_to_device``) are counted too."""

    def __init__(self) -> None:
        from numba import cuda
        from numba.cuda.simulator import kernel as sim_kernel
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        from minitensor.backends.cuda_allocator import ALLOCATOR

        self.allocator, self.active = ALLOCATOR, False
        self.counts: collections.Counter[str] = collections.Counter()
        self.patches: list[tuple[Any, str, Any]] = []
        self._wrap(FakeCUDAArray, "copy_to_device", "host to device")
        self._wrap(FakeCUDAArray, "copy_to_host", "device to host")
        self._wrap(cuda, "device_array", "device malloc")
        self._wrap(cuda, "to_device", "host to device")
        self._wrap(sim_kernel.FakeCUDAKernel, "__call__", "launch",
                   lambda kernel, *args: not kernel._device and not sim_kernel._kernel_context)

    def _wrap(self, owner: Any, name: str, key: str, check: Callable[..., bool] | None = None) -> None:
        real = getattr(owner, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            if self.active and (check is None or check(*args)):
                self.counts[key] += 1
                if key == "launch" and any(isinstance(a, np.ndarray) for a in args[1:]):
                    self.counts["numpy argument"] += 1
            return real(*args, **kwargs)

        self.patches.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, counted)

    @contextmanager
    def window(self) -> Iterator[collections.Counter[str]]:
        counts: collections.Counter[str] = collections.Counter()
        self.counts, self.active, allocs = counts, True, self.allocator.num_allocs
        try:
            yield counts
        finally:
            self.active = False
            counts["allocation"] = self.allocator.num_allocs - allocs

    def remove(self) -> None:
        for owner, name, value in reversed(self.patches):
            setattr(owner, name, value)


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest) -> dict[tuple[str, bool | None], Any]:
    """Per optimizer: the eager run, then compiled runs without and with fusion, STEPS steps each (losses, final
    parameters and gradients, the compiled function, one more replay's counts and Python time)."""
    if SIMULATED_SKIP:
        pytest.skip("the compiled-plan tests run on the simulator")
    _cuda()
    data = _batches(3)
    out: dict[tuple[str, bool | None], Any] = {}
    transfers = Transfers()
    request.addfinalizer(transfers.remove)
    for name in ("sgd", "adam"):
        for fused in (None, False, True):
            model = _mlp()
            step = _step(model, _optimizer(name, model))
            fn = step if fused is None else mt.compile(step, mode="max-autotune" if fused else None)
            losses = [fn(*data[i % 3]).item() for i in range(STEPS)]
            result: dict[str, Any] = {"losses": losses, "state": _state(model), "fn": fn}
            if fused is not None:
                with transfers.window() as counts:
                    start = time.perf_counter()
                    fn(*data[STEPS % 3])
                    result["seconds"] = time.perf_counter() - start
                result["counts"] = counts
            out[(name, fused)] = result
    return out


@pytest.mark.parametrize("fused", [False, True], ids=["unfused", "fused"])
@pytest.mark.parametrize("name", ["sgd", "adam"])
def test_compiled_mlp_matches_eager_bit_for_bit(runs: dict[Any, Any], name: str, fused: bool) -> None:
    """Losses, parameters and gradients after STEPS steps (two traces, then replays) equal eager's exactly."""
    eager, compiled = runs[(name, None)], runs[(name, fused)]
    assert compiled["losses"] == eager["losses"]
    for a, b in zip(eager["state"], compiled["state"]):
        np.testing.assert_array_equal(a, b)
    assert compiled["fn"].traces == 2


@pytest.mark.parametrize("fused", [False, True], ids=["unfused", "fused"])
@pytest.mark.parametrize("name", ["sgd", "adam"])
def test_replay_moves_no_data_and_allocates_only_its_result(runs: dict[Any, Any], name: str, fused: bool) -> None:
    """A replay (inputs already on the device) copies nothing host to device, allocates only the returned loss's
    fresh copy, passes no NumPy array to a kernel, and reads back only the class targets (the input check that eager
    runs too: cross_entropy validates class indices on the host)."""
    counts = runs[(name, fused)]["counts"]
    assert counts["host to device"] == 0, counts
    assert counts["device malloc"] == 0 and counts["allocation"] == 1, counts
    assert counts["numpy argument"] == 0, counts
    assert counts["device to host"] == 1, counts


@pytest.mark.parametrize("name", ["sgd", "adam"])
def test_calls_are_pre_bound_and_fused(runs: dict[Any, Any], name: str) -> None:
    """Every recorded call is bound to its launches (no backend method left), the composite calls' temporaries are
    shared between calls, and fusion leaves fewer calls than recorded ops and fewer launches per replay than without
    it."""
    for fused in (False, True):
        plans = _plans(runs[(name, fused)]["fn"])
        assert all(plan.method_calls == 0 for plan in plans)
        last = plans[-1]
        assert 0 < last.scratch.allocated < last.scratch.takes, vars(last.scratch)
        assert (len(last.calls) < len(last.ops)) == fused, (len(last.calls), len(last.ops))
    assert runs[(name, True)]["counts"]["launch"] < runs[(name, False)]["counts"]["launch"]


def test_a_buffer_written_and_read_through_another_view_is_not_fused() -> None:
    """y[0:n] = x * 2, then z = y[1:n+1] + x: element i of the second call reads what element i + 1 of the first
    writes (another thread on a GPU), so the run must not fuse, and the two launches give eager's values. Reading y
    through the written view itself fuses into one launch, with the same values as the separate launches."""
    backend, n, f32 = _cuda(), 4, np.dtype(np.float32)
    zip_method = type(backend).zip

    def run(shifted: bool, fusion: bool) -> tuple[int, np.ndarray, np.ndarray]:
        x = backend.from_numpy(np.array([1.5, -2.0, 3.25, 0.5], dtype=f32))
        y = backend.from_numpy(np.full(n + 1, 7.0, dtype=f32))
        z = backend.empty((n,), f32)
        head = TensorData(y.storage[:n], (n,))
        read = TensorData(y.storage[1:], (n,)) if shifted else head
        ops = [Op(backend, "zip", zip_method, ("mul", x, backend.constant(2.0, f32), head), {}),
               Op(backend, "zip", zip_method, ("add", read, x, z), {})]
        calls = [bind(op) for op in ops]
        calls = fuse(ops, calls) if fusion else calls
        for call in calls:
            call()
        return len(calls), backend.to_numpy(y), backend.to_numpy(z)

    launches, y, z = run(shifted=True, fusion=True)
    assert launches == 2
    np.testing.assert_array_equal(y, [3.0, -4.0, 6.5, 1.0, 7.0])
    np.testing.assert_array_equal(z, [-4.0 + 1.5, 6.5 - 2.0, 1.0 + 3.25, 7.0 + 0.5])
    launches, y, z = run(shifted=False, fusion=True)
    assert launches == 1
    _, y_separate, z_separate = run(shifted=False, fusion=False)
    np.testing.assert_array_equal(y, y_separate)
    np.testing.assert_array_equal(z, z_separate)
    np.testing.assert_array_equal(z, [3.0 + 1.5, -4.0 - 2.0, 6.5 + 3.25, 1.0 + 0.5])


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
    ptxas = shutil.which("ptxas")
    roots = [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"]
    libdevice = next((p for r in roots if r and (p := Path(r) / "nvvm" / "libdevice" / "libdevice.10.bc").exists()), None)
    if ptxas is None or libdevice is None:
        pytest.skip("needs the CUDA toolkit's ptxas and libdevice")
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(FUSED_PTX), str(libdevice)], capture_output=True, text=True,
                            env={**{k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"},
                                 "PYTHONPATH": str(ROOT)}, timeout=240)
    if result.returncode != 0 and ("DynamicLibNotFoundError" in result.stderr or "NvvmSupportError" in result.stderr):
        pytest.skip(f"no NVVM here: {result.stderr[-300:]}")
    assert result.returncode == 0, result.stderr[-3000:]
    _, fences, fmas, reloaded = next(line for line in result.stdout.splitlines() if line.startswith("MULADD")).split()
    assert int(fences) >= 1 and int(fmas) == 0 and reloaded == "True", result.stdout
    assert "MIXED ok" in result.stdout


def test_launches_bind_to_the_compiled_kernel_where_the_dispatcher_has_one() -> None:
    """On a real GPU a pre-bound launch calls the kernel compiled for its argument types (``Dispatcher.compile``) with
    the configured geometry, stream and shared memory, as ``Dispatcher.call`` does after matching types; a kernel
    that cannot be compiled for them, and the simulator's kernels, keep the configured launcher. (A stand-in for
    numba-cuda's dispatcher: compiling needs a CUDA driver.)"""
    calls: list[tuple[Any, ...]] = []

    class Compiled:
        def launch(self, args: tuple, griddim: Any, blockdim: Any, stream: Any, sharedmem: int) -> None:
            calls.append(("launch", args, griddim, blockdim, stream, sharedmem))

    class Configured:
        griddim, blockdim, stream, sharedmem = (3, 1, 1), (32, 1, 1), "stream", 0

        def __call__(self, *args: Any) -> None:
            calls.append(("dispatch", args))

    class Dispatcher:
        specialized = False

        def __init__(self, compiles: bool) -> None:
            self.compiles = compiles

        def __getitem__(self, config: Any) -> Configured:
            assert config == (3, 32)
            return Configured()

        def typeof_pyval(self, value: Any) -> str:
            return type(value).__name__

        def compile(self, types: tuple) -> Compiled:
            calls.append(("compile", types))
            if not self.compiles:
                raise TypeError("no such signature")
            return Compiled()

    bind_launch(Dispatcher(True), 3, 32, ("buffer", 7))()
    assert calls == [("compile", ("str", "int")), ("launch", ("buffer", 7), (3, 1, 1), (32, 1, 1), "stream", 0)]
    calls.clear()
    bind_launch(Dispatcher(False), 3, 32, ("buffer", 7))()
    assert calls == [("compile", ("str", "int")), ("dispatch", ("buffer", 7))]
