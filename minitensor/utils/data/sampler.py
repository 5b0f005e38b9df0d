"""Samplers (``torch.utils.data.sampler``): the order in which a DataLoader visits a map-style data set's indices.

The random ones draw from minitensor's generators (``generator=`` a :class:`~minitensor.Generator`, else the shared
one that :func:`~minitensor.manual_seed` seeds), so an order is reproducible, but it is not the order PyTorch draws
for the same seed.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

from ...creation import as_tensor, multinomial, randint, randperm
from ...dtypes import float64
from ...generators import Generator
from ...random_state import rng_for

T_co = TypeVar("T_co", covariant=True)

CHUNK = 32
"""RandomSampler with replacement draws its indices this many at a time."""


class Sampler(Generic[T_co]):
    """Base of the samplers: subclasses give ``__iter__`` (indices, or lists of indices for a batch sampler) and
    usually ``__len__``."""

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError


def _fresh_generator(generator: Generator | None) -> Generator:
    """``generator``, or (for None) a new Generator seeded by one draw from the shared one."""
    if generator is not None:
        return generator
    seed = int(rng_for(None).integers(0, 2**63 - 1, endpoint=True))
    return Generator().manual_seed(seed)


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """A random order of ``data_source``'s indices: ``num_samples`` (default ``len(data_source)``) of them, as whole
    permutations back to back (the last one cut short), or drawn uniformly with ``replacement``. Without
    ``generator`` each iteration seeds a new one from the shared generator."""

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: int | None = None,
                 generator: Generator | None = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        """How many indices an iteration yields."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = _fresh_generator(self.generator)
        if self.replacement:
            for _ in range(self.num_samples // CHUNK):
                yield from randint(0, n, (CHUNK,), generator=generator).tolist()
            yield from randint(0, n, (self.num_samples % CHUNK,), generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices`` in a random order (a new permutation each iteration)."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices into ``weights``, index ``i`` drawn with probability ``weights[i] / sum(weights)``
    (with ``replacement``, else never twice in one iteration)."""

    def __init__(self, weights: Sequence[float] | Any, num_samples: int, replacement: bool = True,
                 generator: Generator | None = None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights_tensor = as_tensor(weights, dtype=float64)
        if weights_tensor.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        yield from multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator).tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """``sampler``'s indices grouped into lists of ``batch_size`` (the last one shorter, or dropped with
    ``drop_last``)."""

    def __init__(self, sampler: Sampler[Any] | Iterable[Any], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        indices = iter(self.sampler)
        while batch := list(itertools.islice(indices, self.batch_size)):
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class InfiniteConstantSampler(Sampler[None]):
    """``None`` forever: the placeholder index stream of an iterable-style data set."""

    def __iter__(self) -> Iterator[None]:
        return itertools.repeat(None)
