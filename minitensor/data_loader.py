"""A minimal batching loader over NumPy arrays."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np


class DataLoader:
    """Iterate ``(x, y)`` NumPy batches of ``batch_size`` rows.

    Re-iterable: every ``for`` over the loader is one epoch. With ``shuffle`` each epoch uses a new
    permutation, drawn from a generator seeded with ``seed`` at construction, so the sequence of epochs is
    reproducible (epoch ``k`` of two loaders with the same seed is the same). ``drop_last`` skips a final
    batch smaller than ``batch_size``. ``y`` may be None (batches are then just ``x``).
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray | None = None,
        batch_size: int = 32,
        shuffle: bool = True,
        seed: int | None = 0,
        drop_last: bool = False,
    ):
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
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        self.epoch = 0
        self._rng = np.random.default_rng(seed)

    def __len__(self) -> int:
        """Number of batches per epoch."""
        n = len(self.X)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    @property
    def num_samples(self) -> int:
        return len(self.X)

    def set_epoch(self, epoch: int) -> None:
        """Make the next iteration epoch number ``epoch`` (to resume a run: same order as an uninterrupted one)."""
        self.epoch = int(epoch)
        self._rng = np.random.default_rng(None if self.seed is None else [self.seed, self.epoch])

    def _order(self) -> np.ndarray:
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
