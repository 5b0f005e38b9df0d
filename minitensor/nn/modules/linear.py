"""``torch.nn.modules.linear``'s names, for code that imports them from there: ``Identity Linear Bilinear LazyLinear``."""

from __future__ import annotations

from ..distance import Bilinear
from ..lazy import LazyLinear
from ..linear import Identity, Linear

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]
