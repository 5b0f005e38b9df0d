"""A minimal batching loader over NumPy arrays, and the sampler that shards it across distributed ranks."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from . import distributed


class DistributedSampler:
    """Indices of one rank's shard of a data set (``torch.utils.data.distributed.DistributedSampler``).

    Every epoch the ``n`` indices are permuted with a generator seeded by ``(seed, epoch)`` (the same on every
    rank; call :meth:`set_epoch` before each epoch, or the order repeats), or kept in order without ``shuffle``.
    Without ``drop_last`` the list is padded by repeating its start until it divides evenly, so each rank gets
    ``ceil(n / num_replicas)`` indices; with it, the tail is dropped and each gets ``floor(n / num_replicas)``.
    Rank ``r`` takes positions ``r, r + num_replicas, ...``: the shards are disjoint and together cover every
    index once (plus the padding). ``num_replicas`` and ``rank`` default to :mod:`minitensor.distributed`'s
    world size and rank. The permutation is NumPy's, not the one PyTorch's ``randperm`` would draw.
    """

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False):
        n = dataset if isinstance(dataset, (int, np.integer)) else len(dataset)
        if int(n) < 0:
            raise ValueError(f"DistributedSampler needs a data set length >= 0, got {n}")
        replicas = distributed.world_size() if num_replicas is None else int(num_replicas)
        if replicas < 1:
            raise ValueError(f"num_replicas must be a positive integer, got {num_replicas!r}")
        me = distributed.rank() if rank is None else int(rank)
        if not 0 <= me < replicas:
            raise ValueError(f"Invalid rank {me}, rank should be in the interval [0, {replicas - 1}]")
        self.dataset_length = int(n)
        self.num_replicas, self.rank = replicas, me
        self.shuffle, self.seed, self.drop_last = bool(shuffle), int(seed), bool(drop_last)
        self.epoch = 0
        if self.drop_last and self.dataset_length % replicas:
            self.num_samples = math.ceil((self.dataset_length - replicas) / replicas)
        else:
            self.num_samples = math.ceil(self.dataset_length / replicas)
        self.total_size = self.num_samples * replicas

    def set_epoch(self, epoch: int) -> None:
        """Use the permutation of epoch ``epoch`` next (every rank must pass the same number)."""
        self.epoch = int(epoch)

    def __len__(self) -> int:
        return self.num_samples

    def __iter__(self) -> Iterator[int]:
        n = self.dataset_length
        if self.shuffle:
            indices = np.random.default_rng([self.seed, self.epoch]).permutation(n)
        else:
            indices = np.arange(n)
        if self.drop_last:
            indices = indices[: self.total_size]
        elif self.total_size > n and n > 0:
            indices = np.concatenate([indices, np.resize(indices, self.total_size - n)])
        return iter(indices[self.rank : self.total_size : self.num_replicas].tolist())


class DataLoader:
    """Iterate ``(x, y)`` NumPy batches of ``batch_size`` rows.

    Re-iterable: every ``for`` over the loader is one epoch. With ``shuffle`` each epoch uses a new
    permutation, drawn from a generator seeded with ``seed`` at construction, so the sequence of epochs is
    reproducible (epoch ``k`` of two loaders with the same seed is the same). ``drop_last`` skips a final
    batch smaller than ``batch_size``. ``y`` may be None (batches are then just ``x``).

    ``sampler`` (e.g. a :class:`DistributedSampler`) gives the row order instead, as in PyTorch: it excludes
    ``shuffle=True`` (``shuffle`` defaults to True only without a sampler), and :meth:`set_epoch` is passed on
    to it.
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray | None = None,
        batch_size: int = 32,
        shuffle: bool | None = None,
        seed: int | None = 0,
        drop_last: bool = False,
        sampler: Iterable[int] | None = None,
    ):
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        X = np.asarray(X)
        if y is not None:
            y = np.asarray(y)
            if len(y) != len(X):
                raise ValueError(f"X has {len(X)} rows but y has {len(y)}; they must match")
        self.X = X
        self.y = y
        self.batch_size = int(batch_size)
        self.sampler = sampler
        self.shuffle = sampler is None if shuffle is None else bool(shuffle)
        self.seed = seed
        self.drop_last = drop_last
        self.epoch = 0
        self._rng = np.random.default_rng(seed)

    def __len__(self) -> int:
        """Number of batches per epoch."""
        n = self.num_samples
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    @property
    def num_samples(self) -> int:
        """Rows per epoch: the data set's, or the sampler's."""
        return len(self.X) if self.sampler is None else len(self.sampler)  # type: ignore[arg-type]

    def set_epoch(self, epoch: int) -> None:
        """Make the next iteration epoch number ``epoch`` (to resume a run: same order as an uninterrupted one)."""
        self.epoch = int(epoch)
        if self.sampler is not None and hasattr(self.sampler, "set_epoch"):
            self.sampler.set_epoch(self.epoch)
        self._rng = np.random.default_rng(None if self.seed is None else [self.seed, self.epoch])

    def _order(self) -> np.ndarray:
        if self.sampler is not None:
            return np.fromiter(iter(self.sampler), dtype=np.int64)
        n = len(self.X)
        if not self.shuffle:
            return np.arange(n)
        if self.seed is None:
            return self._rng.permutation(n)
        # One generator per epoch, keyed by (seed, epoch): deterministic and resumable.
        return np.random.default_rng([self.seed, self.epoch]).permutation(n)

    def __iter__(self) -> Iterator:
        order = self._order()
        self.epoch += 1
        n = len(order)
        stop = n - n % self.batch_size if self.drop_last else n
        for start in range(0, stop, self.batch_size):
            idx = order[start : start + self.batch_size]
            if self.y is None:
                yield self.X[idx]
            else:
                yield self.X[idx], self.y[idx]
