"""``torch.nn.modules.flatten``'s names, for code that imports them from there: ``Flatten`` and ``Unflatten``."""

from __future__ import annotations

from ..linear import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]
