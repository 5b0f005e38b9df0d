"""The random generators behind minitensor's random functions, nn initializers, dropout and ``normal_``/``uniform_``:
the one shared generator and PyTorch's ``Generator`` objects for the ``generator=`` argument.

Both are NumPy PCG64 streams (``np.random.default_rng(seed)``). The shared one is the module global ``_rng``:
``manual_seed``, ``seed`` and ``set_rng_state`` replace it, and :mod:`minitensor.compiler.capture` swaps in a recording
stand-in while it traces a step (so this module refuses, under a trace, what a replay could not repeat: draws from
another generator, reading or replacing the shared one's state). ``default_generator`` is the shared one seen as a
:class:`Generator`.

A state (``get_rng_state``, ``Generator.get_state``) is an int64 tensor of 8 words, each the two's-complement of an
unsigned 64-bit value: ``[STATE_TAG, state_lo, state_hi, inc_lo, inc_hi, has_uint32, uinteger, initial_seed]`` -- the
tag, PCG64's 128-bit state and increment (low word first), NumPy's buffered 32-bit half (a flag and the value) and
the seed it was last seeded with. Restoring it continues the stream bit for bit. This module sits below every tensor
module (it needs only NumPy) and speaks of states as NumPy arrays; :mod:`minitensor.generators`, above the tensor layer,
is where ``Generator``, ``default_generator`` and the seeding functions turn them into tensors.
"""

from __future__ import annotations

import operator
import secrets
from typing import Any, Self

import numpy as np

from .errors import CompileError, RNGStateError

DEFAULT_SEED = 67280421310721
"""The initial seed of a new Generator (PyTorch's ``default_rng_seed_val``)."""
STATE_TAG = int.from_bytes(b"mtPCG64\x01", "little")
"""The first word of a state: the format's tag and version."""
_WORD = (1 << 64) - 1

_seed = secrets.randbits(64)
_rng = np.random.default_rng(_seed)


def _recording() -> bool:
    """Whether minitensor.compile is recording draws right now (its stand-in for ``_rng`` says so)."""
    recording = getattr(_rng, "recording", None)
    return bool(recording is not None and recording())


def _refuse_in_trace(what: str) -> None:
    if _recording():
        raise CompileError(f"{what} inside a compiled function: a replay repeats only the draws from minitensor's "
                           "shared generator, so call it outside the compiled function (or call the function uncompiled)")


def _seed_value(seed: Any, caller: str = "manual_seed") -> int:
    """``seed`` as PyTorch takes it: an int in [-2**63, 2**64), negatives wrapped to their unsigned 64-bit value."""
    try:
        value = operator.index(seed)
    except TypeError:
        raise TypeError(f"{caller}() expected an int seed, got {type(seed).__name__} {seed!r}") from None
    if not -(1 << 63) <= value <= _WORD:
        raise ValueError(f"{caller}() needs a seed in [-2**63, 2**64), got {value}")
    return value & _WORD


def _pack(rng: np.random.Generator, seed: int) -> np.ndarray:
    state = rng.bit_generator.state
    if state["bit_generator"] != "PCG64":
        raise RNGStateError(f"cannot save the state of a {state['bit_generator']} generator (only PCG64)")
    s, inc = state["state"]["state"], state["state"]["inc"]
    words = [STATE_TAG, s & _WORD, s >> 64, inc & _WORD, inc >> 64, state["has_uint32"], state["uinteger"], seed]
    return np.array(words, dtype=np.uint64).view(np.int64)


def _unpack(state: np.ndarray, caller: str) -> tuple[np.random.Generator, int]:
    """A generator holding the 8 saved words (int64), and the saved initial seed; RNGStateError unless ``_pack`` made
    them."""
    words = [int(w) for w in state.view(np.uint64)]
    tag, s_lo, s_hi, inc_lo, inc_hi, has_uint32, uinteger, seed = words
    if tag != STATE_TAG:
        raise RNGStateError(f"{caller}(): not a minitensor generator state (first word {tag:#x}, "
                            f"expected the tag {STATE_TAG:#x})")
    if not inc_lo & 1 or has_uint32 > 1 or uinteger >> 32:
        raise RNGStateError(f"{caller}(): corrupt generator state (PCG64 increment must be odd, got {inc_lo & 1:#x} "
                            f"low bit; has_uint32={has_uint32} must be 0 or 1; uinteger={uinteger} must fit 32 bits)")
    rng = np.random.Generator(np.random.PCG64())
    rng.bit_generator.state = {"bit_generator": "PCG64", "state": {"state": s_hi << 64 | s_lo, "inc": inc_hi << 64 | inc_lo},
                               "has_uint32": has_uint32, "uinteger": uinteger}
    return rng, seed


class RandomStream:
    """An independent stream of random numbers (NumPy's PCG64; a new one is seeded with 67280421310721, as
    PyTorch's): the part of ``minitensor.Generator`` below the tensor layer, with the state as NumPy words. Draws are
    made on the host, so ``device`` only records the name given."""

    def __init__(self, device: Any = "cpu") -> None:
        self.device = device if isinstance(device, str) else getattr(device, "name", str(device))
        self._rng, self._seed = np.random.default_rng(DEFAULT_SEED), DEFAULT_SEED

    def _numpy(self) -> np.random.Generator:
        return self._rng

    def _install(self, rng: np.random.Generator, seed: int) -> None:
        self._rng, self._seed = rng, seed

    def manual_seed(self, seed: int) -> Self:
        """Restart the stream from ``seed`` (an int in [-2**63, 2**64)); returns this generator."""
        value = _seed_value(seed)
        self._install(np.random.default_rng(value), value)
        return self

    def seed(self) -> int:
        """Restart the stream from a nondeterministic 64-bit seed, and return that seed."""
        value = secrets.randbits(64)
        self._install(np.random.default_rng(value), value)
        return value

    def initial_seed(self) -> int:
        """The seed last given to ``manual_seed`` or picked by ``seed``."""
        return self._seed

    def state_words(self) -> np.ndarray:
        """The state as 8 int64 words (format in the module docstring)."""
        return _pack(self._numpy(), self.initial_seed())

    def load_state(self, words: np.ndarray, caller: str) -> None:
        """Continue from 8 words ``state_words`` returned (of any stream); RNGStateError naming ``caller`` if not."""
        self._install(*_unpack(words, caller))

    def __repr__(self) -> str:
        return f"<minitensor.Generator device={self.device!r} initial_seed={self.initial_seed()}>"


class SharedStream(RandomStream):
    """The shared stream (``_rng``) behind every random function called without ``generator=``."""

    def __init__(self) -> None:
        self.device = "cpu"

    def _numpy(self) -> np.random.Generator:
        _refuse_in_trace("reading the random state (get_rng_state)")
        return _rng

    def _install(self, rng: np.random.Generator, seed: int) -> None:
        global _rng, _seed
        _refuse_in_trace("reseeding the shared generator (manual_seed, seed or set_rng_state)")
        _rng, _seed = rng, seed

    def initial_seed(self) -> int:
        return _seed

    def load_state(self, words: np.ndarray, caller: str) -> None:
        _refuse_in_trace("restoring the random state (set_rng_state)")
        super().load_state(words, caller)

    def __repr__(self) -> str:
        return f"<minitensor.default_generator initial_seed={_seed}>"


def generator() -> np.random.Generator:
    """The shared random generator (seed it with manual_seed)."""
    return _rng


def rng_for(generator: RandomStream | np.random.Generator | None) -> np.random.Generator:
    """The NumPy generator to draw from for a ``generator=`` argument: the shared one for None (or
    ``default_generator``), else the given Generator's (a NumPy Generator is taken as it is)."""
    if generator is None or isinstance(generator, SharedStream):
        return _rng
    if isinstance(generator, RandomStream):
        rng = generator._numpy()
    elif isinstance(generator, np.random.Generator):
        rng = generator
    else:
        raise TypeError(f"generator must be a minitensor.Generator, got {type(generator).__name__}")
    _refuse_in_trace("drawing from a generator= other than the shared one")
    return rng
