"""``torch.nn.modules.lazy``'s names, for code that imports them from there: ``LazyModuleMixin``."""

from __future__ import annotations

from ..lazy import LazyModuleMixin

__all__ = ["LazyModuleMixin"]
