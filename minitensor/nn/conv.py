"""Convolution by im2col: a strided window VIEW of the zero-padded input, copied once, then one matmul.

No Python loop runs over output pixels. :class:`Unfold` copies every kernel window of a
``(B, C, H, W)`` tensor into a contiguous ``(B, OH, OW, C, KH, KW)`` tensor through a single
strided view (strides ``(sB, sH*stride_h, sW*stride_w, sC, sH, sW)``) and one ``map("id")``
kernel call. Its backward is col2im: for each of the ``KH*KW`` kernel offsets, the positions that
offset touches form a non-overlapping strided view of the input gradient, so one in-place
``zip("add", view, grad_part, view)`` per offset scatter-adds it. :class:`Pad` writes the input into
the interior view of a zero tensor; its backward copies the interior out. Both only use the four
backend kernels, so they run on every backend.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..autodiff import Context
from ..creation import empty
from ..errors import ShapeError
from ..module import Module, Parameter
from ..tensor import Tensor
from ..tensor_data import TensorData
from ..tensor_functions import TensorFunction
from . import init
from .linear import bias_bound, factory

__all__ = ["conv1d", "conv2d", "pad", "unfold", "Conv1d", "Conv2d"]


def _pair(value: int | Sequence[int], name: str) -> tuple[int, int]:
    if isinstance(value, int):
        out = (value, value)
    else:
        out = tuple(int(v) for v in value)  # type: ignore[assignment]
        if len(out) != 2:
            raise ShapeError(f"{name} must be an int or a pair of ints, got {value!r}")
    return out  # type: ignore[return-value]


class Pad(TensorFunction):
    """Zero-pad the trailing dims: ``pads`` is one ``(before, after)`` pair per trailing dim."""

    @staticmethod
    def forward(ctx: Context, x: Tensor, pads: tuple[tuple[int, int], ...]) -> Tensor:
        lead = x.dims - len(pads)
        shape = x.shape[:lead] + tuple(s + b + a for s, (b, a) in zip(x.shape[lead:], pads))
        key = (slice(None),) * lead + tuple(slice(b, b + s) for s, (b, _) in zip(x.shape[lead:], pads))
        out = x._zeros(shape)
        x.backend.map("id", x._data, out._data.slice(key))
        ctx.save_for_backward(key)
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        (key,) = ctx.saved_values
        return d._view_of(d._data.slice(key))._map("id")


def pad(x: Tensor, pads: Sequence[tuple[int, int]]) -> Tensor:
    """Zero-pad the last ``len(pads)`` dims of ``x`` by ``(before, after)`` each (differentiable)."""
    pads = tuple((int(b), int(a)) for b, a in pads)
    if len(pads) > x.dims or any(b < 0 or a < 0 for b, a in pads):
        raise ShapeError(f"bad padding {pads} for a tensor of shape {x.shape}")
    if all(b == 0 and a == 0 for b, a in pads):
        return x
    return Pad.apply(x, pads)


class Unfold(TensorFunction):
    """Windows of a ``(B, C, H, W)`` tensor as a contiguous ``(B, OH, OW, C, KH, KW)`` tensor."""

    @staticmethod
    def forward(ctx: Context, x: Tensor, kernel: tuple[int, int], stride: tuple[int, int]) -> Tensor:
        B, C, H, W = x.shape
        (kh, kw), (sh, sw) = kernel, stride
        oh, ow = (H - kh) // sh + 1, (W - kw) // sw + 1
        tB, tC, tH, tW = x._data.strides
        window = TensorData(x._data.storage, (B, oh, ow, C, kh, kw), (tB, tH * sh, tW * sw, tC, tH, tW))
        ctx.save_for_backward(x.shape, kernel, stride)
        return x._view_of(window)._map("id")

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        shape, (kh, kw), (sh, sw) = ctx.saved_values
        B, C, _, _ = shape
        d = d.contiguous()
        _, oh, ow = d.shape[:3]
        grad = d._zeros(shape)
        tB, tC, tH, tW = grad._data.strides
        dd = d._data
        for i in range(kh):
            for j in range(kw):
                # Positions (oh*sh + i, ow*sw + j): distinct for distinct (oh, ow), so the view never overlaps itself.
                target = TensorData(grad._data.storage[i * tH + j * tW :], (B, oh, ow, C), (tB, tH * sh, tW * sw, tC))
                part = TensorData(dd.storage[i * dd.strides[4] + j * dd.strides[5] :], (B, oh, ow, C), dd.strides[:4])
                d.backend.zip("add", target, part, target)
        return grad


def unfold(x: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] = 1) -> Tensor:
    """All ``kernel_size`` windows of ``x`` (B, C, H, W) as a (B, OH, OW, C, KH, KW) tensor (differentiable)."""
    if x.dims != 4:
        raise ShapeError(f"unfold needs a 4-D (B, C, H, W) input, got shape {x.shape}")
    kernel, step = _pair(kernel_size, "kernel_size"), _pair(stride, "stride")
    if min(kernel) < 1 or min(step) < 1:
        raise ShapeError(f"kernel_size {kernel} and stride {step} must be positive")
    if kernel[0] > x.shape[2] or kernel[1] > x.shape[3]:
        raise ShapeError(f"kernel {kernel} is larger than the (padded) input {x.shape[2:]} of shape {x.shape}")
    return Unfold.apply(x, kernel, step)


def conv2d(
    x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0
) -> Tensor:
    """2-D cross-correlation of ``x`` (B, C, H, W) with ``weight`` (O, C, KH, KW) plus ``bias`` (O,): (B, O, OH, OW)."""
    if x.dims != 4 or weight.dims != 4:
        raise ShapeError(f"conv2d needs a (B, C, H, W) input and (O, C, KH, KW) weight, got {x.shape} and {weight.shape}")
    B, C = x.shape[:2]
    out_c, Cw, kh, kw = weight.shape
    if C != Cw:
        raise ShapeError(f"conv2d input has {C} channels (shape {x.shape}) but weight expects {Cw} (shape {weight.shape})")
    if bias is not None and bias.shape != (out_c,):
        raise ShapeError(f"conv2d bias must have shape ({out_c},), got {bias.shape}")
    ph, pw = _pair(padding, "padding")
    x = pad(x, ((ph, ph), (pw, pw)))
    cols = unfold(x, (kh, kw), stride)  # (B, OH, OW, C, KH, KW)
    oh, ow = cols.shape[1:3]
    out = cols.view(B * oh * ow, C * kh * kw) @ weight.reshape(out_c, C * kh * kw).transpose(0, 1)
    if bias is not None:
        out = out + bias
    return out.view(B, oh, ow, out_c).permute(0, 3, 1, 2).contiguous()


def conv1d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int = 1, padding: int = 0) -> Tensor:
    """1-D cross-correlation of ``x`` (B, C, L) with ``weight`` (O, C, K) plus ``bias`` (O,): (B, O, OL)."""
    if x.dims != 3 or weight.dims != 3:
        raise ShapeError(f"conv1d needs a (B, C, L) input and (O, C, K) weight, got {x.shape} and {weight.shape}")
    B, C, L = x.shape
    out_c, Cw, k = weight.shape
    out = conv2d(x.reshape(B, C, 1, L), weight.reshape(out_c, Cw, 1, k), bias, stride=(1, int(stride)), padding=(0, int(padding)))
    return out.view(B, out_c, out.shape[3])


class _ConvNd(Module):
    def __init__(self, in_channels: int, out_channels: int, kernel: tuple[int, ...], stride: Any, padding: Any,
                 bias: bool, backend: Any, dtype: Any):
        super().__init__()
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, kernel
        self.stride, self.padding = stride, padding
        kw = factory(None, dtype, backend)
        self.weight = Parameter(empty(out_channels, in_channels, *kernel, **kw))
        self.bias = Parameter(empty(out_channels, **kw)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default init: kaiming_uniform_(a=sqrt(5)) weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = bias_bound(self.in_channels * math.prod(self.kernel_size))
            init.uniform_(self.bias, -bound, bound)

    def _bias(self) -> Tensor | None:
        return self.bias if self.bias is not None else None

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, bias={self.bias is not None}")


class Conv1d(_ConvNd):
    """1-D convolution over (B, C, L) inputs; weight (out_channels, in_channels, kernel_size)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 bias: bool = True, backend: Any = None, dtype: Any = None):
        super().__init__(in_channels, out_channels, (int(kernel_size),), int(stride), int(padding), bias, backend, dtype)

    def forward(self, x: Tensor) -> Tensor:
        return conv1d(x, self.weight, self._bias(), self.stride, self.padding)


class Conv2d(_ConvNd):
    """2-D convolution over (B, C, H, W) inputs; weight (out_channels, in_channels, kh, kw)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 bias: bool = True, backend: Any = None, dtype: Any = None):
        super().__init__(in_channels, out_channels, _pair(kernel_size, "kernel_size"), _pair(stride, "stride"),
                         _pair(padding, "padding"), bias, backend, dtype)

    def forward(self, x: Tensor) -> Tensor:
        return conv2d(x, self.weight, self._bias(), self.stride, self.padding)


