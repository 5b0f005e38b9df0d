"""Padding Modules, torch's names, signatures and reprs: ``nn.ConstantPad1d/2d/3d ZeroPad1d/2d/3d
ReflectionPad1d/2d/3d ReplicationPad1d/2d/3d CircularPad1d/2d/3d``. Each is :func:`.conv.pad` with a fixed
``padding`` of ``2 * nd`` ints ``(left, right, top, bottom, front, back)``: the last dim first; an int pads every
side alike."""

from __future__ import annotations

from typing import Any

from ..errors import ShapeError
from ..module import Module
from ..tensor import Tensor
from .conv import _tuple, pad

__all__ = [
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ReflectionPad1d",
    "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
    "CircularPad2d", "CircularPad3d",
]


class _PadNd(Module):
    mode, nd = "constant", 2

    def __init__(self, padding: Any, value: float = 0.0):
        super().__init__()
        self.padding, self.value = _tuple(padding, 2 * self.nd, "padding", -(2**62)), value

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if self.mode == "constant":
            return pad(input, self.padding, "constant", self.value)
        return pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}" if type(self).__name__.startswith("Constant") else f"{self.padding}"


class ConstantPad1d(_PadNd):
    """``torch.nn.ConstantPad1d(padding, value)``: pad the last dim by (left, right) with ``value``."""

    nd = 1


class ConstantPad2d(_PadNd):
    """``torch.nn.ConstantPad2d(padding, value)``: pad the last two dims by (left, right, top, bottom)."""


class ConstantPad3d(_PadNd):
    """``torch.nn.ConstantPad3d(padding, value)``: pad the last three dims by (left, right, top, bottom, front, back)."""

    nd = 3


class _ZeroPadNd(_PadNd):
    def __init__(self, padding: Any):
        super().__init__(padding, 0.0)


class ZeroPad1d(_ZeroPadNd):
    """``torch.nn.ZeroPad1d(padding)``: pad the last dim by (left, right) with zeros (negative crops)."""

    nd = 1


class ZeroPad2d(_ZeroPadNd):
    """``torch.nn.ZeroPad2d(padding)``: :class:`ConstantPad2d` with value 0."""


class ZeroPad3d(_ZeroPadNd):
    """``torch.nn.ZeroPad3d(padding)``: :class:`ConstantPad3d` with value 0."""

    nd = 3


class ReflectionPad1d(_PadNd):
    """``torch.nn.ReflectionPad1d(padding)``: mirror the last dim (without repeating the edge)."""

    mode, nd = "reflect", 1


class ReflectionPad2d(_PadNd):
    """``torch.nn.ReflectionPad2d(padding)``: mirror the last two dims."""

    mode = "reflect"


class ReflectionPad3d(_PadNd):
    """``torch.nn.ReflectionPad3d(padding)``: mirror the last three dims of a (C, D, H, W) or (N, C, D, H, W) input."""

    mode, nd = "reflect", 3


class ReplicationPad1d(_PadNd):
    """``torch.nn.ReplicationPad1d(padding)``: repeat the edge of the last dim."""

    mode, nd = "replicate", 1


class ReplicationPad2d(_PadNd):
    """``torch.nn.ReplicationPad2d(padding)``: repeat the edges of the last two dims."""

    mode = "replicate"


class ReplicationPad3d(_PadNd):
    """``torch.nn.ReplicationPad3d(padding)``: repeat the edges of the last three dims (4-D or 5-D input)."""

    mode, nd = "replicate", 3


class _CircularPadNd(_PadNd):
    mode = "circular"

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.dims not in (self.nd + 1, self.nd + 2):
            raise ShapeError(f"{type(self).__name__}: expected a {self.nd + 1}-D or {self.nd + 2}-D input, got shape "
                             f"{input.shape}")
        return pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """``torch.nn.CircularPad1d(padding)``: wrap the last dim around of a (C, L) or (N, C, L) input."""

    nd = 1


class CircularPad2d(_CircularPadNd):
    """``torch.nn.CircularPad2d(padding)``: wrap the last two dims around of a (C, H, W) or (N, C, H, W) input."""


class CircularPad3d(_CircularPadNd):
    """``torch.nn.CircularPad3d(padding)``: wrap the last three dims around of a (C, D, H, W) or (N, C, D, H, W) input."""

    nd = 3
