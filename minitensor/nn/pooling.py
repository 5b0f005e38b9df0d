"""Pooling over strided window views (see :mod:`minitensor.nn.conv`): one copy, one reduce."""

from __future__ import annotations

from typing import Any

from ..errors import ShapeError
from ..module import Module
from ..tensor import Tensor
from .conv import _pair, pad, unfold

__all__ = ["max_pool2d", "avg_pool2d", "MaxPool2d", "AvgPool2d"]


def _windows(x: Tensor, kernel_size: Any, stride: Any) -> tuple[Tensor, int]:
    if x.dims != 4:
        raise ShapeError(f"2-D pooling needs a (B, C, H, W) input, got shape {x.shape}")
    kernel = _pair(kernel_size, "kernel_size")
    step = kernel if stride is None else _pair(stride, "stride")
    cols = unfold(x, kernel, step)  # (B, OH, OW, C, KH, KW)
    B, oh, ow, C = cols.shape[:4]
    return cols.view(B, oh, ow, C, kernel[0] * kernel[1]), 4


def max_pool2d(x: Tensor, kernel_size: Any, stride: Any = None) -> Tensor:
    """Max over each ``kernel_size`` window (stride defaults to the kernel); no padding.

    Tied maxima share the gradient evenly (PyTorch gives it all to one of them).
    """
    cols, dim = _windows(x, kernel_size, stride)
    return cols.amax(dim).permute(0, 3, 1, 2).contiguous()


def avg_pool2d(x: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0) -> Tensor:
    """Mean over each ``kernel_size`` window (stride defaults to the kernel); zero padding is counted."""
    ph, pw = _pair(padding, "padding")
    x = pad(x, ((ph, ph), (pw, pw)))
    cols, dim = _windows(x, kernel_size, stride)
    return cols.mean(dim).permute(0, 3, 1, 2).contiguous()


class MaxPool2d(Module):
    def __init__(self, kernel_size: Any, stride: Any = None):
        super().__init__()
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.stride = self.kernel_size if stride is None else _pair(stride, "stride")

    def forward(self, x: Tensor) -> Tensor:
        return max_pool2d(x, self.kernel_size, self.stride)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}"


class AvgPool2d(MaxPool2d):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0):
        super().__init__(kernel_size, stride)
        self.padding = _pair(padding, "padding")

    def forward(self, x: Tensor) -> Tensor:
        return avg_pool2d(x, self.kernel_size, self.stride, self.padding)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


