"""Counting and index bookkeeping (``mt.`` functions; the Tensor methods are in tensor_numeric.py's mixin):
histogram, histogramdd, unique_consecutive, unravel_index and index_reduce.

- ``histogram``/``histogramdd`` build each dim's edges as torch's linspace does (start + i * step in the first half,
  end - (n - i) * step in the second, in the input's dtype; tensor bins are taken as they are), find each point's bin
  with ``searchsorted(edges, x, right=True) - 1`` (a value equal to the last edge falls in the last bin; values
  outside and NaNs are dropped) and add the weights with ``scatter_add``. No gradient.
- ``unique_consecutive`` reads the data on the host (it sizes its output from them, as torch syncs too).
- ``unravel_index`` is floor division and remainder by the shape's row-major strides.
- ``index_reduce`` is ``scatter_reduce`` with the 1-D index expanded along ``dim`` (tensor_scatter.py: its values
  and gradients).

Names, signatures, defaults, result dtypes and errors follow PyTorch.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import no_grad
from .errors import DTypeError, IndexOutOfRangeError, ShapeError
from .tensor_data import normalize_dim
from .tensor_index import _check_index_dtype, _scatter_add_into
from .tensor_math import _is_tensor
from .tensor_scatter import scatter_reduce
from .tensor_search import searchsorted

if TYPE_CHECKING:
    from .tensor import Tensor


class Histogram(NamedTuple):
    """(hist, bin_edges), as ``torch.return_types.histogram``."""

    hist: Tensor
    bin_edges: Tensor


class HistogramDD(NamedTuple):
    """(hist, bin_edges: one tensor per dim), as ``torch.return_types.histogramdd``."""

    hist: Tensor
    bin_edges: tuple[Tensor, ...]


# --- histograms ---


def _linspace(low: float, high: float, bins: int, dtype: np.dtype) -> np.ndarray:
    """bins + 1 edges from low to high as torch's linspace computes them in ``dtype``."""
    kind = dtype.type
    start, end = kind(low), kind(high)
    step = (end - start) / kind(bins)
    i = np.arange(bins + 1)
    with np.errstate(over="ignore", invalid="ignore"):
        head, tail = start + step * i.astype(dtype), end - step * (bins - i).astype(dtype)
    return np.where(i < (bins + 1) // 2, head, tail).astype(dtype)


def _edges(name: str, points: Tensor, d: int, bins: Any, ranges: Sequence[float] | None) -> np.ndarray:
    """Dim ``d``'s bin edges: a tensor of edges checked and read back, or ``bins`` equal bins over the range."""
    if _is_tensor(bins):
        if bins.dims != 1:
            raise ShapeError(f"{name}(): bins tensor should have one dimension, but got {bins.dims} dimensions "
                             f"(shape {bins.shape}) for dimension {d}")
        if bins.dtype != points.dtype:
            raise DTypeError(f"{name}(): input tensor and bins tensors should have the same dtype, but got input with "
                             f"dtype {points.dtype} and bins for dimension {d} with dtype {bins.dtype}")
        if bins.numel() < 2:
            raise ValueError(f"{name}(): bins must be > 0, but got {bins.numel() - 1} for dimension {d}")
        return bins.to_numpy()
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)):
        raise TypeError(f"{name}(): bins must be an int or a 1-D tensor of edges, got {type(bins).__name__}")
    if bins <= 0:
        raise ValueError(f"{name}(): bins must be > 0, but got {bins} for dimension {d}")
    if ranges is not None:
        low, high = float(ranges[2 * d]), float(ranges[2 * d + 1])
    elif points.shape[0]:
        column = points[:, d]
        low, high = float(column.amin().item()), float(column.amax().item())
    else:
        low, high = 0.0, 1.0
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"{name}(): dimension {d}'s range [{low}, {high}] is not finite")
    if low > high:
        raise ValueError(f"{name}(): min should not exceed max, but got min {low} max {high} for dimension {d}")
    if low == high:
        low, high = low - 0.5, high + 0.5
    return _linspace(low, high, int(bins), points.dtype)


def _histogramdd(name: str, points: Tensor, bins: Any, ranges: Any, weight: Tensor | None,
                 density: bool) -> tuple[Tensor, list[Tensor]]:
    """The histogram of the rows of ``points`` (n, D) and the edges of each dim (checked float input)."""
    n, dims = points.shape
    per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * dims
    if len(per_dim) != dims:
        raise ShapeError(f"{name}(): the size of bins ({len(per_dim)}) must equal the innermost dimension of the "
                         f"input ({dims})")
    if ranges is not None:
        if any(_is_tensor(b) for b in per_dim):
            raise TypeError(f"{name}(): range cannot be given with tensors of bin edges")
        ranges = [float(r) for r in ranges]
        if len(ranges) != 2 * dims:
            raise ValueError(f"{name}(): for a {dims}-dimensional histogram range should have {2 * dims} elements, but "
                             f"got {len(ranges)}")
    with no_grad():
        x = points.detach()
        edges = [_edges(name, x, d, b, ranges) for d, b in enumerate(per_dim)]
        counts = [len(e) - 1 for e in edges]
        edge_tensors = [x._lift(e, x.dtype) for e in edges]
        flat = x._zeros((n,)).cast(dtypes.int64)
        inside = x._lift(True, dtypes.bool_).expand(n)
        for d, (e, size) in enumerate(zip(edges, counts)):
            column = x[:, d]
            inside = inside & (column >= float(e[0])) & (column <= float(e[-1]))
            at = (searchsorted(edge_tensors[d], column.contiguous(), right=True) - 1).clamp(0, size - 1)
            flat = flat * size + at
        w = x._lift(1.0).expand(n) if weight is None else weight.detach()
        zero = x._lift(0)
        total = math.prod(counts)
        hist = _scatter_add_into(x._zeros((total,)), 0, F.Where.apply(inside, flat, zero.cast(dtypes.int64)),
                                 F.Where.apply(inside, w, zero)).reshape(*counts)
        if density:
            hist = hist / hist.sum()
            for d, edge in enumerate(edge_tensors):
                hist = hist / (edge[1:] - edge[:-1]).reshape(*[-1 if k == d else 1 for k in range(dims)])
    return hist, edge_tensors


def _check_float(name: str, input: Tensor, weight: Tensor | None, weight_shape: tuple[int, ...]) -> None:  # noqa: A002
    if not _is_tensor(input) or input.dtype.kind != "f":
        got = input.dtype if _is_tensor(input) else type(input).__name__
        raise DTypeError(f"{name}(): input must be a float tensor (float32 or float64), got {got}")
    if weight is not None:
        if not _is_tensor(weight):
            raise TypeError(f"{name}(): argument 'weight' must be Tensor, not {type(weight).__name__}")
        input._check_backend(weight)
        if weight.dtype != input.dtype:
            raise DTypeError(f"{name}(): input tensor and weight tensor should have the same dtype, but got input "
                             f"{input.dtype} and weight {weight.dtype}")
        if weight.shape != weight_shape:
            raise ShapeError(f"{name}(): weight {weight.shape} should have the shape {weight_shape} (of input "
                             f"{input.shape}{' without its innermost dim' if name == 'histogramdd' else ''})")


def histogram(input: Tensor, bins: Any, *, range: Sequence[float] | None = None,  # noqa: A002 - PyTorch's names
              weight: Tensor | None = None, density: bool = False) -> Histogram:
    """(hist, bin_edges) of all of input's elements: ``bins`` equal-width bins over ``range`` (default: the data's
    min and max, widened by 0.5 each way when they are equal; [0, 1] for no data) or the bins between the edges of a
    1-D tensor ``bins``. Each bin holds [edge_i, edge_i+1), the last one its right edge too; values outside and
    NaNs are ignored. ``weight`` (input's shape and dtype) weights each element; ``density`` divides by the total
    and the bin widths. Float tensors only; no gradient."""
    _check_float("histogram", input, weight, input.shape if _is_tensor(input) else ())
    if range is not None and len(range) != 2:
        raise ValueError(f"histogram(): for a 1-dimensional histogram range should have 2 elements, but got {len(range)}")
    hist, edges = _histogramdd("histogram", input.reshape(-1, 1), [bins], range, None if weight is None else
                               weight.reshape(-1), density)
    return Histogram(hist, edges[0])


def histogramdd(input: Tensor, bins: Any, *, range: Sequence[float] | None = None,  # noqa: A002
                weight: Tensor | None = None, density: bool = False) -> HistogramDD:
    """(hist, bin_edges) of the points in input's rows (shape (..., D)): ``bins`` an int or D ints (equal bins over
    ``range``, 2D numbers, default each dim's min and max) or D 1-D tensors of edges; each dim's bins as
    :func:`histogram`'s; ``weight`` of input's shape without its last dim. Float tensors only; no gradient."""
    _check_float("histogramdd", input, weight, input.shape[:-1] if _is_tensor(input) else ())
    if input.dims < 2:
        raise ShapeError(f"histogramdd(): input tensor should have at least 2 dimensions, got shape {input.shape}")
    dims = input.shape[-1]
    if dims == 0:
        return HistogramDD(input._zeros(()), ())
    hist, edges = _histogramdd("histogramdd", input.reshape(-1, dims), bins, range,
                               None if weight is None else weight.reshape(-1), density)
    return HistogramDD(hist, tuple(edges))


# --- unique_consecutive, unravel_index ---


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
                       dim: int | None = None) -> Any:
    """Input with each run of equal consecutive elements (or slices along ``dim``) kept once (NaNs never equal):
    1-D for ``dim=None``; with the int64 index of each element (input's shape) or slice into the result and the
    int64 run lengths when asked, as ``torch.unique_consecutive``. A host sync; no gradient."""
    a = input.to_numpy()
    if dim is None:
        flat = a.reshape(-1)
        starts = np.ones(flat.size, bool)
        starts[1:] = flat[1:] != flat[:-1]
        values, inverse = flat[starts], (np.cumsum(starts) - 1).reshape(a.shape)
    else:
        d = normalize_dim(dim, input.dims)
        n = a.shape[d]
        if a.size == 0 and n != 0:
            raise ShapeError(f"unique_consecutive(): there are 0-sized dimensions in shape {input.shape}, and they "
                             f"aren't selected by dim={dim}, so unique cannot be applied")
        rows = np.moveaxis(a, d, 0).reshape(n, a.size // n if n else 0)
        starts = np.ones(n, bool)
        starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        values, inverse = np.take(a, np.flatnonzero(starts), axis=d), np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), starts.size))
    out = input._lift(values, input.dtype)
    extra = ([input._lift(inverse.astype(np.int64), dtypes.int64)] if return_inverse else []) + (
        [input._lift(counts.astype(np.int64), dtypes.int64)] if return_counts else [])
    return (out, *extra) if extra else out


def unravel_index(indices: Tensor, shape: int | Sequence[int]) -> tuple[Tensor, ...]:
    """The coordinates in a tensor of ``shape`` of each flat (row-major) index: one int64 tensor of indices' shape
    per dim. Integer indices in [-prod(shape), prod(shape)) (negative ones count from the end; IndexOutOfRangeError
    outside, where torch wraps silently)."""
    if not _is_tensor(indices):
        raise TypeError(f"unravel_index(): argument 'indices' must be Tensor, not {type(indices).__name__}")
    if indices.dtype.kind not in "iu":
        raise DTypeError(f"unravel_index(): expected 'indices' to be an integer tensor, but got {indices.dtype}")
    try:
        dims = (operator.index(shape),) if not isinstance(shape, Sequence) else tuple(operator.index(s) for s in shape)
    except TypeError as error:
        raise TypeError(f"unravel_index(): 'shape' must be an int or a sequence of ints, got {shape!r}") from error
    if any(s < 0 for s in dims):
        raise ValueError(f"unravel_index(): 'shape' cannot have negative values, but got {dims}")
    total = math.prod(dims)
    idx = indices.detach().cast(dtypes.int64)
    if idx.numel():
        low, high = int(idx.amin().item()), int(idx.amax().item())
        if low < -total or high >= total:
            raise IndexOutOfRangeError(f"unravel_index(): indices range over [{low}, {high}], out of range "
                                       f"[{-total}, {total - 1}] for shape {dims}")
        idx = F.Where.apply(idx < 0, idx + total, idx)
    out = []
    for i, size in enumerate(dims):
        coordinate = idx._zip("floordiv", idx._lift(max(math.prod(dims[i + 1:]), 1)))
        out.append(coordinate._zip("remainder", idx._lift(max(size, 1))) if i else coordinate)
    return tuple(out)


# --- index_reduce ---

INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,  # noqa: A002
                 include_self: bool = True) -> Tensor:
    """A copy of input whose slices ``index[i]`` along ``dim`` hold the ``reduce`` ("prod", "mean", "amax" or "amin")
    of every ``source`` slice i sent there (and of input's own slice when ``include_self``); other slices keep
    input's. ``index`` is a 1-D int64/int32 tensor with one entry per slice of source along ``dim``; source has
    input's dtype and shape elsewhere. Integer "mean" rounds down. Gradients as torch's (those of scatter_reduce)."""
    if reduce not in INDEX_REDUCTIONS:
        raise ValueError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce!r}")
    if not _is_tensor(source):
        raise TypeError(f"index_reduce(): argument 'source' must be Tensor, not {type(source).__name__}")
    _check_index_dtype(index, "index_reduce()")
    if index.dims > 1:
        raise ShapeError(f"index_reduce(): index is supposed to be a vector, got shape {index.shape}")
    if input.dtype != source.dtype or input.dtype.kind == "b":
        raise DTypeError(f"index_reduce(): self ({input.dtype}) and source ({source.dtype}) must have the same dtype, "
                         f"one of float32, float64, int32 or int64")
    x, src = (input.reshape(1), source.reshape(-1)) if input.dims == 0 else (input, source)
    d = normalize_dim(dim, x.dims)
    elsewhere = [k for k in range(x.dims) if k != d]
    if src.dims != x.dims or any(src.shape[k] != x.shape[k] for k in elsewhere) or src.shape[d] != index.numel():
        raise ShapeError(f"index_reduce(): source {source.shape} must have the shape of self {input.shape} outside "
                         f"dim {dim}, and index's {index.numel()} entries along it")
    spread = index.reshape(*[-1 if k == d else 1 for k in range(x.dims)]).expand(*src.shape)
    out = scatter_reduce(x, d, spread, src, reduce, include_self=include_self)
    return out.reshape(()) if input.dims == 0 else out


__all__ = ["histogram", "histogramdd", "unique_consecutive", "unravel_index", "index_reduce"]
