"""Transposed convolution (1-, 2- and 3-D, one code path) and fold/unfold: one matmul to columns, then col2im (the
adjoint of im2col) and a crop.

``conv_transpose2d`` is the gradient of ``conv2d`` with respect to its input: every input pixel ``x[n, :, i, j]``
times the flattened weight ``(C_in, C_out/groups * KH * KW)`` gives one ``(C_out, KH, KW)`` block, added at
``(i*stride, j*stride)`` with taps ``dilation`` apart. The blocks of all pixels are one matmul (a batched matmul
over a leading group dim for ``groups > 1``); :class:`.conv.Col2Im` (the backward of conv's window copy) adds them
into the output with a per-kernel-offset strided scatter-add, and ``padding`` crops the border. :func:`fold` is
col2im on torch's ``(N, C*KH*KW, L)`` column layout; :class:`Unfold` is the module form of torch's im2col layout.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..creation import empty
from ..errors import ShapeError
from ..module import Module, Parameter
from ..tensor import Tensor
from . import init
from .common import bias_bound, check_sizes, factory, tensor_args
from .conv import Col2Im, _tuple, pad, windows

__all__ = [
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "fold", "unfold", "ConvTranspose1d", "ConvTranspose2d",
    "ConvTranspose3d", "Fold", "Unfold",
]


def _groups(name: str, groups: Any) -> int:
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise ValueError(f"{name}: groups must be a positive int, got {groups!r}")
    return groups


def _conv_transpose(name: str, nd: int, input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,  # noqa: A002
                    padding: Any, output_padding: Any, groups: int, dilation: Any) -> Tensor:
    if weight.dims != nd + 2:
        raise ShapeError(f"{name}: weight must be {nd + 2}-D (in_channels, out_channels/groups, *kernel), got {weight.shape}")
    if input.dims not in (nd + 1, nd + 2):
        raise ShapeError(f"{name}: expected a {nd + 1}-D (unbatched) or {nd + 2}-D (batched) input, got shape {input.shape}")
    groups = _groups(name, groups)
    unbatched = input.dims == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    cin, cog = weight.shape[:2]
    kernel, out_c = tuple(weight.shape[2:]), cog * groups
    if x.shape[1] != cin:
        raise ShapeError(f"{name}: weight of shape {weight.shape} expects input {input.shape} to have {cin} channels "
                         f"(weight.shape[0]), but got {x.shape[1]}")
    if cin % groups:
        raise ShapeError(f"{name}: given groups={groups}, weight of shape {weight.shape} must have in_channels "
                         f"(dim 0) divisible by groups")
    if bias is not None and bias.shape != (out_c,):
        raise ShapeError(f"{name}: bias must have shape ({out_c},) (out_channels = weight.shape[1] * groups), got {bias.shape}")
    step, dil = _tuple(stride, nd, "stride", 1), _tuple(dilation, nd, "dilation", 1)
    pads, extra = _tuple(padding, nd, "padding"), _tuple(output_padding, nd, "output_padding")
    if any(e >= s and e >= d for e, s, d in zip(extra, step, dil)):
        raise ValueError(f"{name}: output_padding {extra} must be smaller than either stride {step} or dilation {dil}")
    sizes = tuple((n - 1) * s - 2 * p + d * (k - 1) + e + 1
                  for n, s, p, d, k, e in zip(x.shape[2:], step, pads, dil, kernel, extra))
    if any(s < 1 for s in sizes):
        raise ShapeError(f"{name}: input spatial size {tuple(x.shape[2:])} with weight {weight.shape}, stride {step}, "
                         f"padding {pads}, dilation {dil} and output_padding {extra} gives output size {sizes}: too small")
    B, spatial = x.shape[0], x.shape[2:]
    n, k = B * math.prod(spatial), cog * math.prod(kernel)
    rows = x.permute(0, *range(2, nd + 2), 1).reshape(n, cin)
    if groups == 1:
        cols = rows @ weight.reshape(cin, k)
    else:  # (G, N, C/G) @ (G, C/G, K) -> (G, N, K)
        a = rows.view(n, groups, cin // groups).permute(1, 0, 2)
        cols = (a @ weight.reshape(groups, cin // groups, k)).permute(1, 0, 2)
    cols = cols.reshape(B, *spatial, out_c, *kernel)
    full = tuple((m - 1) * s + d * (kk - 1) + 1 + e for m, s, d, kk, e in zip(spatial, step, dil, kernel, extra))
    out = Col2Im.apply(cols, (B, out_c, *full), kernel, step, dil)
    for i in range(nd):
        out = out.narrow(2 + i, pads[i], sizes[i])
    out = out + bias.view(1, out_c, *(1,) * nd) if bias is not None else out.contiguous()
    return out.squeeze(0) if unbatched else out


@tensor_args("input", "weight")
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,  # noqa: A002
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    """2-D transposed convolution ("deconvolution"), ``torch.nn.functional.conv_transpose2d``: input (N, C_in, H, W)
    or (C_in, H, W), weight (C_in, C_out/groups, KH, KW), bias (C_out,). Output (N, C_out, H_out, W_out) with
    ``H_out = (H - 1)*stride - 2*padding + dilation*(KH - 1) + output_padding + 1``; ``output_padding`` (extra
    rows/cols at the bottom/right) must be smaller than stride or dilation. The gradient of conv2d w.r.t. its input."""
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups, dilation)


@tensor_args("input", "weight")
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,  # noqa: A002
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    """1-D transposed convolution, ``torch.nn.functional.conv_transpose1d``: input (N, C_in, L) or (C_in, L), weight
    (C_in, C_out/groups, K), bias (C_out,); ``L_out = (L - 1)*stride - 2*padding + dilation*(K - 1) +
    output_padding + 1``."""
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups, dilation)


@tensor_args("input", "weight")
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,  # noqa: A002
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    """3-D transposed convolution, ``torch.nn.functional.conv_transpose3d``: input (N, C_in, D, H, W) or
    (C_in, D, H, W), weight (C_in, C_out/groups, KD, KH, KW), bias (C_out,); each output size as in
    :func:`conv_transpose2d`."""
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups, dilation)


_CONV_TRANSPOSE = {1: conv_transpose1d, 2: conv_transpose2d, 3: conv_transpose3d}


class _ConvTransposeNd(Module):
    nd = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None, *, backend: Any = None):
        super().__init__()
        name, nd = type(self).__name__, self.nd
        check_sizes(name, in_channels=in_channels, out_channels=out_channels)
        groups = _groups(name, groups)
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels {in_channels} and out_channels {out_channels} must be divisible "
                             f"by groups {groups}")
        if padding_mode != "zeros":
            raise ValueError(f'{name}: only "zeros" padding mode is supported, got {padding_mode!r}')
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _tuple(kernel_size, nd, "kernel_size", 1)
        self.stride, self.dilation = _tuple(stride, nd, "stride", 1), _tuple(dilation, nd, "dilation", 1)
        self.padding, self.output_padding = _tuple(padding, nd, "padding"), _tuple(output_padding, nd, "output_padding")
        self.padding_mode = padding_mode
        kw = factory(device, dtype, backend)
        self.weight = Parameter(empty(in_channels, out_channels // groups, *self.kernel_size, **kw))
        self.bias = Parameter(empty(out_channels, **kw)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default init: kaiming_uniform_(a=sqrt(5)) weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) bias,
        ``fan_in = weight.shape[1] * prod(kernel_size) = out_channels/groups * prod(kernel_size)``."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = bias_bound(self.out_channels // self.groups * math.prod(self.kernel_size))
            init.uniform_(self.bias, -bound, bound)

    def _output_padding(self, input: Tensor, output_size: Sequence[int] | None) -> tuple[int, ...]:  # noqa: A002
        """``output_padding`` that makes the spatial output size ``output_size`` (as PyTorch: the last ``nd`` entries
        may be preceded by the batch/channel sizes; each must lie in [min, min + stride - 1])."""
        if output_size is None:
            return self.output_padding
        nd, name = self.nd, type(self).__name__
        lead = 2 if input.dims == nd + 2 else 1
        want = [int(s) for s in output_size]
        if len(want) == lead + nd:
            want = want[lead:]
        if len(want) != nd:
            raise ValueError(f"{name}: for {input.dims}-D input, output_size must have {nd} or {lead + nd} elements, "
                             f"got {tuple(output_size)}")
        low = [(n - 1) * s - 2 * p + d * (k - 1) + 1 for n, s, p, d, k in
               zip(input.shape[-nd:], self.stride, self.padding, self.dilation, self.kernel_size)]
        high = [m + s - 1 for m, s in zip(low, self.stride)]
        if any(not lo <= w <= hi for w, lo, hi in zip(want, low, high)):
            raise ValueError(f"{name}: requested an output size of {tuple(want)}, but valid sizes range from "
                             f"{tuple(low)} to {tuple(high)} (for an input of {tuple(input.shape[-nd:])})")
        return tuple(w - lo for w, lo in zip(want, low))

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:  # noqa: A002
        extra = self._output_padding(input, output_size)
        return _CONV_TRANSPOSE[self.nd](input, self.weight, self.bias, self.stride, self.padding, extra, self.groups,
                                        self.dilation)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self.nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self.nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self.nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over (N, C, L) or (C, L), ``torch.nn.ConvTranspose1d``; weight
    (in, out/groups, kernel); ``forward(input, output_size=None)`` picks output_padding to reach ``output_size``."""

    nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over (N, C, H, W) or (C, H, W), ``torch.nn.ConvTranspose2d``; weight
    (in, out/groups, kh, kw); ``forward(input, output_size=None)`` picks output_padding to reach ``output_size``."""

    nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over (N, C, D, H, W) or (C, D, H, W), ``torch.nn.ConvTranspose3d``; weight
    (in, out/groups, kd, kh, kw); ``forward(input, output_size=None)`` picks output_padding to reach ``output_size``."""

    nd = 3


# --- fold / unfold in torch's (N, C*KH*KW, L) column layout ---


def _window_args(kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> tuple[tuple[int, int], ...]:
    return (_tuple(kernel_size, 2, "kernel_size", 1), _tuple(dilation, 2, "dilation", 1),  # type: ignore[return-value]
            _tuple(padding, 2, "padding"), _tuple(stride, 2, "stride", 1))


@tensor_args("input")
def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,  # noqa: A002
         stride: Any = 1) -> Tensor:
    """Sum sliding blocks back into an image, ``torch.nn.functional.fold`` (col2im): input (N, C*KH*KW, L) or
    (C*KH*KW, L) -> (N, C, H, W) or (C, H, W), ``(H, W) = output_size``. ``L`` must equal the number of blocks,
    ``prod_d (size_d + 2*padding_d - dilation_d*(k_d - 1) - 1) // stride_d + 1``; overlapping entries add up."""
    if input.dims not in (2, 3):
        raise ShapeError(f"fold: expected a 2-D (unbatched) or 3-D (batched) input (N, C*KH*KW, L), got shape {input.shape}")
    size = _tuple(output_size, 2, "output_size", 1)
    kernel, dil, pads, step = _window_args(kernel_size, dilation, padding, stride)
    x = input.unsqueeze(0) if input.dims == 2 else input
    N, ck, L = x.shape
    kk = kernel[0] * kernel[1]
    if ck % kk:
        raise ShapeError(f"fold: input.size(1)={ck} (input shape {input.shape}) must be divisible by the product of "
                         f"kernel_size={kernel}")
    blocks = tuple((s + 2 * p - d * (k - 1) - 1) // st + 1 for s, p, d, k, st in zip(size, pads, dil, kernel, step))
    if min(blocks) < 1 or blocks[0] * blocks[1] != L:
        raise ShapeError(f"fold: given output_size={size}, kernel_size={kernel}, dilation={dil}, padding={pads}, "
                         f"stride={step}, expected input.size(2) to match the calculated number of sliding blocks "
                         f"{blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1] if min(blocks) > 0 else 0}, but got {L} "
                         f"(input shape {input.shape})")
    C = ck // kk
    cols = x.view(N, C, kernel[0], kernel[1], blocks[0], blocks[1]).permute(0, 4, 5, 1, 2, 3)
    out = Col2Im.apply(cols, (N, C, size[0] + 2 * pads[0], size[1] + 2 * pads[1]), kernel, step, dil)
    if pads != (0, 0):
        out = out.narrow(2, pads[0], size[0]).narrow(3, pads[1], size[1]).contiguous()
    return out.squeeze(0) if input.dims == 2 else out


class Fold(Module):
    """``torch.nn.Fold(output_size, kernel_size, dilation=1, padding=0, stride=1)``: :func:`fold` with fixed settings."""

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


@tensor_args("input")
def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:  # noqa: A002
    """Extract sliding blocks as columns, ``torch.nn.functional.unfold`` (im2col): input (N, C, H, W) or (C, H, W) ->
    (N, C*KH*KW, L) or (C*KH*KW, L), ``L = prod_d (size_d + 2*padding_d - dilation_d*(k_d - 1) - 1) // stride_d + 1``;
    channel-major rows ``c*KH*KW + i*KW + j``. :func:`fold` is its adjoint."""
    if input.dims not in (3, 4):
        raise ShapeError(f"unfold: expected a 3-D (unbatched) or 4-D (batched) input, got shape {input.shape}")
    kernel, dil, pads, step = _window_args(kernel_size, dilation, padding, stride)
    x = input.unsqueeze(0) if input.dims == 3 else input
    if pads != (0, 0):
        x = pad(x, (pads[1], pads[1], pads[0], pads[0]))
    blocks = windows(x, kernel, step, dil)  # (N, OH, OW, C, KH, KW)
    N, oh, ow, C = blocks.shape[:4]
    out = blocks.permute(0, 3, 4, 5, 1, 2).reshape(N, C * kernel[0] * kernel[1], oh * ow)
    return out.squeeze(0) if input.dims == 3 else out


class Unfold(Module):
    """``torch.nn.Unfold(kernel_size, dilation=1, padding=0, stride=1)``: :func:`unfold` with fixed settings."""

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
