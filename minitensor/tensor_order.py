"""Scans and sorting of Tensor (the ``OrderMethods`` mixin): ``cumsum cumprod diff sort argsort topk median nanmedian``.

Names, signatures, defaults and result dtypes follow PyTorch. They run on the backends' ``scan``, ``sort`` and
``gather`` kernels; the host only builds small index vectors.
"""

from __future__ import annotations

import builtins
import math
from typing import TYPE_CHECKING, Any

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context, is_grad_enabled
from .errors import IndexOutOfRangeError, ShapeError
from .tensor_data import normalize_dim
from .tensor_join import cat
from .tensor_reduce import ValuesIndices, at_least_1d, check_nonempty, flat, int64_if_integral, like, positions, select

if TYPE_CHECKING:
    from .tensor import Tensor


def gather_raw(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """x gathered along ``dim`` at ``index`` (the gather kernel, no history)."""
    out = x.backend.empty(index.shape, x.dtype)
    x.backend.gather(x._data, dim, index._data, out)
    return x._view_of(out)


def flip(x: Tensor, dim: int) -> Tensor:
    """x reversed along ``dim`` (a gather, no history)."""
    index = positions(x, dim, reverse=True)
    return gather_raw(x, dim, index._view_of(index._data.expand(x.shape)))


def scan(x: Tensor, op: str, dim: int) -> Tensor:
    """Inclusive prefix fold of ``op`` along ``dim`` (the scan kernel, no history)."""
    out = x.backend.empty(x.shape, x.dtype)
    x.backend.scan(op, x._data, dim, out)
    return x._view_of(out)


def reverse_cumsum(x: Tensor, dim: int) -> Tensor:
    """out[j] = sum of x[j..n-1] along ``dim``."""
    return flip(scan(flip(x, dim), "sum", dim), dim)


def sort_indices(x: Tensor, dim: int, descending: bool) -> Tensor:
    """Indices of the stable sort of ``x`` along ``dim`` (NaN above every number) from the sort kernel."""
    values = x.backend.empty(x.shape, x.dtype)
    indices = x.backend.empty(x.shape, dtypes.int64)
    x.backend.sort(x._data, dim, descending, values, indices)
    return x._view_of(indices)


class Cumsum(F.TensorFunction):
    """Inclusive prefix sum along ``dim``; the gradient is the reversed prefix sum of the incoming one."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, dim: int) -> Tensor:
        ctx.save_for_backward(dim)
        return scan(a, "sum", dim)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, None]:
        dim = ctx.saved_values[0]
        if is_grad_enabled():  # create_graph: the reversed prefix sum from differentiable ops
            return Cumsum.apply(d.flip(dim), dim).flip(dim), None
        return reverse_cumsum(d, dim), None


class Cumprod(F.TensorFunction):
    """Inclusive prefix product y along ``dim``; d/da_i = revcumsum(d y)_i / a_i where a_i != 0; at the first zero z
    it is revcumsum(d y')_z with y' the cumprod with a_z set to 1; after it, 0. O(n): three scans. The backward
    uses raw scans, so it is not differentiable again (create_graph raises HigherOrderGradError)."""

    higher_order = False

    @staticmethod
    def forward(ctx: Context, a: Tensor, dim: int) -> Tensor:
        out = scan(a, "prod", dim)
        ctx.save_for_backward(a, out, dim)
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, None]:
        a, out, dim = ctx.saved_values
        zero = a == 0.0
        first_zero = zero._zip("logical_and", scan(zero.cast(dtypes.int64), "sum", dim) == 1)
        one, nothing = a._lift(1.0), a._lift(0.0)
        before = reverse_cumsum(d * out, dim) / F.Where.apply(zero, one, a)  # 0 after the first zero
        skipped = scan(F.Where.apply(first_zero, one, a), "prod", dim)
        at_first_zero = F.Where.apply(first_zero, reverse_cumsum(d * skipped, dim), nothing)
        return before + at_first_zero, None


# --- scans ---


def cumsum(self: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Inclusive prefix sum along ``dim``; integers and bools give int64."""
    return scan_with(int64_if_integral(self, dtype), Cumsum, dim)


def cumprod(self: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Inclusive prefix product along ``dim``; integers and bools give int64; exact gradients with zeros."""
    return scan_with(int64_if_integral(self, dtype), Cumprod, dim)


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,  # noqa: A002 - PyTorch's names
         append: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (x[i+1] - x[i], repeated), after joining ``prepend`` and ``append``
    (tensors of input's dims, matching it except along ``dim``) at the ends; bool tensors give x[i+1] ^ x[i]."""
    if input.dims == 0:
        raise ShapeError("diff() needs a tensor with at least one dim, got a 0-d tensor")
    if n < 0:
        raise ValueError(f"diff(): n must be non-negative, got {n}")
    d = normalize_dim(dim, input.dims)
    parts = []
    for name, extra in (("prepend", prepend), ("append", append)):
        if extra is None:
            continue
        if not isinstance(extra, OrderMethods):  # every Tensor is one
            raise TypeError(f"diff(): {name} must be a Tensor, not {type(extra).__name__}")
        same = all(a == b for i, (a, b) in enumerate(zip(extra.shape, input.shape)) if i != d)
        if extra.dims != input.dims or not same:
            raise ShapeError(f"diff(): {name} of shape {extra.shape} must match input's shape {input.shape} except along dim {d}")
        parts.append((name, extra))
    x = input
    if parts:
        x = cat([e for name, e in parts if name == "prepend"] + [input] + [e for name, e in parts if name == "append"], d)
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        later, earlier = x.narrow(d, 1, size - 1), x.narrow(d, 0, size - 1)
        x = later ^ earlier if x.dtype.kind == "b" else later - earlier
    return x


def scan_with(x: Tensor, fn: type[F.TensorFunction], dim: int) -> Tensor:
    """Apply the scan Function ``fn`` along ``dim``."""
    d = normalize_dim(dim, builtins.max(x.dims, 1))
    return fn.apply(at_least_1d(x), d).view(*x.shape)


# --- sorting and selection ---


def sort(self: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False) -> ValuesIndices:
    """(values, indices) sorted along ``dim``; always stable (equal values keep their order), NaN above every number."""
    x = at_least_1d(self)
    d = normalize_dim(dim, x.dims)
    return like(self, select(x, d, sort_indices(x, d, descending), True))


def argsort(self: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
    """The int64 indices of :func:`sort`."""
    return self.sort(dim, descending, stable=stable).indices


def topk(self: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> ValuesIndices:  # noqa: A002
    """(values, indices) of the k largest (smallest if not ``largest``) along ``dim``, in sorted order (NaN is largest)."""
    x = at_least_1d(self)
    d = normalize_dim(dim, x.dims)
    if not 0 <= k <= x.shape[d]:
        raise IndexOutOfRangeError(f"topk(): k={k} is out of range for dim {dim} of size {x.shape[d]} (shape {self.shape})")
    first_k = (slice(None),) * d + (slice(0, k if self.dims else 1),)  # a 0-d tensor is its own topk, as in PyTorch
    return like(self, select(x, d, sort_indices(x, d, largest)[first_k].contiguous(), True))


def median(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """Lower median (element (n-1)//2 of the sorted slice; NaN if the slice holds one, with the first NaN's index).
    ``median()`` is a 0-d value (nan when empty); ``median(dim, keepdim)`` is (values, indices)."""
    return _median(self, dim, keepdim, "median")


def nanmedian(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """Lower median of the non-NaN elements (NaN, with the middle index, where all are NaN); otherwise as :func:`median`."""
    return _median(self, dim, keepdim, "nanmedian")


def _median(self: Tensor, dim: int | None, keepdim: bool, name: str) -> Any:
    if dim is None:
        if self.numel() == 0:
            return self._lift(math.nan, dtypes.float_result(self.dtype)).view(())
        return _median_along(flat(self), 0, False, name).values
    x = at_least_1d(self)
    d = normalize_dim(dim, x.dims)
    check_nonempty(x, [d], name)
    return like(self, _median_along(x, d, keepdim or self.dims == 0, name))


def _median_along(x: Tensor, dim: int, keepdim: bool, name: str) -> ValuesIndices:
    """The sorted slice's element at the median rank (NaNs sort last): (n-1)//2 of all n, the first NaN if any
    (median), or (kept-1)//2 of the kept non-NaN ones, the middle of all n when none is kept (nanmedian)."""
    n = x.shape[dim]
    nans = x._zip("ne", x, dtype=dtypes.int64)._reduce("sum", dim)
    if name == "median":
        rank = F.Where.apply(nans > 0, n - nans, x._lift((n - 1) // 2, dtypes.int64))
    else:
        kept = n - nans
        rank = (F.Where.apply(kept == 0, kept._lift(n, dtypes.int64), kept) - 1) // 2
    return select(x, dim, gather_raw(sort_indices(x, dim, False), dim, rank), keepdim)


class OrderMethods:
    """Scan and sorting methods of Tensor."""

    cumsum = cumsum
    cumprod = cumprod
    diff = diff
    sort = sort
    argsort = argsort
    topk = topk
    median = median
    nanmedian = nanmedian


__all__ = ["cumsum", "cumprod", "diff", "sort", "argsort", "topk", "median", "nanmedian"]
