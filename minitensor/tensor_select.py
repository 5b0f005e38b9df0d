"""Splitting, rotating, flat indexing and running extremes (the ``SelectMethods`` mixin) and the matching ``mt.``
functions: tensor_split, hsplit, vsplit, dsplit, rot90, ravel, take, cummax, cummin, logcumsumexp.

Each is a composition of existing ops: views by ``narrow``, ``flip``, ``transpose`` and ``reshape``, a gather on the flattened
tensor, the backends' scan kernel for running maxima/minima and their indices (the values are then gathered, so the
gradient reaches the chosen elements, as PyTorch's), and ``logaddexp`` in log2(n) doubling steps. Names, signatures,
defaults and result dtypes follow PyTorch.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import dtypes
from . import tensor_functions as F
from .errors import DTypeError, IndexOutOfRangeError, ShapeError
from .tensor_arith import logaddexp
from .tensor_data import normalize_dim
from .tensor_index import INDEX_DTYPES
from .tensor_join import cat
from .tensor_order import scan
from .tensor_reduce import ValuesIndices, at_least_1d, positions

if TYPE_CHECKING:
    from .tensor import Tensor

MAX_EMPTY_PARTS = 1 << 16
"""tensor_split makes at most this many empty views beyond the dim's size (a huge count would exhaust memory)."""


def _is_tensor(x: Any) -> bool:
    """Every Tensor is a SelectMethods (tensor.py imports this module, so Tensor itself is not importable here)."""
    return isinstance(x, SelectMethods)


def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002 - PyTorch's names
    """Views of ``input`` along ``dim``: ``sections`` (an int, or a 0-d int tensor) parts whose sizes differ by at most
    one (the first n % sections one longer, empty ones when sections > n), or the parts between split ``indices``
    (a sequence of ints or a 1-D int64 tensor, read as Python slice bounds: negative ones count from the end, and
    out-of-order or out-of-range ones give empty parts), as ``torch.tensor_split``."""
    if input.dims == 0:
        raise ShapeError(f"tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims (shape {input.shape})")
    spec = indices_or_sections
    if _is_tensor(spec):
        if spec.dtype != dtypes.int64:
            raise DTypeError(f"tensor_split expected tensor_indices_or_sections to have dtype of int64, but got {spec.dtype}")
        if spec.dims > 1:
            raise ShapeError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional "
                             f"tensor, but got a tensor with {spec.dims} dims (shape {spec.shape})")
        spec = spec.item() if spec.dims == 0 else spec.tolist()
    d = normalize_dim(dim, input.dims)
    n = input.shape[d]
    if isinstance(spec, Sequence) and not isinstance(spec, str):
        try:
            cuts = [operator.index(i) for i in spec]
        except TypeError as error:
            raise TypeError(f"tensor_split(): indices must be ints, got {list(spec)!r}") from error
        bounds = [slice(start, stop).indices(n)[:2] for start, stop in zip([0, *cuts], [*cuts, n])]
    else:
        try:
            sections = operator.index(spec)
        except TypeError as error:
            raise TypeError(f"tensor_split(): indices_or_sections must be an int, a sequence of ints or an int64 tensor, "
                            f"not {type(spec).__name__}") from error
        if sections <= 0:
            raise ShapeError(f"tensor_split: number of sections must be larger than 0, got {sections} (shape {input.shape})")
        if sections > n + MAX_EMPTY_PARTS:
            raise ShapeError(f"tensor_split: {sections} sections of a dim of size {n} would make {sections - n} empty views; "
                             f"at most {MAX_EMPTY_PARTS} are allowed")
        size, longer = divmod(n, sections)
        starts = [i * size + min(i, longer) for i in range(sections + 1)]
        bounds = list(zip(starts[:-1], starts[1:]))
    return tuple(input.narrow(d, start, max(0, stop - start)) for start, stop in bounds)


def _split_along(name: str, input: Tensor, indices_or_sections: Any, dim: int, min_dims: int) -> tuple[Tensor, ...]:  # noqa: A002
    """hsplit/vsplit/dsplit: tensor_split along ``dim`` of a tensor of at least ``min_dims`` dims, with an int
    (or a 0-d integer tensor) of sections that must divide the dim's size, or a list or tuple of split indices."""
    if input.dims < min_dims:
        raise ShapeError(f"{name} requires a tensor with at least {min_dims} dimension{'s' * (min_dims > 1)}, but got a "
                         f"tensor with {input.dims} dimensions (shape {input.shape})")
    spec = indices_or_sections
    if isinstance(spec, (list, tuple)):
        return tensor_split(input, list(spec), dim)
    if _is_tensor(spec) and spec.dims == 0 and spec.dtype.kind in "iu":
        spec = spec.item()
    if isinstance(spec, bool) or _is_tensor(spec) or not hasattr(spec, "__index__"):
        raise TypeError(f"{name}(): indices_or_sections must be an int or a list or tuple of ints, not {type(spec).__name__}")
    sections = operator.index(spec)
    if sections <= 0:
        raise ShapeError(f"{name}: the number of sections must be larger than 0, got {sections} (shape {input.shape})")
    n = input.shape[dim]
    if n % sections:
        raise ShapeError(f"{name} attempted to split along dimension {dim}, but the size of the dimension {n} (shape "
                         f"{input.shape}) is not divisible by the split_size {sections}")
    return tensor_split(input, sections, dim)


def _sections(name: str, spec: tuple[Any, ...]) -> Any:
    """The split argument of the methods ``x.hsplit(2)``, ``x.hsplit([1, 3])`` and ``x.hsplit(1, 3)`` (indices)."""
    if not spec:
        raise TypeError(f"{name}() missing its argument: sections (an int) or indices (ints, or a list or tuple of ints)")
    return spec[0] if len(spec) == 1 else list(spec)


def hsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:  # noqa: A002
    """tensor_split along dim 1 (dim 0 of a 1-D tensor): ``sections`` equal parts (an int that divides the dim's
    size) or the parts between split ``indices`` (a list or tuple of ints), as ``torch.hsplit``; views."""
    return _split_along("hsplit", input, indices_or_sections, 0 if input.dims == 1 else 1, 1)


def vsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:  # noqa: A002
    """tensor_split along dim 0 of a tensor of at least 2 dims, as :func:`hsplit` (``torch.vsplit``); views."""
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:  # noqa: A002
    """tensor_split along dim 2 (depth) of a tensor of at least 3 dims, as :func:`hsplit` (``torch.dsplit``); views."""
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


def _hsplit_method(self: Tensor, *indices_or_sections: Any) -> tuple[Tensor, ...]:
    """x.hsplit(sections), x.hsplit(indices) or x.hsplit(*indices)"""
    return hsplit(self, _sections("hsplit", indices_or_sections))


def _vsplit_method(self: Tensor, *indices_or_sections: Any) -> tuple[Tensor, ...]:
    """x.vsplit(sections), x.vsplit(indices) or x.vsplit(*indices)"""
    return vsplit(self, _sections("vsplit", indices_or_sections))


def _dsplit_method(self: Tensor, *indices_or_sections: Any) -> tuple[Tensor, ...]:
    """x.dsplit(sections), x.dsplit(indices) or x.dsplit(*indices)"""
    return dsplit(self, _sections("dsplit", indices_or_sections))


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:  # noqa: A002
    """``input`` rotated by k * 90 degrees in the plane of ``dims``, from the first dim towards the second (a copy)."""
    dims = list(dims)
    if len(dims) != 2:
        raise ShapeError(f"rot90: expected total rotation dims == 2, but got dims = {len(dims)} ({dims})")
    if input.dims < 2:
        raise ShapeError(f"rot90: expected total dims >= 2, but got total dims = {input.dims} (shape {input.shape})")
    d0, d1 = normalize_dim(dims[0], input.dims), normalize_dim(dims[1], input.dims)
    if d0 == d1:
        raise ShapeError(f"rot90: expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    turns = operator.index(k) % 4
    if turns == 1:
        return input.flip(d1).transpose(d0, d1)
    if turns == 2:
        return input.flip(d0, d1)
    if turns == 3:
        return input.flip(d0).transpose(d0, d1)
    return input.clone()


def ravel(input: Tensor) -> Tensor:  # noqa: A002
    """The elements of ``input`` in row-major order as a 1-D tensor (a 0-d one gives 1 element): a view when the
    strides allow it, else a contiguous copy, as ``reshape(-1)`` and ``torch.ravel``."""
    return input.reshape(-1)


def take(input: Tensor, index: Tensor) -> Tensor:  # noqa: A002
    """input.flatten()[index] with index's shape: an int64 (or int32) tensor of flat positions in [-n, n), negative
    ones counted from the end; the gradient scatter-adds back (repeated positions accumulate)."""
    if not _is_tensor(index) or index.dtype not in INDEX_DTYPES:
        got = f"a {index.dtype} tensor" if _is_tensor(index) else type(index).__name__
        raise DTypeError(f"take(): index must be an int64 or int32 tensor, got {got}")
    input._check_backend(index)
    n = input.numel()
    flat = input.reshape(n)
    if index.numel() == 0:
        return F.Gather.apply(flat, 0, index.cast(dtypes.int64).reshape(0)).reshape(*index.shape)
    lo, hi = int(index.amin().item()), int(index.amax().item())
    if lo < -n or hi >= n:
        bad = lo if lo < -n else hi
        raise IndexOutOfRangeError(f"take(): index {bad} is out of range for a tensor of {n} elements (shape {input.shape}); "
                                   f"valid flat indices are [{-n}, {n})")
    wrapped = index.cast(dtypes.int64).remainder(n).reshape(index.numel())
    return F.Gather.apply(flat, 0, wrapped).reshape(*index.shape)


def _running(input: Tensor, dim: int, op: str) -> ValuesIndices:  # noqa: A002
    """cummax (op "max") / cummin ("min"): the running extreme and the last index where it was
    reached (a later tie takes over; a NaN sticks, each later NaN taking the index, as in PyTorch)."""
    x = at_least_1d(input)
    d = normalize_dim(dim, x.dims)
    keys = x.detach()
    if keys.dtype.kind == "b":
        keys = keys.cast(dtypes.int64)
    best = scan(keys, op, d)  # the max/min scan propagates NaN
    hit = keys == best
    if keys.dtype.kind == "f":
        hit = hit | keys.isnan()
    at = F.Where.apply(hit, positions(keys, d), keys._lift(0, dtypes.int64))
    indices = scan(at, "max", d)
    values = F.Gather.apply(x, d, indices)
    if input.dims == 0:
        return ValuesIndices(values.view(()), indices.view(()))
    return ValuesIndices(values, indices)


def cummax(input: Tensor, dim: int) -> ValuesIndices:  # noqa: A002
    """(values, indices): the running maximum along ``dim`` and the int64 index of the element it came from (the last
    of equal maxima; NaN propagates); the gradient goes to that element."""
    return _running(input, dim, "max")


def cummin(input: Tensor, dim: int) -> ValuesIndices:  # noqa: A002
    """(values, indices): the running minimum along ``dim``, as :func:`cummax`."""
    return _running(input, dim, "min")


def logcumsumexp(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """log(cumsum(exp(x))) along ``dim`` without overflow or underflow: a prefix scan of ``logaddexp`` in log2(n)
    doubling steps (out[i] combines out[i - step] for step = 1, 2, 4, ...). Float tensors only, as in PyTorch."""
    if input.dtype.kind != "f":
        raise DTypeError(f"logcumsumexp() needs a float tensor, got {input.dtype} (shape {input.shape}); call .float() first")
    x = at_least_1d(input)
    d = normalize_dim(dim, x.dims)
    n, step = x.shape[d], 1
    while step < n:
        combined = logaddexp(x.narrow(d, step, n - step), x.narrow(d, 0, n - step))
        x = cat([x.narrow(d, 0, step), combined], d)
        step *= 2
    return x.view(()) if input.dims == 0 else x


class SelectMethods:
    """Splitting, rotation, flat indexing and running extremes (methods of Tensor)."""

    tensor_split = tensor_split
    hsplit = _hsplit_method
    vsplit = _vsplit_method
    dsplit = _dsplit_method
    rot90 = rot90
    ravel = ravel
    take = take
    cummax = cummax
    cummin = cummin
    logcumsumexp = logcumsumexp


__all__ = ["tensor_split", "hsplit", "vsplit", "dsplit", "rot90", "ravel", "take", "cummax", "cummin", "logcumsumexp"]
