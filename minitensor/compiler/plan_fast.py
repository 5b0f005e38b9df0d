"""Pre-planned calls for the ``fast`` backend (filled in below)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .capture import Op


def bind_fast(op: Op) -> Callable[[], Any] | None:
    """``op`` bound to its kernel and planned arguments, or None to call the backend method."""
    return None
