"""``torch.nn.modules.normalization``'s names, for code that imports them from there: ``LayerNorm GroupNorm RMSNorm
LocalResponseNorm CrossMapLRN2d``."""

from __future__ import annotations

from ..norm import GroupNorm, LayerNorm, RMSNorm
from ..norm_cross_map import CrossMapLRN2d
from ..norm_instance import LocalResponseNorm

__all__ = ["LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm", "RMSNorm"]
