"""``torch.nn.modules.conv``'s names, for code that imports them from there: the convolutions; ``_ConvNd``,
``_ConvTransposeNd`` and ``_LazyConvXdMixin`` (minitensor's ``_LazyConvMixin``). Unlike PyTorch's, minitensor's
``_ConvTransposeNd`` does not derive from ``_ConvNd``."""

# ruff: noqa: F401 - re-exports, and torch's private names (not in __all__) too
from __future__ import annotations

from ..conv import Conv1d, Conv2d, Conv3d, _ConvNd
from ..conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, _ConvTransposeNd
from ..lazy import LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d
from ..lazy import _LazyConvMixin as _LazyConvXdMixin

__all__ = [
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
    "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
]  # fmt: skip
