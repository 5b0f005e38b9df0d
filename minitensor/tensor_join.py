"""Joining and copying shape ops of Tensor (the ``JoinMethods`` mixin) and the matching ``mt.`` functions.

``cat`` and ``stack`` allocate the output once and copy each input into its slice with one ``map("id")``;
the gradient of each input is its slice of the output's gradient. ``flip`` gathers along each flipped dim,
``roll`` is a cat of two narrowed views, ``repeat``/``tile`` and ``repeat_interleave`` (with one count) copy a
stride-0 expansion, ``repeat_interleave`` with a count per slice selects with ``index_select``, ``tril``/``triu``
select with the ``where`` kernel and ``diag`` writes into (or copies out of) a diagonal view. All return new
tensors, as in PyTorch (``clone`` is ``Tensor.clone``'s function form).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context
from .backends import Backend
from .errors import DTypeError, ShapeError
from .tensor_data import TensorData, normalize_dim
from .tensor_math import _is_tensor

if TYPE_CHECKING:
    from .tensor import Tensor


def int_list(value: Any) -> list[int]:
    """An int or a tuple/list of ints as a list of ints."""
    return [int(v) for v in value] if isinstance(value, (tuple, list)) else [int(value)]


class Join(F.TensorFunction):
    """cat (``stacked`` False) or stack (True) of ``parts`` along ``dim`` into one output of ``dtype``."""

    @staticmethod
    def forward(ctx: Context, dim: int, stacked: bool, dtype: np.dtype, *parts: Tensor) -> Tensor:
        first = parts[0]
        lead = (slice(None),) * dim
        if stacked:
            shape = first.shape[:dim] + (len(parts),) + first.shape[dim:]
            keys = [lead + (i,) for i in range(len(parts))]
        else:
            sizes = [p.shape[dim] for p in parts]
            shape = first.shape[:dim] + (sum(sizes),) + first.shape[dim + 1 :]
            keys = [lead + (slice(start - n, start),) for n, start in zip(sizes, np.cumsum(sizes).tolist())]
        ctx.save_for_backward(keys)
        out = first.backend.empty(shape, dtype)
        for part, key in zip(parts, keys):
            if part._data.size:
                first.backend.map("id", part._data, out.slice(key))
        return first._view_of(out)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Any, ...]:
        return (None, None, None, *[F.Slice.apply(d, key) for key in ctx.saved_values[0]])


def _tensors(tensors: Sequence[Tensor], name: str) -> list[Tensor]:
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' must be a tuple or list of Tensors, not {type(tensors).__name__}")
    tensors = list(tensors)
    if not tensors:
        raise ShapeError(f"{name}() needs a non-empty sequence of tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, JoinMethods):  # every Tensor is one
            raise TypeError(f"{name}(): expected Tensor as element {i} in argument 'tensors', but got {type(t).__name__}")
    for t in tensors[1:]:
        tensors[0]._check_backend(t)
    return tensors


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Tensors joined along an existing ``dim``; the others must match. The dtype is promoted across the inputs,
    and 1-D empty tensors are skipped whatever their rank, as in PyTorch."""
    tensors = _tensors(tensors, "cat")
    for i, t in enumerate(tensors):
        if t.dims == 0:
            raise ShapeError(f"cat: a 0-d tensor (at position {i}) cannot be concatenated; unsqueeze it or use stack")
    ref = next((t for t in tensors if t.shape != (0,)), tensors[0])
    d = normalize_dim(dim, ref.dims)
    parts = []
    for i, t in enumerate(tensors):
        if t.shape == (0,) and ref.dims != 1:
            continue
        if t.dims != ref.dims or t.shape[:d] + t.shape[d + 1 :] != ref.shape[:d] + ref.shape[d + 1 :]:
            raise ShapeError(
                f"cat along dim {dim} needs equal sizes in the other dims: got {ref.shape} and {t.shape} (at position {i})"
            )
        parts.append(t)
    return Join.apply(d, False, dtypes.result_type(*tensors), *parts)


def concatenate(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    return cat(tensors, axis)


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Tensors of one shape joined along a new ``dim``."""
    tensors = _tensors(tensors, "stack")
    for i, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise ShapeError(f"stack needs tensors of one shape, got {tensors[0].shape} at position 0 and {t.shape} at position {i}")
    d = normalize_dim(dim, tensors[0].dims + 1)
    return Join.apply(d, True, dtypes.result_type(*tensors), *tensors)


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """cat along dim 1, or dim 0 for 1-D tensors (0-D ones count as 1-D)."""
    tensors = [t.reshape(1) if t.dims == 0 else t for t in _tensors(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0].dims == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """cat along dim 0 after making 0-D and 1-D tensors rows."""
    return cat([t.reshape(1, -1) if t.dims < 2 else t for t in _tensors(tensors, "vstack")], 0)


row_stack = vstack
"""``torch.row_stack``: another name of :func:`vstack`."""


# --- copies ---


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:  # noqa: A002 - PyTorch's names
    """``input.clone()``: a contiguous copy with its own storage; gradients flow back to ``input`` (``torch.clone``;
    ``memory_format`` is accepted and ignored, every copy is row-major)."""
    return input.clone(memory_format=memory_format)


def repeat(self: Tensor, *sizes: Any) -> Tensor:
    """This tensor tiled ``sizes[i]`` times along dim i (leading sizes add dims), a copy (``torch.Tensor.repeat``)."""
    reps = tuple(int(s) for s in (sizes[0] if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes))
    if len(reps) < self.dims or min(reps, default=0) < 0:
        raise ShapeError(f"repeat{reps}: need at least {self.dims} non-negative sizes for a tensor of shape {self.shape}")
    shape = (1,) * (len(reps) - self.dims) + self.shape
    # (1, s0, 1, s1, ...) broadcast to (r0, s0, r1, s1, ...), copied, then read as (r0 * s0, r1 * s1, ...).
    spread = self.reshape(*[v for s in shape for v in (1, s)]).expand(*[v for r, s in zip(reps, shape) for v in (r, s)])
    return F.Contiguous.apply(spread).view(*[r * s for r, s in zip(reps, shape)])


def _counts(repeats: Tensor, name: str) -> np.ndarray:
    """The repeat counts of an integer ``repeats`` tensor of at most one dim, read on the host (int64)."""
    if repeats.dtype.kind not in "iu":
        raise DTypeError(f"{name}: repeats must be an integer tensor, got {repeats.dtype} (shape {repeats.shape})")
    if repeats.dims > 1:
        raise ShapeError(f"{name}: repeats must be a 0-d or 1-D tensor, got shape {repeats.shape}")
    counts = repeats.to_numpy().reshape(-1).astype(np.int64)
    if counts.size and counts.min() < 0:
        raise ShapeError(f"{name}: repeats must be non-negative, got {counts.min()} in {counts.tolist()[:8]}")
    return counts


def _check_output_size(output_size: int | None, total: int, dim: int, shape: tuple[int, ...]) -> None:
    """repeat_interleave's ``output_size``, when given, must be the ``total`` size of the repeated dim."""
    if output_size is not None and output_size != total:
        raise ShapeError(f"repeat_interleave: output_size={output_size} does not match the {total} slices the repeats "
                         f"give along dim {dim} of input {shape}")


def repeat_interleave(input: Tensor, repeats: Any = None, dim: int | None = None, *,  # noqa: A002
                      output_size: int | None = None) -> Tensor:
    """Each slice of ``input`` along ``dim`` (each element of the flattened input when ``dim`` is None) repeated
    in place: ``repeats`` times (an int, or a 0-d or one-element integer tensor), or repeats[i] times for slice i
    (a 1-D integer tensor as long as that dim). out.shape[dim] = sum of the repeats, which ``output_size`` must equal
    when given. The gradient of each input slice sums over its copies. ``repeat_interleave(r)`` alone (r a 1-D
    integer tensor) is ``repeat_interleave(arange(len(r)), r)`` in r's dtype, as ``torch.repeat_interleave``.
    Tensor repeats are read on the host (the output's size depends on them, as PyTorch syncs too)."""
    name = "repeat_interleave"
    if repeats is None:  # the one-argument form: input holds the repeats
        if input.dims != 1:
            raise ShapeError(f"{name}(repeats): repeats must be a 1-D tensor, got shape {input.shape}")
        lengths = _counts(input, name)
        _check_output_size(output_size, int(lengths.sum()), 0, input.shape)
        return input._lift(np.repeat(np.arange(lengths.size), lengths), input.dtype)
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else normalize_dim(dim, input.dims)
    n = x.shape[d]
    counts: np.ndarray | None = None
    count = 0
    if _is_tensor(repeats):
        x._check_backend(repeats)
        counts = _counts(repeats, name)
        if counts.size == 1:
            count, counts = int(counts[0]), None
        elif counts.size != n:
            raise ShapeError(f"{name}: repeats must have one count per slice along dim {d} of input {input.shape} "
                             f"({n}), got {counts.size} counts (repeats shape {repeats.shape})")
    else:
        if isinstance(repeats, bool):
            raise TypeError(f"{name}(): repeats must be an int or an integer Tensor, not bool")
        try:
            count = operator.index(repeats)
        except TypeError as error:
            raise TypeError(f"{name}(): repeats must be an int or an integer Tensor, not {type(repeats).__name__}") from error
        if count < 0:
            raise ShapeError(f"{name}: repeats must be non-negative, got {count}")
    total = n * count if counts is None else int(counts.sum())
    _check_output_size(output_size, total, d, input.shape)
    if counts is not None:
        return x.index_select(d, x._lift(np.repeat(np.arange(n), counts), dtypes.int64))
    shape = x.shape
    spread = x.unsqueeze(d + 1).expand(*shape[: d + 1], count, *shape[d + 1 :])
    return F.Contiguous.apply(spread).view(*shape[:d], total, *shape[d + 1 :])  # a copy even for count 1


def _repeat_interleave_method(self: Tensor, repeats: Any, dim: int | None = None, *, output_size: int | None = None) -> Tensor:
    """x.repeat_interleave(repeats, dim=None, *, output_size=None): see :func:`repeat_interleave` (repeats required,
    as ``torch.Tensor.repeat_interleave``)"""
    return repeat_interleave(self, repeats, dim, output_size=output_size)


def tile(self: Tensor, *dims: Any) -> Tensor:
    """``repeat`` with ``dims`` padded with leading 1s to this tensor's rank."""
    reps = tuple(dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims)
    return repeat(self, *((1,) * (self.dims - len(reps)) + reps))


def _unique_dims(dims: int | Sequence[int], ndim: int, name: str) -> tuple[int, ...]:
    given = tuple(int_list(dims))
    out = tuple(normalize_dim(d, max(ndim, 1)) for d in given)
    if len(set(out)) != len(out):
        raise ShapeError(f"{name}: a dim appears more than once in dims {given} (ndim {ndim})")
    return out if ndim else ()


def reversed_along(backend: Backend, data: TensorData, dim: int) -> TensorData:
    """A copy of ``data`` with dim ``dim`` reversed: one gather with a stride-0 expanded reversed arange."""
    n = data.shape[dim]
    index = backend.from_numpy(np.arange(n - 1, -1, -1, dtype=np.int64))
    index = index.view(*[n if i == dim else 1 for i in range(data.dims)]).expand(data.shape)
    out = backend.empty(data.shape, data.dtype)
    backend.gather(data, dim, index, out)
    return out


class Flip(F.TensorFunction):
    """A copy with ``dims`` reversed; flipping the gradient undoes it."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, dims: tuple[int, ...]) -> Tensor:
        ctx.save_for_backward(dims)
        if not dims:
            return a._map("id")
        out = a._data
        for dim in dims:
            out = reversed_along(a.backend, out, dim)
        return a._view_of(out)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        return Flip.apply(d, ctx.saved_values[0])


def flip(self: Tensor, *dims: Any) -> Tensor:
    """A copy with the order of elements reversed along each of ``dims``."""
    given = dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    return Flip.apply(self, _unique_dims(given, self.dims, "flip"))


def fliplr(self: Tensor) -> Tensor:
    if self.dims < 2:
        raise ShapeError(f"fliplr needs at least 2 dims, got shape {self.shape}")
    return flip(self, 1)


def flipud(self: Tensor) -> Tensor:
    if self.dims < 1:
        raise ShapeError(f"flipud needs at least 1 dim, got shape {self.shape}")
    return flip(self, 0)


def roll(self: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None) -> Tensor:
    """Elements shifted ``shifts`` places along ``dims`` with wrap-around (over the flattened tensor when ``dims``
    is None), a copy."""
    shift_list = int_list(shifts)
    if dims is None:
        if len(shift_list) != 1:
            raise ShapeError(f"roll without dims takes one shift, got {shift_list}")
        return roll(self.flatten(), shift_list, 0).view(*self.shape)
    dim_list = int_list(dims)
    if len(shift_list) != len(dim_list):
        raise ShapeError(f"roll needs one shift per dim, got shifts {shift_list} and dims {dim_list}")
    out = self
    for shift, dim in zip(shift_list, dim_list):
        d = normalize_dim(dim, self.dims)
        n = self.shape[d]
        s = shift % n if n else 0
        if s:
            out = cat([out.narrow(d, n - s, s), out.narrow(d, 0, n - s)], d)
    return F.Contiguous.apply(self) if out is self else out


def _triangle(self: Tensor, diagonal: int, lower: bool) -> Tensor:
    """Elements on and below (``lower``) or above diagonal ``diagonal`` of the last two dims; zeros elsewhere."""
    if self.dims < 2:
        raise ShapeError(f"{'tril' if lower else 'triu'} needs at least 2 dims, got shape {self.shape}")
    n, m = self.shape[-2:]
    backend = self.backend
    rows = backend.from_numpy((np.arange(n, dtype=np.int64) + int(diagonal)).reshape(n, 1))
    cols = backend.from_numpy(np.arange(m, dtype=np.int64).reshape(1, m))
    keep = backend.empty((n, m), dtypes.bool_)
    backend.zip("le" if lower else "ge", cols, rows, keep)  # col - row <= diagonal (tril) or >= diagonal (triu)
    return F.Where.apply(self._view_of(keep), self, self._lift(0))


def tril(self: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle (on and below diagonal ``diagonal``) of the last two dims, zeros above."""
    return _triangle(self, diagonal, True)


def triu(self: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle (on and above diagonal ``diagonal``) of the last two dims, zeros below."""
    return _triangle(self, diagonal, False)


class DiagEmbed(F.TensorFunction):
    """A 1-D tensor as diagonal ``offset`` of a square matrix of zeros; the gradient is that diagonal."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, offset: int) -> Tensor:
        ctx.save_for_backward(offset)
        n = a.shape[0] + abs(offset)
        out = a._zeros((n, n))
        a.backend.map("id", a._data, out.diagonal(offset)._data)
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        return d.diagonal(ctx.saved_values[0])


def diag(self: Tensor, diagonal: int = 0) -> Tensor:
    """1-D: a matrix with this on diagonal ``diagonal``; 2-D: a copy of that diagonal (``torch.diag``)."""
    if self.dims == 1:
        return DiagEmbed.apply(self, int(diagonal))
    if self.dims == 2:
        return F.Contiguous.apply(self.diagonal(diagonal))
    raise ShapeError(f"diag needs a 1-D or 2-D tensor, got shape {self.shape}")


class JoinMethods:
    """Joining and copying methods of Tensor."""

    repeat = repeat
    repeat_interleave = _repeat_interleave_method
    tile = tile
    flip = flip
    fliplr = fliplr
    flipud = flipud
    roll = roll
    tril = tril
    triu = triu
    diag = diag


concat = cat

__all__ = [
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "clone", "repeat_interleave", "tile", "flip",
    "fliplr", "flipud", "roll", "tril", "triu", "diag",
]  # fmt: skip
