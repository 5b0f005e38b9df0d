"""``torch.nn.modules.adaptive``'s names, for code that imports them from there: ``AdaptiveLogSoftmaxWithLoss``."""

from __future__ import annotations

from ..adaptive_softmax import AdaptiveLogSoftmaxWithLoss

__all__ = ["AdaptiveLogSoftmaxWithLoss"]
