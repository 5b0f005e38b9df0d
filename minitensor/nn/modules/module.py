"""``torch.nn.modules.module``'s names, for code that imports them from there: ``Module``, and ``_IncompatibleKeys``
(what ``load_state_dict`` returns: minitensor's ``LoadResult``)."""

# ruff: noqa: F401 - re-exports, and torch's private names (not in __all__) too
from __future__ import annotations

from ...checkpoint import LoadResult as _IncompatibleKeys
from ...module import Module

__all__ = ["Module"]
