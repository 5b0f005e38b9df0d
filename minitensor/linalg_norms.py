"""Norms and the small ``torch.linalg`` products and views: ``linalg.vector_norm matrix_norm norm vecdot cross
diagonal vander``.

Each is a composition of existing differentiable ops (the p-norms of :mod:`minitensor.tensor_reduce`, abs, sum,
amax/amin, ``mt.cross``, ``diagonal``, ``mt.vander``), so gradients come from autodiff and every backend runs them.
Names, signatures, defaults, shape rules, result dtypes and error messages follow PyTorch. The matrix norms 'nuc',
2 and -2 take :func:`minitensor.linalg_svd.linalg_svdvals`. Differences: ``vecdot`` and ``cross`` promote
operands of different dtypes instead of rejecting them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from . import dtypes
from .autodiff import is_grad_enabled
from .errors import DTypeError, EmptyReductionError, ShapeError
from .linalg_solve import check_float, is_tensor
from .linalg_svd import linalg_svdvals
from .tensor_build import vander as _vander
from .tensor_compare import where
from .tensor_data import normalize_dim
from .tensor_inplace import _torch_name
from .tensor_products import cross as _cross
from .tensor_reduce import drop_dims, reduced_dims
from .tensor_reduce import norm as _pnorm

if TYPE_CHECKING:
    from .tensor import Tensor

Dim = int | Sequence[int] | None


def _check_tensor(name: str, arg: str, position: int, x: Any) -> None:
    """PyTorch's TypeError for a non-tensor argument (the ``mt.linalg`` wrapper checks only the first)."""
    if not is_tensor(x):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not {type(x).__name__}")


def _norm_dtype(name: str, x: Tensor, dtype: Any) -> Any:
    """``dtype`` checked as PyTorch's norms check it: a float dtype that x's dtype widens to (or None)."""
    check_float(name, x)
    if dtype is None:
        return None
    target = dtypes.as_dtype(dtype)
    if target.kind != "f":
        raise DTypeError(f"{name}: dtype should be floating point or complex, but got {_torch_name(target)}")
    if dtypes.promote(x.dtype, target) != target:
        raise DTypeError(f"{name}: the dtype of the input ({_torch_name(x.dtype)}) should be convertible without narrowing "
                         f"to the specified dtype ({_torch_name(target)})")
    return target


def _order(name: str, ord: Any) -> float:  # noqa: A002 - PyTorch's names
    """A vector norm's order as a float: TypeError for a string, ValueError for a complex number."""
    if isinstance(ord, complex):
        raise ValueError(f"{name}: Expected a non-complex scalar as the order of norm, got {ord!r}")
    if not isinstance(ord, (int, float)) and not hasattr(ord, "__float__"):
        raise TypeError(f"{name}(): argument 'ord' must be Number, not {type(ord).__name__}")
    return float(ord)


def vector_norm(x: Tensor, ord: float = 2, dim: Dim = None, keepdim: bool = False, *,  # noqa: A002
                dtype: Any = None) -> Tensor:
    """The vector ord-norm of x over ``dim`` (all dims, flattened, when None or ``()``): (sum |x|^ord)^(1/ord); inf:
    max |x|, -inf: min |x|, 0: the count of nonzeros (gradient zero). Float input; ``dtype``: computed and returned
    in that (wider) float dtype. An inf or negative order over an empty dim has no identity: EmptyReductionError."""
    name = "linalg.vector_norm"
    target = _norm_dtype(name, x, dtype)
    p = _order(name, ord)
    dims = reduced_dims(x, dim)
    if p < 0 or p == math.inf:
        every = dim is None or (not isinstance(dim, int) and len(dim) == 0)
        empty = [d for d in dims if x.dims and x.shape[d] == 0]
        if every and x.numel() == 0 or empty:
            where_ = "on an empty tensor" if every else f"on the dimension {empty[0]}"
            raise EmptyReductionError(f"{name} cannot compute the {ord} norm {where_} because "
                                      f"{'the' if every else 'this dimension is empty and the'} operation does not have "
                                      f"an identity (shape {x.shape})")
    out = _pnorm(x, p, dims if x.dims else dim, keepdim, target)
    if p == 0 and x.requires_grad and is_grad_enabled():  # connected to x with a zero gradient, as PyTorch's
        source = x if target is None else x.cast(target)
        out = where(out._lift(False, dtypes.bool_), _pnorm(source, 1.0, dims if x.dims else dim, keepdim), out)
    return out


def _two_dims(name: str, A: Tensor, dim: Any) -> tuple[int, int]:  # noqa: N803 - PyTorch's names
    """The two distinct matrix dims that ``dim`` names (non-negative)."""
    if isinstance(dim, int) or not isinstance(dim, Sequence):
        raise TypeError(f"{name}(): argument 'dim' must be tuple of ints, not {type(dim).__name__}")
    if len(dim) != 2:
        raise ShapeError(f"{name}: dim must be a 2-tuple. Got {' '.join(map(str, dim))} (shape {A.shape})")
    d0, d1 = (normalize_dim(d, A.dims) for d in dim)
    if d0 == d1:
        raise ShapeError(f"{name}: dims must be different. Got ({d0}, {d1}) (shape {A.shape})")
    return d0, d1


def matrix_norm(A: Tensor, ord: Any = "fro", dim: Sequence[int] = (-2, -1), keepdim: bool = False, *,  # noqa: A002, N803
                dtype: Any = None) -> Tensor:
    """The matrix ord-norm of A over the two dims ``dim``: 'fro' (sqrt of the sum of squares), 1 / -1 (max / min
    column abs-sum), inf / -inf (max / min row abs-sum), 'nuc' (sum of the singular values), 2 / -2 (the largest / smallest).
    Float input; ``dtype`` as in :func:`vector_norm`."""
    name = "linalg.matrix_norm"
    target = _norm_dtype(name, A, dtype)
    if A.dims < 2:
        raise ShapeError(f"{name}: The input tensor A must have at least 2 dimensions. (shape {A.shape})")
    d0, d1 = _two_dims(name, A, dim)
    if ord in ("nuc", 2, -2) and not isinstance(ord, bool):  # from the singular values of the (d0, d1) matrices
        x = A if target is None else A.cast(target)
        values = linalg_svdvals(x.movedim((d0, d1), (-2, -1)))
        out = values.sum(-1) if ord == "nuc" else values.amax(-1) if ord == 2 else values.amin(-1)
        for d in sorted((d0, d1)) if keepdim else ():
            out = out.unsqueeze(d)
        return out
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim, dtype=target)
    if isinstance(ord, str) or ord not in (1, -1, math.inf, -math.inf):
        raise ValueError(f"{name}: Order {ord} not supported.")
    x = A if target is None else A.cast(target)
    if abs(ord) == math.inf:  # the inf-norm is the 1-norm of the transpose
        d0, d1 = d1, d0
    sums = x.abs().sum(d0, keepdim=True)
    if ord < 0:
        out = sums.amin(d1, keepdim=True)  # EmptyReductionError over an empty dim, as PyTorch's amin
    else:  # PyTorch gives 0 for the max over an empty dim
        out = sums.amax(d1, keepdim=True) if sums.shape[d1] else sums.sum(d1, keepdim=True)
    return drop_dims(out, sorted((d0, d1)), keepdim)


def norm(A: Tensor, ord: Any = None, dim: Dim = None, keepdim: bool = False, *,  # noqa: A002, N803
         dtype: Any = None) -> Tensor:
    """PyTorch's dispatch: a matrix norm when ``ord`` is a string, or given with two dims (or with dim None and 2-D A);
    else a vector norm (ord None: the 2-norm over ``dim``, all of A flattened when None)."""
    name = "linalg.norm"
    dims = None if dim is None else [dim] if isinstance(dim, int) else list(dim)
    if dims is not None and len(dims) not in (1, 2):
        raise ShapeError(f"{name}: If dim is specified, it must be of length 1 or 2. Got {dims} (shape {A.shape})")
    if dims is None and ord is not None and A.dims not in (1, 2):
        raise ShapeError(f"{name}: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dims}D. "
                         f"(shape {A.shape})")
    if isinstance(ord, str) or (ord is not None and len(dims if dims is not None else A.shape) == 2):
        return matrix_norm(A, ord, tuple(dims) if dims is not None else (0, 1), keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """sum(x * y) over ``dim`` of the broadcast operands (float; different dtypes promoted)."""
    _check_tensor("linalg.vecdot", "y", 2, y)
    for t in (x, y):
        check_float("linalg.vecdot", t)
    return (x * y).sum(dim)


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:  # noqa: A002
    """The cross product of 3-vectors along ``dim`` (default -1, unlike ``mt.cross``); both need the same number of
    dims, the others broadcast; integer inputs stay integer."""
    name = "linalg.cross"
    _check_tensor(name, "other", 2, other)
    if input.dims != other.dims:
        raise ShapeError(f"{name}: inputs must have the same number of dimensions. (shapes {input.shape} and {other.shape})")
    d = normalize_dim(dim, input.dims)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise ShapeError(f"{name}: inputs dimension {dim} must have length 3. Got {input.shape[d]} and {other.shape[d]} "
                         f"(shapes {input.shape} and {other.shape})")
    return _cross(input, other, d)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: N803
    """The diagonals of A over ``dim1`` and ``dim2`` (a view, as ``A.diagonal``; default: of each matrix)."""
    return A.diagonal(offset, dim1, dim2)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:  # noqa: N803
    """The Vandermonde matrices of x (*, n): (*, n, N) with column j = x ** j (increasing powers, unlike
    ``mt.vander``); N defaults to n and must be > 1 (a 0-d x counts as one element); integers give int64."""
    if x.dtype.kind == "b":
        raise DTypeError(f"linalg.vander supports floating point, complex, and integer tensors, but got Bool (shape {x.shape})")
    rows = x.view(1) if x.dims == 0 else x
    n = rows.shape[-1] if N is None else N
    if n <= 1:
        raise ValueError(f"linalg.vander: N must be greater than 1, got N={n} (x of shape {x.shape})")
    return _vander(rows.reshape(-1), n, increasing=True).view(*rows.shape, n)


LINALG: dict[str, Callable[..., Any]] = {
    "vector_norm": vector_norm, "matrix_norm": matrix_norm, "norm": norm, "vecdot": vecdot, "cross": cross,
    "diagonal": diagonal, "vander": vander,
}
"""The ``mt.linalg`` functions of this module, by their PyTorch names."""

__all__: list[str] = []
