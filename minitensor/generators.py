"""PyTorch's generator API: ``Generator``, ``default_generator``, ``manual_seed``, ``seed``, ``initial_seed``,
``get_rng_state`` and ``set_rng_state``.

The streams themselves live in :mod:`minitensor.random_state`, below the tensor layer, which speaks of a state as 8
NumPy words; this module sits above the tensor layer and hands states out and takes them back as int64 tensors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import random_state
from .creation import tensor
from .devices import Device
from .errors import DTypeError, RNGStateError
from .tensor import Tensor


def _state_words(new_state: Any, caller: str) -> np.ndarray:
    """The 8 words of a state tensor; TypeError, DTypeError or RNGStateError naming ``caller`` for anything else."""
    if not isinstance(new_state, Tensor):
        raise TypeError(f"{caller}() expects the int64 Tensor that get_rng_state()/get_state() returns, "
                        f"got {type(new_state).__name__}")
    if new_state.dtype != np.int64:
        raise DTypeError(f"{caller}() expects an int64 state tensor (from get_rng_state()/get_state()), "
                         f"got a {new_state.dtype} tensor")
    if new_state.shape != (8,):
        raise RNGStateError(f"{caller}() expects a state of shape (8,) (from get_rng_state()/get_state()), "
                            f"got shape {new_state.shape}")
    return new_state.to_numpy()


class Generator(random_state.RandomStream):
    """``torch.Generator``: an independent stream of random numbers for the ``generator=`` argument of the random
    functions (NumPy's PCG64; a new one is seeded with 67280421310721, as PyTorch's). Draws are made on the host, so
    ``device`` only records the device given (an ``mt.device``)."""

    @property
    def device(self) -> Device:
        """The device given at construction, as an ``mt.device`` (draws happen on the host either way)."""
        return self._device

    @device.setter
    def device(self, value: Any) -> None:
        self._device = Device(value)

    def get_state(self) -> Tensor:
        """The state as an int64 tensor of 8 words (format in :mod:`minitensor.random_state`) for ``set_state``."""
        return tensor(self.state_words(), device="cpu")

    def set_state(self, new_state: Tensor) -> Generator:
        """Continue from a state ``get_state`` returned (of any generator); returns this generator."""
        self.load_state(_state_words(new_state, "set_state"), "set_state")
        return self


class _SharedGenerator(random_state.SharedStream, Generator):
    """The shared stream seen as a Generator (``default_generator``)."""


default_generator: Generator = _SharedGenerator()
"""``torch.default_generator``: the shared generator as a Generator."""


def manual_seed(seed: int) -> Generator:
    """Seed the shared generator used by the random functions (and the nn initializers and dropout); returns
    ``default_generator``."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the shared generator with a nondeterministic 64-bit seed, and return it."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the shared generator was last seeded with (random at import, until ``manual_seed``/``seed``)."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The shared generator's state, an int64 tensor of 8 words, for ``set_rng_state``."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Continue the shared generator from a state ``get_rng_state`` (or ``Generator.get_state``) returned."""
    default_generator.load_state(_state_words(new_state, "set_rng_state"), "set_rng_state")
