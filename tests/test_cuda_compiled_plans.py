"""minitensor.compile on cuda (simulator): replays equal eager bit for bit, move no data between host and device,
allocate nothing but their result, fuse element-wise runs (by default; ``backend="eager"`` does not) only where
legal, and bind launches to the compiled kernel where the dispatcher has one. (Moved from test_cuda_compile.py.)
"""

from __future__ import annotations

import collections
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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


# --- minitensor.compile on cuda (simulator): pre-bound launches, fused element-wise kernels, no host round trips ---

SIMULATED_SKIP = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") != "1"  # the counters wrap the simulator's classes
STEPS = 3  # SGD with momentum and Adam trace twice (no state, then state), then replay (and one more counted replay)
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
            fn = step if fused is None else mt.compile(step, backend="inductor" if fused else "eager")
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
