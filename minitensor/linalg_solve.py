"""Square linear systems (the ``SolveMethods`` mixin) and the matching ``mt.`` and ``mt.linalg`` functions: the LU
factorization with partial pivoting and what it gives, ``det slogdet logdet inverse`` (``linalg.det slogdet inv
solve``); ``linalg.lu_factor`` and the rest of the LU family are in linalg_lu.py.

No new kernels: the factorization is n steps of batched tensor ops under ``no_grad`` (pick the pivot with a max
reduction, swap rows with a gather, scale the column below the pivot and subtract a rank-1 update from the trailing
block, as LAPACK's getrf does, so the pivots are LAPACK's), and a triangular solve is n steps of column updates. So
every backend runs them, batched over the leading dims ``(*, n, n)``. Each public op is a Function whose backward
uses the closed form: d det = g det A^-T, d logabsdet = g A^-T, d inv = -A^-T g A^-T, and for X = A^-1 B:
dB = A^-T g, dA = -dB X^T. A^-T is applied by solving with the saved factors. Backwards are not differentiable again
(``create_graph=True`` raises HigherOrderGradError). Names, signatures, shapes, dtypes and messages follow PyTorch;
operands of ``solve`` with different dtypes are promoted instead of rejected.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context, no_grad
from .errors import DTypeError, LinAlgError, ShapeError
from .tensor_compare import where
from .tensor_data import shape_broadcast
from .tensor_inplace import _torch_name
from .tensor_join import cat
from .tensor_order import gather_raw
from .tensor_reduce import arg_extreme

if TYPE_CHECKING:
    from .tensor import Tensor


class SlogdetResult(NamedTuple):
    """(sign, logabsdet), as ``torch.return_types.linalg_slogdet``."""

    sign: Tensor
    logabsdet: Tensor


# --- checks ---


def is_tensor(x: Any) -> bool:
    """Every Tensor is a SolveMethods (tensor.py imports this module, so Tensor itself is not importable here)."""
    return isinstance(x, SolveMethods)


def check_float(name: str, x: Tensor) -> None:
    """PyTorch's error for a non-float matrix, as a DTypeError (a TypeError) naming the dtype."""
    if x.dtype.kind != "f":
        raise DTypeError(f"{name}: Expected a floating point or complex tensor as input. Got {_torch_name(x.dtype)} "
                         f"({x.dtype}, shape {x.shape})")


def check_square(name: str, x: Tensor, what: str = "A") -> None:
    """ShapeError unless ``x`` is a batch of square matrices (*, n, n); DTypeError unless it is float."""
    if not is_tensor(x):
        raise TypeError(f"{name}(): argument '{what}' must be Tensor, not {type(x).__name__}")
    if x.dims < 2:
        raise ShapeError(f"{name}: The input tensor {what} must have at least 2 dimensions. (shape {x.shape})")
    if x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"{name}: {what} must be batches of square matrices, but they are {x.shape[-2]} by "
                         f"{x.shape[-1]} matrices")
    check_float(name, x)


def first_failure(bad: Tensor) -> tuple[int, int] | None:
    """(batch element, 1-based position) of the first True in a (batch, n) bool tensor, or None (one host read)."""
    if bad.numel() == 0:
        return None
    flags = bad.to_numpy()
    rows = np.flatnonzero(flags.any(axis=1))
    if not rows.size:
        return None
    return int(rows[0]), int(np.argmax(flags[rows[0]])) + 1


def batch_prefix(x: Tensor, element: int) -> str:
    """PyTorch's "(Batch element i): " for a batch of matrices, "" for a single matrix."""
    return f"(Batch element {element}): " if x.dims > 2 else ""


# --- triangular solves and the LU factorization (no history: call under no_grad) ---


def eye_like(x: Tensor, n: int) -> Tensor:
    """The n x n identity in x's dtype, on x's backend."""
    return x._lift(np.eye(n), x.dtype)


def as_shape(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A new contiguous tensor without history seen with ``shape``: a raw view, so a Function can return it as its
    own fresh result (no view bookkeeping ties it to ``x``, which nothing else holds)."""
    return x._view_of(x._data.view(*shape))


def take_rows(x: Tensor, rows: Tensor) -> Tensor:
    """x (B, m, k) with row i of each matrix taken from row ``rows[:, i]`` ((B, m) int64; a gather, no history)."""
    return gather_raw(x, 1, rows.unsqueeze(-1).expand(*x.shape))


def substitute_(t: Tensor, x: Tensor, *, lower: bool, unit: bool) -> Tensor:
    """x overwritten by t^-1 x: t (B, n, n) triangular (only its ``lower`` or upper triangle is read; ``unit``: its
    diagonal taken as ones), x (B, n, k), solved one column of t at a time. As BLAS's trsm, an entry of x that is
    0 stays 0 even at a zero diagonal element (0 / 0 gives 0, not nan)."""
    n = t.shape[-1]
    for j in range(n) if lower else range(n - 1, -1, -1):
        xj = x[:, j : j + 1, :]
        if not unit:
            xj.div_(where(xj == 0, 1.0, t[:, j : j + 1, j : j + 1]))
        rest = slice(j + 1, n) if lower else slice(0, j)
        if (n - j - 1 if lower else j) > 0:
            x[:, rest, :].sub_(t[:, rest, j : j + 1] * xj)
    return x


class Factors(NamedTuple):
    """PA = LU of a batch of (m, n) matrices, flattened to (B, m, n): ``lu`` holds L's multipliers below the
    diagonal (L's diagonal is ones) and U on and above it; row i of PA is row ``perm[i]`` of A; step k swapped rows
    k and ``pivots[k]`` (0-based, LAPACK's ipiv minus 1); ``sign`` is det(P) (+-1, A's dtype); all without history."""

    lu: Tensor
    perm: Tensor
    pivots: Tensor
    sign: Tensor


def factor(a: Tensor) -> Factors:
    """The LU factorization with partial pivoting of each matrix of ``a`` (*, m, n), as LAPACK's getrf: at step k
    the row with the largest |value| in column k (the first on ties) is swapped into row k."""
    m, n = a.shape[-2:]
    batch = math.prod(a.shape[:-2])
    with no_grad():
        lu = a.detach().clone().view(batch, m, n)
        rows = a._lift(np.arange(m), dtypes.int64)
        perm = rows.expand(batch, m)
        steps = min(m, n)
        pivots = []
        for k in range(steps if lu.numel() else 0):
            pivot = arg_extreme(lu[:, k:, k : k + 1].abs(), 1, "max").view(batch, 1) + k
            pivots.append(pivot)
            if k + 1 == m:
                break
            swap = where(rows == k, pivot, where(rows == pivot, k, rows))  # (batch, m): rows k and pivot exchanged
            lu = take_rows(lu, swap)
            perm = gather_raw(perm, 1, swap)
            top = lu[:, k : k + 1, k : k + 1]
            below = lu[:, k + 1 :, k : k + 1]
            below.div_(where(top == 0, 1.0, top))  # a zero pivot has only zeros below it (it is the largest |value|)
            lu[:, k + 1 :, k + 1 :].sub_(below * lu[:, k : k + 1, k + 1 :])
        pivots_t = cat(pivots, 1) if pivots else rows._zeros((batch, steps))
        swaps = (pivots_t != rows[:steps]).sum(-1)
        sign = 1.0 - (swaps % 2).cast(a.dtype) * 2.0
    return Factors(lu, perm, pivots_t, sign)


def lu_solve(f: Factors, b: Tensor, *, adjoint: bool = False) -> Tensor:
    """A^-1 b (A^-T b when ``adjoint``) for the factored A and b (B, n, k), without history; b is not changed."""
    n = f.lu.shape[-1]
    if not adjoint:  # A = P^T L U
        x = take_rows(b, f.perm)
        return substitute_(f.lu, substitute_(f.lu, x, lower=True, unit=True), lower=False, unit=False)
    lu_t = f.lu.mT  # A^T = U^T L^T P
    y = substitute_(lu_t, substitute_(lu_t, b.clone(), lower=True, unit=False), lower=False, unit=True)
    rows = f.perm._lift(np.arange(n).reshape(n, 1), dtypes.int64)
    inverse = ((f.perm.unsqueeze(-1) == rows.view(n)).cast(dtypes.int64) * rows).sum(1)  # inverse[perm[i]] = i
    return take_rows(y, inverse)


def diagonal_of(f: Factors) -> Tensor:
    """U's diagonal, (B, n)."""
    return f.lu.diagonal(0, -2, -1)


def adjoint_solve_of(f: Factors, scale: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A^-T (scale I) for the factored A, with ``scale`` one number per matrix; reshaped to ``shape``."""
    n = f.lu.shape[-1]
    rhs = scale.reshape(f.lu.shape[0], 1, 1) * eye_like(f.lu, n)
    return lu_solve(f, rhs, adjoint=True).reshape(*shape)


# --- Functions ---


class Det(F.TensorFunction):
    """det A = det(P) prod(diag U); d/dA = g det A^-T, by solving with the factors (g det = 0 at an exactly singular
    matrix gives a zero gradient, as PyTorch's LU solve does; the adjugate is not computed)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, f: Factors) -> Tensor:
        with no_grad():
            out = as_shape(f.sign * diagonal_of(f).prod(-1), a.shape[:-2])
        ctx.save_for_backward(*f, out, a.shape)
        return out

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None]:
        *f, out, shape = ctx.saved_values
        return adjoint_solve_of(Factors(*f), g * out, shape), None


class LogAbsDet(F.TensorFunction):
    """log|det A| = sum log|diag U| (-inf when singular); d/dA = g A^-T (infinite at a singular matrix)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, f: Factors) -> Tensor:
        with no_grad():
            out = as_shape(diagonal_of(f).abs().log().sum(-1), a.shape[:-2])
        ctx.save_for_backward(*f, a.shape)
        return out

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None]:
        *f, shape = ctx.saved_values
        return adjoint_solve_of(Factors(*f), g, shape), None


class Inverse(F.TensorFunction):
    """A^-1 = U^-1 L^-1 P (nonsingular A); d/dA = -A^-T g A^-T."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, f: Factors) -> Tensor:
        with no_grad():
            out = as_shape(lu_solve(f, eye_like(a, a.shape[-1]).expand(*f.lu.shape)), a.shape)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None]:
        (out,) = ctx.saved_values
        inverse_t = out.mT
        return -(inverse_t @ g @ inverse_t), None


class Solve(F.TensorFunction):
    """X = A^-1 B for A (*, n, n) and B (*, n, k) with one batch shape; dB = A^-T g, dA = -dB X^T."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, b: Tensor, f: Factors) -> Tensor:
        with no_grad():
            out = as_shape(lu_solve(f, b.reshape(f.lu.shape[0], *b.shape[-2:])), b.shape)
        ctx.save_for_backward(*f, out)
        return out

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor | None, Tensor, None]:
        *f, out = ctx.saved_values
        factors = Factors(*f)
        grad_b = lu_solve(factors, g.reshape(factors.lu.shape[0], *g.shape[-2:]), adjoint=True).view(*g.shape)
        grad_a = -(grad_b @ out.mT) if ctx.needs_input_grad[0] else None
        return grad_a, grad_b, None


# --- the public ops ---


def linalg_det(A: Tensor) -> Tensor:  # noqa: N803 - PyTorch's names
    """The determinant of each matrix of A (*, n, n) (float): shape (*); 1 for a 0 x 0 matrix."""
    check_square("linalg.det", A)
    return Det.apply(A, factor(A))


def linalg_slogdet(A: Tensor) -> SlogdetResult:  # noqa: N803
    """(sign, log|det|) of each matrix of A (*, n, n): sign is -1, 0 or 1 (0 and -inf when singular); only
    ``logabsdet`` has a gradient."""
    check_square("linalg.slogdet", A)
    f = factor(A)
    with no_grad():
        sign = (f.sign * diagonal_of(f).sign().prod(-1)).view(*A.shape[:-2])
    return SlogdetResult(sign, LogAbsDet.apply(A, f))


def raise_if_singular(name: str, A: Tensor, f: Factors, problem: str) -> None:  # noqa: N803
    """LinAlgError when some U has a zero on its diagonal (one host read)."""
    failure = first_failure(diagonal_of(f) == 0)
    if failure is not None:
        element, k = failure
        raise LinAlgError(f"{name}: {batch_prefix(A, element)}{problem.format(k=k)}")


def linalg_inv(A: Tensor) -> Tensor:  # noqa: N803
    """The inverse of each matrix of A (*, n, n); LinAlgError naming the batch element and the zero diagonal element
    of U for a singular one."""
    check_square("linalg.inv", A)
    f = factor(A)
    raise_if_singular("linalg.inv", A, f, "The diagonal element {k} is zero, the inversion could not be completed "
                                          "because the input matrix is singular.")
    return Inverse.apply(A, f)


def is_vector_rhs(A: Tensor, B: Tensor) -> bool:  # noqa: N803
    """PyTorch's rule: B is a (batch of) vector(s) when 1-D, or when its shape is A's without the last dim."""
    return B.dims == 1 or (B.dims == A.dims - 1 and B.shape == A.shape[:-1])


def check_rhs(name: str, n: int, rhs: Tensor, left: bool) -> None:
    """ShapeError unless the matrices of rhs fit an n x n A: (*, n, k) for AX = B (``left``), (*, k, n) for XA = B."""
    if (rhs.shape[-2] if left else rhs.shape[-1]) != n:
        raise ShapeError(f"{name}: Incompatible shapes of A and B for the equation {'AX = B' if left else 'XA = B'} "
                         f"({n}x{n} and {rhs.shape[-2]}x{rhs.shape[-1]})")


def broadcast_batch(name: str, A: Tensor, B: Tensor, a: Tensor, b: Tensor) -> tuple[int, ...]:  # noqa: N803
    """The broadcast batch shape of the matrices a and b (ShapeError naming A's and B's shapes)."""
    try:
        return shape_broadcast(a.shape[:-2], b.shape[:-2])
    except ShapeError:
        raise ShapeError(f"{name}: the batch dims of A {A.shape} and B {B.shape} do not broadcast") from None


class SolveOperands(NamedTuple):
    """``linalg.solve``'s operands checked: ``b`` the matrices (*, n, k) to solve A x = b for (B, a vector as a
    column; B^T when not ``left``, as X A = B is A^T X^T = B^T), whether B is a vector, the promoted dtype and the
    broadcast batch shape."""

    b: Tensor
    vector: bool
    dtype: np.dtype
    batch: tuple[int, ...]


def solve_operands(name: str, caller: str, A: Tensor, B: Any, left: bool) -> SolveOperands:  # noqa: N803
    """The checks of ``linalg.solve`` and ``solve_ex`` (``caller`` names the function in the TypeError for a
    non-tensor B): A (*, n, n) float, B (*, n, k) or a batch of vectors (see :func:`is_vector_rhs`), batch dims that
    broadcast, no vector B with ``left=False``."""
    check_square(name, A)
    if not is_tensor(B):
        raise TypeError(f"{caller}(): argument 'B' (position 2) must be Tensor, not {type(B).__name__}")
    A._check_backend(B)
    dtype = dtypes.result_type(A, B)
    check_float(name, B if dtype.kind != "f" else A)
    if B.dims == 0:
        raise ShapeError(f"{name}: The input tensor B must have at least 2 dimensions. (shape ())")
    vector = is_vector_rhs(A, B)
    rhs = B.unsqueeze(-1) if vector else B
    check_rhs(name, A.shape[-1], rhs, left)
    if vector and not left:
        raise ShapeError(f"{name}: Vector broadcasting of the left hand side is not supported for left=False. "
                         "In this case linalg.solve is equivalent to B / A.squeeze(-1)")
    b = rhs if left else rhs.mT
    return SolveOperands(b, vector, dtype, broadcast_batch(name, A, B, A, b))


def linalg_solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:  # noqa: N803
    """X with A X = B (``left=False``: X A = B) for A (*, n, n) and B (*, n, k) or a batch of vectors (*, n) (see
    :func:`is_vector_rhs`); batch dims broadcast; A and B of different dtypes are promoted."""
    b, vector, dtype, batch = solve_operands("linalg.solve", "linalg.solve", A, B, left)
    n = A.shape[-1]
    a = (A if left else A.mT).cast(dtype).expand(*batch, n, n)
    b = b.cast(dtype).expand(*batch, *b.shape[-2:])
    f = factor(a)
    raise_if_singular("torch.linalg.solve", a, f, "The solver failed because the input matrix is singular.")
    x = Solve.apply(a, b, f)
    x = x if left else x.mT
    return x.squeeze(-1) if vector else x


def det(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """``torch.det``: :func:`linalg_det`."""
    return linalg_det(input)


def slogdet(input: Tensor) -> SlogdetResult:  # noqa: A002
    """``torch.slogdet``: :func:`linalg_slogdet`."""
    return linalg_slogdet(input)


def logdet(input: Tensor) -> Tensor:  # noqa: A002
    """log det of each matrix of input (*, n, n): nan where det < 0, -inf where singular; the gradient is that of
    log|det| where det >= 0 and 0 where det < 0 (as PyTorch)."""
    check_square("logdet", input)
    sign, logabsdet = linalg_slogdet(input)
    return where(sign == -1, math.nan, logabsdet)


def inverse(input: Tensor) -> Tensor:  # noqa: A002
    """``torch.inverse``: :func:`linalg_inv`."""
    return linalg_inv(input)


class SolveMethods:
    """Determinants and inverses (methods of Tensor)."""

    det = det
    slogdet = slogdet
    logdet = logdet
    inverse = inverse


LINALG: dict[str, Callable[..., Any]] = {"det": linalg_det, "slogdet": linalg_slogdet, "inv": linalg_inv, "solve": linalg_solve}
"""The ``mt.linalg`` functions of this module, by their PyTorch names."""

__all__ = ["det", "slogdet", "logdet", "inverse"]
