"""Spatial-transformer sampling, torch's names, signatures, defaults and warnings: ``F.affine_grid`` and
``F.grid_sample`` (bilinear/nearest/bicubic on 4-D input, trilinear "bilinear"/nearest on 5-D input; padding modes
zeros, border, reflection).

A grid holds normalized coordinates in [-1, 1], last dim ordered (x, y[, z]) = (W, H[, D]). Each is mapped to the
input's pixel space (``align_corners``: -1 and 1 are the centres of the corner pixels, else their outer edges),
then clipped or reflected by the padding mode, with PyTorch's gradients: a clipped coordinate passes gradient only
strictly inside ``(0, size-1)`` and a reflected one flips its sign on odd reflections. The integer corner positions
(floor/round of the coordinates) and their in-bounds masks are computed host-side; the values are ``gather``s from
the flattened input and the weights are differentiable tensor expressions of the coordinates, so autodiff gives the
gradients with respect to both the input (gather's scatter-add) and the grid (through the weights).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..creation import tensor
from ..errors import DTypeError, ShapeError
from ..tensor import Tensor
from ..tensor_compare import where
from .common import tensor_args

__all__ = ["affine_grid", "grid_sample"]

_DEFAULT_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                    "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                    "grid_sample for details.")


def _align(align_corners: bool | None) -> bool:
    if align_corners is None:
        warnings.warn(_DEFAULT_WARNING, UserWarning, stacklevel=3)
        return False
    return bool(align_corners)


def _base_coords(steps: int, align_corners: bool) -> np.ndarray:
    """PyTorch's normalized pixel positions along one dim: linspace(-1, 1), scaled by (n-1)/n unless align_corners."""
    if steps <= 1:
        return np.zeros(max(steps, 0))
    line = np.linspace(-1.0, 1.0, steps)
    return line if align_corners else line * (steps - 1) / steps


@tensor_args("theta")
def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """The (N, H, W, 2) (or (N, D, H, W, 3)) sampling grid of the affine maps ``theta`` (N, 2, 3) (or (N, 3, 4))
    for an output of ``size`` (N, C, H, W) (or (N, C, D, H, W)): ``grid[n, h, w] = theta[n] @ (x_w, y_h, 1)`` with
    x, y the normalized pixel positions. Differentiable in ``theta``."""
    align = _align(align_corners)
    size = tuple(int(s) for s in size)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dims != 3 or theta.shape[-2:] != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {list(size)}. "
                             f"Got {theta.shape}.")
    elif len(size) == 5:
        if theta.dims != 3 or theta.shape[-2:] != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {list(size)}. "
                             f"Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {list(size)}.")
    spatial = size[2:]
    if align and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation of "
                      "affine_grid for details.", UserWarning, stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {list(size)}")
    if theta.shape[0] != size[0]:
        raise ShapeError(f"affine_grid: theta has {theta.shape[0]} matrices but size {list(size)} asks for a batch "
                         f"of {size[0]}")
    nd = len(spatial)
    axes = [_base_coords(s, align) for s in spatial]  # (D,) H, W order
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack([*reversed(mesh), np.ones(spatial)], axis=-1).reshape(-1, nd + 1)  # (x, y[, z], 1) rows
    base_t = tensor(base, dtype=theta.dtype, backend=theta.backend)
    grid = base_t @ theta.transpose(1, 2)  # (P, nd+1) @ (N, nd+1, nd) -> (N, P, nd)
    return grid.reshape(size[0], *spatial, nd)


# --- coordinates ---


def _unnormalize(coord: Any, size: int, align: bool) -> Any:
    """Normalized [-1, 1] coordinate to pixel space (tensor or array)."""
    return ((coord + 1) / 2) * (size - 1) if align else ((coord + 1) * size - 1) / 2


def _clip(x: Tensor, size: int) -> Tensor:
    """x clamped to [0, size-1]; the gradient passes only strictly inside (PyTorch counts the borders as out)."""
    inside = (x > 0) & (x < size - 1)
    return where(inside, x, x.detach().clamp(0, size - 1))


def _reflect(x: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """x reflected into [twice_low/2, twice_high/2] with PyTorch's gradient (+-1 by the parity of the reflection)."""
    if twice_low == twice_high:  # a unit-size dim: always 0, with a zero gradient
        return x * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    shifted = x - low
    raw = shifted.detach().to_numpy()
    sign = np.where(raw < 0, -1, 1).astype(raw.dtype)
    folded = shifted * tensor(sign, dtype=x.dtype, backend=x.backend)  # |x - low|, gradient sign(x - low) (+1 at 0)
    a = np.abs(raw)
    extra_np = np.fmod(a, np.asarray(span, raw.dtype))
    extra = folded - tensor(a - extra_np, dtype=x.dtype, backend=x.backend)
    even = tensor(np.floor(a / np.asarray(span, raw.dtype)) % 2 == 0, backend=x.backend)
    return where(even, extra + low, (span - extra) + low)


def _pad_coord(x: Tensor, size: int, padding_mode: str, align: bool) -> Tensor:
    if padding_mode == "border":
        return _clip(x, size)
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align else _reflect(x, -1, 2 * size - 1)
        return _clip(x, size)
    return x


def _pad_index(x: np.ndarray, size: int, padding_mode: str, align: bool) -> np.ndarray:
    """Host-side compute_coordinates for bicubic's integer taps (no gradient flows through them)."""
    if padding_mode == "zeros":
        return x
    if padding_mode == "reflection":
        low2, high2 = (0, 2 * (size - 1)) if align else (-1, 2 * size - 1)
        if low2 == high2:
            x = np.zeros_like(x)
        else:
            low, span = low2 / 2, (high2 - low2) / 2
            a = np.abs(x - low)
            extra = np.fmod(a, span)
            x = np.where(np.floor(a / span) % 2 == 0, extra + low, span - extra + low)
    return np.clip(x, 0, size - 1)


# --- sampling ---


def _gather(flat: Tensor, index: list[np.ndarray], sizes: tuple[int, ...]) -> Tensor:
    """flat (N, C, prod(sizes)) read at integer positions ``index`` (one (N, P) array per spatial dim); positions out
    of bounds read 0. Returns (N, C, P)."""
    N, C, P = flat.shape[0], flat.shape[1], index[0].shape[-1]
    ok = np.ones(index[0].shape, bool)
    linear = np.zeros(index[0].shape, np.int64)
    for i, s in zip(index, sizes):
        ok &= (i >= 0) & (i < s)
        linear = linear * s + np.where(ok, i, 0)
    linear = np.where(ok, linear, 0)
    idx = tensor(np.ascontiguousarray(np.broadcast_to(linear[:, None, :], (N, C, P))), dtype="int64",
                 backend=flat.backend)
    values = flat.gather(2, idx)
    if ok.all():
        return values
    return values * tensor(ok[:, None, :], dtype=flat.dtype, backend=flat.backend)


def _as_int(x: np.ndarray) -> np.ndarray:
    """Finite coordinates as int64; NaN and infinities go far out of bounds (PyTorch reads 0 there)."""
    return np.where(np.isfinite(x), x, -100).astype(np.int64)


def _linear(flat: Tensor, coords: list[Tensor], sizes: tuple[int, ...]) -> Tensor:
    """Multilinear interpolation: 2**nd corner gathers weighted by products of (x1 - x) and (x - x0)."""
    lows = [np.floor(c.detach().to_numpy()) for c in coords]
    parts = []
    for c, low in zip(coords, lows):
        low_t = tensor(low, dtype=c.dtype, backend=c.backend)
        parts.append(((low_t + 1) - c, c - low_t))  # weights of the low and the high corner
    out: Any = None
    for corner in itertools.product((0, 1), repeat=len(coords)):
        weight: Any = None
        for d in reversed(range(len(coords))):  # x first, as PyTorch multiplies
            w = parts[d][corner[d]]
            weight = w if weight is None else weight * w
        term = _gather(flat, [_as_int(low + k) for low, k in zip(lows, corner)], sizes) * weight.unsqueeze(1)
        out = term if out is None else out + term
    return out  # type: ignore[no-any-return]


def _cubic_weights(t: Tensor) -> list[Tensor]:
    """The 4 cubic-convolution weights (A = -0.75) of taps -1, 0, 1, 2 at fraction t."""
    A = -0.75

    def near(x: Tensor) -> Tensor:  # |x| <= 1
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x: Tensor) -> Tensor:  # 1 < |x| < 2
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A

    return [far(t + 1), near(t), near(1 - t), far((1 - t) + 1)]


def _bicubic(flat: Tensor, coords: list[Tensor], sizes: tuple[int, ...], padding_mode: str, align: bool) -> Tensor:
    (y, x), H, W = coords, sizes[0], sizes[1]
    y0, x0 = np.floor(y.detach().to_numpy()), np.floor(x.detach().to_numpy())
    wy = _cubic_weights(y - tensor(y0, dtype=y.dtype, backend=y.backend))
    wx = _cubic_weights(x - tensor(x0, dtype=x.dtype, backend=x.backend))
    out: Any = None
    for i in range(4):
        row: Any = None
        iy = _as_int(_pad_index(y0 - 1 + i, H, padding_mode, align))
        for j in range(4):
            ix = _as_int(_pad_index(x0 - 1 + j, W, padding_mode, align))
            term = _gather(flat, [iy, ix], sizes) * wx[j].unsqueeze(1)
            row = term if row is None else row + term
        out = row * wy[i].unsqueeze(1) if out is None else out + row * wy[i].unsqueeze(1)
    return out  # type: ignore[no-any-return]


@tensor_args("input", "grid")
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",  # noqa: A002
                align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` (N, C, H, W) at ``grid`` (N, Ho, Wo, 2) -> (N, C, Ho, Wo), or (N, C, D, H, W) at
    (N, Do, Ho, Wo, 3) -> (N, C, Do, Ho, Wo). ``mode``: bilinear (trilinear on 5-D), nearest (round half to even),
    bicubic (4-D only, A = -0.75); ``padding_mode``: zeros (outside reads 0), border (clamp), reflection (mirror at
    the borders). Differentiable in ``input`` and ``grid`` (nearest: zero grid gradient)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    align = _align(align_corners)
    if input.dtype != grid.dtype:
        raise DTypeError(f"grid_sampler(): expected input and grid to have same dtype, but input has {input.dtype} "
                         f"and grid has {grid.dtype}")
    if not input.is_floating_point():
        raise DTypeError(f"grid_sampler(): expected a floating-point input, got {input.dtype}")
    if input.dims not in (4, 5) or grid.dims != input.dims:
        raise ShapeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got "
                         f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    nd = input.dims - 2
    if grid.shape[0] != input.shape[0]:
        raise ShapeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with sizes "
                         f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != nd:
        raise ShapeError(f"grid_sampler(): expected grid to have size {nd} in last dimension, but got grid with sizes "
                         f"{list(grid.shape)}")
    if any(s == 0 for s in input.shape[2:]):
        raise ShapeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes "
                         f"{list(input.shape)} with dimension {2 + input.shape[2:].index(0)} being empty")
    if mode == "bicubic" and nd != 2:
        raise ValueError("grid_sampler(): bicubic interpolation only supports 4D input")
    N, C, sizes, out_sizes = input.shape[0], input.shape[1], input.shape[2:], grid.shape[1:-1]
    flat = input.reshape(N, C, math.prod(sizes))
    g = grid.reshape(N, math.prod(out_sizes), nd)
    raw = [_unnormalize(g[:, :, nd - 1 - d], sizes[d], align) for d in range(nd)]  # input dim order (D,) H, W
    if mode == "bicubic":
        out = _bicubic(flat, raw, sizes, padding_mode, align)
    else:
        coords = [_pad_coord(c, s, padding_mode, align) for c, s in zip(raw, sizes)]
        if mode == "nearest":
            out = _gather(flat, [_as_int(np.round(c.detach().to_numpy())) for c in coords], sizes)
        else:
            out = _linear(flat, coords, sizes)
    return out.reshape(N, C, *out_sizes)
