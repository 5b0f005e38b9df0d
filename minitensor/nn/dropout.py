"""Dropout: ``F.dropout`` and ``nn.Dropout`` (torch's names, signatures and repr)."""

from __future__ import annotations

from ..creation import rand_like
from ..module import Module
from ..tensor import Tensor
from .common import tensor_args

__all__ = ["dropout", "Dropout"]


def _check_p(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


@tensor_args("input")
def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p); ``input`` itself when not training
    or p = 0. ``inplace`` writes the result into ``input``. The mask comes from :func:`minitensor.rand_like`
    (the global generator: seed with ``manual_seed``); the gradient is the same mask times 1/(1-p)."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        result = input * 0.0
    else:
        keep = rand_like(input) >= p
        result = input * (keep.to(input.dtype) * (1.0 / (1.0 - p)))
    return input.copy_(result) if inplace else result


class _DropoutNd(Module):
    """What the dropout modules share (torch's base of the same name): the probability ``p`` and ``inplace``."""

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        _check_p(p)
        self.p, self.inplace = p, inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zeroes elements with probability ``p`` while training (scaling the rest by 1/(1-p)); identity in eval."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return dropout(input, self.p, self.training, self.inplace)
