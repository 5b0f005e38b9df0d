"""Covariance and building tensors from others (the ``BuildMethods`` mixin) and the matching ``mt.`` functions: cov,
corrcoef, atleast_1d, atleast_2d, atleast_3d, dstack, column_stack, diag_embed, diagflat, vander.

Each is a composition of existing ops (reductions, matmul, views, ``cat``, ``where``, ``cumprod``), so gradients come
from autodiff and every backend runs them. Names, signatures, defaults and result dtypes follow PyTorch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .errors import DTypeError, ShapeError
from .tensor_data import normalize_dim
from .tensor_join import cat, diag

if TYPE_CHECKING:
    from .tensor import Tensor


def _is_tensor(x: Any) -> bool:
    """Every Tensor is a BuildMethods (tensor.py imports this module, so Tensor itself is not importable here)."""
    return isinstance(x, BuildMethods)


# --- covariance ---


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,  # noqa: A002 - PyTorch's names
        aweights: Tensor | None = None) -> Tensor:
    """Covariance matrix of the variables in the rows of ``input`` (observations in its columns; a 1-D input is one
    variable and gives a 0-d result), divided by (total weight - ``correction``), clamped at 0 (inf/nan then),
    with optional integer frequency ``fweights`` and float ``aweights`` per observation, as ``torch.cov``."""
    if input.dims > 2:
        raise ShapeError(f"cov(): expected input to have two or fewer dimensions but got an input with {input.dims} dimensions "
                         f"(shape {input.shape})")
    x = input.reshape(1, -1) if input.dims < 2 else input
    if x.dtype.kind != "f":
        x = x.cast(dtypes.float_result(x.dtype))
    n = x.shape[1]
    w: Tensor | None = None
    for name, weight, kinds in (("fweights", fweights, "iu"), ("aweights", aweights, "f")):
        if weight is None:
            continue
        if not _is_tensor(weight):
            raise TypeError(f"cov(): argument '{name}' must be Tensor, not {type(weight).__name__}")
        input._check_backend(weight)
        if weight.dims > 1 or weight.numel() != n:
            raise ShapeError(f"cov(): expected {name} to have one dimension and {n} elements (one per observation), "
                             f"got shape {weight.shape}")
        if weight.dtype.kind not in kinds:
            raise DTypeError(f"cov(): expected {name} to have {'integral' if kinds == 'iu' else 'floating point'} dtype, "
                             f"got {weight.dtype}")
        if n and float(weight.amin().item()) < 0:
            raise ValueError(f"cov(): {name} cannot be negative, got {float(weight.amin().item())}")
        weight = weight.reshape(n).cast(x.dtype)
        w = weight if w is None else w * weight
    if w is None:
        mean = x.mean(1, keepdim=True)
        norm = x._lift(float(max(n - correction, 0)))
    else:
        total = w.sum()
        mean = (x * w).sum(1, keepdim=True) / total
        if aweights is not None and correction != 0:
            norm = total - correction * (w * aweights.reshape(n).cast(x.dtype)).sum() / total
        else:
            norm = total - correction
        norm = norm.clamp(min=0)
    centred = x - mean
    c = (centred @ (centred if w is None else centred * w).t()) / norm
    return c.reshape(()) if input.dims < 2 else c


def corrcoef(input: Tensor) -> Tensor:  # noqa: A002
    """Pearson correlation coefficients of the rows of ``input``: cov divided by the outer product of the standard
    deviations, clamped to [-1, 1], as ``torch.corrcoef``."""
    c = cov(input)
    if c.dims == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    return c.clamp(-1, 1)


# --- building ---


def _tensor_args(tensors: tuple[Any, ...], name: str) -> tuple[list[Tensor], bool]:
    """The tensors of ``f(t)``, ``f(t1, t2, ...)`` or ``f([t1, t2])``, and whether a single tensor was given."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        items, single = list(tensors[0]), False
    else:
        items, single = list(tensors), len(tensors) == 1
    for i, t in enumerate(items):
        if not _is_tensor(t):
            raise TypeError(f"{name}(): expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return items, single


def _atleast(tensors: tuple[Any, ...], name: str, shape: Any) -> Any:
    items, single = _tensor_args(tensors, name)
    out = [shape(t) for t in items]
    return out[0] if single else tuple(out)


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor as a view with at least 1 dim (a 0-d tensor gets shape (1,)); a tuple for several or a sequence."""
    return _atleast(tensors, "atleast_1d", lambda t: t.reshape(1) if t.dims == 0 else t)


def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least 2 dims: 0-d as (1, 1), 1-D (n) as (1, n)."""
    return _atleast(tensors, "atleast_2d", lambda t: t.reshape(1, 1) if t.dims == 0 else t.unsqueeze(0) if t.dims == 1 else t)


def _at_least_3d(t: Tensor) -> Tensor:
    if t.dims == 0:
        return t.reshape(1, 1, 1)
    if t.dims == 1:
        return t.reshape(1, t.shape[0], 1)
    return t.unsqueeze(-1) if t.dims == 2 else t


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least 3 dims: 0-d as (1, 1, 1), 1-D (n) as (1, n, 1), 2-D (m, n) as (m, n, 1)."""
    return _atleast(tensors, "atleast_3d", _at_least_3d)


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """The tensors (made at least 3-D) joined along dim 2 (depth), as ``torch.dstack``."""
    items, _ = _tensor_args((list(tensors),), "dstack")
    return cat([_at_least_3d(t) for t in items], 2)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """The tensors joined as columns: 0-d and 1-D ones (n) as (n, 1) columns, others as they are, along dim 1."""
    items, _ = _tensor_args((list(tensors),), "column_stack")
    return cat([t.reshape(t.numel(), 1) if t.dims <= 1 else t for t in items], 1)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: A002
    """A tensor whose diagonals (``offset`` above the main one) in the planes of ``dim1`` and ``dim2`` (dims of the
    result, which has one more dim) hold the last dim of ``input``; zeros elsewhere."""
    if input.dims == 0:
        raise ShapeError("diag_embed(): input must have at least 1 dim, got a 0-d tensor")
    dims = input.dims + 1
    d1, d2 = normalize_dim(dim1, dims), normalize_dim(dim2, dims)
    if d1 == d2:
        raise ShapeError(f"diag_embed(): diagonal dimensions cannot be identical {dim1}, {dim2} (result of {dims} dims)")
    x = input
    n, k = x.shape[-1], abs(offset)
    m = n + k
    if k:
        x = cat([x, x._zeros((*x.shape[:-1], k))], -1)
    rows = np.arange(m).reshape(m, 1)
    mask = x._lift(np.arange(m).reshape(1, m) - rows == offset, dtypes.bool_)
    along = x.unsqueeze(-1) if offset >= 0 else x.unsqueeze(-2)  # the value of (i, j) is x[i] above, x[j] below
    out = F.Where.apply(mask, along, x._lift(0, x.dtype))
    return out.movedim((-2, -1), (d1, d2))


def diagflat(input: Tensor, offset: int = 0) -> Tensor:  # noqa: A002
    """A square 2-D tensor with the flattened ``input`` (n elements, a 0-d input as one) on diagonal ``offset`` (above
    the main one when > 0, below when < 0) and zeros elsewhere: shape (n + |offset|, n + |offset|), input's dtype."""
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)):
        raise TypeError(f"diagflat(): argument 'offset' (position 2) must be int, not {type(offset).__name__}")
    return diag(input.reshape(-1), int(offset))


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803 - PyTorch's name
    """The Vandermonde matrix of 1-D ``x``: column j is x ** (N - 1 - j) (x ** j when ``increasing``); ``N`` columns
    (default len(x)); integer and bool inputs give int64."""
    if not _is_tensor(x):
        raise TypeError(f"vander(): argument 'x' (position 1) must be Tensor, not {type(x).__name__}")
    if x.dims != 1:
        raise ShapeError(f"vander(): x must be a one-dimensional tensor, got shape {x.shape}")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise ValueError(f"vander(): N must be non-negative, got {n}")
    if x.dtype.kind in "iub":
        x = x.cast(dtypes.int64)
    if n == 0:
        return x._zeros((x.shape[0], 0))
    columns = [x._lift(np.ones((x.shape[0], 1)), x.dtype)]
    if n > 1:
        columns.append(x.unsqueeze(1).expand(x.shape[0], n - 1))
    out = cat(columns, 1).cumprod(1)
    return out if increasing else out.flip(1)


class BuildMethods:
    """Covariance and diagonal embedding methods of Tensor."""

    def cov(self, *, correction: int = 1, fweights: Tensor | None = None, aweights: Tensor | None = None) -> Tensor:
        return cov(self, correction=correction, fweights=fweights, aweights=aweights)  # type: ignore[arg-type]

    def corrcoef(self) -> Tensor:
        return corrcoef(self)  # type: ignore[arg-type]

    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
        return diag_embed(self, offset, dim1, dim2)  # type: ignore[arg-type]

    def diagflat(self, offset: int = 0) -> Tensor:
        return diagflat(self, offset)  # type: ignore[arg-type]


__all__ = ["cov", "corrcoef", "atleast_1d", "atleast_2d", "atleast_3d", "dstack", "column_stack", "diag_embed", "diagflat", "vander"]
