"""minitensor.compile's element-wise fusion (the default, backend="inductor") against unfused replays and separate
kernels, bit for bit; fused kernels cached on disk; torch.compile's keyword arguments."""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from compile_steps import assert_same_params, batches, mlp, sgd_step, train

import minitensor as mt
from minitensor import optim
from minitensor.backends import fast_codegen, get_backend
from minitensor.backends.fast_launch import run_address
from minitensor.compiler.capture import Op
from minitensor.compiler.fuse import fuse
from minitensor.errors import CompileError
from minitensor.tensor_data import TensorData


def _entries(compiled: Any) -> list[Any]:
    return [entry for plans in compiled._plans.values() for entry in plans]


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_default_fuses_and_backend_eager_does_not_with_the_same_bits(optimizer: str) -> None:
    """The default (backend="inductor") fuses element-wise runs; backend="eager" replays every call; both give
    eager's losses, weights and gradients bit for bit over several steps."""
    data = batches("fast", 3)
    models = [mlp("fast") for _ in range(3)]
    make = (lambda m: optim.SGD(m.parameters(), lr=0.1, momentum=0.9)) if optimizer == "sgd" else \
        (lambda m: optim.Adam(m.parameters(), lr=0.01))
    eager = sgd_step(models[0], make(models[0]))
    fused = mt.compile(sgd_step(models[1], make(models[1])))
    unfused = mt.compile(sgd_step(models[2], make(models[2])), backend="eager")
    losses = train(eager, data, 6)
    assert train(fused, data, 6) == losses
    assert train(unfused, data, 6) == losses
    assert_same_params(models[0], models[1])
    assert_same_params(models[0], models[2])
    assert all(len(entry.plan.calls) == len(entry.plan.ops) for entry in _entries(unfused))
    if optimizer == "sgd":  # SGD's momentum update is element-wise calls (Adam's is one kernel per parameter)
        assert any(len(entry.plan.calls) < len(entry.plan.ops) for entry in _entries(fused))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_fused_run_gives_the_separate_kernels_bits(dtype: str) -> None:
    """exp, *, tanh, sigmoid, -, sigmoid_back over one buffer as separate fast map/zip kernel calls, and the same
    calls fused into one generated loop (fast_math's vectorisable functions and their float32 variants included):
    the same bits in every buffer, in float32 and float64."""
    backend, n = get_backend("fast"), 96
    x0 = np.random.default_rng(3).standard_normal(n).astype(dtype) * 3
    program = [("map", "exp", 0, 1), ("zip", "mul", 1, 6, 2), ("map", "tanh", 2, 3), ("map", "sigmoid", 3, 4),
               ("zip", "sub", 4, 0, 5), ("zip", "sigmoid_back", 5, 3, 1)]

    def run(fused: bool) -> list[np.ndarray]:
        arrays = [x0.copy(), *(np.zeros(n, dtype) for _ in range(5)), np.array([0.75], dtype)]
        datas = [TensorData(a, a.shape) for a in arrays]
        ops, calls = [], []
        for family, name, *where in program:
            kernel = getattr(fast_codegen.kernel_module("walk", parallel=False), f"{family}_kernel")
            strides = np.array([[1]] + [[0 if arrays[i].size == 1 else 1] for i in where[:-1]], np.int64)
            out = where[-1]
            args = [arrays[i] for i in where[:-1]]
            run_loop = run_address(family, name, "float64", arrays[out].dtype, *[a.dtype for a in args])
            storages = [a.view(np.uint8) for a in (*args, arrays[out])]  # the general walker takes bytes
            sizes = tuple(a.itemsize for a in (*args, arrays[out]))
            calls.append(functools.partial(kernel, *storages, sizes, np.array([n], np.int64), strides, 1, n, run_loop))
            ops.append(Op(backend, family, getattr(type(backend), family), (name, *[datas[i] for i in where]), {}))
        if fused:
            calls = fuse(ops, calls)
            assert len(calls) == 1
        for call in calls:
            call()
        return arrays

    for separate, together in zip(run(False), run(True)):
        np.testing.assert_array_equal(separate, together)


SECOND_PROCESS = """
import sys
import numpy as np
import minitensor as mt
from minitensor.backends import fast_codegen
f = mt.compile(lambda x: ((x * 3.0 - 1.0).relu() * x).sum())
x = mt.tensor(np.linspace(-1.0, 1.0, 96).reshape(8, 12), backend="fast")
value = f(x).item()
assert abs(f(x).item() - value) <= 1e-13 * abs(value)  # the replay's sum is fused: added in the loop's order
modules = [m for name, m in sys.modules.items() if fast_codegen.GENERATED_PREFIX in name]
assert len(modules) == 1, modules
stats = modules[0].fused.stats
print(modules[0].__file__, sum(stats.cache_hits.values()), sum(stats.cache_misses.values()), value)
"""


def test_fused_kernels_are_compiled_once_per_machine(tmp_path: Any) -> None:
    """The fused kernel is a module in the kernel cache directory, named by the hash of its text; a second process
    with the same cache directory loads its machine code from disk (a cache hit, no compile notice)."""
    env = {**os.environ, "MINITENSOR_CACHE_DIR": str(tmp_path), "NUMBA_NUM_THREADS": "1"}
    runs = [subprocess.run([sys.executable, "-c", SECOND_PROCESS], capture_output=True, text=True, env=env,
                           timeout=300) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    (path1, hits1, misses1, value1), (path2, hits2, misses2, value2) = (run.stdout.split() for run in runs)
    assert path1 == path2 and value1 == value2
    assert (int(hits1), int(misses1)) == (0, 1)  # compiled in the first process ...
    assert (int(hits2), int(misses2)) == (1, 0)  # ... loaded from disk in the second
    assert "compiling" not in runs[1].stderr
    with open(path1, encoding="utf-8") as handle:
        text = handle.read()
    assert os.path.basename(path1) == f"generated_{hashlib.sha256(text.encode()).hexdigest()[:16]}.py"
    assert "cache=True" in text and "SCALAR['zip', 'mul']" in text and "total += " in text and str(tmp_path) in path1


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"mode": "fastest"}, RuntimeError, "Unrecognized mode"),
    ({"backend": "cudagraphs"}, CompileError, "invalid backend"),
    ({"backend": lambda gm, inputs: gm}, CompileError, "custom compiler backends"),
    ({"dynamic": True}, CompileError, "dynamic shapes"),
    ({"options": {"triton.cudagraphs": True}}, CompileError, "no Inductor options"),
    ({"mode": "max-autotune", "options": {"a": 1}}, RuntimeError, "Either mode or options"),
    ({"fullgraph": "yes"}, TypeError, "fullgraph"),
    ({"recompile_limit": 3}, CompileError, "recompile_limit"),
])
def test_unsupported_compile_arguments_are_refused(kwargs: dict[str, Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        mt.compile(lambda x: x, **kwargs)


def test_torch_compile_arguments_are_accepted() -> None:
    x = mt.tensor([1.0, -2.0, 3.0], backend="fast")
    for kwargs in ({"fullgraph": True, "dynamic": False, "backend": "aot_eager", "options": {}, "name": "step"},
                   {"mode": "reduce-overhead", "backend": "inductor"}, {"mode": "max-autotune-no-cudagraphs"}):
        fn = mt.compile(**kwargs)(lambda t: (t * 2.0).relu())
        np.testing.assert_array_equal(fn(x).to_numpy(), [2.0, 0.0, 6.0])
        assert fn.fuse == (kwargs.get("backend", "inductor") == "inductor")


@pytest.mark.parametrize("n,dtype", [(96, "float64"), (96, "float32"), (300_000, "float64"), (300_000, "float32")])
def test_a_full_sum_of_a_run_output_ends_the_fused_loop(n: int, dtype: str) -> None:
    """A sum of everything a fused run wrote is accumulated in the run's loop: one call for the whole chain, every
    element-wise output still eager's bits, and the sum within float64 rounding of eager's (it adds in another
    order)."""
    x = mt.tensor(np.random.default_rng(n).standard_normal(n).astype(dtype), backend="fast")

    def chain(t: mt.Tensor) -> tuple[mt.Tensor, mt.Tensor]:
        y = (t * 3.0 - 1.0).relu()
        return y, (y * t).sum()

    compiled = mt.compile(chain)
    want_y, want_total = chain(x)
    for _ in range(3):
        y, total = compiled(x)
        np.testing.assert_array_equal(y.to_numpy(), want_y.to_numpy())
        np.testing.assert_allclose(total.item(), want_total.item(), rtol=1e-6 if dtype == "float32" else 1e-13)
    (entry,) = _entries(compiled)
    assert [op.name for op in entry.plan.ops][-1] == "reduce" and len(entry.plan.calls) == 1


def test_sums_a_run_cannot_absorb_stay_separate_calls() -> None:
    """A sum over one dim, and a sum of a buffer the run did not write, are not folded into the run: they stay their own
    calls, with eager's bits."""
    x = mt.tensor(np.random.default_rng(1).standard_normal((40, 30)), backend="fast")
    for fn, calls in ((lambda t: (t * 2.0 + 1.0).sum(dim=1), 2), (lambda t: (t * 2.0 + 1.0) * t.sum(), 3)):
        compiled = mt.compile(fn)
        for _ in range(2):
            np.testing.assert_array_equal(compiled(x).to_numpy(), fn(x).to_numpy())
        (entry,) = _entries(compiled)
        assert len(entry.plan.calls) == calls, [op.name for op in entry.plan.ops]
