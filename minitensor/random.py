"""``torch.random`` for minitensor: the shared generator's seeding and state functions (from
:mod:`minitensor.generators`), ``fork_rng`` and ``thread_safe_generator``.

Every random draw, on every backend, comes from the one host generator (the cuda backend has no generators of its
own), so ``fork_rng`` saves and restores that one state; ``devices`` and ``device_type`` are accepted for torch's
signature and name nothing more to save.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

from .generators import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .utils.data.worker import get_worker_info

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state", "thread_safe_generator"]


@contextlib.contextmanager
def fork_rng(
    devices: Iterable[Any] | None = None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str | None = None,
) -> Iterator[None]:
    """Inside the block draw as usual; on leaving it (even by an exception) the shared generator is back in the state
    it had on entering, as if nothing had been drawn. ``enabled=False`` saves and restores nothing."""
    if device_type == "meta" or not enabled:
        yield
        return
    if devices is not None:
        list(devices)  # torch's check that devices is iterable; their states are the host generator's
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def thread_safe_generator() -> Generator | None:
    """The generator of the DataLoader worker thread calling this (``get_worker_info().rng``), or None (the shared
    generator) outside a worker."""
    info = get_worker_info()
    if info is not None and info.worker_method == "thread" and info.rng is not None:
        return info.rng
    return None
