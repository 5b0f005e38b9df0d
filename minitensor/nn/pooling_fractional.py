"""Fractional max pooling (Graham, 2014), torch's names, signatures, defaults and reprs: ``F.fractional_max_pool2d/3d``
(+ ``_with_indices``) and ``nn.FractionalMaxPool2d/3d``.

Each (sample, channel) plane gets its own pseudo-random window starts, from one number ``u`` in [0, 1) per spatial
dim (``_random_samples``, shape (N, C, nd), drawn from the shared generator when not given): with
``alpha = (in - k) / (out - 1)``, window i starts at ``int((i + u) * alpha) - int(u * alpha)`` and the last one at
``in - k`` (computed in the input's dtype, as PyTorch, so the windows match bit for bit). The window positions are
built host-side as flat indices; the values are one ``gather`` from the flattened input, then ``argmax`` (the first
maximum in row-major window order) and a second ``gather``, so the gradient flows to the chosen elements.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..creation import rand, tensor
from ..errors import DTypeError, ShapeError
from ..module import Module
from ..tensor import Tensor
from .common import tensor_args
from .conv import _tuple

__all__ = [
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices", "FractionalMaxPool2d", "FractionalMaxPool3d",
]

_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _intervals(samples: np.ndarray, size: int, out: int, k: int) -> np.ndarray:
    """Window starts (..., out) for samples (...,), PyTorch's rule, in the samples' dtype."""
    dtype = samples.dtype.type
    starts = np.empty((*samples.shape, out), np.int64)
    if out > 1:
        alpha = dtype(size - k) / dtype(out - 1)
        i = np.arange(out - 1, dtype=samples.dtype)
        starts[..., :-1] = ((i + samples[..., None]) * alpha).astype(np.int64) - (samples * alpha).astype(np.int64)[..., None]
    if out > 0:
        starts[..., -1] = size - k
    return starts


def _output_size(name: str, nd: int, input: Tensor, output_size: Any, output_ratio: Any) -> tuple[int, ...]:  # noqa: A002
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is not None:
        return _tuple(output_size, nd, "output_size")
    ratio = (output_ratio,) * nd if isinstance(output_ratio, (int, float)) else tuple(output_ratio)
    if len(ratio) != nd:
        raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
    return tuple(int(s * r) for s, r in zip(input.shape[-nd:], ratio))


def _fractional(name: str, nd: int, input: Tensor, kernel_size: Any, output_size: Any, output_ratio: Any,  # noqa: A002
                samples: Tensor | None) -> tuple[Tensor, Tensor]:
    if input.dims not in (nd + 1, nd + 2):
        raise ShapeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    kernel = _tuple(kernel_size, nd, "kernel_size", 1)
    out = _output_size(name, nd, input, output_size, output_ratio)
    unbatched = input.dims == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    (N, C), sizes = x.shape[:2], x.shape[2:]
    if any(s == 0 for s in x.shape[1:]):
        raise ShapeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but got "
                         f"{list(input.shape)}")
    order = range(nd) if nd == 2 else (0, 2, 1)  # PyTorch checks 3-D time, width, height
    for d in order:
        fits = out[d] + kernel[d] - 1 <= sizes[d] if nd == 2 else out[d] + kernel[d] - 1 < sizes[d]
        if not fits:
            what = _DIM_NAMES[nd][d]
            raise ShapeError(f"{name}_out(): pool {what} {kernel[d]} too large relative to input {what} {sizes[d]}"
                             if nd == 3 else
                             f"{name}(): pool {what} {kernel[d]} too large relative to input {what} {sizes[d]}")
    if samples is None:
        samples = rand(N, C, nd, dtype=input.dtype, backend=input.backend)
    if samples.dtype != input.dtype:
        raise DTypeError(f"Expect _random_samples to have the same dtype as input (got {samples.dtype} and "
                         f"{input.dtype})")
    if samples.dims != 3:
        raise ShapeError(f"Expect _random_samples to be 3-D (N, C, {nd}), got shape {samples.shape}")
    if samples.shape[0] < N:
        raise ShapeError(f"Expect _random_samples.size(0) no less then input batch size. (got {samples.shape[0]} < {N})")
    if samples.shape[1] != C:
        raise ShapeError(f"Expect _random_samples.size(1) equals to input channel size. (got {samples.shape[1]}, "
                         f"input has {C} channels)")
    if samples.shape[2] != nd:
        raise ShapeError(f"Expect _random_samples.size(2) equals to {nd}; got {samples.shape[2]}.")
    u = samples.detach().to_numpy()[:N]
    if nd == 2:  # PyTorch's 2-D samples are (width, height)
        u = u[..., ::-1]
    flat: Any = np.zeros((N, C) + (1,) * (2 * nd), np.int64)
    for d in range(nd):
        starts = _intervals(np.ascontiguousarray(u[..., d]), sizes[d], out[d], kernel[d])  # (N, C, O_d)
        where = [1] * (2 * nd)
        where[d] = out[d]
        tap = [1] * (2 * nd)
        tap[nd + d] = kernel[d]
        pos = starts.reshape(N, C, *where) + np.arange(kernel[d]).reshape(tap)
        flat = flat * sizes[d] + pos  # row-major over the spatial dims: (N, C, *O, *K)
    P, K = math.prod(out), math.prod(kernel)
    index = tensor(np.ascontiguousarray(flat.reshape(N, C, P * K)), dtype="int64", backend=input.backend)
    cols = x.reshape(N, C, math.prod(sizes)).gather(2, index).view(N, C, P, K)
    best = cols.argmax(-1, keepdim=True)
    values = cols.gather(-1, best).view(N, C, *out)
    chosen = index.view(N, C, P, K).gather(-1, best).view(N, C, *out)
    if unbatched:
        return values.squeeze(0), chosen.squeeze(0)
    return values, chosen


@tensor_args("input")
def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,  # noqa: A002
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Fractional max pooling of (N, C, H, W) or (C, H, W) ``input`` to ``output_size`` (or ``int(size * ratio)``):
    (values, int64 flat indices ``h * W + w``). ``_random_samples``: (N, C, 2) in [0, 1), (width, height) order."""
    return _fractional("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio, _random_samples)


@tensor_args("input")
def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,  # noqa: A002
                          return_indices: bool = False, _random_samples: Tensor | None = None) -> Any:
    """:func:`fractional_max_pool2d_with_indices`'s values (and indices when ``return_indices``)."""
    out = _fractional("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


@tensor_args("input")
def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,  # noqa: A002
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Fractional max pooling of (N, C, T, H, W) or (C, T, H, W) ``input``: (values, int64 flat indices
    ``(t * H + h) * W + w``). ``_random_samples``: (N, C, 3) in [0, 1), (time, height, width) order."""
    return _fractional("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio, _random_samples)


@tensor_args("input")
def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,  # noqa: A002
                          return_indices: bool = False, _random_samples: Tensor | None = None) -> Any:
    """:func:`fractional_max_pool3d_with_indices`'s values (and indices when ``return_indices``)."""
    out = _fractional("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


class FractionalMaxPool2d(Module):
    """:func:`fractional_max_pool2d` with fixed settings; exactly one of ``output_size`` and ``output_ratio``
    (each ratio in (0, 1)). A given ``_random_samples`` is a buffer (fixed windows); else each call draws new ones."""

    nd = 2

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Tensor | None = None) -> None:
        super().__init__()
        nd, name = self.nd, type(self).__name__
        self.kernel_size = _tuple(kernel_size, nd, "kernel_size", 1)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _tuple(output_size, nd, "output_size") if output_size is not None else None
        ratio = None if output_ratio is None else (
            (output_ratio,) * nd if isinstance(output_ratio, (int, float)) else tuple(output_ratio))
        self.output_ratio = ratio
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if ratio is not None and (len(ratio) != nd or not all(0 < r < 1 for r in ratio)):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        fn = fractional_max_pool2d if self.nd == 2 else fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                  _random_samples=self._random_samples)


class FractionalMaxPool3d(FractionalMaxPool2d):
    """:func:`fractional_max_pool3d` with fixed settings (see :class:`FractionalMaxPool2d`)."""

    nd = 3
