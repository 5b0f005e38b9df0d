"""The fast backend's choice between a kernel's serial and parallel build: the measured break-even."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import pytest

from minitensor.backends import fast, fast_launch, fast_plan
from minitensor.backends.fast_launch import PARALLEL_MOST, SERIAL_BELOW, break_even
from minitensor.tensor_data import TensorData


def test_break_even_is_wake_cost_over_seconds_saved_per_element() -> None:
    # 1M elements: 400 us serial, 300 us parallel of which 100 us is waking the pool -> 200 us saved on 1M elements,
    # so the pool's 100 us pay from 500K elements on.
    assert break_even(100e-6, 400e-6, 300e-6, 1 << 20) == pytest.approx((1 << 20) // 2, abs=1)
    assert break_even(10e-6, 400e-6, 210e-6, 1 << 20) == pytest.approx(10e-6 / (200e-6 / (1 << 20)), abs=1)
    assert break_even(0.0, 400e-6, 210e-6, 1 << 20) == SERIAL_BELOW  # never below the floor
    assert break_even(100e-6, 400e-6, 500e-6, 1 << 20) == PARALLEL_MOST  # the pool saves nothing
    assert break_even(1.0, 400e-6, 300e-6, 1 << 20) == PARALLEL_MOST  # capped


def test_the_environment_variable_fixes_the_break_even(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fast_launch, "measure_break_even", lambda: pytest.fail("measured despite the variable"))
    monkeypatch.setenv("MINITENSOR_PARALLEL_FROM", "200000")
    assert fast_launch.parallel_from() == 200_000
    assert not fast_launch.use_parallel(199_999) and fast_launch.use_parallel(200_000)
    monkeypatch.setenv("MINITENSOR_PARALLEL_FROM", "10")
    assert fast_launch.parallel_from() == SERIAL_BELOW
    monkeypatch.setenv("MINITENSOR_PARALLEL_FROM", "lots")
    with pytest.raises(ValueError, match="MINITENSOR_PARALLEL_FROM.*'lots'"):
        fast_launch.parallel_from()


def test_measured_once_per_thread_count_and_never_below_the_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MINITENSOR_PARALLEL_FROM")
    monkeypatch.setattr(fast_launch, "_parallel_from", {})
    calls = []
    monkeypatch.setattr(fast_launch, "measure_break_even", lambda: calls.append(1) or 300_000)
    monkeypatch.setattr(fast_launch, "parallel_from", fast_launch.parallel_from)
    assert not fast_launch.use_parallel(SERIAL_BELOW - 1) and calls == []  # small work: nothing measured
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        assert fast_launch.parallel_from() == PARALLEL_MOST + 1 and calls == []  # one thread: never parallel
        if numba.config.NUMBA_NUM_THREADS >= 2:
            numba.set_num_threads(2)
            assert fast_launch.use_parallel(300_000) and not fast_launch.use_parallel(299_999)
            assert calls == [1]  # measured once, then remembered
    finally:
        numba.set_num_threads(threads)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two Numba threads")
def test_measure_break_even_runs_both_builds() -> None:
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(2)
        found = fast_launch.measure_break_even(size=1 << 16, repeats=3)
    finally:
        numba.set_num_threads(threads)
    assert SERIAL_BELOW <= found <= PARALLEL_MOST
    a, b, out = (np.arange(5.0, dtype=np.float32) for _ in range(3))
    fast_launch._add_parallel(a, b, out)
    np.testing.assert_array_equal(out, a + b)


def test_the_backend_asks_for_the_parallel_build_from_the_break_even(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh layout's map/zip plan picks its kernel build by use_parallel (here fixed at 50K elements)."""
    monkeypatch.setenv("MINITENSOR_PARALLEL_FROM", "50000")
    asked = []

    def spy(real: Any) -> Any:
        return lambda kernel, family, op, compute, parallel: asked.append(parallel) or real(kernel, family, op, compute,
                                                                                             parallel)

    monkeypatch.setattr(fast_plan, "find_kernel", spy(fast_plan.find_kernel))  # the plans pick the walker's build
    backend = fast.FastBackend(use_numpy_twins=False)
    for size in (49_999, 50_000):
        a = TensorData(np.ones(size + 7, dtype=np.float64), (size,), (1,))  # a layout no other test plans
        out = backend.empty((size,), np.dtype(np.float64))
        backend.zip("add", a, a, out)
        np.testing.assert_array_equal(backend.to_numpy(out), np.full(size, 2.0))
    assert asked == [False, True]
