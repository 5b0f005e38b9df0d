"""Shared test setup: hypothesis profiles and the list of backends every shared test runs on."""

from __future__ import annotations

import importlib.util
import os

# Run the cuda backend on Numba's simulator unless told otherwise (set NUMBA_ENABLE_CUDASIM=0 on a GPU machine).
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
# The fast backend's parallel kernel builds start at a fixed size in tests (32K elements, the least it ever uses),
# instead of at the break-even it measures per process, so that the tests reach both builds on every machine.
os.environ.setdefault("MINITENSOR_PARALLEL_FROM", str(1 << 15))
# Streamed outputs (fast_launch.STREAM_FROM) are off: each op and dtype a test runs at tens of MB would compile its
# streaming loop too (a cold run's tiled-transpose test: 0.8 -> 16 s). tests/test_fast_stream.py sets the limit itself
# and holds the streaming loops to the plain loops' bits.
os.environ.setdefault("MINITENSOR_STREAM_FROM", "0")

import pytest
from hypothesis import HealthCheck, settings

from minitensor.errors import BackendUnavailableError

# "ci": no per-example deadline (first calls JIT-compile), few examples, the same examples on every run (a failure
# in CI reproduces exactly; a CI simulation once failed on an example no earlier run had drawn); "thorough": for local
# runs, random examples.
settings.register_profile(
    "ci", deadline=None, max_examples=25, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("thorough", deadline=None, max_examples=400, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _available(name: str) -> bool:
    if importlib.util.find_spec(f"minitensor.backends.{name}") is None:
        return False
    try:
        from minitensor.backends import get_backend

        get_backend(name)
    except BackendUnavailableError:
        return False
    return True


# Later backends join here; tests take the backend name as the `backend` fixture parameter.
BACKENDS = [name for name in ("simple", "fast", "cuda") if _available(name)]
CPU_BACKENDS = [name for name in BACKENDS if name != "cuda"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param
