"""PyTorch's top-level constants and the dtype type: ``e pi inf nan newaxis`` and ``dtype`` (minitensor's dtypes are
NumPy dtypes, so ``isinstance(mt.float32, mt.dtype)`` holds and ``mt.dtype("float32")`` makes one)."""

from __future__ import annotations

import math

import numpy as np

e = math.e
pi = math.pi
inf = math.inf
nan = math.nan
newaxis = None
"""``x[:, mt.newaxis]`` inserts a dim, as ``None`` does."""
dtype = np.dtype
"""The type of minitensor's dtypes (NumPy's)."""

__all__ = ["dtype", "e", "inf", "nan", "newaxis", "pi"]
