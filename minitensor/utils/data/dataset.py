"""Data sets (``torch.utils.data.dataset``): the map-style and iterable-style bases, and the ways to combine them.

A map-style data set answers ``dataset[i]`` for ``0 <= i < len(dataset)``; an iterable-style one (an
:class:`IterableDataset`) only yields its samples in order. ``a + b`` concatenates two map-style sets
(:class:`ConcatDataset`) or chains two iterable ones (:class:`ChainDataset`).
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from ...creation import randperm
from ...generators import Generator, default_generator
from ...tensor import Tensor

T_co = TypeVar("T_co", covariant=True)
T = TypeVar("T")


class Dataset(Generic[T_co]):
    """A map-style data set: subclasses give ``__getitem__`` (and usually ``__len__``, which the default samplers
    need); ``__getitems__(indices)`` may fetch a whole batch at once."""

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """An iterable-style data set: subclasses give ``__iter__``. Under a DataLoader with workers each worker iterates
    the whole set, so a subclass shards itself with :func:`~minitensor.utils.data.get_worker_info`. Abstract: a
    class without ``__iter__`` cannot be instantiated."""

    def __add__(self, other: Dataset[T_co]) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Sample ``i`` is ``tuple(t[i] for t in tensors)``; every tensor has the same size along dim 0."""

    def __init__(self, *tensors: Tensor) -> None:
        first = tensors[0].size(0)
        if any(t.size(0) != first for t in tensors):
            sizes = [t.size(0) for t in tensors]
            raise AssertionError(f"Size mismatch between tensors: sizes along dim 0 are {sizes}")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return int(self.tensors[0].size(0))


def _batch_of(dataset: Any, indices: list) -> list:
    """``dataset``'s samples at ``indices``: through its ``__getitems__`` when it has one, else one by one."""
    fetch = getattr(dataset, "__getitems__", None)
    if callable(fetch):
        items = fetch(indices)
        if len(items) != len(indices):
            raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(items)}")
        return list(items)
    return [dataset[i] for i in indices]


class StackDataset(Dataset[Any]):
    """Sample ``i`` is ``(d[i] for d in args)`` as a tuple, or ``{k: d[i] for k, d in kwargs.items()}`` as a dict;
    the data sets have one length. Give either positional or keyword data sets, not both."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like input/output, "
                             "but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args) if args else list(kwargs.values())
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError(f"Size mismatch between datasets: lengths {[len(d) for d in parts]}")
        self.datasets: tuple | dict = args if args else kwargs

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list) -> list:
        if isinstance(self.datasets, dict):
            columns = {k: _batch_of(d, indices) for k, d in self.datasets.items()}
            return [{k: column[j] for k, column in columns.items()} for j in range(len(indices))]
        rows = [_batch_of(d, indices) for d in self.datasets]
        return [tuple(row[j] for row in rows) for j in range(len(indices))]

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    """The map-style data sets one after another: index ``i`` falls in the first set whose running length
    (``cumulative_sizes``) exceeds it; negative indices count from the end."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    @staticmethod
    def cumsum(sequence: Iterable[Any]) -> list[int]:
        """The running totals of the lengths of ``sequence``'s items."""
        return list(itertools.accumulate(len(e) for e in sequence))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError(f"absolute value of index should not exceed dataset length: index {idx}, length {len(self)}")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """The iterable-style data sets one after another (re-chained on every iteration); ``len`` is the sum of theirs."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def _checked(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError(f"ChainDataset only supports IterableDataset, got {type(d).__name__}")
            yield d

    def __iter__(self) -> Iterator[Any]:
        for d in self._checked():
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self._checked())  # type: ignore[arg-type]


class Subset(Dataset[T_co]):
    """``dataset`` seen through ``indices``: sample ``i`` is ``dataset[indices[i]]`` (a list index picks a list of
    indices, passed on as one list)."""

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices
        if type(self).__getitem__ is not Subset.__getitem__ and type(self).__getitems__ is Subset.__getitems__:
            raise NotImplementedError(f"{type(self).__name__} overrides __getitem__ but not __getitems__; the DataLoader "
                                      "fetches batches with __getitems__, so override both")

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list[T_co]:
        return _batch_of(self.dataset, [self.indices[i] for i in indices])

    def __len__(self) -> int:
        return len(self.indices)


def _split_lengths(total: int, lengths: Sequence[int | float]) -> list[int]:
    """Counts from ``lengths``: fractions summing to 1 become ``floor(total * f)`` each, the remainder handed out one
    by one from the first split on; counts are taken as they are."""
    if not (math.isclose(sum(lengths), 1) and sum(lengths) <= 1):
        return list(lengths)  # type: ignore[arg-type]
    counts = []
    for i, frac in enumerate(lengths):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1, got {frac}")
        counts.append(math.floor(total * frac))
    for i in range(total - sum(counts)):
        counts[i % len(counts)] += 1
    for i, n in enumerate(counts):
        if n == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.", stacklevel=3)
    return counts


def random_split(dataset: Dataset[T], lengths: Sequence[int | float],
                 generator: Generator | None = default_generator) -> list[Subset[T]]:
    """``dataset`` cut into non-overlapping :class:`Subset` s of the given ``lengths`` (counts summing to
    ``len(dataset)``, or fractions summing to 1), over one random permutation drawn from ``generator``."""
    total = len(dataset)  # type: ignore[arg-type]
    counts = _split_lengths(total, lengths)
    if sum(counts) != total:
        raise ValueError(f"Sum of input lengths does not equal the length of the input dataset! "
                         f"({sum(counts)} != {total})")
    order = randperm(sum(counts), generator=generator).tolist()
    ends = itertools.accumulate(counts)
    return [Subset(dataset, order[end - n : end]) for end, n in zip(ends, counts)]
