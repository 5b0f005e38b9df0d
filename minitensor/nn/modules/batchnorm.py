"""``torch.nn.modules.batchnorm``'s names, for code that imports them from there: the batch norms; ``_NormBase``
(running-statistics norms: minitensor's ``_RunningStatsNorm``), ``_BatchNorm`` and ``_LazyNormBase`` (minitensor's
``_LazyNorm``)."""

# ruff: noqa: F401 - re-exports, and torch's private names (not in __all__) too
from __future__ import annotations

from ..lazy import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d
from ..lazy import _LazyNorm as _LazyNormBase
from ..norm import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm
from ..norm import _RunningStatsNorm as _NormBase
from ..norm_sync import SyncBatchNorm

__all__ = ["BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d", "LazyBatchNorm3d", "SyncBatchNorm"]
