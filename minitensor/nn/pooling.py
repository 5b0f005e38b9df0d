"""Pooling over strided window views (see :mod:`minitensor.nn.conv`: one copy, one reduce) and padding Modules.

Max pooling picks ONE element per window (the first maximum in row-major window order, a NaN counting as the
maximum, as PyTorch) by ``argmax`` + ``gather``, so the gradient goes to that element only. Average pooling sums
each window and divides by PyTorch's per-window divisor (computed host-side from the shapes). Adaptive average
pooling is separable: ``A_h @ x @ A_w^T`` with averaging matrices built from PyTorch's start/end index rule.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..creation import tensor
from ..errors import ShapeError
from ..module import Module
from ..tensor import Tensor
from ..tensor_join import stack
from .common import tensor_args
from .conv import _tuple, pad, windows

__all__ = [
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_max_pool2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d",
    "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d",
]


def _as_4d(name: str, nd: int, input: Tensor) -> tuple[Tensor, bool]:  # noqa: A002
    """``input`` as (N, C, H, W) (a 1-D pool sees H = 1) and whether it was unbatched."""
    if input.dims not in (nd + 1, nd + 2):
        raise ShapeError(f"{name}: expected a {nd + 1}-D (unbatched) or {nd + 2}-D (batched) input, got shape {input.shape}")
    unbatched = input.dims == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    return (x.unsqueeze(2) if nd == 1 else x), unbatched


def _out_size(name: str, size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling output length, incl. ceil_mode's rule that the last window starts inside input or left pad."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    if out < 1:
        raise ShapeError(f"{name}: input size {size} with padding {p} is smaller than the (dilated) kernel size "
                         f"{d * (k - 1) + 1}: output size would be {out}")
    return out


def _windows(name: str, nd: int, input: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,  # noqa: A002
             ceil_mode: bool, fill: float) -> tuple[Tensor, bool, tuple[tuple[int, ...], ...]]:
    """(N, OH, OW, C, KH*KW) windows of ``input`` padded with ``fill``; unbatched flag; (kernel, stride, pad, dil)."""
    x, unbatched = _as_4d(name, nd, input)
    kernel = _tuple(kernel_size, nd, "kernel_size", 1)
    step = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _tuple(stride, nd, "stride", 1)
    pads, dil = _tuple(padding, nd, "padding"), _tuple(dilation, nd, "dilation", 1)
    if any(p > k // 2 for p, k in zip(pads, kernel)):
        raise ValueError(f"{name}: padding {pads} should be at most half of kernel size {kernel}")
    if nd == 1:
        kernel, step, pads, dil = (1, *kernel), (1, *step), (0, *pads), (1, *dil)
    flat: list[int] = []
    for size, k, s, p, d in zip(x.shape[2:], kernel, step, pads, dil):
        out = _out_size(name, size, k, s, p, d, ceil_mode)
        flat = [p, (out - 1) * s + d * (k - 1) + 1 - size - p, *flat]  # right pad makes exactly `out` windows fit
    cols = windows(pad(x, flat, value=fill), kernel, step, dil)
    N, oh, ow, C = cols.shape[:4]
    return cols.view(N, oh, ow, C, kernel[0] * kernel[1]), unbatched, (kernel, step, pads, dil)


def _finish(out: Tensor, nd: int, unbatched: bool) -> Tensor:
    """(N, OH, OW, C) -> (N, C, OH, OW), dropping the 1-D pool's H and the unbatched N."""
    out = out.permute(0, 3, 1, 2).contiguous()
    if nd == 1:
        out = out.squeeze(2)
    return out.squeeze(0) if unbatched else out


def _max_pool(name: str, nd: int, input: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,  # noqa: A002
              ceil_mode: bool, return_indices: bool) -> Any:
    cols, unbatched, (kernel, step, pads, dil) = _windows(name, nd, input, kernel_size, stride, padding, dilation,
                                                          ceil_mode, -math.inf)
    idx = cols.argmax(-1, keepdim=True)  # first max in row-major window order, as PyTorch
    out = _finish(cols.gather(-1, idx).squeeze(-1), nd, unbatched)
    if not return_indices:
        return out
    _, oh, ow = cols.shape[:3]
    W = input.shape[-1]
    rows = tensor(np.arange(oh).reshape(1, oh, 1, 1, 1) * step[0] - pads[0], dtype="int64", backend=input.backend)
    cols_at = tensor(np.arange(ow).reshape(1, 1, ow, 1, 1) * step[1] - pads[1], dtype="int64", backend=input.backend)
    flat = (rows + (idx // kernel[1]) * dil[0]) * W + cols_at + (idx % kernel[1]) * dil[1]
    return out, _finish(flat.squeeze(-1), nd, unbatched)


@tensor_args("input")
def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max over each (dilated) window of (N, C, H, W) or (C, H, W) ``input`` padded with -inf, as
    ``torch.nn.functional.max_pool2d``; stride defaults to kernel_size. The gradient goes to the first maximum of
    each window; ``return_indices`` also returns int64 flat indices ``h * W + w`` into the unpadded input."""
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@tensor_args("input")
def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max over each window of (N, C, L) or (C, L) ``input``, as ``torch.nn.functional.max_pool1d``."""
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _divisor(size: int, out: int, k: int, s: int, p: int, include_pad: bool) -> np.ndarray:
    """PyTorch's per-window element count along one dim: windows end at most at ``size + p`` (the ceil_mode overflow
    never counts); without ``include_pad`` only real elements count."""
    start = np.arange(out) * s - p
    end = np.minimum(start + k, size + p)
    if not include_pad:
        start, end = np.maximum(start, 0), np.minimum(end, size)
    return (end - start).astype(np.float64)


def _avg_pool(name: str, nd: int, input: Tensor, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,  # noqa: A002
              count_include_pad: bool, divisor_override: int | None) -> Tensor:
    cols, unbatched, (kernel, step, pads, _) = _windows(name, nd, input, kernel_size, stride, padding, 1, ceil_mode, 0.0)
    total = cols.sum(-1)  # (N, OH, OW, C)
    if divisor_override is not None:
        if isinstance(divisor_override, bool) or not isinstance(divisor_override, int) or divisor_override == 0:
            raise ValueError(f"{name}: divisor_override must be a nonzero int, got {divisor_override!r}")
        return _finish(total / divisor_override, nd, unbatched)
    x4 = input.shape[-2:] if nd == 2 else (1, input.shape[-1])
    h, w = (_divisor(x4[i], total.shape[1 + i], kernel[i], step[i], pads[i], count_include_pad) for i in range(2))
    div = tensor(np.multiply.outer(h, w)[None, :, :, None], dtype=input.dtype, backend=input.backend)
    return _finish(total / div, nd, unbatched)


@tensor_args("input")
def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,  # noqa: A002
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Window sum / divisor over (N, C, H, W) or (C, H, W) ``input`` zero-padded by ``padding``, as
    ``torch.nn.functional.avg_pool2d``: divisor ``divisor_override``, else the window size clipped to the padded
    input (``count_include_pad``) or the number of real elements in the window."""
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


@tensor_args("input")
def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,  # noqa: A002
               count_include_pad: bool = True) -> Tensor:
    """Window mean over (N, C, L) or (C, L) ``input``, as ``torch.nn.functional.avg_pool1d``."""
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def _bins(size: int, out: int) -> list[tuple[int, int]]:
    """PyTorch's adaptive windows: ``[floor(i*size/out), ceil((i+1)*size/out))``."""
    return [((i * size) // out, -(-((i + 1) * size) // out)) for i in range(out)]


def _adaptive_sizes(name: str, nd: int, input: Tensor, output_size: Any) -> tuple[int, ...]:  # noqa: A002
    sizes = (output_size,) * nd if isinstance(output_size, int) or output_size is None else tuple(output_size)
    if len(sizes) != nd:
        raise ShapeError(f"{name}: output_size must be an int or a tuple of {nd}, got {output_size!r}")
    out = tuple(input.shape[-nd + i] if s is None else int(s) for i, s in enumerate(sizes))
    if any(s < 1 for s in out) or any(s == 0 for s in input.shape[-nd:]):
        raise ShapeError(f"{name}: output_size {output_size!r} and input spatial size {input.shape[-nd:]} must be positive")
    return out


def _averaging(size: int, out: int, like: Tensor) -> Tensor:
    """(out, size) matrix whose row i averages adaptive window i."""
    m = np.zeros((out, size))
    for i, (s, e) in enumerate(_bins(size, out)):
        m[i, s:e] = 1.0 / (e - s)
    return tensor(m, dtype=like.dtype, backend=like.backend)


@tensor_args("input")
def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """Average over PyTorch's adaptive windows (rows ``[floor(i*H/OH), ceil((i+1)*H/OH))``, columns alike) of
    (N, C, H, W) or (C, H, W) ``input``; ``output_size`` an int or pair, None keeps that input size."""
    x, unbatched = _as_4d("adaptive_avg_pool2d", 2, input)
    oh, ow = _adaptive_sizes("adaptive_avg_pool2d", 2, input, output_size)
    out = _averaging(x.shape[2], oh, x) @ x @ _averaging(x.shape[3], ow, x).transpose(0, 1)
    return out.squeeze(0) if unbatched else out


@tensor_args("input")
def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """Average over PyTorch's adaptive windows of (N, C, L) or (C, L) ``input``."""
    if input.dims not in (2, 3):
        raise ShapeError(f"adaptive_avg_pool1d: expected a 2-D or 3-D input, got shape {input.shape}")
    (ol,) = _adaptive_sizes("adaptive_avg_pool1d", 1, input, (output_size,) if isinstance(output_size, int) else output_size)
    return input @ _averaging(input.shape[-1], ol, input).transpose(0, 1)


@tensor_args("input")
def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:  # noqa: A002
    """Max over PyTorch's adaptive windows (see :func:`adaptive_avg_pool2d`); one argmax + gather per window
    (a Python loop over the OH*OW output positions). Indices are flat ``h * W + w``."""
    x, unbatched = _as_4d("adaptive_max_pool2d", 2, input)
    oh, ow = _adaptive_sizes("adaptive_max_pool2d", 2, input, output_size)
    W = x.shape[3]
    values, indices = [], []
    for hs, he in _bins(x.shape[2], oh):
        for ws, we in _bins(W, ow):
            window = x[:, :, hs:he, ws:we].reshape(x.shape[0], x.shape[1], -1)
            idx = window.argmax(-1, keepdim=True)
            values.append(window.gather(-1, idx).squeeze(-1))
            indices.append(((idx // (we - ws) + hs) * W + idx % (we - ws) + ws).squeeze(-1))
    out = stack(values, -1).view(x.shape[0], x.shape[1], oh, ow)
    out = out.squeeze(0) if unbatched else out
    if not return_indices:
        return out
    flat = stack(indices, -1).view(x.shape[0], x.shape[1], oh, ow)
    return out, (flat.squeeze(0) if unbatched else flat)


# --- Modules ---


class MaxPool2d(Module):
    """``torch.nn.MaxPool2d``: :func:`max_pool2d` with fixed settings (stride defaults to kernel_size)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        fn = max_pool1d if isinstance(self, MaxPool1d) else max_pool2d
        return fn(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(MaxPool2d):
    """``torch.nn.MaxPool1d``: :func:`max_pool1d` with fixed settings."""


class AvgPool2d(Module):
    """``torch.nn.AvgPool2d``: :func:`avg_pool2d` with fixed settings."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                          self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(AvgPool2d):
    """``torch.nn.AvgPool1d``: :func:`avg_pool1d` with fixed settings (sizes stored as 1-tuples, as PyTorch)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True):
        one = (lambda v: _tuple(v, 1, "size"))
        super().__init__(one(kernel_size), one(stride if stride is not None else kernel_size), one(padding),
                         ceil_mode, count_include_pad)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)


class AdaptiveAvgPool2d(Module):
    """``torch.nn.AdaptiveAvgPool2d``: :func:`adaptive_avg_pool2d` to ``output_size``."""

    def __init__(self, output_size: Any):
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """``torch.nn.AdaptiveAvgPool1d``: :func:`adaptive_avg_pool1d` to ``output_size``."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return adaptive_avg_pool1d(input, self.output_size)


class AdaptiveMaxPool2d(AdaptiveAvgPool2d):
    """``torch.nn.AdaptiveMaxPool2d``: :func:`adaptive_max_pool2d` to ``output_size``."""

    def __init__(self, output_size: Any, return_indices: bool = False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return adaptive_max_pool2d(input, self.output_size, self.return_indices)


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


class ZeroPad2d(_PadNd):
    """``torch.nn.ZeroPad2d(padding)``: :class:`ConstantPad2d` with value 0."""

    def __init__(self, padding: Any):
        super().__init__(padding, 0.0)


class ReflectionPad1d(_PadNd):
    """``torch.nn.ReflectionPad1d(padding)``: mirror the last dim (without repeating the edge)."""

    mode, nd = "reflect", 1


class ReflectionPad2d(_PadNd):
    """``torch.nn.ReflectionPad2d(padding)``: mirror the last two dims."""

    mode = "reflect"


class ReplicationPad1d(_PadNd):
    """``torch.nn.ReplicationPad1d(padding)``: repeat the edge of the last dim."""

    mode, nd = "replicate", 1


class ReplicationPad2d(_PadNd):
    """``torch.nn.ReplicationPad2d(padding)``: repeat the edges of the last two dims."""

    mode = "replicate"
