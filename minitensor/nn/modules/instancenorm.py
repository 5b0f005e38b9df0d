"""``torch.nn.modules.instancenorm``'s names, for code that imports them from there: the instance norms;
``_InstanceNorm``, ``_NormBase`` and ``_LazyNormBase`` as in :mod:`.batchnorm`."""

# ruff: noqa: F401 - re-exports, and torch's private names (not in __all__) too
from __future__ import annotations

from ..lazy import LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d
from ..lazy import _LazyNorm as _LazyNormBase
from ..norm import _RunningStatsNorm as _NormBase
from ..norm_instance import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, _InstanceNorm

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
