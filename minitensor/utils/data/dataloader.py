"""``torch.utils.data.DataLoader``: batches from a data set, in a sampler's order, collated.

A map-style data set is read by index: ``sampler`` (default :class:`SequentialSampler`, or :class:`RandomSampler`
with ``shuffle``) gives the order and :class:`BatchSampler` groups it into ``batch_size`` lists (or
``batch_sampler`` gives the lists itself); ``collate_fn`` (default :func:`default_collate`) merges each list's
samples. An iterable-style data set is read in its own order, ``batch_size`` samples at a time. With
``batch_size=None`` there is no batching: each sample goes through :func:`default_convert`.

``num_workers > 0`` loads in that many threads (not processes; see :mod:`.worker`), with the same batches in the same
order as PyTorch's worker processes give.
"""

from __future__ import annotations

import math
import multiprocessing
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

from ...generators import Generator
from ...random_state import rng_for
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, InfiniteConstantSampler, RandomSampler, Sampler, SequentialSampler
from .worker import IterableFetcher, MapFetcher, ThreadWorkers

T_co = TypeVar("T_co", covariant=True)

START_METHODS = ("fork", "spawn", "forkserver")
"""The ``multiprocessing_context`` names accepted (and ignored: workers are threads)."""

_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")
"""Attributes that cannot change once the loader is built."""


def _check_context(context: Any, num_workers: int) -> None:
    if context is None:
        return
    if num_workers == 0:
        raise ValueError(f"multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
                         f"but got num_workers={num_workers}")
    if isinstance(context, str) and context not in START_METHODS:
        raise ValueError(f"multiprocessing_context option should specify a valid start method in {list(START_METHODS)!r}, "
                         f"but got multiprocessing_context={context!r}")
    if not isinstance(context, (str, multiprocessing.context.BaseContext)):
        raise TypeError(f"multiprocessing_context option should be a valid context object or a string specifying the "
                        f"start method, but got multiprocessing_context={context}")


class DataLoader(Generic[T_co]):
    """An iterable over ``dataset`` in batches; each ``for`` over it is one epoch (module docstring). Argument
    conflicts are ValueErrors, as in PyTorch: ``sampler`` with ``shuffle``; ``batch_sampler`` with ``batch_size``,
    ``shuffle``, ``sampler`` or ``drop_last``; ``batch_size=None`` with ``drop_last``; an iterable-style data set
    with ``shuffle``, ``sampler`` or ``batch_sampler``; ``prefetch_factor`` or ``persistent_workers`` without
    workers. Shuffling draws from ``generator`` (a :class:`~minitensor.Generator`, else the shared one)."""

    __initialized = False

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Iterable | None = None,
        batch_sampler: Sampler[list] | Iterable[list] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[Any], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(f"num_workers option should be non-negative, got {num_workers}; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError(f"timeout option should be non-negative, got {timeout}")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError(f"prefetch_factor option should be non-negative, got {prefetch_factor}")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        _check_context(multiprocessing_context, num_workers)

        self.iterable = isinstance(dataset, IterableDataset)
        if self.iterable:
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")

        if sampler is None:
            if self.iterable:
                sampler = InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory, self.pin_memory_device = pin_memory, pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.in_order = in_order
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if self._auto_collation else default_convert)
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called: int | None = None  # len(dataset), once len(loader) asked for it
        self.__initialized = True

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__initialized and name in _FROZEN:
            raise ValueError(f"{name} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        """What one epoch iterates: the batch sampler when batching, else the sampler."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        """Batches per epoch: the index sampler's length, or for an iterable-style data set its length over
        ``batch_size`` (rounded down with ``drop_last``, else up), which shards that leave several short batches
        make wrong."""
        if not self.iterable:
            return len(self._index_sampler)
        n = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def __iter__(self) -> _LoaderIter:
        return _LoaderIter(self)

    def _fetcher(self) -> MapFetcher | IterableFetcher:
        kind = IterableFetcher if self.iterable else MapFetcher
        return kind(self.dataset, self._auto_collation, self.collate_fn, self.drop_last)


class _LoaderIter:
    """One epoch of a DataLoader: batches fetched in this thread, or by worker threads."""

    def __init__(self, loader: DataLoader) -> None:
        if loader.pin_memory:
            warnings.warn("'pin_memory' argument is set as true but minitensor has no pinned host memory, "
                          "so batches are returned as they are.", stacklevel=3)
        self.loader = loader
        self.indices: Iterator[Any] = iter(loader._index_sampler)
        self.base_seed = int(rng_for(loader.generator).integers(0, 2**63 - 1, endpoint=True))
        self.reported_len = loader._IterableDataset_len_called
        self.yielded = 0
        self.workers: ThreadWorkers | None = None
        if loader.num_workers == 0:
            self.fetcher = loader._fetcher()
        else:
            self.workers = ThreadWorkers(loader._fetcher, self.indices, loader.num_workers,
                                         max(1, loader.prefetch_factor or 1), self.base_seed, loader.dataset,
                                         loader.worker_init_fn, loader.timeout)

    def __iter__(self) -> _LoaderIter:
        return self

    def __len__(self) -> int:
        return len(self.loader._index_sampler)

    def __next__(self) -> Any:
        batch = next(self.workers) if self.workers is not None else self.fetcher.fetch(next(self.indices))
        self.yielded += 1
        if self.reported_len is not None and self.yielded > self.reported_len:
            warnings.warn(f"Length of IterableDataset {self.loader.dataset} was reported to be {self.reported_len} "
                          f"(when accessing len(dataloader)), but {self.yielded} samples have been fetched.", stacklevel=2)
        return batch
