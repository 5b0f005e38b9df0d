"""``torch.nn.modules.dropout``'s names, for code that imports them from there: the dropout modules and ``_DropoutNd``
(a base of every one here but ``Dropout``, which derives from Module directly)."""

# ruff: noqa: F401 - re-exports, and torch's private names (not in __all__) too
from __future__ import annotations

from ..dropout import Dropout
from ..dropout_extra import AlphaDropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout, _DropoutNd

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
