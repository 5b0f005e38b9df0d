"""``torch.nn.modules.sparse``'s names, for code that imports them from there: ``Embedding`` and ``EmbeddingBag``."""

from __future__ import annotations

from ..sparse import Embedding, EmbeddingBag

__all__ = ["Embedding", "EmbeddingBag"]
