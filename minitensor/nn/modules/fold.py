"""``torch.nn.modules.fold``'s names, for code that imports them from there: ``Fold`` and ``Unfold``."""

from __future__ import annotations

from ..conv_transpose import Fold, Unfold

__all__ = ["Fold", "Unfold"]
