"""Matrix and vector products (the ``ProductMethods`` mixin) and the matching ``mt.`` functions: trace, kron, cross,
inner, addmm, addmv, addr, baddbmm, addbmm, block_diag, cartesian_prod, cdist, dist, chain_matmul, matrix_power (and
``mt.linalg.multi_dot``: the matrix-chain order, planned on the host; ``mt.linalg.matrix_power``).

Each is a composition of linalg.py's products (mm, mv, bmm, tensordot: the matmul kernel), broadcast element-wise
ops, index_select, cat and the norms of tensor_reduce.py, so gradients come from autodiff and every backend runs
them. Names, signatures, defaults, shape rules and result dtypes follow PyTorch; as with ``matmul``, operands of
different dtypes are promoted instead of rejected.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from .errors import DTypeError, ShapeError
from .linalg import _numeric, bmm, mm, mv, outer, tensordot
from .linalg_solve import linalg_inv
from .tensor_arith import _integral_value
from .tensor_broadcast import meshgrid
from .tensor_build import _tensor_args
from .tensor_compare import where
from .tensor_data import normalize_dim, shape_broadcast
from .tensor_index import index_select
from .tensor_join import cat, stack
from .tensor_reduce import need_float

if TYPE_CHECKING:
    from .tensor import Tensor


def _check_tensor(name: str, arg: str, position: int, x: Any) -> None:
    """PyTorch's TypeError for a non-tensor argument (the wrapped ``mt.`` forms check only the first)."""
    if not isinstance(x, ProductMethods):  # every Tensor is one
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not {type(x).__name__}")


def trace(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """Sum of the main diagonal of a 2-D tensor (any shape (n, m)); integers give int64, bool is an error."""
    if input.dims != 2:
        raise ShapeError(f"trace: expected a matrix, but got tensor with dim {input.dims} (shape {input.shape})")
    _numeric("trace", input)
    return input.diagonal().sum()


def kron(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Kronecker product: out[i * s + j] = input[i] * other[j] per dim (s: other's size), the shorter shape padded
    with leading 1s; the dtype promoted."""
    _check_tensor("kron", "other", 2, other)
    n = max(input.dims, other.dims)
    sa = (1,) * (n - input.dims) + input.shape
    sb = (1,) * (n - other.dims) + other.shape
    a = input.reshape(*[v for s in sa for v in (s, 1)])
    b = other.reshape(*[v for s in sb for v in (1, s)])
    return (a * b).reshape(*[x * y for x, y in zip(sa, sb)])


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:  # noqa: A002
    """Cross product of 3-vectors along ``dim`` (None: input's first dim of size 3, as ``torch.cross``; note that
    ``torch.linalg.cross`` defaults to -1), the other dims broadcast; both need the same number of dims."""
    _check_tensor("cross", "other", 2, other)
    _numeric("cross", input, other)
    if input.dims != other.dims:
        raise ShapeError(f"cross: inputs must have the same number of dimensions, got shapes {input.shape} and {other.shape}")
    if dim is None:
        if 3 not in input.shape:
            raise ShapeError(f"cross: no dimension of size 3 in input of shape {input.shape}")
        d = input.shape.index(3)
    else:
        d = normalize_dim(dim, input.dims)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise ShapeError(f"cross: inputs dimension {d} must have length 3, got shapes {input.shape} and {other.shape}")
    try:
        shape_broadcast(input.shape, other.shape)
    except ShapeError:
        raise ShapeError(f"cross: shapes {input.shape} and {other.shape} cannot be broadcast together") from None
    next1 = input._lift(np.array([1, 2, 0]), dtypes.int64)
    next2 = input._lift(np.array([2, 0, 1]), dtypes.int64)
    return (index_select(input, d, next1) * index_select(other, d, next2)
            - index_select(input, d, next2) * index_select(other, d, next1))


def inner(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Sum over the last dims of both: shape input.shape[:-1] + other.shape[:-1]; a 0-d operand multiplies."""
    _check_tensor("inner", "other", 2, other)
    _numeric("inner", input, other)
    if input.dims == 0 or other.dims == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise ShapeError(f"inner() the last dimension must match on both input tensors but got shapes {input.shape} "
                         f"and {other.shape}")
    return tensordot(input, other, ([input.dims - 1], [other.dims - 1]))


def _check_fits(name: str, input: Tensor, shape: tuple[int, ...]) -> None:  # noqa: A002
    """ShapeError unless ``input`` broadcasts to the product's ``shape`` (without growing it)."""
    try:
        fits = shape_broadcast(input.shape, shape) == shape
    except ShapeError:
        fits = False
    if not fits:
        raise ShapeError(f"{name}(): input of shape {input.shape} cannot be broadcast to the product's shape {shape}")


def _scaled_sum(name: str, input: Tensor, product: Tensor, beta: Any, alpha: Any, factors: tuple[Tensor, ...]) -> Tensor:
    """beta * input + alpha * product, input broadcast to the product's shape (ignored, NaN too, when beta == 0)."""
    dtype = dtypes.result_type(input, *factors)
    if dtype.kind == "b":
        raise DTypeError(f"\"{name}\" not implemented for 'Bool' (shape {input.shape}); cast with .long() or .float() first")
    for value in (beta, alpha):
        _integral_value(name, value, dtype)
    _check_fits(name, input, product.shape)
    out = product.cast(dtype) if alpha == 1 else product.cast(dtype) * alpha
    if beta == 0:
        return out
    return out + (input if beta == 1 else input * beta)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:  # noqa: A002
    """beta * input + alpha * (mat1 @ mat2) for matrices (n, k), (k, m); input broadcasts to (n, m)."""
    _check_tensor("addmm", "mat1", 2, mat1)
    _check_tensor("addmm", "mat2", 3, mat2)
    return _scaled_sum("addmm", input, mm(mat1, mat2), beta, alpha, (mat1, mat2))


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:  # noqa: A002
    """beta * input + alpha * (mat @ vec) for a matrix (n, m) and a vector (m,); input broadcasts to (n,)."""
    _check_tensor("addmv", "mat", 2, mat)
    _check_tensor("addmv", "vec", 3, vec)
    return _scaled_sum("addmv", input, mv(mat, vec), beta, alpha, (mat, vec))


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:  # noqa: A002
    """beta * input + alpha * outer(vec1, vec2) for vectors (n,) and (m,); input broadcasts to (n, m). When all three
    are bool the result is bool: (beta and input) or (alpha and vec1[i] and vec2[j]), as in PyTorch."""
    _check_tensor("addr", "vec1", 2, vec1)
    _check_tensor("addr", "vec2", 3, vec2)
    for arg, v in (("vec1", vec1), ("vec2", vec2)):
        if v.dims != 1:
            raise ShapeError(f"addr: Expected 1-D argument {arg}, but got {v.dims}-D (shape {v.shape})")
    product = outer(vec1, vec2)
    if dtypes.result_type(input, vec1, vec2).kind != "b":
        return _scaled_sum("addr", input, product, beta, alpha, (vec1, vec2))
    for value in (beta, alpha):
        _integral_value("addr", value, dtypes.int64)  # bool tensors take bool (or integral) beta and alpha
    _check_fits("addr", input, product.shape)
    return (product & bool(alpha)) | (input & bool(beta))


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:  # noqa: A002
    """beta * input + alpha * bmm(batch1, batch2) for (b, n, k), (b, k, m); input broadcasts to (b, n, m)."""
    _check_tensor("baddbmm", "batch1", 2, batch1)
    _check_tensor("baddbmm", "batch2", 3, batch2)
    return _scaled_sum("baddbmm", input, bmm(batch1, batch2), beta, alpha, (batch1, batch2))


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:  # noqa: A002
    """beta * input + alpha * sum_i batch1[i] @ batch2[i] for (b, n, k), (b, k, m); input broadcasts to (n, m). The
    sum over i is folded into one (n, b*k) @ (b*k, m) product; b = 0 or k = 0 gives beta * input (broadcast)."""
    _check_tensor("addbmm", "batch1", 2, batch1)
    _check_tensor("addbmm", "batch2", 3, batch2)
    _numeric("addbmm", batch1, batch2)
    for arg, t in (("batch1", batch1), ("batch2", batch2)):
        if t.dims != 3:
            raise ShapeError(f"addbmm: {arg} must be a 3D tensor, got a {t.dims}-D tensor of shape {t.shape}")
    (b, n, k), (b2, k2, m) = batch1.shape, batch2.shape
    if b != b2:
        raise ShapeError(f"addbmm: batch1 and batch2 must have the same number of batches, got {b} and {b2} "
                         f"(shapes {batch1.shape} and {batch2.shape})")
    if k != k2:
        raise ShapeError(f"addbmm: incompatible matrix sizes for bmm ({n}x{k} and {k2}x{m}; shapes {batch1.shape} and "
                         f"{batch2.shape})")
    product = mm(batch1.permute(1, 0, 2).reshape(n, b * k), batch2.reshape(b * k, m))
    return _scaled_sum("addbmm", input, product, beta, alpha, (batch1, batch2))


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (0-d as (1, 1), 1-d as one row, 2-d) along the diagonal of a zero matrix, in the promoted dtype;
    no tensors give a (1, 0) tensor of the default dtype, as in PyTorch."""
    if not tensors:
        from .creation import zeros  # creation builds on Tensor, which imports this module

        return zeros(1, 0)
    for i, t in enumerate(tensors):
        _check_tensor("block_diag", "tensors", i + 1, t)
        tensors[0]._check_backend(t)
        if t.dims > 2:
            raise ShapeError(f"block_diag: input tensors must have 2 or fewer dimensions, input {i} has shape {t.shape}")
    dtype = dtypes.result_type(*tensors)
    blocks = [t.reshape(1, 1) if t.dims == 0 else t.reshape(1, -1) if t.dims == 1 else t for t in tensors]
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        zero = b._lift(0, dtype)
        rows.append(cat([zero.expand(r, left), b.cast(dtype), zero.expand(r, width - left - c)], 1))
        left += c
    return cat(rows, 0)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element from each 1-D tensor (of one dtype), as rows (N, k) in row-major order; a
    single tensor comes back as it is, as in PyTorch."""
    if not tensors:
        raise ShapeError("cartesian_prod() needs at least one tensor")
    for i, t in enumerate(tensors):
        _check_tensor("cartesian_prod", "tensors", i + 1, t)
        if t.dims != 1:
            raise ShapeError(f"cartesian_prod(): expected 1-D tensors, got shape {t.shape} at position {i}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], 1)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str | None = None) -> Tensor:
    """p-norm distances between the rows of x1 (..., P, M) and x2 (..., R, M): (..., P, R), batch dims broadcast;
    float tensors, p >= 0 (0: count of differing entries, inf: max |difference|). Computed as the norm of the
    broadcast difference for every p (``compute_mode`` is accepted and ignored); a zero distance has gradient 0."""
    _check_tensor("cdist", "x1", 1, x1)
    _check_tensor("cdist", "x2", 2, x2)
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dtype.kind != "f":
            raise DTypeError(f"cdist only supports floating-point dtypes, {name} got: {x.dtype} (shape {x.shape})")
        if x.dims < 2:
            raise ShapeError(f"cdist only supports at least 2D tensors, {name} got: {x.dims}D (shape {x.shape})")
    if x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(f"cdist: X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]} "
                         f"(shapes {x1.shape} and {x2.shape})")
    if not p >= 0:
        raise ValueError(f"cdist only supports non-negative p values, got p={p}")
    try:
        shape_broadcast(x1.shape[:-2], x2.shape[:-2])
    except ShapeError:
        raise ShapeError(f"cdist: batch dims of shapes {x1.shape} and {x2.shape} cannot be broadcast together") from None
    difference = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if x1.shape[-1] == 0:  # no columns: every distance is 0 (amax would have nothing to reduce for p=inf)
        return difference.sum(-1)
    return difference.norm(math.inf if p == math.inf else float(p), dim=-1)


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:  # noqa: A002
    """The p-norm of input - other (broadcast) as a 0-d tensor; float tensors, any p (0, inf and -inf included)."""
    _check_tensor("dist", "other", 2, other)
    need_float(input, "dist")
    need_float(other, "dist")
    return (input - other).norm(float(p))


# --- chained products ---


def _chain(mats: list[Tensor]) -> Tensor:
    """The product of the 2-D ``mats`` (checked to chain) in the order with the fewest scalar multiplications."""
    sizes = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    k = len(mats)
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for span in range(1, k):
        for i in range(k - span):
            j = i + span
            cost[i][j], split[i][j] = min((cost[i][s] + cost[s + 1][j] + sizes[i] * sizes[s + 1] * sizes[j + 1], s)
                                          for s in range(i, j))

    def product(i: int, j: int) -> Tensor:
        return mats[i] if i == j else product(i, split[i][j]) @ product(split[i][j] + 1, j)

    return product(0, k - 1)


def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """The product of two or more tensors in the cheapest order, as ``torch.linalg.multi_dot``: the first may be 1-D
    (a row vector) and the last 1-D (a column vector), their dims then dropped from the result; the others 2-D."""
    items, _ = _tensor_args((list(tensors),), "multi_dot")
    if len(items) < 2:
        raise ValueError(f"multi_dot(): expected at least 2 tensors but got {len(items)}")
    shapes = ", ".join(str(t.shape) for t in items)
    if not (items[0].dims in (1, 2) and items[-1].dims in (1, 2) and all(t.dims == 2 for t in items[1:-1])):
        raise ShapeError(f"multi_dot(): the first and last tensors must be 1-D or 2-D and the others 2-D, got shapes {shapes}")
    row, column = items[0].dims == 1, items[-1].dims == 1
    mats = [items[0].unsqueeze(0) if row else items[0], *items[1:-1], items[-1].unsqueeze(1) if column else items[-1]]
    for i, (a, b) in enumerate(itertools.pairwise(mats)):
        if a.shape[1] != b.shape[0]:
            raise ShapeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {items[i].shape} and {items[i + 1].shape} "
                             f"cannot be multiplied")
    out = _chain(mats)
    return out.reshape(*([] if row else [out.shape[0]]), *([] if column else [out.shape[1]]))


def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of the 2-D ``matrices`` in the cheapest order (a copy of a single one), as ``torch.chain_matmul``."""
    items, _ = _tensor_args((list(matrices),), "chain_matmul")
    if not items:
        raise ValueError("chain_matmul(): expected one or more matrices")
    for i, t in enumerate(items):
        if t.dims != 2:
            raise ShapeError(f"chain_matmul(): matrix {i} has {t.dims} dims (shape {t.shape}), expected 2")
    return items[0].clone() if len(items) == 1 else multi_dot(items)


def matrix_power(input: Tensor, n: int) -> Tensor:  # noqa: A002
    """input ** n for square matrices (..., m, m), batched over the leading dims (``torch.matrix_power`` and
    ``torch.linalg.matrix_power``): n >= 2 by repeated squaring (about 2 log2(n) products), n = 1 a copy, n = 0 the
    identity in input's dtype broadcast over the batch dims (gradient zero), n < 0 the (-n)-th power of
    ``linalg.inv(input)`` (float tensors; LinAlgError for a singular matrix). Bool tensors only for n = 0 and 1."""
    _check_tensor("matrix_power", "input", 1, input)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"matrix_power(): argument 'n' (position 2) must be int, not {type(n).__name__}")
    n = int(n)
    if input.dims < 2:
        raise ShapeError(f"linalg.matrix_power: The input tensor A must have at least 2 dimensions, got shape {input.shape}")
    size = input.shape[-1]
    if input.shape[-2] != size:
        raise ShapeError(f"linalg.matrix_power: A must be batches of square matrices, but they are {input.shape[-2]} by "
                         f"{size} matrices (shape {input.shape})")
    if n == 0:  # input where a False condition picks the identity: connected to input, with a zero gradient
        return where(input._lift(False, dtypes.bool_), input, input._lift(np.eye(size), input.dtype))
    if n == 1:
        return input.clone()
    if n < 0:
        if input.dtype.kind != "f":
            raise DTypeError(f"linalg.matrix_power: n={n} < 0 needs the inverse, so a float tensor, got {input.dtype} "
                             f"(shape {input.shape}); cast with .float() or .double() first")
        base, n = linalg_inv(input), -n
    else:
        _numeric("matrix_power", input)
        base = input
    result: Tensor | None = None
    while True:  # n's bits from the lowest: multiply in base ** (2 ** i) where bit i is set
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if not n:
            break
        base = base @ base
    assert result is not None
    return result


class ProductMethods:
    """Matrix and vector products (methods of Tensor; block_diag, cartesian_prod, cdist and chain_matmul are functions
    only, as in PyTorch)."""

    trace = trace
    kron = kron
    cross = cross
    inner = inner
    addmm = addmm
    addmv = addmv
    addr = addr
    baddbmm = baddbmm
    addbmm = addbmm
    dist = dist
    matrix_power = matrix_power


__all__ = [
    "trace", "kron", "cross", "inner", "addmm", "addmv", "addr", "baddbmm", "addbmm", "block_diag", "cartesian_prod",
    "cdist", "dist", "chain_matmul", "matrix_power",
]  # fmt: skip
