"""Resampling: pixel (un)shuffle as reshape + permute, and interpolate / Upsample as per-dim index gathers.

Interpolation is separable: each spatial dim is resampled in turn. ``nearest`` modes are one ``index_select`` per
dim; ``linear`` modes (linear, bilinear, trilinear) gather the two neighbours of every output position and mix them,
``x[i0] * w0 + x[i1] * w1``. The indices and weights depend only on the shapes (and the scale factor), so they are
computed host-side with PyTorch's rules and precision (float32 index arithmetic for ``nearest``; the input's
arithmetic type for linear weights), and gradients flow through the gather ops. ``area`` is adaptive average pooling.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..creation import tensor
from ..errors import ShapeError
from ..module import Module
from ..tensor import Tensor
from .common import tensor_args
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d

__all__ = ["pixel_shuffle", "pixel_unshuffle", "interpolate", "PixelShuffle", "PixelUnshuffle",
           "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


# --- pixel shuffle ---


def _factor(name: str, what: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} expects a positive int {what}, but got {value!r}")
    return int(value)


@tensor_args("input")
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002
    """``torch.nn.functional.pixel_shuffle``: (*, C*r^2, H, W) -> (*, C, H*r, W*r) with ``r = upscale_factor``;
    ``out[..., c, h*r + i, w*r + j] = input[..., c*r^2 + i*r + j, h, w]``."""
    r = _factor("pixel_shuffle", "upscale_factor", upscale_factor)
    if input.dims < 3:
        raise ShapeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got shape {input.shape}")
    *lead, C, H, W = input.shape
    if C % (r * r):
        raise ShapeError(f"pixel_shuffle expects its input's 'channel' dimension (size {C}, input shape {input.shape}) "
                         f"to be divisible by the square of upscale_factor, {r * r}")
    n = len(lead)
    x = input.reshape(*lead, C // (r * r), r, r, H, W).permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, C // (r * r), H * r, W * r)


@tensor_args("input")
def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    """``torch.nn.functional.pixel_unshuffle``, the inverse of :func:`pixel_shuffle`: (*, C, H*r, W*r) ->
    (*, C*r^2, H, W) with ``r = downscale_factor``."""
    r = _factor("pixel_unshuffle", "downscale_factor", downscale_factor)
    if input.dims < 3:
        raise ShapeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got shape {input.shape}")
    *lead, C, H, W = input.shape
    for what, size in (("height", H), ("width", W)):
        if size % r:
            raise ShapeError(f"pixel_unshuffle expects {what} (size {size}, input shape {input.shape}) to be "
                             f"divisible by downscale_factor {r}")
    n = len(lead)
    x = input.reshape(*lead, C, H // r, r, W // r, r).permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, C * r * r, H // r, W // r)


# --- interpolate ---

_LINEAR = {1: "linear", 2: "bilinear", 3: "trilinear"}  # the linear mode for each number of spatial dims
_NEAREST = ("nearest", "nearest-exact")
_KNOWN = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact", "lanczos")


def _nearest_index(n_in: int, n_out: int, scale: float | None, exact: bool) -> np.ndarray:
    """PyTorch's nearest source index per output position, in its float32 arithmetic: ``floor(dst * s)``
    (``nearest``) or ``floor((dst + 0.5) * s)`` (``nearest-exact``), ``s = 1/scale_factor`` or ``n_in/n_out``."""
    dst = np.arange(n_out)
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(n_in) / np.float32(n_out)
    src = (dst + 0.5) * np.float64(s) if exact else dst.astype(np.float32) * s
    return np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), n_in - 1)


def _linear_weights(n_in: int, n_out: int, scale: float | None, align_corners: bool,
                    ft: type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PyTorch's linear-interpolation neighbours and weights: (i0, i1, lambda1) per output position, computed in
    the float type ``ft``; ``out = x[i0] * (1 - lambda1) + x[i1] * lambda1``."""
    dst: np.ndarray = np.arange(n_out, dtype=ft)
    if align_corners:
        s = ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
        src = s * dst
    else:
        s = ft(1.0 / scale) if scale is not None and scale > 0 else ft(n_in) / ft(n_out)
        src = np.maximum(s * (dst + ft(0.5)) - ft(0.5), ft(0))
    i0 = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), n_in - 1)
    lam = np.clip(src - i0.astype(ft), ft(0), ft(1))
    return i0, np.where(i0 < n_in - 1, i0 + 1, i0), lam


def _output_sizes(input: Tensor, dim: int, size: Any, scale_factor: Any,  # noqa: A002
                  recompute: bool | None) -> tuple[list[int], list[float | None]]:
    """The output spatial sizes and the scale factors the index rules use (None: use ``n_in / n_out``)."""
    spatial = list(input.shape[2:])
    scales: list[float | None]
    if size is not None and scale_factor is not None:
        raise ValueError("interpolate: only one of size or scale_factor should be defined")
    if size is not None:
        sizes = list(size) if isinstance(size, (list, tuple)) else [size] * dim
        if len(sizes) != dim:
            raise ValueError(f"interpolate: input and output must have the same number of spatial dimensions, but got "
                             f"input with spatial dimensions of {spatial} and output size of {size!r}")
        if not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in sizes):
            raise TypeError(f"interpolate: expected size to be an int or a tuple of ints, got {size!r}")
        if recompute:
            raise ValueError("interpolate: recompute_scale_factor is not meaningful with an explicit size.")
        out, scales = [int(s) for s in sizes], [None] * dim
    elif scale_factor is not None:
        factors = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [scale_factor] * dim
        if len(factors) != dim:
            raise ValueError(f"interpolate: input and scale_factor must have the same number of spatial dimensions, "
                             f"but got input with spatial dimensions of {spatial} and scale_factor {scale_factor!r}")
        out = [math.floor(float(n) * float(f)) for n, f in zip(spatial, factors)]
        scales = [None] * dim if recompute else [float(f) for f in factors]
    else:
        raise ValueError("interpolate: either size or scale_factor should be defined")
    if any(n < 1 for n in spatial) or any(o < 1 for o in out):
        raise ShapeError(f"interpolate: input and output sizes should be greater than 0, but got input spatial size "
                         f"{tuple(spatial)} (input shape {input.shape}) and output size {tuple(out)}")
    return out, scales


def _weights(values: np.ndarray, axis: int, like: Tensor) -> Tensor:
    """``values`` along ``axis`` of ``like``, broadcastable against it (size 1 on every later dim)."""
    shape = (len(values),) + (1,) * (like.dims - axis - 1)
    return tensor(values.reshape(shape), dtype=like.dtype, backend=like.backend)


@tensor_args("input")
def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",  # noqa: A002
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims of (N, C, *spatial) ``input``, ``torch.nn.functional.interpolate``. Exactly one of
    ``size`` (int or tuple) and ``scale_factor`` (float or tuple; output ``floor(n * scale_factor)``) is given.

    Modes: ``nearest`` (source ``floor(dst * n_in/n_out)``), ``nearest-exact`` (``floor((dst + 0.5) * n_in/n_out)``),
    for any number of spatial dims; ``linear`` (3-D input), ``bilinear`` (4-D), ``trilinear`` (5-D) with source
    ``dst * (n_in-1)/(n_out-1)`` when ``align_corners`` else ``(dst + 0.5) * n_in/n_out - 0.5``; ``area`` (3-D,
    4-D; adaptive average pooling). A given ``scale_factor`` sets the ratio ``1/scale_factor`` used in these rules
    unless ``recompute_scale_factor``. ``bicubic``, ``lanczos`` and ``antialias=True`` raise NotImplementedError.
    """
    if mode not in _KNOWN:
        raise NotImplementedError(f"interpolate: mode {mode!r} is not supported (modes: {', '.join(_KNOWN)})")
    if mode in (*_NEAREST, "area"):
        if align_corners is not None:
            raise ValueError(f"interpolate: align_corners can only be set with the interpolating modes linear | "
                             f"bilinear | bicubic | trilinear, got mode {mode!r}")
    dim = input.dims - 2
    if dim < 1:
        raise NotImplementedError(f"interpolate: only 3-D, 4-D and 5-D (N, C, *spatial) inputs are supported, got "
                                  f"shape {input.shape} (mode {mode!r})")
    out, scales = _output_sizes(input, dim, size, scale_factor, recompute_scale_factor)  # area ignores scales
    if antialias:
        if mode not in ("bilinear", "bicubic", "lanczos") or input.dims != 4:
            raise ValueError("interpolate: antialias is restricted to bilinear, bicubic and lanczos modes and a 4-D input")
        raise NotImplementedError(f"interpolate: antialias=True (mode {mode!r}) is not implemented")
    if mode in ("bicubic", "lanczos"):
        raise NotImplementedError(f"interpolate: mode {mode!r} is not implemented (use nearest, nearest-exact, "
                                  f"linear, bilinear, trilinear or area)")
    if mode == "area":
        if dim > 2:
            raise NotImplementedError(f"interpolate: mode 'area' is not implemented for {input.dims}-D input")
        return adaptive_avg_pool1d(input, out[0]) if dim == 1 else adaptive_avg_pool2d(input, tuple(out))
    if mode not in _NEAREST and _LINEAR.get(dim) != mode:
        need = {"linear": 3, "bilinear": 4, "trilinear": 5}[mode]
        raise NotImplementedError(f"interpolate: got {input.dims}-D input (shape {input.shape}), but {mode} mode needs "
                                  f"{need}-D input")
    ft = np.float64 if input.dtype == np.float64 else np.float32
    x = input
    for i, (n_in, n_out, scale) in enumerate(zip(input.shape[2:], out, scales)):
        axis = 2 + i
        if mode in _NEAREST:
            index = _nearest_index(n_in, n_out, scale, mode == "nearest-exact")
            if not np.array_equal(index, np.arange(n_in)):
                x = x.index_select(axis, tensor(index, dtype="int64", backend=x.backend))
        elif n_in != n_out:  # PyTorch copies a dim whose size does not change, whatever the scale factor
            i0, i1, lam = _linear_weights(n_in, n_out, scale, bool(align_corners), ft)
            low = x.index_select(axis, tensor(i0, dtype="int64", backend=x.backend))
            high = x.index_select(axis, tensor(i1, dtype="int64", backend=x.backend))
            x = low * _weights(1 - lam, axis, x) + high * _weights(lam, axis, x)
    return x if x is not input else input.clone()


class Upsample(Module):
    """``torch.nn.Upsample(size=None, scale_factor=None, mode='nearest', align_corners=None,
    recompute_scale_factor=None)``: :func:`interpolate` with fixed settings."""

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None, recompute_scale_factor: bool | None = None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: Any = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners, self.recompute_scale_factor = mode, align_corners, recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``torch.nn.UpsamplingNearest2d(size=None, scale_factor=None)``: :class:`Upsample` with mode 'nearest'."""

    def __init__(self, size: Any = None, scale_factor: Any = None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``torch.nn.UpsamplingBilinear2d(size=None, scale_factor=None)``: :class:`Upsample` with mode 'bilinear' and
    ``align_corners=True``."""

    def __init__(self, size: Any = None, scale_factor: Any = None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """``torch.nn.PixelShuffle(upscale_factor)``: :func:`pixel_shuffle`."""

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``torch.nn.PixelUnshuffle(downscale_factor)``: :func:`pixel_unshuffle`."""

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
