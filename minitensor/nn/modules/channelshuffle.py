"""``torch.nn.modules.channelshuffle``'s names, for code that imports them from there: ``ChannelShuffle``."""

from __future__ import annotations

from ..distance import ChannelShuffle

__all__ = ["ChannelShuffle"]
