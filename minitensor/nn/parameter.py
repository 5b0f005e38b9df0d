"""``torch.nn.parameter``: ``Parameter`` and ``Buffer`` (defined in :mod:`minitensor.module`), and the lazy modules'
``UninitializedParameter``, ``UninitializedBuffer`` and ``UninitializedTensorMixin`` (:mod:`.lazy`), for code that
imports them from there."""

from __future__ import annotations

from ..module import Buffer, Parameter
from .lazy import UninitializedBuffer, UninitializedParameter, UninitializedTensorMixin

__all__ = ["Parameter", "UninitializedParameter", "Buffer", "UninitializedBuffer", "UninitializedTensorMixin"]
