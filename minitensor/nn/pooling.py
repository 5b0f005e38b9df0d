"""Pooling over strided window views (see :mod:`minitensor.nn.conv`: one copy, one reduce), one code path for 1-, 2-
and 3-D.

Max pooling picks ONE element per window (the first maximum in row-major window order, a NaN counting as the
maximum, as PyTorch) by ``argmax`` + ``gather``, so the gradient goes to that element only. Average pooling sums
each window and divides by PyTorch's per-window divisor (computed host-side from the shapes). Adaptive average
pooling is separable: one matmul per spatial dim with an averaging matrix built from PyTorch's start/end index rule.
The padding Modules live in :mod:`.padding` (re-exported here).
"""

from __future__ import annotations

import functools
import itertools
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
from .padding import ConstantPad1d, ConstantPad2d, ReflectionPad1d, ReflectionPad2d, ReplicationPad1d, ReplicationPad2d, ZeroPad2d

__all__ = [
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool2d", "adaptive_max_pool3d", "MaxPool1d",
    "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
    # re-exported from .padding, where they moved
    "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d",
    "ReplicationPad2d",
]


def _batched(name: str, nd: int, input: Tensor) -> tuple[Tensor, bool]:  # noqa: A002
    """``input`` as (N, C, *S) with ``nd`` spatial dims, and whether it was unbatched."""
    if input.dims not in (nd + 1, nd + 2):
        spatial = ", ".join("DHW"[3 - nd :]) if nd > 1 else "L"
        raise ShapeError(f"{name}: expected a {nd + 1}-D (C, {spatial}) or {nd + 2}-D (N, C, {spatial}) input, got shape "
                         f"{input.shape}")
    unbatched = input.dims == nd + 1
    return (input.unsqueeze(0) if unbatched else input), unbatched


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
    """(N, *O, C, prod(K)) windows of ``input`` padded with ``fill``; unbatched flag; (kernel, stride, pad, dil)."""
    x, unbatched = _batched(name, nd, input)
    kernel = _tuple(kernel_size, nd, "kernel_size", 1)
    step = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _tuple(stride, nd, "stride", 1)
    pads, dil = _tuple(padding, nd, "padding"), _tuple(dilation, nd, "dilation", 1)
    if any(p > k // 2 for p, k in zip(pads, kernel)):
        raise ValueError(f"{name}: padding {pads} should be at most half of kernel size {kernel}")
    flat: list[int] = []
    for size, k, s, p, d in zip(x.shape[2:], kernel, step, pads, dil):
        out = _out_size(name, size, k, s, p, d, ceil_mode)
        flat = [p, (out - 1) * s + d * (k - 1) + 1 - size - p, *flat]  # right pad makes exactly `out` windows fit
    cols = windows(pad(x, flat, value=fill), kernel, step, dil)  # (N, *O, C, *K)
    return cols.view(*cols.shape[: nd + 2], math.prod(kernel)), unbatched, (kernel, step, pads, dil)


def _finish(out: Tensor, nd: int, unbatched: bool) -> Tensor:
    """(N, *O, C) -> (N, C, *O), dropping the unbatched N."""
    out = out.permute(0, nd + 1, *range(1, nd + 1)).contiguous()
    return out.squeeze(0) if unbatched else out


def _along(values: np.ndarray, dim: int, nd: int, like: Tensor) -> Tensor:
    """A host int64 vector as a tensor broadcasting along output dim ``dim`` of an (N, *O, C, 1) tensor."""
    shape = [1] * (nd + 3)
    shape[1 + dim] = len(values)
    return tensor(values.reshape(shape), dtype="int64", backend=like.backend)


def _max_pool(name: str, nd: int, input: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,  # noqa: A002
              ceil_mode: bool, return_indices: bool) -> Any:
    cols, unbatched, (kernel, step, pads, dil) = _windows(name, nd, input, kernel_size, stride, padding, dilation,
                                                          ceil_mode, -math.inf)
    idx = cols.argmax(-1, keepdim=True)  # first max in row-major window order, as PyTorch
    out = _finish(cols.gather(-1, idx).squeeze(-1), nd, unbatched)
    if not return_indices:
        return out
    sizes = input.shape[-nd:]
    flat: Any = 0
    for d in range(nd):  # flat index into the unpadded input: row-major over the nd spatial dims
        tap = idx // math.prod(kernel[d + 1 :]) % kernel[d]
        at = _along(np.arange(cols.shape[1 + d]) * step[d] - pads[d], d, nd, input) + tap * dil[d]
        flat = flat * sizes[d] + at
    return out, _finish(flat.squeeze(-1), nd, unbatched)


@tensor_args("input")
def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max over each window of (N, C, D, H, W) or (C, D, H, W) ``input``, as ``torch.nn.functional.max_pool3d``;
    ``return_indices`` also returns int64 flat indices ``(d * H + h) * W + w`` into the unpadded input."""
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


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
    total = cols.sum(-1)  # (N, *O, C)
    if divisor_override is not None:
        if isinstance(divisor_override, bool) or not isinstance(divisor_override, int) or divisor_override == 0:
            raise ValueError(f"{name}: divisor_override must be a nonzero int, got {divisor_override!r}")
        return _finish(total / divisor_override, nd, unbatched)
    sizes = input.shape[-nd:]
    counts = [_divisor(sizes[d], total.shape[1 + d], kernel[d], step[d], pads[d], count_include_pad) for d in range(nd)]
    div = functools.reduce(np.multiply.outer, counts)
    return _finish(total / tensor(div[None, ..., None], dtype=input.dtype, backend=input.backend), nd, unbatched)


@tensor_args("input")
def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,  # noqa: A002
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Window sum / divisor over (N, C, D, H, W) or (C, D, H, W) ``input``, as ``torch.nn.functional.avg_pool3d``
    (divisor as :func:`avg_pool2d`)."""
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


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


def _adaptive_avg(name: str, nd: int, input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """One averaging matmul per spatial dim: ``x @ A^T`` along the last dim, the others moved there and back."""
    x, unbatched = _batched(name, nd, input)
    sizes = _adaptive_sizes(name, nd, input, output_size)
    last = x.dims - 1
    for d, o in enumerate(sizes):
        dim = 2 + d
        a = _averaging(x.shape[dim], o, x).transpose(0, 1)
        x = x @ a if dim == last else (x.transpose(dim, last) @ a).transpose(dim, last)
    return x.squeeze(0) if unbatched else x


@tensor_args("input")
def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """Average over PyTorch's adaptive windows of (N, C, D, H, W) or (C, D, H, W) ``input``; ``output_size`` an int
    or triple, None keeps that input size."""
    return _adaptive_avg("adaptive_avg_pool3d", 3, input, output_size)


@tensor_args("input")
def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """Average over PyTorch's adaptive windows (rows ``[floor(i*H/OH), ceil((i+1)*H/OH))``, columns alike) of
    (N, C, H, W) or (C, H, W) ``input``; ``output_size`` an int or pair, None keeps that input size."""
    return _adaptive_avg("adaptive_avg_pool2d", 2, input, output_size)


@tensor_args("input")
def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """Average over PyTorch's adaptive windows of (N, C, L) or (C, L) ``input``."""
    return _adaptive_avg("adaptive_avg_pool1d", 1, input, output_size)


def _adaptive_max(name: str, nd: int, input: Tensor, output_size: Any, return_indices: bool) -> Any:  # noqa: A002
    """One argmax + gather per adaptive window (a Python loop over the prod(O) output positions); flat indices
    row-major over the spatial dims."""
    x, unbatched = _batched(name, nd, input)
    sizes = _adaptive_sizes(name, nd, input, output_size)
    (N, C), spatial = x.shape[:2], x.shape[2:]
    values, indices = [], []
    for box in itertools.product(*(_bins(s, o) for s, o in zip(spatial, sizes))):
        window = x[(slice(None), slice(None), *(slice(a, b) for a, b in box))].reshape(N, C, -1)
        idx = window.argmax(-1, keepdim=True)
        values.append(window.gather(-1, idx).squeeze(-1))
        extent, flat = [b - a for a, b in box], idx * 0
        for d, (a, _) in enumerate(box):
            flat = flat * spatial[d] + idx // math.prod(extent[d + 1 :]) % extent[d] + a
        indices.append(flat.squeeze(-1))
    out = stack(values, -1).view(N, C, *sizes)
    out = out.squeeze(0) if unbatched else out
    if not return_indices:
        return out
    where = stack(indices, -1).view(N, C, *sizes)
    return out, (where.squeeze(0) if unbatched else where)


@tensor_args("input")
def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:  # noqa: A002
    """Max over PyTorch's adaptive windows of (N, C, D, H, W) or (C, D, H, W) ``input``; indices are flat
    ``(d * H + h) * W + w``."""
    return _adaptive_max("adaptive_max_pool3d", 3, input, output_size, return_indices)


@tensor_args("input")
def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:  # noqa: A002
    """Max over PyTorch's adaptive windows (see :func:`adaptive_avg_pool2d`) of (N, C, H, W) or (C, H, W)
    ``input``. Indices are flat ``h * W + w``."""
    return _adaptive_max("adaptive_max_pool2d", 2, input, output_size, return_indices)


# --- Modules ---


class MaxPool2d(Module):
    """``torch.nn.MaxPool2d``: :func:`max_pool2d` with fixed settings (stride defaults to kernel_size)."""

    nd = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        fn = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}[self.nd]
        return fn(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(MaxPool2d):
    """``torch.nn.MaxPool1d``: :func:`max_pool1d` with fixed settings."""

    nd = 1


class MaxPool3d(MaxPool2d):
    """``torch.nn.MaxPool3d``: :func:`max_pool3d` with fixed settings (stride defaults to kernel_size)."""

    nd = 3


class AvgPool2d(Module):
    """``torch.nn.AvgPool2d``: :func:`avg_pool2d` with fixed settings."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        fn = avg_pool3d if isinstance(self, AvgPool3d) else avg_pool2d
        return fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                  self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    """``torch.nn.AvgPool3d``: :func:`avg_pool3d` with fixed settings."""


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

    nd = 2

    def __init__(self, output_size: Any):
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _adaptive_avg(f"adaptive_avg_pool{self.nd}d", self.nd, input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """``torch.nn.AdaptiveAvgPool1d``: :func:`adaptive_avg_pool1d` to ``output_size``."""

    nd = 1


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    """``torch.nn.AdaptiveAvgPool3d``: :func:`adaptive_avg_pool3d` to ``output_size``."""

    nd = 3


class AdaptiveMaxPool2d(AdaptiveAvgPool2d):
    """``torch.nn.AdaptiveMaxPool2d``: :func:`adaptive_max_pool2d` to ``output_size``."""

    def __init__(self, output_size: Any, return_indices: bool = False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return _adaptive_max(f"adaptive_max_pool{self.nd}d", self.nd, input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(AdaptiveMaxPool2d):
    """``torch.nn.AdaptiveMaxPool3d``: :func:`adaptive_max_pool3d` to ``output_size``."""

    nd = 3
