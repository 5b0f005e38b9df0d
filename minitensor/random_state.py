"""The one random generator behind minitensor's random functions, nn initializers, dropout and ``normal_``/``uniform_``.

It sits below every tensor module (it needs only NumPy), so each of them can draw from it. ``manual_seed`` replaces
it; :mod:`minitensor.compiler.capture` swaps in a recording stand-in while it traces a step.
"""

from __future__ import annotations

import numpy as np

_rng = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Seed the generator used by the random functions (and the nn initializers and dropout)."""
    global _rng
    _rng = np.random.default_rng(seed)


def generator() -> np.random.Generator:
    """The shared random generator (seed it with manual_seed)."""
    return _rng
