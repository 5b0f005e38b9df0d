"""Triangular solves, the ``_ex`` variants of the factorizations, tensor inverses and solves, and the matrix
exponential: ``linalg.solve_triangular inv_ex solve_ex cholesky_ex tensorinv tensorsolve
matrix_exp`` (also ``mt.matrix_exp`` and ``Tensor.matrix_exp``).

As in :mod:`minitensor.linalg_solve`, no new kernels: ``solve_triangular`` is a Function over the column-update
substitution of linalg_solve.py (dB = A^-T g by the transposed substitution, dA = -dB X^T kept on A's triangle);
the ``_ex`` variants reuse the LU and Cholesky factorizations and add PyTorch's int32 ``info`` (LAPACK's code: the
1-based position of the first zero pivot of U, or the order of the first leading minor that is not positive-definite;
0 on success), raising LinAlgError only with ``check_errors=True``. ``matrix_exp`` is scaling and squaring with the
[13/13] Pade approximant (Higham 2005), built from matmul, ``linalg.solve`` and ``where``, so autodiff differentiates
it. Names, signatures, shapes, dtypes and messages follow PyTorch; ``solve_ex`` promotes operands of different
dtypes (as ``linalg.solve`` here); ``cholesky_ex`` leaves nan in L from the failing column of a matrix that is not
positive-definite (LAPACK leaves a partial factor there).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context, no_grad
from .errors import LinAlgError, ShapeError
from .linalg_cholesky import Cholesky, TriangularSubstitution, cholesky_factor
from .linalg_norms import _check_tensor, matrix_norm
from .linalg_solve import (
    Factors,
    Inverse,
    Solve,
    as_shape,
    batch_prefix,
    broadcast_batch,
    check_square,
    diagonal_of,
    eye_like,
    factor,
    first_failure,
    linalg_inv,
    linalg_solve,
    lu_solve,
    raise_if_singular,
    solve_operands,
)
from .tensor_compare import where

if TYPE_CHECKING:
    from .tensor import Tensor


class InvExResult(NamedTuple):
    """(inverse, info), as ``torch.return_types.linalg_inv_ex``."""

    inverse: Tensor
    info: Tensor


class SolveExResult(NamedTuple):
    """(result, info), as ``torch.return_types.linalg_solve_ex``."""

    result: Tensor
    info: Tensor


class CholeskyExResult(NamedTuple):
    """(L, info), as ``torch.return_types.linalg_cholesky_ex``."""

    L: Tensor
    info: Tensor


# --- solve_triangular ---


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,  # noqa: N803 - PyTorch's names
                     unitriangular: bool = False) -> Tensor:
    """X with A X = B (``left=False``: X A = B) for triangular A (*, n, n), reading only its upper (``upper``) or lower
    triangle (``unitriangular``: its diagonal taken as ones), and B (*, n, k) ((*, k, n) when not ``left``); batch dims
    broadcast; B is cast to A's dtype. A zero on the diagonal gives inf or nan, not an error."""
    name = "linalg.solve_triangular"
    check_square(name, A)
    _check_tensor(name, "B", 2, B)
    A._check_backend(B)
    if B.dims < 2:
        raise ShapeError(f"{name}: The input tensor B must have at least 2 dimensions. (shape {B.shape})")
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise ShapeError(f"{name}: Incompatible shapes of A and B for the equation {'AX = B' if left else 'XA = B'} "
                         f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    a, b, up = (A, B, upper) if left else (A.mT, B.mT, not upper)  # X A = B is A^T X^T = B^T
    batch = broadcast_batch(name, A, B, a, b)
    x = TriangularSubstitution.apply(a.expand(*batch, n, n), b.cast(A.dtype).expand(*batch, *b.shape[-2:]), up, unitriangular)
    return x if left else x.mT


# --- the _ex variants ---


def first_true(bad: Tensor, batch: Sequence[int]) -> Tensor:
    """LAPACK's info: the 1-based position of the first True along the last dim of ``bad`` (0 where none), as an int32
    tensor of shape ``batch`` (computed on the backend, no host read)."""
    with no_grad():
        k = bad.shape[-1]
        if k == 0 or bad.numel() == 0:
            return bad._lift(np.zeros(tuple(batch), np.int32), dtypes.int32)
        score = where(bad, bad._lift(np.arange(k, 0, -1), dtypes.int64), 0).amax(-1)  # k + 1 - position, or 0
        return where(score > 0, (k + 1) - score, 0).cast(dtypes.int32).reshape(*batch)


def inv_ex(A: Tensor, *, check_errors: bool = False) -> InvExResult:  # noqa: N803
    """(inverse, info) of each matrix of A (*, n, n): info (*) int32 is the position of U's first zero diagonal element
    (the inverse is then inf or nan), 0 when invertible; ``check_errors``: LinAlgError instead."""
    check_square("linalg.inv", A)
    f = factor(A)
    if check_errors:
        raise_if_singular("linalg.inv_ex", A, f, "The diagonal element {k} is zero, the inversion could not be completed "
                                                 "because the input matrix is singular.")
    return InvExResult(Inverse.apply(A, f), first_true(diagonal_of(f) == 0, A.shape[:-2]))


class TransposedSolve(F.TensorFunction):
    """Y = A^-T B from A's factors, for A (*, n, n) and B (*, n, k) with one batch shape; dB = A^-1 g, dA = -Y dB^T."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor, f: Factors) -> Tensor:
        with no_grad():
            out = as_shape(lu_solve(f, b.reshape(f.lu.shape[0], *b.shape[-2:]), adjoint=True), b.shape)
        ctx.save_for_backward(*f, out)
        return out

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor | None, Tensor, None]:
        *f, out = ctx.saved_values
        factors = Factors(*f)
        grad_b = lu_solve(factors, g.reshape(factors.lu.shape[0], *g.shape[-2:])).view(*g.shape)
        return (-(out @ grad_b.mT) if ctx.needs_input_grad[0] else None), grad_b, None


def _expanded(f: Factors, own: tuple[int, ...], batch: tuple[int, ...]) -> Factors:
    """The factors of a batch of shape ``own`` repeated over the broadcast ``batch`` (flattened, without history)."""
    if own == batch:
        return f
    with no_grad():
        return Factors(*[t.reshape(*own, *t.shape[1:]).expand(*batch, *t.shape[1:]).reshape(-1, *t.shape[1:]) for t in f])


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False) -> SolveExResult:  # noqa: N803
    """(result, info): ``linalg.solve``'s X, and info (A's batch shape, int32) as in :func:`inv_ex` (X is then inf or
    nan); ``check_errors``: LinAlgError instead. A is factored once, whatever B's batch."""
    b, vector, dtype, batch = solve_operands("linalg.solve", "linalg.solve_ex", A, B, left)
    n = A.shape[-1]
    a = A.cast(dtype)
    f = factor(a)
    if check_errors:
        raise_if_singular("torch.linalg.solve_ex", A, f, "The solver failed because the input matrix is singular.")
    info = first_true(diagonal_of(f) == 0, A.shape[:-2])
    f = _expanded(f, A.shape[:-2], batch)
    args = (a.expand(*batch, n, n), b.cast(dtype).expand(*batch, *b.shape[-2:]), f)
    x = Solve.apply(*args) if left else TransposedSolve.apply(*args).mT
    return SolveExResult(x.squeeze(-1) if vector else x, info)


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> CholeskyExResult:  # noqa: N803
    """(L, info): ``linalg.cholesky``'s factor and info (*) int32, the order of the first leading minor that is not
    positive-definite (0 when A is); ``check_errors``: LinAlgError instead."""
    check_square("linalg.cholesky", A)
    lower = cholesky_factor(A, upper)
    bad = ~(lower.diagonal(0, -2, -1) > 0)
    if check_errors:
        failure = first_failure(bad)
        if failure is not None:
            element, order = failure
            raise LinAlgError(f"linalg.cholesky_ex: {batch_prefix(A, element)}The factorization could not be completed "
                              f"because the input is not positive-definite (the leading minor of order {order} is not "
                              "positive-definite).")
    return CholeskyExResult(Cholesky.apply(A, lower, upper), first_true(bad, A.shape[:-2]))


# --- tensor inverses and solves ---


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:  # noqa: N803
    """The inverse of A with respect to ``tensordot(·, ·, ind)``: A viewed as a prod(shape[:ind]) x prod(shape[ind:])
    matrix (square), inverted, shaped shape[ind:] + shape[:ind]."""
    if isinstance(ind, bool) or not isinstance(ind, int) or ind <= 0:
        raise ValueError(f"linalg.tensorinv: Expected a strictly positive integer for 'ind', but got {ind!r}")
    if ind > A.dims:
        raise ShapeError(f"linalg.tensorinv: ind={ind} is more than the number of dims of A (shape {A.shape})")
    rows, columns = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != columns:
        raise ShapeError("linalg.tensorinv: Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                         f"prod(self.shape[:ind]), but got {columns} != {rows} (shape {A.shape}, ind={ind})")
    return linalg_inv(A.reshape(rows, columns)).reshape(*A.shape[ind:], *A.shape[:ind])


def tensorsolve(A: Tensor, B: Tensor, dims: Sequence[int] | None = None) -> Tensor:  # noqa: N803
    """X with ``tensordot(A, X, X.ndim) = B``: X has the shape A.shape[B.ndim:] (after moving the ``dims`` of A to
    its end), A viewed as a square matrix; ``linalg.solve``'s errors and dtype rules."""
    name = "linalg.tensorsolve"
    _check_tensor(name, "B", 2, B)
    if dims is not None:
        if isinstance(dims, int) or not isinstance(dims, Sequence):
            raise TypeError(f"{name}(): argument 'dims' must be tuple of ints, not {type(dims).__name__}")
        A = A.movedim(tuple(dims), tuple(range(A.dims - len(dims), A.dims)))  # noqa: N806
    shape = A.shape[B.dims:]
    size = math.prod(shape)
    if size != B.numel():
        raise ShapeError(f"{name}: Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                         f"prod(self.shape[:other.ndim]), but got {size} != {B.numel()} (shapes {A.shape} and {B.shape})")
    if A.numel() != size * size:
        raise ShapeError(f"{name}: A of shape {A.shape} has {A.numel()} elements, so it is not a {size} x {size} matrix "
                         f"(B of shape {B.shape})")
    return linalg_solve(A.reshape(size, size), B.reshape(size)).reshape(*shape)


# --- the matrix exponential ---

PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
          10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
"""The coefficients b_0..b_13 of the [13/13] Pade approximant of exp (Higham 2005)."""

THETA13 = 5.371920351148152
"""The largest 1-norm for which the [13/13] approximant is exact to double precision (Higham 2005, Table 2.3)."""


def _pade13(x: Tensor) -> Tensor:
    """r13(x) = (V - U)^-1 (V + U), U odd and V even in x (*, n, n): six matrix products and one solve."""
    b = PADE13
    eye = eye_like(x, x.shape[-1])
    x2 = x @ x
    x4 = x2 @ x2
    x6 = x4 @ x2
    u = x @ (x6 @ (b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 + b[3] * x2 + b[1] * eye)
    v = x6 @ (b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 + b[0] * eye
    return linalg_solve(v - u, v + u)


def matrix_exp(A: Tensor) -> Tensor:  # noqa: N803
    """exp of each matrix of A (*, n, n) (float): scaling and squaring, each matrix scaled by its own 2^-s so its
    1-norm is at most 5.37, the [13/13] Pade approximant, then s squarings; differentiable (one host read of s)."""
    check_square("linalg.matrix_exp", A)
    if A.numel() == 0:
        return A.clone()
    if A.shape[-1] == 1:
        return A.exp()
    with no_grad():
        norms = matrix_norm(A.detach(), 1).to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = np.ceil(np.log2(norms / THETA13))
    steps = np.where(np.isfinite(steps) & (steps > 0), steps, 0).astype(np.int64)  # nan and inf give nan anyway
    last = int(steps.max())
    x = A if last == 0 else A * A._lift(np.ldexp(1.0, -steps)[..., None, None], A.dtype)
    out = _pade13(x)
    for k in range(last):
        squared = out @ out
        more = steps > k
        out = squared if more.all() else where(A._lift(more[..., None, None], dtypes.bool_), squared, out)
    return out


LINALG: dict[str, Callable[..., Any]] = {
    "solve_triangular": solve_triangular, "inv_ex": inv_ex, "solve_ex": solve_ex, "cholesky_ex": cholesky_ex,
    "tensorinv": tensorinv, "tensorsolve": tensorsolve, "matrix_exp": matrix_exp,
}
"""The ``mt.linalg`` functions of this module, by their PyTorch names."""

__all__ = ["matrix_exp"]
