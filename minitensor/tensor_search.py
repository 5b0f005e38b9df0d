"""Searching sorted data, order statistics and counting (the ``SearchMethods`` mixin) and the matching ``mt.``
functions: searchsorted, bucketize, kthvalue, msort, quantile, nanquantile, bincount, unique.

Each is a composition of existing kernels: searchsorted counts, per value, the sorted entries below it with one
stable sort of entries and values merged; kthvalue and the quantiles gather from the
sort kernel's order, so gradients reach the chosen elements (and, for quantile, the two interpolated ones, as
PyTorch's); bincount and unique read the data on the host to size their output, as PyTorch syncs too.
Names, signatures, defaults and result dtypes follow PyTorch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .errors import DTypeError, EmptyReductionError, IndexOutOfRangeError, ShapeError
from .tensor_data import normalize_dim
from .tensor_join import cat
from .tensor_order import sort_indices
from .tensor_reduce import ValuesIndices, at_least_1d, flat, like, positions, select

if TYPE_CHECKING:
    from .tensor import Tensor

INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _is_tensor(x: Any) -> bool:
    """Every Tensor is a SearchMethods (tensor.py imports this module, so Tensor itself is not importable here)."""
    return isinstance(x, SearchMethods)


# --- searching sorted data ---


def searchsorted(sorted_sequence: Tensor, values: Any, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    """For each of ``values``, the index where it would be inserted into ``sorted_sequence`` (sorted along its last
    dim; 1-D, or with leading dims equal to values') to keep it sorted: the first such index, or the last when
    ``right`` (or ``side="right"``). int64, or int32 with ``out_int32``; no gradient. ``sorter`` holds the indices
    that sort an unsorted ``sorted_sequence``. A NaN value goes after every entry, NaNs included."""
    seq = sorted_sequence
    if not _is_tensor(seq):
        raise TypeError(f"searchsorted(): argument 'sorted_sequence' must be Tensor, not {type(seq).__name__}")
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted(): side can only be 'left' or 'right', got {side!r}")
        if right and side == "left":
            raise ValueError("searchsorted(): side and right can't be set to opposites, got side of left while right was True")
        right = side == "right"
    if seq.dims == 0:
        raise ShapeError(f"searchsorted(): boundaries tensor should have positive dimension, got shape {seq.shape}")
    scalar = not _is_tensor(values)
    if scalar:  # a Python number: a float one searches an integer sequence as float32, as in PyTorch
        v = seq._lift(values, dtypes.float32 if isinstance(values, float) and seq.dtype.kind != "f" else seq.dtype)
    else:
        v = values
    seq._check_backend(v)
    if seq.dims > 1 and (v.dims != seq.dims or v.shape[:-1] != seq.shape[:-1]):
        raise ShapeError(f"searchsorted(): sorted_sequence {seq.shape} and values {v.shape} must have the same "
                         f"leading dims (all but the last), or sorted_sequence must be 1-D")
    if sorter is not None:
        if not _is_tensor(sorter) or sorter.dtype != dtypes.int64 or sorter.shape != seq.shape:
            got = f"{sorter.dtype} {sorter.shape}" if _is_tensor(sorter) else type(sorter).__name__
            raise DTypeError(f"searchsorted(): sorter must be an int64 tensor of shape {seq.shape}, got {got}")
        if sorter.numel() and (int(sorter.amin().item()) < 0 or int(sorter.amax().item()) >= seq.shape[-1]):
            raise IndexOutOfRangeError(f"searchsorted(): sorter index out of range [0, {seq.shape[-1]})")
        seq = seq.detach().gather(-1, sorter)
    out = _count_before(seq.detach(), v.detach(), right).reshape(v.shape)
    return out.cast(dtypes.int32) if out_int32 else out


def _count_before(seq: Tensor, v: Tensor, right: bool) -> Tensor:
    """Per value, how many entries of the sorted last dim of ``seq`` are below it (at or below it if ``right``), by
    one stable sort of the two merged: a value's place in the merged order less its place among the values is the
    count of entries sorted before it (values go before equal entries, or after them if ``right``). NaN values
    count every entry. O((M + N) log(M + N)) time and memory."""
    m = seq.shape[-1]
    table, keys = (seq.reshape(1, m), v.reshape(1, v.numel())) if seq.dims == 1 else (seq, v)
    common = dtypes.result_type(table, keys)
    table, keys = table.cast(common), keys.cast(common)
    last = keys.dims - 1
    place = _inverse(sort_indices(cat([table, keys] if right else [keys, table], last), last, False))
    place_of_keys = place[..., m:] if right else place[..., :keys.shape[-1]]
    out = place_of_keys - _inverse(sort_indices(keys, last, False))
    if common.kind == "f":  # NaN sorts last, but a NaN value goes after NaN entries too, as in PyTorch
        out = F.Where.apply(keys.isnan(), out._lift(m, dtypes.int64), out)
    return out


def _inverse(order: Tensor) -> Tensor:
    """The inverse of the permutations in the last dim of ``order``: out[order[i]] = i (a scatter, no history)."""
    last = order.dims - 1
    out = order.backend.zeros(order.shape, dtypes.int64)
    steps = positions(order, last)
    order.backend.scatter_add(steps._data.expand(order.shape), last, order._data, out)
    return order._view_of(out)


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:  # noqa: A002
    """The bucket of each element of ``input`` given 1-D sorted ``boundaries``: searchsorted(boundaries, input, right)."""
    if not _is_tensor(boundaries) or boundaries.dims != 1:
        got = f"shape {boundaries.shape}" if _is_tensor(boundaries) else type(boundaries).__name__
        raise ShapeError(f"bucketize(): boundaries must be a 1-D tensor, got {got}")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# --- order statistics ---


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:  # noqa: A002
    """(values, indices) of the k-th smallest element (k from 1) along ``dim``, NaN above every number."""
    x = at_least_1d(input)
    d = normalize_dim(dim, x.dims)
    n = x.shape[d]
    if not 1 <= k <= n:
        raise IndexOutOfRangeError(f"kthvalue(): k={k} is out of range [1, {n}] for dim {dim} of size {n} (shape {input.shape})")
    key = (slice(None),) * d + (slice(k - 1, k),)
    return like(input, select(x, d, sort_indices(x, d, False)[key].contiguous(), keepdim or input.dims == 0))


def msort(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` sorted along dim 0 (the values of ``sort(input, 0)``)."""
    return input.sort(0).values


def _quantile(name: str, input: Tensor, q: Any, dim: int | None, keepdim: bool, interpolation: str,  # noqa: A002
              ignore_nan: bool) -> Tensor:
    if input.dtype.kind != "f":
        raise DTypeError(f"{name}() input tensor must be either float or double dtype, got {input.dtype}")
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"{name}() interpolation must be one of {', '.join(INTERPOLATIONS)}, got {interpolation!r}")
    if _is_tensor(q):
        input._check_backend(q)
        if q.dtype != input.dtype:
            raise DTypeError(f"{name}() q tensor must be same dtype as the input tensor, got q {q.dtype} and input {input.dtype}")
        if q.dims > 1:
            raise ShapeError(f"{name}() q must be a scalar or 1D tensor, got shape {q.shape}")
        qs, many = q, q.dims == 1
        values = q.detach().to_numpy().reshape(-1)
    else:
        values, many = np.array([float(q)]), False
        qs = input._lift(float(q), input.dtype)
    if values.size and not ((values >= 0) & (values <= 1)).all():
        raise ValueError(f"{name}() q values must be in the range [0, 1], got {values.tolist()}")
    if input.numel() == 0:
        raise EmptyReductionError(f"{name}() input tensor must be non-empty (shape {input.shape})")
    if dim is None:
        x, d = flat(input), None
    else:
        d = normalize_dim(dim, max(input.dims, 1))
        x = at_least_1d(input).movedim(d, -1)
    n = x.shape[-1]
    ordered = x.sort(-1).values  # NaN last; the gradient reaches the gathered elements
    nan = ordered.isnan()
    if ignore_nan:
        ranks = qs.reshape(-1) * ((~nan).sum(-1, keepdim=True).cast(x.dtype) - 1)
        ranks = F.Where.apply(ranks < 0, ranks._lift(0.0), ranks)
    else:
        ranks = F.Where.apply(nan.any(-1, keepdim=True), x._lift(float(n - 1)), qs.reshape(-1) * float(n - 1))
    ranks = ranks.expand(*x.shape[:-1], ranks.shape[-1])  # q gets a gradient through the weights, as in PyTorch
    rounded = {"lower": ranks.floor, "higher": ranks.ceil, "nearest": ranks.round}.get(interpolation)
    ranks = ranks if rounded is None else rounded()
    below = ranks.detach().cast(dtypes.int64).contiguous()
    out = F.Gather.apply(ordered, -1 % ordered.dims, below)
    if interpolation in ("linear", "midpoint"):
        weights = ranks._lift(0.5) if interpolation == "midpoint" else ranks - below.cast(ranks.dtype)
        above = F.Gather.apply(ordered, -1 % ordered.dims, ranks.detach().ceil().cast(dtypes.int64).contiguous())
        out = out + weights * (above - out)
    if keepdim:
        out = out.reshape(*(1 for _ in input.shape), out.shape[-1]) if d is None else out.unsqueeze(-2).movedim(-2, d)
        out = out.movedim(-1, 0) if input.dims else out.reshape(out.shape[-1])
    else:
        out = out.movedim(-1, 0)
    return out if many else out.squeeze(0)


def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,  # noqa: A002
             interpolation: str = "linear") -> Tensor:
    """The ``q``-th quantiles (a float or a 0-d/1-D tensor of input's dtype, in [0, 1]; 1-D q puts its dim first) of
    each slice along ``dim`` (all elements when None), interpolating between neighbours by ``interpolation``
    (linear, lower, higher, midpoint, nearest); NaN where a slice holds NaN. Float tensors only."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,  # noqa: A002
                interpolation: str = "linear") -> Tensor:
    """:func:`quantile` of the non-NaN elements (NaN where a slice is all NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# --- counting (host syncs) ---


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:  # noqa: A002
    """Counts of each value 0..max(input) (at least ``minlength`` bins) of a 1-D non-negative integer tensor: int64, or
    the sums of ``weights`` (1-D, input's length; float weights keep their dtype, others give float64). A host sync
    reads the largest value; the weights get a gradient (gathered back), where PyTorch gives none."""
    if input.dtype.kind not in "iu":
        raise DTypeError(f"bincount() only supports 1-d non-negative integral inputs, got dtype {input.dtype}")
    if input.dims != 1:
        raise ShapeError(f"bincount() only supports 1-d non-negative integral inputs, got shape {input.shape}")
    if minlength < 0:
        raise ValueError(f"bincount(): minlength should be >= 0, got {minlength}")
    n = input.shape[0]
    low = int(input.amin().item()) if n else 0
    if low < 0:
        raise IndexOutOfRangeError(f"bincount() only supports non-negative inputs, got a value of {low}")
    size = max(int(input.amax().item()) + 1 if n else 0, minlength)
    if weights is None:
        return input._lift(np.zeros(size, np.int64), dtypes.int64).index_add(0, input, input._lift(1, dtypes.int64).expand(n))
    if not _is_tensor(weights):
        raise TypeError(f"bincount(): argument 'weights' must be Tensor, not {type(weights).__name__}")
    input._check_backend(weights)
    if weights.shape != input.shape:
        raise ShapeError(f"bincount(): weights {weights.shape} and input {input.shape} should have the same length")
    w = weights if weights.dtype.kind == "f" else weights.cast(dtypes.float64)
    return w._lift(np.zeros(size, w.dtype), w.dtype).index_add(0, input, w)


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim: int | None = None) -> Any:
    """The distinct elements of ``input`` (1-D, ascending, input's dtype; always sorted), with the int64 index of
    each element into them (input's shape) and the int64 counts when asked, as ``torch.unique``. A host sync; no
    gradient. ``dim`` is not supported (NotImplementedError)."""
    if dim is not None:
        raise NotImplementedError("unique(): dim is not supported; flatten the input or move the dim to the front yourself")
    found, inverse, counts = np.unique(input.to_numpy(), return_inverse=True, return_counts=True)
    out = input._lift(found, input.dtype)
    extra = ([input._lift(inverse.reshape(input.shape), dtypes.int64)] if return_inverse else []) + (
        [input._lift(counts, dtypes.int64)] if return_counts else [])
    return (out, *extra) if extra else out


class SearchMethods:
    """Searching, order statistics and counting methods of Tensor."""

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
        return kthvalue(self, k, dim, keepdim)  # type: ignore[arg-type]

    def msort(self) -> Tensor:
        return msort(self)  # type: ignore[arg-type]

    def quantile(self, q: Any, dim: int | None = None, keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
        return quantile(self, q, dim, keepdim, interpolation=interpolation)  # type: ignore[arg-type]

    def nanquantile(self, q: Any, dim: int | None = None, keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
        return nanquantile(self, q, dim, keepdim, interpolation=interpolation)  # type: ignore[arg-type]

    def bincount(self, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
        return bincount(self, weights, minlength)  # type: ignore[arg-type]

    def unique(self, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
               dim: int | None = None) -> Any:
        return unique(self, sorted, return_inverse, return_counts, dim)  # type: ignore[arg-type]


__all__ = ["searchsorted", "bucketize", "kthvalue", "msort", "quantile", "nanquantile", "bincount", "unique"]
