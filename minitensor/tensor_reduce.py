"""Reductions of Tensor (the ``ReduceMethods`` mixin) and the matching ``mt.`` functions; scans and sorting are in
:mod:`minitensor.tensor_order`.

Names, signatures, defaults and result dtypes follow PyTorch. ``dim`` is an int, a tuple of ints, or None
(every dim; ``()`` also means every dim, as in PyTorch); ``keepdim`` keeps reduced dims as size 1.
Everything runs on the backend kernels (reduce, map, zip, where, gather, scan, sort); the host only
builds small index vectors (0..n-1 along one dim).
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context, no_grad
from .errors import DTypeError, EmptyReductionError, ShapeError
from .tensor_data import normalize_dim

if TYPE_CHECKING:
    from .tensor import Tensor

Dim = int | Sequence[int] | None


class ValuesIndices(NamedTuple):
    """(values, indices), as ``torch.return_types.max/min/sort/topk/median``."""

    values: Tensor
    indices: Tensor


# --- helpers: dims, index bookkeeping and raw kernel calls (no history) ---


def reduced_dims(x: Tensor, dim: Dim) -> list[int]:
    """The sorted, non-negative dims that ``dim`` names (all of them for None or ``()``)."""
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return list(range(x.dims))
    dims = [dim] if isinstance(dim, int) else list(dim)
    found = [normalize_dim(d, builtins.max(x.dims, 1)) for d in dims]
    if len(set(found)) != len(found):
        raise ShapeError(f"dim {dim} names a dim more than once (shape {x.shape})")
    return sorted(found)


def drop_dims(x: Tensor, dims: Sequence[int], keepdim: bool) -> Tensor:
    """``x`` (a keepdim result) with ``dims`` removed unless ``keepdim``."""
    if keepdim or x.dims == 0:
        return x
    return x.view(*[s for i, s in enumerate(x.shape) if i not in dims])


def reduce_with(x: Tensor, fn: type[F.TensorFunction], dim: Dim, keepdim: bool) -> Tensor:
    """Apply the keepdim reduction Function ``fn`` over each dim of ``dim``, then drop them unless ``keepdim``."""
    if x.dims == 0:
        reduced_dims(x, dim)  # validates dim
        return fn.apply(x.view(1), 0).view(())
    dims = reduced_dims(x, dim)
    if len(dims) == x.dims > 1 and not keepdim:
        # Full reduction: one pass over a flat copy is cheaper than one pass per dim.
        return fn.apply(flat(x), 0).view(())
    out = x
    for d in dims:
        out = fn.apply(out, d)
    return drop_dims(out, dims, keepdim)


def count(x: Tensor, dims: Sequence[int]) -> int:
    """Number of elements each reduction over ``dims`` combines."""
    return math.prod(x.shape[d] for d in dims) if x.dims else 1


def check_nonempty(x: Tensor, dims: Sequence[int], name: str) -> None:
    """Max-like reductions have no identity: raise for a reduced dim of size 0."""
    for d in dims:
        if x.dims and x.shape[d] == 0:
            raise EmptyReductionError(f"{name}(): cannot reduce dim {d} of size 0 (shape {x.shape}): it has no identity")


def need_float(x: Tensor, name: str) -> None:
    if x.dtype.kind != "f":
        raise DTypeError(f"{name}() needs a float tensor, got {x.dtype} (shape {x.shape}); pass dtype= or call .float() first")


def int64_if_integral(x: Tensor, dtype: Any) -> Tensor:
    """``x`` cast to ``dtype``, or to int64 when it is integer or bool (PyTorch's sum/prod/cumsum/cumprod rule)."""
    if dtype is not None:
        return x.cast(dtype)
    return x.cast(dtypes.int64) if x.dtype.kind in "iub" else x


def flat(x: Tensor) -> Tensor:
    """All elements as one dim (a 0-d tensor gives one element)."""
    return x.contiguous().view(x.numel())


def at_least_1d(x: Tensor) -> Tensor:
    """A 0-d tensor as one element along dim 0 (PyTorch lets dim 0 and -1 name a 0-d tensor's single element)."""
    return x.view(1) if x.dims == 0 else x


def like(x: Tensor, result: ValuesIndices) -> ValuesIndices:
    """``result`` (computed on ``at_least_1d(x)`` with keepdim) back as 0-d tensors when ``x`` is 0-d."""
    return ValuesIndices(result.values.view(()), result.indices.view(())) if x.dims == 0 else result


def positions(x: Tensor, dim: int, reverse: bool = False) -> Tensor:
    """0..n-1 (n-1..0 if ``reverse``) along ``dim``: int64 of shape (1, .., n, .., 1), built on the host."""
    n = x.shape[dim]
    shape = [1] * x.dims
    shape[dim] = n
    steps = np.arange(n - 1, -1, -1) if reverse else np.arange(n)
    return x._lift(steps.reshape(shape), dtypes.int64)


def select(x: Tensor, dim: int, index: Tensor, keepdim: bool) -> ValuesIndices:
    """(x at ``index`` along ``dim``, index); the values come from Gather so gradients reach the chosen elements."""
    values = F.Gather.apply(x, dim, index)
    return ValuesIndices(drop_dims(values, [dim], keepdim), drop_dims(index, [dim], keepdim))


def arg_extreme(x: Tensor, dim: int, op: str) -> Tensor:
    """First index along ``dim`` of the max (``op="max"``) or min, a NaN counting as both (keepdim, int64)."""
    best = x._reduce(op, dim)  # the max/min reduce ops propagate NaN
    hit = x._zip("eq", best, dtype=dtypes.bool_)._zip("logical_or", x._zip("ne", x, dtype=dtypes.bool_))
    candidate = F.Where.apply(hit, positions(x, dim), x._lift(x.shape[dim], dtypes.int64))
    return candidate._reduce("min", dim)


# --- Functions ---


class Min(F.Max):
    """min along ``dim`` (keepdim); the gradient is shared evenly among tied minima."""

    op = "min"


class Prod(F.TensorFunction):
    """prod along ``dim`` (keepdim); d/da_i = prod of the others, exact with zeros: out / a_i where a_i != 0,
    else (prod of the nonzero others if a_i is the only zero, else 0)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, dim: int) -> Tensor:
        out = a._reduce("prod", dim)
        ctx.save_for_backward(a, out, dim)
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> Tensor:
        a, out, dim = ctx.saved_values
        zero = a == 0.0
        one = a._lift(1.0)
        zeros = zero.cast(dtypes.int64)._reduce("sum", dim)
        nonzero_prod = Prod.apply(F.Where.apply(zero, one, a), dim)
        at_zero = F.Where.apply(zeros == 1, nonzero_prod, a._lift(0.0))
        return d * F.Where.apply(zero, at_zero, out / F.Where.apply(zero, one, a))


class PNorm(F.TensorFunction):
    """(sum |a|^p)^(1/p) over ``dims`` (keepdim) for finite p != 0; d/da = sign(a) (|a| / out)^(p-1), and 0 where a = 0
    or out = 0 (as PyTorch: a zero norm, also one that underflowed, has a zero gradient)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, p: float, dims: tuple[int, ...]) -> Tensor:
        with no_grad():
            s = a.abs()
            if p == 2:
                out = (s * s).sum(dims, keepdim=True).sqrt()
            elif p == 1:
                out = s.sum(dims, keepdim=True)
            else:
                out = (s**p).sum(dims, keepdim=True) ** (1.0 / p)
        ctx.save_for_backward(a, out, p)
        return out

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor, None, None]:
        a, out, p = ctx.saved_values
        slope = a._map("sign") * (a.abs() / out) ** (p - 1.0)
        flat_part = (a == 0.0)._zip("logical_or", out == 0.0)
        return d * F.Where.apply(flat_part, a._lift(0.0), slope), None, None


# --- sums and products ---


def sum(self: Tensor, dim: Dim = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A001
    """Sum over ``dim`` (all dims when None, giving a 0-d tensor); an empty sum is 0; integers and bools give int64."""
    return reduce_with(int64_if_integral(self, dtype), F.Sum, dim, keepdim)


def prod(self: Tensor, dim: Dim = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Product over ``dim``; an empty product is 1; integers and bools give int64; exact gradients with zeros."""
    return reduce_with(int64_if_integral(self, dtype), Prod, dim, keepdim)


def mean(self: Tensor, dim: Dim = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """sum / count over ``dim`` (float tensors only, as in PyTorch); the mean of nothing is nan."""
    x = self if dtype is None else self.cast(dtype)
    need_float(x, "mean")
    return x.sum(dim, keepdim) / float(count(x, reduced_dims(x, dim)))


def var(self: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *, correction: float | None = None) -> Tensor:
    """sum((x - mean)^2) / max(0, N - correction) over ``dim`` (two passes); correction=1 unless
    ``unbiased=False`` or ``correction=`` says otherwise. ``x.var(False)`` is ``unbiased=False``, as in PyTorch."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError("var()/std() take unbiased= or correction=, not both")
    c = correction if correction is not None else (0 if unbiased is False else 1)
    need_float(self, "var")
    dims = reduced_dims(self, dim)
    deviation = self - self.mean(dims, keepdim=True)
    return (deviation * deviation).sum(dims, keepdim) / float(builtins.max(0, count(self, dims) - c))


def std(self: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False, *, correction: float | None = None) -> Tensor:
    """sqrt(var) with var's arguments."""
    need_float(self, "std")
    return self.var(dim, unbiased, keepdim, correction=correction).sqrt()


def norm(self: Tensor, p: Any = "fro", dim: Dim = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    """Vector p-norm over ``dim``: (sum |x|^p)^(1/p); p=inf: max |x|, -inf: min |x|, 0: count of nonzeros, 'fro': p=2."""
    x = self if dtype is None else self.cast(dtype)
    need_float(x, "norm")
    if isinstance(p, str):
        if p != "fro":
            raise ValueError(f"norm(): p={p!r} is not supported; use a number, inf, -inf or 'fro'")
        p = 2.0
    if p == math.inf:
        return x.abs().amax(dim, keepdim)
    if p == -math.inf:
        return x.abs().amin(dim, keepdim)
    if p == 0:
        return (x != 0).sum(dim, keepdim).cast(x.dtype)
    if x.dims == 0:
        return PNorm.apply(x.view(1), float(p), (0,)).view(())
    dims = reduced_dims(x, dim)
    return drop_dims(PNorm.apply(x, float(p), tuple(dims)), dims, keepdim)


def logsumexp(self: Tensor, dim: Dim, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over ``dim``, computed as m + log(sum(exp(x - m))) with m the (finite) max; an all -inf
    or empty slice gives -inf. Integer and bool tensors give the default float dtype, as in PyTorch."""
    x = self if self.dtype.kind == "f" else self.cast(dtypes.get_default_dtype())
    if x.dims == 0:
        return logsumexp(x.view(1), dim, keepdim).view(())
    dims = reduced_dims(x, dim)
    if x.numel() == 0:
        shift = x._lift(0.0)
    else:
        m = x.detach().amax(dims, keepdim=True)
        shift = F.Where.apply(m._map("isinf", dtype=dtypes.bool_), x._lift(0.0), m)
    return drop_dims((x - shift).exp().sum(dims, keepdim=True).log() + shift, dims, keepdim)


# --- extremes ---


def amax(self: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:
    """Largest value over ``dim`` (NaN if any is NaN); tied maxima share the gradient evenly."""
    check_nonempty(self, reduced_dims(self, dim), "amax")
    return reduce_with(self, F.Max, dim, keepdim)


def amin(self: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:
    """Smallest value over ``dim`` (NaN if any is NaN); tied minima share the gradient evenly."""
    check_nonempty(self, reduced_dims(self, dim), "amin")
    return reduce_with(self, Min, dim, keepdim)


def extreme(x: Tensor, dim: Any, keepdim: bool, op: str) -> Any:
    """max/min in PyTorch's three forms (see :func:`max`)."""
    if isinstance(dim, ReduceMethods):  # a Tensor (every Tensor has these methods): the element-wise form
        return x.maximum(dim) if op == "max" else x.minimum(dim)
    if dim is None:
        if x.numel() == 0:
            raise EmptyReductionError(f"{op}() of an empty tensor (shape {x.shape}): give a dim, or check the size")
        return x.amax() if op == "max" else x.amin()
    if not isinstance(dim, int):
        raise TypeError(f"{op}() takes one int dim, got {dim!r}; use a{op}() to reduce several dims")
    source = at_least_1d(x)
    d = normalize_dim(dim, source.dims)
    check_nonempty(source, [d], op)
    return like(x, select(source, d, arg_extreme(source, d, op), keepdim or x.dims == 0))


def max(self: Tensor, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001
    """``max()``: the largest value (0-d; gradient shared among ties); ``max(dim, keepdim)``: (values, indices) with the
    first index of each max (NaN wins; gradient to that index only); ``max(other)``: element-wise maximum."""
    return extreme(self, dim, keepdim, "max")


def min(self: Tensor, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001
    """``min()``, ``min(dim, keepdim)`` -> (values, indices), ``min(other)``: as :func:`max`, for the smallest."""
    return extreme(self, dim, keepdim, "min")


def arg(x: Tensor, dim: int | None, keepdim: bool, op: str) -> Tensor:
    """argmax/argmin (see :func:`argmax`)."""
    name = f"arg{op}"
    if x.dtype.kind == "b":
        raise DTypeError(f"{name}() does not support bool tensors (shape {x.shape}); cast with .long() first")
    if dim is None:
        if x.numel() == 0:
            raise EmptyReductionError(f"{name}() of an empty tensor (shape {x.shape}): give a dim, or check the size")
        return arg_extreme(flat(x), 0, op).view(*([1] * x.dims if keepdim else []))
    source = at_least_1d(x)
    d = normalize_dim(dim, source.dims)
    check_nonempty(source, [d], name)
    index = arg_extreme(source, d, op)
    return index.view(()) if x.dims == 0 else drop_dims(index, [d], keepdim)


def argmax(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """int64 index of the first max along ``dim`` (of the flattened tensor when None); a NaN counts as the max."""
    return arg(self, dim, keepdim, "max")


def argmin(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """int64 index of the first min along ``dim`` (of the flattened tensor when None); a NaN counts as the min."""
    return arg(self, dim, keepdim, "min")


# --- logic ---


def all(self: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where every element over ``dim`` is nonzero (True for an empty tensor)."""
    return (self == 0).any(dim, keepdim)._map("logical_not")


def any(self: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """True where some element over ``dim`` is nonzero (False for an empty tensor); ``dim=()`` reduces nothing."""
    nonzero = self != 0
    if dim == ():
        return nonzero
    return reduce_with(nonzero.cast(dtypes.int64), F.Sum, dim, keepdim).cast(dtypes.bool_)


def count_nonzero(self: Tensor, dim: Dim = None) -> Tensor:
    """int64 number of nonzero elements over ``dim``."""
    return (self != 0).sum(dim)


class ReduceMethods:
    """Reduction methods of Tensor."""

    sum = sum
    prod = prod
    mean = mean
    var = var
    std = std
    norm = norm
    logsumexp = logsumexp
    amax = amax
    amin = amin
    max = max
    min = min
    argmax = argmax
    argmin = argmin
    all = all
    any = any
    count_nonzero = count_nonzero


__all__ = [
    "sum", "prod", "mean", "var", "std", "norm", "logsumexp", "amax", "amin", "max", "min", "argmax", "argmin",
    "all", "any", "count_nonzero",
]
