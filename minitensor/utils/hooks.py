"""``torch.utils.hooks`` for minitensor: ``RemovableHandle``, what every hook registration returns (defined with the
graph's nodes in :mod:`minitensor.autodiff_nodes`)."""

from __future__ import annotations

from ..autodiff_nodes import RemovableHandle

__all__ = ["RemovableHandle"]
