"""``torch.nn.modules.pixelshuffle``'s names, for code that imports them from there: ``PixelShuffle`` and
``PixelUnshuffle``."""

from __future__ import annotations

from ..resample import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]
