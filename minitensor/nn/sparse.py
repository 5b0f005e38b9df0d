"""Embedding lookups: ``nn.Embedding``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..creation import empty
from ..module import Module, Parameter
from ..tensor import Tensor
from . import init
from .linear import factory

__all__ = ["Embedding"]


class Embedding(Module):
    """Rows of ``weight`` (num_embeddings, embedding_dim) picked by integer indices of any shape.

    The lookup is advanced indexing (one gather); its backward scatter-adds the output gradient into the picked rows.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, backend: Any = None, dtype: Any = None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = Parameter(empty(num_embeddings, embedding_dim, **factory(None, dtype, backend)))
        init.normal_(self.weight)

    def forward(self, indices: Any) -> Tensor:
        if not isinstance(indices, Tensor):
            indices = Tensor(self.weight.backend.from_numpy(np.asarray(indices, dtype=np.int64)), self.weight.backend)
        return self.weight[indices]

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"


