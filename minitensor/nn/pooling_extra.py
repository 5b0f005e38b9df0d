"""More pooling, torch's names, signatures, defaults and reprs: ``F.adaptive_max_pool1d lp_pool1d/2d/3d
max_unpool1d/2d/3d max_pool1d/2d/3d_with_indices adaptive_max_pool1d/2d/3d_with_indices`` and ``nn.AdaptiveMaxPool1d
LPPool1d/2d/3d MaxUnpool1d/2d/3d``, built on :mod:`.pooling`'s differentiable window ops; max unpooling is one
``scatter`` into zeros with PyTorch's gather gradient (:class:`MaxUnpool`). ``ZeroPad1d CircularPad1d CircularPad2d``
moved to :mod:`.padding` and are re-exported here."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..autodiff import Context, no_grad
from ..creation import tensor, zeros
from ..errors import DTypeError, IndexOutOfRangeError, ShapeError
from ..module import Module
from ..tensor import Tensor
from ..tensor_functions import TensorFunction
from .common import tensor_args
from .conv import _tuple
from .padding import CircularPad1d, CircularPad2d, ZeroPad1d
from .pooling import _adaptive_max, _avg_pool, _max_pool, adaptive_max_pool2d, adaptive_max_pool3d

__all__ = [
    "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices", "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
    "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d", "AdaptiveMaxPool1d",
    "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
    # re-exported from .padding, where they moved
    "ZeroPad1d", "CircularPad1d", "CircularPad2d",
]


@tensor_args("input")
def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:  # noqa: A002
    """Max over PyTorch's adaptive windows ``[floor(i*L/OL), ceil((i+1)*L/OL))`` of (N, C, L) or (C, L) ``input``;
    ``return_indices`` also gives the int64 position of each maximum along L."""
    return _adaptive_max("adaptive_max_pool1d", 1, input, output_size, return_indices)


@tensor_args("input")
def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,  # noqa: A002
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """:func:`adaptive_max_pool1d` returning (values, indices) whatever ``return_indices`` says, as PyTorch."""
    return adaptive_max_pool1d(input, output_size, True)  # type: ignore[no-any-return]


@tensor_args("input")
def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,  # noqa: A002
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool2d`` returning (values, indices) whatever ``return_indices`` says, as PyTorch."""
    return adaptive_max_pool2d(input, output_size, True)  # type: ignore[no-any-return]


@tensor_args("input")
def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,  # noqa: A002
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool3d`` returning (values, indices) whatever ``return_indices`` says, as PyTorch."""
    return adaptive_max_pool3d(input, output_size, True)  # type: ignore[no-any-return]


@tensor_args("input")
def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                            dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool1d`` returning (values, int64 indices into L) whatever ``return_indices`` says, as PyTorch."""
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, True)  # type: ignore[no-any-return]


@tensor_args("input")
def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                            dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool2d`` returning (values, int64 flat indices h * W + w) whatever ``return_indices`` says."""
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, True)  # type: ignore[no-any-return]


@tensor_args("input")
def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                            dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool3d`` returning (values, int64 flat indices (d * H + h) * W + w) whatever ``return_indices`` says."""
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, True)  # type: ignore[no-any-return]


def _lp_pool(nd: int, input: Tensor, norm_type: float, kernel_size: Any, stride: Any,  # noqa: A002
             ceil_mode: bool) -> Tensor:
    kernel = _tuple(kernel_size, nd, "kernel_size", 1)
    out = _avg_pool(f"lp_pool{nd}d", nd, input.pow(norm_type), kernel, stride, 0, ceil_mode, True, None)
    return (out.sign() * out.abs().relu() * math.prod(kernel)).pow(1.0 / norm_type)


@tensor_args("input")
def lp_pool1d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling of (N, C, L) or (C, L) ``input``: (sum over each window of x^p)^(1/p), computed as
    PyTorch does, (sign(a) relu(|a|) k)^(1/p) with a = avg_pool1d(x^p) (so a ceil_mode partial window counts as if
    full: its mean times k). Stride defaults to kernel_size."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


@tensor_args("input")
def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling of (N, C, H, W) or (C, H, W) ``input``, as :func:`lp_pool1d` with kh*kw windows."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


@tensor_args("input")
def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling of (N, C, D, H, W) or (C, D, H, W) ``input``, as :func:`lp_pool1d` with kd*kh*kw
    windows."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


def _unpool_size(name: str, nd: int, input: Tensor, kernel: tuple[int, ...], stride: tuple[int, ...],  # noqa: A002
                 padding: tuple[int, ...], output_size: Sequence[int] | None) -> tuple[int, ...]:
    """PyTorch's output size: (in - 1) * stride + kernel - 2 * padding per dim, or ``output_size`` (its last nd
    entries when it has nd + 2), which must lie strictly within stride of that default."""
    default = tuple((input.shape[input.dims - nd + d] - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(nd))
    if output_size is None:
        return default
    size = tuple(int(s) for s in output_size)
    if len(size) == nd + 2:
        size = size[2:]
    if len(size) != nd:
        raise ValueError(f"{name}: output_size should be a sequence containing {nd} or {nd + 2} elements, but it has "
                         f"a length of {len(size)}")
    for d in range(nd):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < size[d] < high:
            raise ValueError(f"{name}: invalid output_size {tuple(output_size)} (dim {d} must be between {low} and "
                             f"{high}, exclusive, for input shape {input.shape})")
    return size


class MaxUnpool(TensorFunction):
    """Rows of ``src`` (R, L) written into zero rows of length ``plane`` at ``index`` (R, L); a position named more
    than once takes the last write (``keep`` masks the others; for max-pool indices they carry the same value).
    The gradient is PyTorch's: ``grad.gather(-1, index)`` for every source element, repeated ones included."""

    higher_order = True

    @staticmethod
    def forward(ctx: Context, src: Tensor, index: Tensor, keep: Tensor | None, plane: int) -> Tensor:  # type: ignore[override]
        with no_grad():
            values = src if keep is None else src.masked_fill(keep.logical_not(), 0.0)
            out = zeros(*src.shape[:-1], plane, dtype=src.dtype, backend=src.backend).scatter(-1, index, values)
        ctx.save_for_backward(index)
        return out.detach()

    @staticmethod
    def backward(ctx: Context, grad: Tensor) -> Tensor:  # type: ignore[override]
        (index,) = ctx.saved_values
        return grad.gather(-1, index)


def _max_unpool(name: str, nd: int, input: Tensor, indices: Tensor, kernel_size: Any, stride: Any,  # noqa: A002
                padding: Any, output_size: Sequence[int] | None) -> Tensor:
    kernel = _tuple(kernel_size, nd, "kernel_size", 1)
    steps = kernel if stride is None else _tuple(stride, nd, "stride", 1)
    pads = _tuple(padding, nd, "padding")
    if input.dims not in (nd + 1, nd + 2):
        raise ShapeError(f"{name}: expected a {nd + 1}-D (unbatched) or {nd + 2}-D (batched) input, got shape "
                         f"{input.shape}")
    if indices.dtype != np.int64:
        raise DTypeError(f"{name}: indices must be int64 (as max_pool{nd}d returns them), got {indices.dtype}")
    if indices.shape != input.shape:
        raise ShapeError(f"{name}: indices must have the input's shape {input.shape}, got {indices.shape}")
    size = _unpool_size(name, nd, input, kernel, steps, pads, output_size)
    plane = math.prod(size)
    lead = input.shape[: input.dims - nd]
    rows = int(math.prod(lead))
    flat = indices.reshape(rows, -1)
    found = flat.to_numpy()
    keep = None
    if found.size:
        if found.min() < 0 or found.max() >= plane:
            bad = int(found.max() if found.max() >= plane else found.min())
            raise IndexOutOfRangeError(f"{name}: found an invalid max index {bad} (the output planes have size "
                                       f"{'x'.join(map(str, size))} = {plane} elements)")
        keys = (np.arange(rows)[:, None] * plane + found).ravel()  # (row, index) pairs, one int each
        _, first_from_end = np.unique(keys[::-1], return_index=True)
        last = np.zeros(keys.size, dtype=bool)  # the last occurrence of each index in its row
        last[keys.size - 1 - first_from_end] = True
        last = last.reshape(found.shape)
        if not last.all():
            keep = tensor(last, dtype="bool", backend=input.backend)
    out = MaxUnpool.apply(input.reshape(rows, -1), flat, keep, plane)
    return out.reshape(*lead, *size)


@tensor_args("input", "indices")
def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                 output_size: Sequence[int] | None = None) -> Tensor:
    """Partial inverse of ``max_pool1d``: zeros of length ``output_size`` (default (L - 1) * stride + kernel -
    2 * padding) with each input value written at its index; (N, C, L) or (C, L) input."""
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


@tensor_args("input", "indices")
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                 output_size: Sequence[int] | None = None) -> Tensor:
    """Partial inverse of ``max_pool2d``: zeros of size ``output_size`` with each input value written at its flat
    index ``h * W + w``; (N, C, H, W) or (C, H, W) input."""
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


@tensor_args("input", "indices")
def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                 output_size: Sequence[int] | None = None) -> Tensor:
    """Partial inverse of ``max_pool3d``: zeros of size ``output_size`` with each input value written at its flat
    index ``(d * H + h) * W + w``; (N, C, D, H, W) or (C, D, H, W) input."""
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)


# --- Modules ---


class AdaptiveMaxPool1d(Module):
    """``torch.nn.AdaptiveMaxPool1d``: :func:`adaptive_max_pool1d` to ``output_size``."""

    def __init__(self, output_size: Any, return_indices: bool = False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return adaptive_max_pool1d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class LPPool1d(Module):
    """``torch.nn.LPPool1d``: :func:`lp_pool1d` with fixed settings (stride None means kernel_size)."""

    nd = 1

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _lp_pool(self.nd, input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool2d(LPPool1d):
    """``torch.nn.LPPool2d``: :func:`lp_pool2d` with fixed settings."""

    nd = 2


class LPPool3d(LPPool1d):
    """``torch.nn.LPPool3d``: :func:`lp_pool3d` with fixed settings."""

    nd = 3


class MaxUnpool1d(Module):
    """``torch.nn.MaxUnpool1d``: :func:`max_unpool1d` (sizes stored as tuples, as PyTorch); call with
    ``(input, indices, output_size=None)``."""

    nd = 1

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0):
        super().__init__()
        self.kernel_size = _tuple(kernel_size, self.nd, "kernel_size", 1)
        self.stride = self.kernel_size if stride is None else _tuple(stride, self.nd, "stride", 1)
        self.padding = _tuple(padding, self.nd, "padding")

    def forward(self, input: Tensor, indices: Tensor, output_size: Sequence[int] | None = None) -> Tensor:  # noqa: A002
        return _max_unpool(f"max_unpool{self.nd}d", self.nd, input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool2d(MaxUnpool1d):
    """``torch.nn.MaxUnpool2d``: :func:`max_unpool2d`."""

    nd = 2


class MaxUnpool3d(MaxUnpool1d):
    """``torch.nn.MaxUnpool3d``: :func:`max_unpool3d`."""

    nd = 3
