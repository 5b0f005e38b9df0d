"""Dropout: ``F.dropout`` and ``nn.Dropout``."""

from __future__ import annotations

from ..creation import generator
from ..module import Module
from ..tensor import Tensor

__all__ = ["dropout", "Dropout"]


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p); identity when not training.

    The mask is drawn on the host from :func:`minitensor.generator` (seed with ``manual_seed``).
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    keep = (generator().random(x.shape) >= p).astype(x.dtype) / (1.0 - p)
    return x * Tensor(x.backend.from_numpy(keep.astype(x.dtype)), x.backend)



class Dropout(Module):
    """Zeroes elements with probability ``p`` while training (scaling the rest by 1/(1-p)); identity in eval."""

    def __init__(self, p: float = 0.5):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability must be in [0, 1], got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


