"""The LDL^T factorization of symmetric matrices with Bunch-Kaufman pivoting: ``linalg.ldl_factor ldl_factor_ex
ldl_solve``.

As LAPACK's sytrf (unblocked, sytf2, lower storage), which PyTorch calls: at step k, with alpha = (1 + sqrt 17) / 8,
colmax the largest |entry| below the diagonal of column k (row imax, the first on ties) and rowmax the largest
off-diagonal |entry| of row imax of the trailing block, the pivot is 1 x 1 at k when |a_kk| >= alpha colmax or
|a_kk| >= alpha colmax^2 / rowmax, 1 x 1 at imax when |a_imax,imax| >= alpha rowmax, else the 2 x 2 block
of k and imax (moved to k + 1). The swap exchanges rows and columns of the trailing block only (earlier columns of L
stay as they are), so LD and the pivots are LAPACK's: LD holds D's 1 x 1 and 2 x 2 blocks on (and, for a 2 x 2
block, just below) the diagonal and L's multipliers below, zeros above; pivots are 1-based int32, positive for a
1 x 1 block (the row swapped with), -p on both columns of a 2 x 2 block. A column that is zero gives info = its
position and no elimination, as LAPACK.

No new kernels: each column is one set of batched tensor ops under ``no_grad``, and since each matrix of a batch makes
its own choices, every step computes both the 1 x 1 and the 2 x 2 update and keeps one per matrix with ``where``;
a matrix whose column k is the second of a 2 x 2 block skips that step. ``ldl_solve`` walks the blocks the same way
(LAPACK's sytrs). Neither is differentiable in PyTorch, so their backwards raise NotImplementedError. Real input
only, so ``hermitian`` changes nothing.
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
from .linalg_extra import first_true
from .linalg_solve import as_shape, batch_prefix, broadcast_batch, check_square, first_failure, is_tensor, take_rows
from .tensor_compare import where
from .tensor_inplace import _torch_name
from .tensor_join import cat
from .tensor_reduce import arg_extreme

if TYPE_CHECKING:
    from .tensor import Tensor

ALPHA = (1.0 + math.sqrt(17.0)) / 8.0
"""Bunch and Kaufman's threshold: it bounds the growth of the entries of the factors."""


class LDLFactorResult(NamedTuple):
    """(LD, pivots), as ``torch.return_types.linalg_ldl_factor``."""

    LD: Tensor  # noqa: N815 - PyTorch's field name
    pivots: Tensor


class LDLFactorExResult(NamedTuple):
    """(LD, pivots, info), as ``torch.return_types.linalg_ldl_factor_ex``."""

    LD: Tensor  # noqa: N815
    pivots: Tensor
    info: Tensor


# --- the factorization (no history: call under no_grad) ---


def symmetric_swap_(block: Tensor, i: Tensor, j: Tensor) -> None:
    """Exchange rows and columns i and j (B, 1) int64 of each matrix of ``block`` (B, r, r), in place."""
    r = block.shape[-1]
    rows = block._lift(np.arange(r), dtypes.int64)
    index = where(rows == i, j, where(rows == j, i, rows))
    block.copy_(take_rows(take_rows(block, index).mT, index).mT)


def symmetrize_(block: Tensor) -> None:
    """Overwrite the upper triangle of each matrix of ``block`` by its lower one, in place."""
    block.copy_(block.tril() + block.tril(-1).mT)


def bunch_kaufman(a: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """(LD (B, n, n), pivots (B, n) int64 1-based as LAPACK's, zero (B, n) bool: column with nothing to pivot on)
    of each matrix of a (B, n, n), reading its lower triangle (see the module docstring)."""
    count, n = a.shape[:2]
    w = a.tril() + a.tril(-1).mT  # the symmetric working copy
    second = w._zeros((count, 1)).cast(dtypes.bool_)  # column k is the second of a 2 x 2 block begun at k - 1
    previous = w._zeros((count, 1)).cast(dtypes.int64)
    pivots, zeros = [], []
    for k in range(n):
        r = n - k
        rel = w._lift(np.arange(r), dtypes.int64)
        trailing = w[:, k:, k:]
        absakk = trailing[:, 0, :1].abs()
        if r > 1:
            below = trailing[:, 1:, 0].abs()
            imax = arg_extreme(below, 1, "max") + 1  # (B, 1), relative to k
            colmax = below.amax(-1, keepdim=True)
        else:
            imax, colmax = rel.view(1, 1).expand(count, 1), absakk * 0.0
        zero = ((absakk.maximum(colmax) == 0) | absakk.isnan()) & ~second
        row = take_rows(trailing, imax.expand(count, r))[:, 0]  # (B, r): row imax of the trailing block
        at_imax = rel == imax
        rowmax = where(at_imax, 0.0, row.abs()).amax(-1, keepdim=True)
        diag_imax = where(at_imax, row, 0.0).sum(-1, keepdim=True).abs()
        keep = (absakk >= ALPHA * colmax) | (absakk >= ALPHA * colmax * (colmax / where(rowmax == 0, 1.0, rowmax)))
        one_at_imax = ~keep & (diag_imax >= ALPHA * rowmax)
        two = ~keep & ~one_at_imax & ~zero & ~second
        moved = where(two, 1, 0)
        kp = where(zero | keep | second, moved, imax)
        symmetric_swap_(trailing, moved, kp)
        if r > 1:
            one = ~zero & ~second & ~two
            _eliminate(w, k, one, two)
            symmetrize_(w[:, k + 1 :, k + 1 :])
        pivot = where(two, -(kp + k + 1), kp + k + 1)
        pivot = where(second, previous, pivot)
        pivots.append(pivot)
        zeros.append(zero)
        previous, second = pivot, two
    ld = w.tril()
    if not pivots:
        empty = w._zeros((count, 0))
        return ld, empty.cast(dtypes.int64), empty.cast(dtypes.bool_)
    return ld, cat(pivots, 1), cat(zeros, 1)


def _eliminate(w: Tensor, k: int, one: Tensor, two: Tensor) -> None:
    """Step k's update of the trailing block and column(s) k (and k + 1) of w (B, n, n), in place: a 1 x 1 pivot
    where ``one``, a 2 x 2 pivot where ``two`` (B, 1) (as LAPACK's sytf2, lower), nothing elsewhere."""
    x = w[:, k + 1 :, k]  # (B, r - 1)
    d11 = 1.0 / where(one, w[:, k, k : k + 1], 1.0)
    block = w[:, k + 1 :, k + 1 :]
    first = block - x.unsqueeze(-1) * (d11 * x).unsqueeze(-2)
    column = where(one, x * d11, x)
    if w.shape[-1] - k > 2:
        d21 = where(two, w[:, k + 1, k : k + 1], 1.0)
        e11 = w[:, k + 1, k + 1 : k + 2] / d21
        e22 = w[:, k, k : k + 1] / d21
        t = 1.0 / where(two, e11 * e22 - 1.0, 1.0)
        d21 = t / d21
        xa, xb = w[:, k + 2 :, k], w[:, k + 2 :, k + 1]
        wk = d21 * (e11 * xa - xb)
        wkp1 = d21 * (e22 * xb - xa)
        second = block[:, 1:, 1:] - xa.unsqueeze(-1) * wk.unsqueeze(-2) - xb.unsqueeze(-1) * wkp1.unsqueeze(-2)
        updated = where(one.unsqueeze(-1), first, block)
        updated[:, 1:, 1:].copy_(where(two.unsqueeze(-1), second, updated[:, 1:, 1:]))
        column[:, 1:].copy_(where(two, wk, column[:, 1:]))
        updated[:, 1:, 0].copy_(where(two, wkp1, updated[:, 1:, 0]))  # column k + 1 below the 2 x 2 block
    else:
        updated = where(one.unsqueeze(-1), first, block)
    block.copy_(updated)
    w[:, k + 1 :, k].copy_(column)


def block_kinds(pivots: Tensor) -> tuple[list[Tensor], list[Tensor], list[Tensor]]:
    """Per column k of LAPACK's ``pivots`` (B, n): (1 x 1 block, first of a 2 x 2 block, second of one), each (B, 1)
    bool; a 2 x 2 block is a pair of negative pivots."""
    ones, firsts, seconds = [], [], []
    second = pivots[:, :1] != pivots[:, :1]
    for k in range(pivots.shape[-1]):
        negative = pivots[:, k : k + 1] < 0
        first = negative & ~second
        ones.append(~negative)
        firsts.append(first)
        seconds.append(second)
        second = first
    return ones, firsts, seconds


def swap_rows(x: Tensor, i: Tensor, j: Tensor) -> Tensor:
    """x (B, n, c) with rows i and j (B, 1) int64 of each matrix exchanged (a new tensor)."""
    rows = x._lift(np.arange(x.shape[1]), dtypes.int64)
    return take_rows(x, where(rows == i, j, where(rows == j, i, rows)))


def ldl_substitute(ld: Tensor, pivots: Tensor, b: Tensor) -> Tensor:
    """A^-1 b for A = L D L^T given by LAPACK's (LD (B, n, n), pivots (B, n)) and b (B, n, c), as LAPACK's sytrs."""
    n = ld.shape[-1]
    ones, firsts, seconds = block_kinds(pivots)
    target = pivots.abs() - 1  # (B, n) int64, 0-based
    x = b.clone()
    for k in range(n):  # L D y = P b: swaps and column eliminations forward, then D's blocks
        one, two = ones[k], firsts[k]
        here = where(two, k + 1, k)
        x = swap_rows(x, here, where(one | two, target[:, k : k + 1], here))
        if k + 1 < n:
            rel = ld._lift(np.arange(n - k - 1), dtypes.int64)
            c0 = where(one | (two & (rel > 0)), ld[:, k + 1 :, k], 0.0)
            c1 = where(two & (rel > 0), ld[:, k + 1 :, k + 1], 0.0)
            x[:, k + 1 :].sub_(c0.unsqueeze(-1) * x[:, k : k + 1] + c1.unsqueeze(-1) * x[:, k + 1 : k + 2])
        one3, two3 = one.unsqueeze(-1), two.unsqueeze(-1)
        xk = x[:, k : k + 1]
        if k + 1 < n:
            off = where(two, ld[:, k + 1, k : k + 1], 1.0).unsqueeze(-1)
            akm1 = ld[:, k, k : k + 1].unsqueeze(-1) / off
            ak = ld[:, k + 1, k + 1 : k + 2].unsqueeze(-1) / off
            denom = where(two3, akm1 * ak - 1.0, 1.0)
            bkm1, bk = xk / off, x[:, k + 1 : k + 2] / off
            x[:, k + 1 : k + 2].copy_(where(two3, (akm1 * bk - bkm1) / denom, x[:, k + 1 : k + 2]))
            first = where(two3, (ak * bkm1 - bk) / denom, xk)
        else:
            first = xk
        xk.copy_(where(one3, xk / where(one3, ld[:, k, k : k + 1].unsqueeze(-1), 1.0), first))
    for k in reversed(range(n)):  # L^T P^T x = y: column products backward, then the swaps
        one, last = ones[k], seconds[k]
        if k + 1 < n:
            rest = x[:, k + 1 :]
            dot_k = (ld[:, k + 1 :, k : k + 1] * rest).sum(1, keepdim=True)
            x[:, k : k + 1].sub_(where((one | last).unsqueeze(-1), dot_k, 0.0))
            if k > 0:
                dot_prev = (ld[:, k + 1 :, k - 1 : k] * rest).sum(1, keepdim=True)
                x[:, k - 1 : k].sub_(where(last.unsqueeze(-1), dot_prev, 0.0))
        here = x._lift(np.full((x.shape[0], 1), k), dtypes.int64)
        x = swap_rows(x, here, where(one | last, target[:, k : k + 1], here))
    return x


# --- Functions and the public ops ---


class LDLFactor(F.TensorFunction):
    """LD of the LDL^T factorization; not differentiable (as in PyTorch)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, ld: Tensor) -> Tensor:
        return as_shape(ld, a.shape)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None]:
        raise NotImplementedError("the derivative for linalg.ldl_factor is not implemented (nor in PyTorch)")


class LDLSolve(F.TensorFunction):
    """X = A^-1 B from A's LDL^T factors; not differentiable (as in PyTorch)."""

    @staticmethod
    def forward(ctx: Context, ld: Tensor, b: Tensor, pivots: Tensor) -> Tensor:
        n, c = b.shape[-2:]
        count = math.prod(b.shape[:-2])
        with no_grad():
            x = ldl_substitute(ld.reshape(count, n, n), pivots.reshape(count, n).cast(dtypes.int64),
                               b.reshape(count, n, c))
        return as_shape(x, b.shape)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, Tensor, None]:
        raise NotImplementedError("the derivative for linalg.ldl_solve is not implemented (nor in PyTorch)")


def factor_parts(name: str, A: Tensor) -> tuple[Tensor, Tensor, Tensor]:  # noqa: N803
    """(LD (*, n, n) with A's history, pivots (*, n) int32, zero (B, n) bool) of :func:`bunch_kaufman` on A."""
    check_square(name, A)
    n = A.shape[-1]
    with no_grad():
        ld, pivots, zero = bunch_kaufman(A.detach().reshape(math.prod(A.shape[:-2]), n, n))
        pivots = pivots.cast(dtypes.int32).view(*A.shape[:-1])
    return LDLFactor.apply(A, ld), pivots, zero


def raise_if_zero(name: str, A: Tensor, zero: Tensor) -> None:  # noqa: N803
    """LinAlgError naming the batch element and the column when some ``zero`` (B, n) is set (one host read)."""
    failure = first_failure(zero)
    if failure is not None:
        element, k = failure
        raise LinAlgError(f"{name}: {batch_prefix(A, element)}The factorization could not be completed because D[{k},{k}] "
                          "is exactly zero (the input matrix is singular).")


def ldl_factor_ex(input: Tensor, *, hermitian: bool = False,  # noqa: A002 - PyTorch's names
                  check_errors: bool = False) -> LDLFactorExResult:
    """(LD, pivots, info) of A = L D L^T for each symmetric matrix of ``input`` (*, n, n) (only its lower triangle
    is read), as LAPACK's sytrf (see the module docstring): LD (*, n, n), pivots (*, n) int32, info (*) int32 the
    position of the first zero column met (D is then singular), 0 if none; ``check_errors``: LinAlgError instead."""
    ld, pivots, zero = factor_parts("torch.linalg.ldl_factor_ex", input)
    if check_errors:
        raise_if_zero("torch.linalg.ldl_factor_ex", input, zero)
    return LDLFactorExResult(ld, pivots, first_true(zero, input.shape[:-2]))


def ldl_factor(input: Tensor, *, hermitian: bool = False) -> LDLFactorResult:  # noqa: A002
    """(LD, pivots) of :func:`ldl_factor_ex`; LinAlgError for a singular matrix (PyTorch fails there with an
    internal error)."""
    ld, pivots, zero = factor_parts("torch.linalg.ldl_factor", input)
    raise_if_zero("torch.linalg.ldl_factor", input, zero)
    return LDLFactorResult(ld, pivots)


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:  # noqa: N803
    """X with A X = B from ``ldl_factor``'s (LD, pivots) of A (*, n, n) and B (*, n, k) of LD's dtype; batch dims
    broadcast. Not differentiable (as in PyTorch)."""
    name = "torch.linalg.ldl_solve"
    check_square(name, LD)
    if not is_tensor(pivots) or pivots.dtype.kind not in "iu":
        kind = _torch_name(pivots.dtype) if is_tensor(pivots) else type(pivots).__name__
        raise DTypeError(f"{name}: pivots must be an integer tensor (the pivots of linalg.ldl_factor), got {kind}")
    if pivots.shape != LD.shape[:-1]:
        raise ShapeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with shape "
                         f"{list(pivots.shape)} instead (LD shape {LD.shape})")
    if not is_tensor(B):
        raise TypeError(f"linalg.ldl_solve(): argument 'B' (position 3) must be Tensor, not {type(B).__name__}")
    LD._check_backend(B)
    if B.dims < 2:
        raise ShapeError(f"{name}: The input tensor B must have at least 2 dimensions. (shape {B.shape})")
    if B.dtype != LD.dtype:
        raise DTypeError(f"{name}: Expected b and A to have the same dtype, but found b of type {_torch_name(B.dtype)} "
                         f"and A of type {_torch_name(LD.dtype)} instead.")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise ShapeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} but each b matrix is "
                         f"{B.shape[-2]} by {B.shape[-1]}")
    batch = broadcast_batch(name, LD, B, LD, B)
    return LDLSolve.apply(LD.expand(*batch, n, n), B.expand(*batch, *B.shape[-2:]), pivots.expand(*batch, n))


LINALG: dict[str, Callable[..., Any]] = {"ldl_factor": ldl_factor, "ldl_factor_ex": ldl_factor_ex, "ldl_solve": ldl_solve}
"""The ``mt.linalg`` functions of this module, by their PyTorch names."""
