"""``torch.nn.modules.distance``'s names, for code that imports them from there: ``PairwiseDistance`` and
``CosineSimilarity``."""

from __future__ import annotations

from ..distance import CosineSimilarity, PairwiseDistance

__all__ = ["PairwiseDistance", "CosineSimilarity"]
