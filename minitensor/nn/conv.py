"""Padding and convolution by im2col: a strided window VIEW of the padded input, copied once, then one matmul.

One code path serves 1-, 2- and 3-D. No Python loop runs over output pixels. :class:`Im2Col` copies every kernel
window of a ``(B, C, *S)`` tensor into a contiguous ``(B, *O, C, *K)`` tensor through a single strided view (e.g. 2-D
strides ``(sB, sH*stride_h, sW*stride_w, sC, sH*dilation_h, sW*dilation_w)``: dilation is only a stride change)
and one ``map("id")`` kernel call. Its backward is :class:`Col2Im`: for each of the ``prod(K)`` kernel offsets, the
positions that offset touches form a non-overlapping strided view of the input gradient, so one in-place
``zip("add", view, grad_part, view)`` per offset scatter-adds it. The two are each other's backward, so gradients
of any order flow through a convolution (``create_graph=True``). :class:`Pad` writes the input into the interior
view of a tensor filled with the pad value; its backward copies the interior out. Both only use the backend
kernels, so they run on every backend. Groups are one batched matmul over a leading group dim.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..autodiff import Context, is_grad_enabled
from ..creation import empty, tensor
from ..errors import ShapeError
from ..module import Module, Parameter
from ..tensor import Tensor
from ..tensor_data import TensorData
from ..tensor_functions import TensorFunction
from . import init
from .common import bias_bound, check_sizes, factory, tensor_args

__all__ = ["conv1d", "conv2d", "conv3d", "pad", "Conv1d", "Conv2d", "Conv3d"]

PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _tuple(value: Any, n: int, name: str, low: int = 0) -> tuple[int, ...]:
    """``value`` (an int or a sequence of ``n`` ints, each >= ``low``) as an ``n``-tuple."""
    out = (value,) * n if isinstance(value, (int, np.integer)) else tuple(value)
    if len(out) != n or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in out):
        raise ShapeError(f"{name} must be an int or a tuple of {n} ints, got {value!r}")
    if any(v < low for v in out):
        raise ValueError(f"{name} must be >= {low}, got {value!r}")
    return tuple(int(v) for v in out)


# --- padding ---


class Pad(TensorFunction):
    """Pad the trailing dims with ``value``: ``pads`` is one non-negative ``(before, after)`` pair per trailing dim."""

    higher_order = True  # under create_graph the backward is a differentiable slice and copy

    @staticmethod
    def forward(ctx: Context, x: Tensor, pads: tuple[tuple[int, int], ...], value: float) -> Tensor:
        lead = x.dims - len(pads)
        shape = x.shape[:lead] + tuple(s + b + a for s, (b, a) in zip(x.shape[lead:], pads))
        key = (slice(None),) * lead + tuple(slice(b, b + s) for s, (b, _) in zip(x.shape[lead:], pads))
        out = x._zeros(shape)
        if value != 0:
            x.backend.map("id", x._lift(value)._data.expand(shape), out._data)
        x.backend.map("id", x._data, out._data.slice(key))
        ctx.save_for_backward(key)
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        (key,) = ctx.saved_values
        if is_grad_enabled():  # create_graph: the same copy of the interior, with history
            return d[key].contiguous()
        return d._view_of(d._data.slice(key))._map("id")


def _source_index(size: int, before: int, after: int, mode: str) -> np.ndarray:
    """Input positions that output positions ``0 .. size+before+after-1`` of a ``mode`` pad read (host-side)."""
    p = np.arange(-before, size + after)
    if mode == "replicate":
        return np.clip(p, 0, size - 1)
    if mode == "circular":
        return np.mod(p, size)
    period = 2 * (size - 1)  # reflect without repeating the edge: ... 2 1 | 0 1 2 ... n-1 | n-2 ...
    q = np.mod(p, period) if period else np.zeros_like(p)
    return np.where(q < size, q, period - q)


@tensor_args("input")
def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:  # noqa: A002
    """Pad ``input`` as ``torch.nn.functional.pad``: ``pad = (left, right, top, bottom, ...)`` pads the LAST dim first.

    ``constant`` fills with ``value`` (default 0) and a negative pad crops; ``reflect`` mirrors without repeating
    the edge (pad < size), ``replicate`` repeats the edge, ``circular`` wraps around (pad <= size). Differentiable:
    constant pads copy into a filled tensor; the other modes are one ``index_select`` per padded dim (indices
    computed host-side from the shape only).
    """
    pads = tuple(pad)
    if len(pads) % 2 or not all(isinstance(p, (int, np.integer)) for p in pads):
        raise ValueError(f"pad must be a flat tuple of an even number of ints (left, right, top, ...), got {pad!r}")
    n = len(pads) // 2
    if n > input.dims:
        raise ShapeError(f"pad {pads} pads {n} dims but the input of shape {input.shape} has only {input.dims}")
    if mode not in PAD_MODES:
        raise ValueError(f"pad: mode must be one of {PAD_MODES}, got {mode!r}")
    if mode != "constant" and value is not None:
        raise ValueError(f"pad: value is only used with mode='constant', got value={value!r} with mode={mode!r}")
    if mode != "constant" and not (1 <= n <= 3 and input.dims in (n + 1, n + 2)):
        raise ShapeError(f"pad: {mode} padding of size {len(pads)} is not supported for a {input.dims}-D input of "
                         f"shape {input.shape} (non-constant modes pad the last 1, 2 or 3 dims of an input with 1 or "
                         f"2 more dims)")
    pairs = [(int(pads[2 * i]), int(pads[2 * i + 1])) for i in reversed(range(n))]  # in dim order
    dims = range(input.dims - n, input.dims)
    if mode == "constant":
        x = input
        for d, (b, a) in zip(dims, pairs):
            if b < 0 or a < 0:
                size = x.shape[d] + min(b, 0) + min(a, 0)
                if size < 0:
                    raise ShapeError(f"pad {pads} crops dim {d} of the input of shape {input.shape} below size 0")
                x = x.narrow(d, -min(b, 0), size)
        positive = tuple((max(b, 0), max(a, 0)) for b, a in pairs)
        if all(b == 0 and a == 0 for b, a in positive):
            return x
        return Pad.apply(x, positive, 0.0 if value is None else float(value))
    x = input
    for d, (b, a) in zip(dims, pairs):
        if (b, a) == (0, 0):
            continue
        if b < 0 or a < 0:
            if mode != "circular":
                raise ValueError(f"pad: negative padding {pads} is only supported for modes 'constant' and 'circular'")
            x = x.narrow(d, -min(b, 0), x.shape[d] + min(b, 0) + min(a, 0))  # crop first, then wrap (as torch)
            b, a = max(b, 0), max(a, 0)
        size = x.shape[d]
        limit = {"reflect": size - 1, "circular": size}.get(mode, math.inf)  # replicate: any amount
        if size == 0 or max(b, a) > limit:
            raise ShapeError(f"pad: {mode} padding {pads} must be at most {limit} (dim {d} of the input of shape "
                             f"{input.shape} has size {size}{'; reflect needs pad < size' if mode == 'reflect' else ''})")
        index = tensor(_source_index(size, b, a, mode), dtype="int64", backend=x.backend)
        x = x.index_select(d, index)
    return x


# --- im2col ---


def _im2col(x: Tensor, kernel: tuple[int, ...], stride: tuple[int, ...], dilation: tuple[int, ...],
            blocks: tuple[int, ...] | None = None) -> Tensor:
    """Raw im2col (no history): the windows of a (B, C, *S) tensor copied into a contiguous (B, *O, C, *K) tensor
    (``nd = len(kernel)`` spatial dims); ``blocks`` = O, default as many windows as fit."""
    B, C, *S = x.shape
    out = blocks or tuple((s - d * (k - 1) - 1) // st + 1 for s, k, st, d in zip(S, kernel, stride, dilation))
    tB, tC, *tS = x._data.strides
    strides = (tB, *(t * st for t, st in zip(tS, stride)), tC, *(t * d for t, d in zip(tS, dilation)))
    return x._view_of(TensorData(x._data.storage, (B, *out, C, *kernel), strides))._map("id")


def _col2im(cols: Tensor, shape: tuple[int, ...], kernel: tuple[int, ...], stride: tuple[int, ...],
            dilation: tuple[int, ...]) -> Tensor:
    """Raw col2im (no history), the adjoint of :func:`_im2col`: a zero (B, C, *S) tensor of ``shape`` with every
    window of ``cols`` (B, *O, C, *K) added back where it came from (overlaps sum); one scatter-add per kernel offset."""
    nd, (B, C) = len(kernel), shape[:2]
    d = cols if cols._data.is_contiguous() else cols._map("id")
    out = d.shape[1 : nd + 1]
    grad = d._zeros(shape)
    tB, tC, *tS = grad._data.strides
    dd = d._data
    lead, taps = dd.strides[: nd + 2], dd.strides[nd + 2 :]
    steps = (tB, *(t * st for t, st in zip(tS, stride)), tC)
    for offset in itertools.product(*(range(k) for k in kernel)):
        # Positions o*stride + offset*dilation: distinct for distinct o, so the view never overlaps itself.
        start = sum(i * dl * t for i, dl, t in zip(offset, dilation, tS))
        target = TensorData(grad._data.storage[start:], (B, *out, C), steps)
        part = TensorData(dd.storage[sum(i * t for i, t in zip(offset, taps)) :], (B, *out, C), lead)
        d.backend.zip("add", target, part, target)
    return grad


class Col2Im(TensorFunction):
    """Sum the (B, *O, C, *K) windows ``cols`` into a zero (B, C, *S) tensor of ``shape``."""

    higher_order = True

    @staticmethod
    def forward(ctx: Context, cols: Tensor, shape: tuple[int, ...], kernel: tuple[int, ...], stride: tuple[int, ...],
                dilation: tuple[int, ...]) -> Tensor:
        ctx.save_for_backward(cols.shape[1 : len(kernel) + 1], kernel, stride, dilation)
        return _col2im(cols, shape, kernel, stride, dilation)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        blocks, kernel, stride, dilation = ctx.saved_values
        return Im2Col.apply(d, kernel, stride, dilation, blocks)


class Im2Col(TensorFunction):
    """The first ``blocks`` = O windows of a (B, C, *S) tensor as a (B, *O, C, *K) tensor."""

    higher_order = True

    @staticmethod
    def forward(ctx: Context, x: Tensor, kernel: tuple[int, ...], stride: tuple[int, ...], dilation: tuple[int, ...],
                blocks: tuple[int, ...]) -> Tensor:
        ctx.save_for_backward(x.shape, kernel, stride, dilation)
        return _im2col(x, kernel, stride, dilation, blocks)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        shape, kernel, stride, dilation = ctx.saved_values
        return Col2Im.apply(d, shape, kernel, stride, dilation)


@tensor_args("x")
def windows(x: Tensor, kernel_size: Any, stride: Any = 1, dilation: Any = 1) -> Tensor:
    """All ``kernel_size`` windows of ``x`` (B, C, *S), ``nd = x.dims - 2`` spatial dims, as a (B, *O, C, *K) tensor
    (differentiable), ``O_d = (S_d - dilation_d*(K_d-1) - 1) // stride_d + 1``."""
    if x.dims < 3:
        raise ShapeError(f"windows needs a (B, C, *spatial) input with at least one spatial dim, got shape {x.shape}")
    nd = x.dims - 2
    kernel, step = _tuple(kernel_size, nd, "kernel_size", 1), _tuple(stride, nd, "stride", 1)
    dil = _tuple(dilation, nd, "dilation", 1)
    extent = tuple(d * (k - 1) + 1 for d, k in zip(dil, kernel))
    if any(e > s for e, s in zip(extent, x.shape[2:])):
        raise ShapeError(f"kernel size {kernel} (dilated extent {extent}) is larger than the padded input size "
                         f"{x.shape[2:]} (input shape {x.shape})")
    return Im2Col.apply(x, kernel, step, dil, None)


# --- convolution ---


def _same_pads(kernel: Sequence[int], dilation: Sequence[int]) -> list[tuple[int, int]]:
    """PyTorch's 'same' padding per dim: total ``dilation*(k-1)``, the odd extra element on the right/bottom."""
    return [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in zip(kernel, dilation)]


def _conv(name: str, nd: int, input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,  # noqa: A002
          dilation: Any, groups: int) -> Tensor:
    if weight.dims != nd + 2:
        raise ShapeError(f"{name}: weight must be {nd + 2}-D (out_channels, in_channels/groups, *kernel), got {weight.shape}")
    if input.dims not in (nd + 1, nd + 2):
        raise ShapeError(f"{name}: expected a {nd + 1}-D (unbatched) or {nd + 2}-D (batched) input, got shape {input.shape}")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise ValueError(f"{name}: groups must be a positive int, got {groups!r}")
    unbatched = input.dims == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    out_c, cg = weight.shape[:2]
    kernel = weight.shape[2:]
    if x.shape[1] != cg * groups:
        raise ShapeError(f"{name}: given groups={groups}, weight of shape {weight.shape} expects input {input.shape} "
                         f"to have {cg * groups} channels, but got {x.shape[1]}")
    if out_c % groups:
        raise ShapeError(f"{name}: given groups={groups}, out_channels {out_c} of weight {weight.shape} must be divisible by groups")
    if bias is not None and bias.shape != (out_c,):
        raise ShapeError(f"{name}: bias must have shape ({out_c},), got {bias.shape}")
    step, dil = _tuple(stride, nd, "stride", 1), _tuple(dilation, nd, "dilation", 1)
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(f"{name}: padding must be an int, a tuple, 'same' or 'valid', got {padding!r}")
        if padding == "same" and any(s != 1 for s in step):
            raise ValueError(f"{name}: padding='same' is not supported for strided convolutions (stride={step})")
        pairs = _same_pads(kernel, dil) if padding == "same" else [(0, 0)] * nd
    else:
        pairs = [(p, p) for p in _tuple(padding, nd, "padding")]
    padded = tuple(s + b + a for s, (b, a) in zip(x.shape[2:], pairs))
    if any(d * (k - 1) + 1 > s for d, k, s in zip(dil, kernel, padded)):
        raise ShapeError(f"{name}: padded input size {padded} is smaller than the (dilated) kernel size "
                         f"{tuple(kernel)} (input {input.shape}, weight {weight.shape})")
    x = pad(x, [v for pair in reversed(pairs) for v in pair])
    cols = windows(x, kernel, step, dil)  # (B, *O, C, *K), contiguous
    B, sizes = cols.shape[0], cols.shape[1 : nd + 1]
    n, k = B * math.prod(sizes), cg * math.prod(kernel)
    if groups == 1:
        out = cols.view(n, k) @ weight.reshape(out_c, k).transpose(0, 1)
    else:  # (G, N, K) @ (G, K, O/G) -> (G, N, O/G)
        a = cols.view(n, groups, k).permute(1, 0, 2)
        w = weight.reshape(groups, out_c // groups, k).transpose(1, 2)
        out = (a @ w).permute(1, 0, 2).reshape(n, out_c)
    if bias is not None:
        out = out + bias
    out = out.view(B, *sizes, out_c).permute(0, nd + 1, *range(1, nd + 1)).contiguous()
    return out.squeeze(0) if unbatched else out


@tensor_args("input", "weight")
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,  # noqa: A002
           dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D cross-correlation, ``torch.nn.functional.conv2d``: input (N, C, H, W) or (C, H, W), weight
    (O, C/groups, KH, KW), bias (O,); ``out[n, o, i, j] = b[o] + sum_{c,p,q} x[n, g*C/G + c, i*s + p*d, j*s + q*d]
    * w[o, c, p, q]`` with ``g`` the group of ``o``. ``padding``: int, pair, 'valid' or 'same' (stride 1)."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@tensor_args("input", "weight")
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,  # noqa: A002
           dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D cross-correlation, ``torch.nn.functional.conv1d``: input (N, C, L) or (C, L), weight (O, C/groups, K),
    bias (O,); ``padding``: int, 1-tuple, 'valid' or 'same' (stride 1)."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@tensor_args("input", "weight")
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,  # noqa: A002
           dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-D cross-correlation, ``torch.nn.functional.conv3d``: input (N, C, D, H, W) or (C, D, H, W), weight
    (O, C/groups, KD, KH, KW), bias (O,); ``padding``: int, triple, 'valid' or 'same' (stride 1)."""
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


_CONV = {1: conv1d, 2: conv2d, 3: conv3d}


class _ConvNd(Module):
    nd = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None, *, backend: Any = None):
        super().__init__()
        name, nd = type(self).__name__, self.nd
        check_sizes(name, in_channels=in_channels, out_channels=out_channels)
        if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
            raise ValueError(f"{name}: groups must be a positive integer, got {groups!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels {in_channels} and out_channels {out_channels} must be divisible "
                             f"by groups {groups}")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"{name}: padding_mode must be 'zeros', 'reflect', 'replicate' or 'circular', "
                             f"got {padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _tuple(kernel_size, nd, "kernel_size", 1)
        self.stride, self.dilation = _tuple(stride, nd, "stride", 1), _tuple(dilation, nd, "dilation", 1)
        self.padding_mode = padding_mode
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{name}: padding must be 'same', 'valid', an int or a tuple, got {padding!r}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{name}: padding='same' is not supported for strided convolutions")
            self.padding: Any = padding
            pairs = _same_pads(self.kernel_size, self.dilation) if padding == "same" else [(0, 0)] * nd
        else:
            self.padding = _tuple(padding, nd, "padding")
            pairs = [(p, p) for p in self.padding]
        self._reversed_padding_repeated_twice = [v for pair in reversed(pairs) for v in pair]
        kw = factory(device, dtype, backend)
        self.weight = Parameter(empty(out_channels, in_channels // groups, *self.kernel_size, **kw))
        self.bias = Parameter(empty(out_channels, **kw)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default init: kaiming_uniform_(a=sqrt(5)) weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) bias,
        ``fan_in = in_channels/groups * prod(kernel_size)``."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = bias_bound(self.in_channels // self.groups * math.prod(self.kernel_size))
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        fn = _CONV[self.nd]
        if self.padding_mode != "zeros":
            x = pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self.nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self.nd:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L) or (C, L) inputs, ``torch.nn.Conv1d``; weight (out, in/groups, kernel)."""

    nd = 1


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W) or (C, H, W) inputs, ``torch.nn.Conv2d``; weight (out, in/groups, kh, kw)."""

    nd = 2


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W) or (C, D, H, W) inputs, ``torch.nn.Conv3d``; weight
    (out, in/groups, kd, kh, kw)."""

    nd = 3
