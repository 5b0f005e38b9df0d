"""Counting values and combinations (the ``MiscMethods`` mixin) and the matching ``mt.`` functions: mode, histc,
combinations; and the two activations PyTorch also has as Tensor methods, hardshrink and prelu (``F``'s are in nn).

Each is a composition of existing kernels: mode sorts each slice, numbers the runs of equal values with a cumulative
sum and counts them with ``scatter_add``, then gathers the chosen element, so its gradient reaches that element;
histc bins with PyTorch's own arithmetic ((x - min) * bins / (max - min) in the input's dtype, truncated) and counts
with ``scatter_add``; chain_matmul and multi_dot multiply in the cheapest order (the matrix-chain dynamic program on
the host); combinations gathers the rows of an index table built on the host. Names, signatures, defaults and
result dtypes follow PyTorch.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import no_grad
from .errors import DTypeError, ShapeError
from .tensor_data import check_shape, normalize_dim
from .tensor_index import _scatter_add_into
from .tensor_join import cat
from .tensor_order import gather_raw, sort_indices
from .tensor_reduce import ValuesIndices, arg_extreme, at_least_1d, check_nonempty, like, select

if TYPE_CHECKING:
    from .tensor import Tensor


def _is_tensor(x: Any) -> bool:
    """Every Tensor is a MiscMethods (tensor.py imports this module, so Tensor itself is not importable here)."""
    return isinstance(x, MiscMethods)


# --- counting values ---


def _mode_index(x: Tensor, d: int) -> Tensor:
    """Per slice along ``d`` (of a non-empty ``x``, without history), the index of PyTorch's mode: the last occurrence
    of the most frequent value, the smallest such value on ties (keepdim, int64)."""
    n = x.shape[d]
    order = sort_indices(x, d, False)  # stable: equal values keep their order, so a run ends at the last occurrence
    ordered = gather_raw(x, d, order)
    first = x._lift(True, dtypes.bool_).expand(*x.shape[:d], 1, *x.shape[d + 1:])
    starts = cat([first, ordered.narrow(d, 1, n - 1) != ordered.narrow(d, 0, n - 1)], d)
    run = starts.cast(dtypes.int64).cumsum(d) - 1
    ones = run._lift(1).expand(*run.shape)
    length = gather_raw(_scatter_add_into(run._zeros(run.shape), d, run, ones), d, run)
    best = arg_extreme(length * (n + 1) - run, d, "max")  # the first entry of the longest run, the earliest on ties
    return gather_raw(order, d, best + gather_raw(length, d, best) - 1)


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> ValuesIndices:  # noqa: A002 - PyTorch's names
    """(values, indices) of the most frequent value along ``dim`` (the smallest one on ties) and the index of its last
    occurrence; the values' gradient goes to that element. NaNs count as distinct values."""
    x = at_least_1d(input)
    d = normalize_dim(dim, x.dims)
    check_nonempty(x, [d], "mode")
    if x.numel() == 0:
        index = x._zeros((*x.shape[:d], 1, *x.shape[d + 1:])).cast(dtypes.int64)
    else:
        with no_grad():
            index = _mode_index(x.detach(), d)
    return like(input, select(x, d, index, keepdim or input.dims == 0))


def histc(input: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:  # noqa: A002
    """Counts of input's elements in ``bins`` equal-width bins over [min, max] (the data's own range when
    min == max; widened by 1 each way when that is one value); elements outside and NaNs are ignored, a value equal
    to max falls in the last bin. Float input only; input's dtype; no gradient."""
    if not _is_tensor(input) or input.dtype.kind != "f":
        raise DTypeError(f"histc(): input must be a float tensor, got {input.dtype if _is_tensor(input) else type(input).__name__}")
    if not isinstance(bins, (int, np.integer)) or isinstance(bins, bool) or bins <= 0:
        raise ValueError(f"histc(): bins must be a positive int, got {bins!r}")
    lo, hi = float(min), float(max)
    x = input.detach().reshape(input.numel())
    if lo == hi and x.numel():
        lo, hi = float(x.amin().item()), float(x.amax().item())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"histc(): range of [{lo}, {hi}] is not finite")
    if lo > hi:
        raise ValueError(f"histc(): max must be larger than min, got min={lo}, max={hi}")
    kind = np.dtype(input.dtype).type
    left, right = kind(lo), kind(hi)  # the edges in input's dtype, and PyTorch's arithmetic in it
    with no_grad():
        inside = (x >= float(left))._zip("logical_and", x <= float(right))
        where = (x - float(left)) * bins / float(right - left)
        where = F.Where.apply(inside, where, x._lift(0)).cast(dtypes.int64).clamp(max=bins - 1)
        return _scatter_add_into(x._zeros((bins,)), 0, where, inside.cast(x.dtype))


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:  # noqa: A002
    """The length-``r`` combinations of the elements of 1-D input (with repeats if ``with_replacement``) as the rows
    of an (count, r) tensor, in lexicographic order of positions, as ``torch.combinations``; ``r=0`` gives an empty
    1-D tensor. Gradients scatter back to the chosen elements."""
    if input.dims != 1:
        raise ShapeError(f"combinations(): expected a 1-D tensor, got shape {input.shape}")
    if r < 0:
        raise ValueError(f"combinations(): r must be non-negative, got {r}")
    if r == 0:
        return input._zeros((0,))
    n = input.shape[0]
    count = math.comb(n + r - 1, r) if with_replacement else math.comb(n, r)
    check_shape((count, r))
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = np.fromiter(itertools.chain.from_iterable(pick(range(n), r)), np.int64, count * r)
    return F.Gather.apply(input, 0, input._lift(rows, dtypes.int64)).reshape(count, r)


# --- activations that are Tensor methods too ---


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """x where |x| > lambd, else 0 (NaN stays NaN); the gradient is 1 outside [-lambd, lambd], 0 inside"""
    return input.masked_fill((input >= -lambd) & (input <= lambd), 0.0)


def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """x for x > 0, weight * x otherwise (gradient ``weight`` at 0, as torch): ``weight`` of input's dtype holds one
    slope (one element) or one per channel (dim 1; a 1-D or 0-D input has one channel)"""
    if not _is_tensor(weight):
        raise TypeError(f"prelu(): argument 'weight' (position 2) must be Tensor, not {type(weight).__name__}")
    if weight.dtype != input.dtype:
        raise DTypeError(f"prelu: Type promoting not supported. Got {input.dtype} input and {weight.dtype} weight")
    if weight.dims > 1:
        raise ShapeError(f"prelu: weight must be a scalar or a 1-D tensor, got shape {weight.shape}")
    n, channels = weight.numel(), input.shape[1] if input.dims >= 2 else 1
    if n != 1 and n != channels:
        raise ShapeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} and "
                         f"channel size = {channels} (input shape {input.shape}).")
    w = weight.reshape(*(n if d == 1 else 1 for d in range(input.dims)))
    return input.where(input > 0, input * w)


class MiscMethods:
    """mode, histc, hardshrink and prelu methods of Tensor."""

    def mode(self, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
        return mode(self, dim, keepdim)  # type: ignore[arg-type]

    def histc(self, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:  # noqa: A002
        return histc(self, bins, min, max)  # type: ignore[arg-type]

    def hardshrink(self, lambd: float = 0.5) -> Tensor:
        return hardshrink(self, lambd)  # type: ignore[arg-type]

    def prelu(self, weight: Tensor) -> Tensor:
        return prelu(self, weight)  # type: ignore[arg-type]


__all__ = ["mode", "histc", "combinations", "hardshrink", "prelu"]
