"""``torch.nn.modules.dropout``'s names, for code that imports them from there: the dropout modules and their base
``_DropoutNd``."""

# ruff: noqa: F401 - re-exports, and torch's private names (not in __all__) too
from __future__ import annotations

from ..dropout import Dropout, _DropoutNd
from ..dropout_extra import AlphaDropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
