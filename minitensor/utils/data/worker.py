"""DataLoader workers: what a worker knows about itself (:func:`get_worker_info`), the fetchers that turn an index
(or a list of them) into a batch, and the worker threads.

Workers are threads, not processes: they share the data set object (not a copy), and the shared random generator,
so random draws inside a data set are not reproducible with workers (each worker gets its own seeded
:class:`~minitensor.Generator` as ``get_worker_info().rng`` for that). The batches, and their order, are PyTorch's:
with a map-style data set the same as without workers; with an iterable-style one, each worker iterates the whole
data set and the workers' batches come round-robin, a worker leaving the round when it runs out.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ...generators import Generator


@dataclass(frozen=True)
class WorkerInfo:
    """The worker running the current code: ``id`` in ``[0, num_workers)``, its ``seed`` (the iteration's base
    seed plus ``id``), the ``dataset`` it reads, and ``rng``, a Generator seeded with ``seed`` for it alone."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Generator | None = None
    worker_method: str = "thread"


_local = threading.local()

POLL = 1.0
"""Seconds between checks that a worker thread the main thread waits on is still alive."""


def get_worker_info() -> WorkerInfo | None:
    """The :class:`WorkerInfo` of the DataLoader worker calling this, or None outside a worker (in the main
    thread)."""
    return getattr(_local, "info", None)


class MapFetcher:
    """``dataset[i]`` for one index, or the collated samples of a list of indices (through ``__getitems__`` when
    the data set has one)."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable[[Any], Any], drop_last: bool) -> None:
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index: Any) -> Any:
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        getitems = getattr(self.dataset, "__getitems__", None)
        data = getitems(index) if getitems else [self.dataset[i] for i in index]
        return self.collate_fn(data)


class IterableFetcher:
    """The next sample of one pass over ``dataset``, or the next ``len(index)`` of them collated (fewer at the end,
    none with ``drop_last``); StopIteration when the pass is over."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable[[Any], Any], drop_last: bool) -> None:
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.samples: Iterator[Any] = iter(dataset)
        self.ended = False

    def fetch(self, index: Any) -> Any:
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.samples))
        data = []
        for _ in index:
            try:
                data.append(next(self.samples))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


class _Exhausted:
    """A worker's answer once its pass over an iterable-style data set is over."""


@dataclass
class _Failure:
    error: BaseException


_Stop = object()
"""The task that ends a worker thread."""


def _worker_loop(w: int, num_workers: int, seed: int, dataset: Any, make_fetcher: Callable[[], Any],
                 worker_init_fn: Callable[[int], None] | None, todo: queue.Queue, done: queue.Queue) -> None:
    """Worker ``w``: answer each task from ``todo`` on ``done``, in order, until the stop task (a module-level
    function, so that a thread holds no reference to its ThreadWorkers, which stops the threads when collected)."""
    _local.info = WorkerInfo(w, num_workers, seed, dataset, Generator().manual_seed(seed))
    setup: _Failure | None = None
    try:
        if worker_init_fn is not None:
            worker_init_fn(w)
        fetcher = make_fetcher()
    except Exception as error:  # handed to the main thread with the first task
        setup = _Failure(error)
    exhausted = False
    while (index := todo.get()) is not _Stop:
        if exhausted:
            continue  # the main thread no longer waits for this worker
        if setup is not None:
            done.put(setup)
            continue
        try:
            done.put(fetcher.fetch(index))
        except StopIteration:
            exhausted = True
            done.put(_Exhausted())
        except Exception as error:
            done.put(_Failure(error))


class ThreadWorkers:
    """One epoch over ``indices`` (the loader's index or batch sampler, iterated here, in the calling thread) by
    ``num_workers`` threads: task ``k`` goes to the next worker still running, round-robin, with at most
    ``prefetch`` tasks waiting per worker; results are handed out in task order."""

    def __init__(self, make_fetcher: Callable[[], Any], indices: Iterator[Any], num_workers: int, prefetch: int,
                 base_seed: int, dataset: Any, worker_init_fn: Callable[[int], None] | None, timeout: float) -> None:
        self.indices = indices
        self.timeout = timeout if timeout > 0 else None
        self.todo: list[queue.Queue] = [queue.Queue() for _ in range(num_workers)]
        self.done: list[queue.Queue] = [queue.Queue() for _ in range(num_workers)]
        self.active = [True] * num_workers
        self.pending: deque[int] = deque()  # the worker of each task sent and not yet answered, in task order
        self.next_worker = 0
        self.sampler_done = False
        self.closed = False
        self.threads = [threading.Thread(target=_worker_loop, daemon=True, name=f"DataLoader worker {w}",
                                         args=(w, num_workers, base_seed + w, dataset, make_fetcher, worker_init_fn, self.todo[w],
                                               self.done[w]))
                        for w in range(num_workers)]
        for t in self.threads:
            t.start()
        for _ in range(prefetch * num_workers):
            self._send()

    def _send(self) -> None:
        """Give the next index (or batch of indices) to the next running worker, if there is one."""
        if self.sampler_done or not any(self.active):
            return
        while not self.active[self.next_worker]:
            self.next_worker = (self.next_worker + 1) % len(self.active)
        try:
            index = next(self.indices)
        except StopIteration:
            self.sampler_done = True
            return
        self.todo[self.next_worker].put(index)
        self.pending.append(self.next_worker)
        self.next_worker = (self.next_worker + 1) % len(self.active)

    def _answer(self, w: int) -> Any:
        """Worker ``w``'s next answer; RuntimeError after ``timeout`` seconds, or if its thread has died."""
        waited = 0.0
        while True:
            step = POLL if self.timeout is None else min(POLL, self.timeout - waited)
            try:
                return self.done[w].get(timeout=step)
            except queue.Empty:
                waited += step
            if not self.threads[w].is_alive():
                self.close()
                raise RuntimeError(f"DataLoader worker thread {w} exited unexpectedly")
            if self.timeout is not None and waited >= self.timeout:
                self.close()
                raise RuntimeError(f"DataLoader timed out after {self.timeout} seconds waiting for worker {w}")

    def __iter__(self) -> ThreadWorkers:
        return self

    def __next__(self) -> Any:
        while self.pending:
            w = self.pending.popleft()
            if not self.active[w]:
                continue  # sent before the worker ran out: it does not answer
            result = self._answer(w)
            if isinstance(result, _Exhausted):
                self.active[w] = False
            self._send()
            if isinstance(result, _Exhausted):
                continue
            if isinstance(result, _Failure):
                note = f"(raised in DataLoader worker thread {w})"
                if note not in getattr(result.error, "__notes__", ()):
                    result.error.add_note(note)
                raise result.error
            return result
        self.close()
        raise StopIteration

    def close(self) -> None:
        """Stop the threads (each finishes its current task first)."""
        if self.closed:
            return
        self.closed = True
        for todo in self.todo:
            todo.put(_Stop)
        self.active = [False] * len(self.active)
        self.pending.clear()

    def __del__(self) -> None:
        if hasattr(self, "closed"):
            self.close()

