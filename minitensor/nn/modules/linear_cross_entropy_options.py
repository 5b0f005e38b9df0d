"""``torch.nn.modules.linear_cross_entropy_options``'s name, for code that imports it from there:
``LinearCrossEntropyOptions``."""

from __future__ import annotations

from ..linear_cross_entropy import LinearCrossEntropyOptions

__all__ = ["LinearCrossEntropyOptions"]
