"""The LU family: ``linalg.lu_factor lu_factor_ex lu lu_solve`` and the older ``mt.lu lu_unpack lu_solve``.

All reuse :func:`minitensor.linalg_solve.factor` (LAPACK's getrf: PA = LU with partial pivoting) and its
substitutions; no new kernels. Pivots are LAPACK's: 1-based int32, step k swapped rows k and pivots[k] - 1; the
row permutation they make is built by applying those swaps in order (batched, no host read). ``linalg.lu`` gives
A = P L U with P (*, m, m), L (*, m, k) unit lower and U (*, k, n), k = min(m, n). The packed factors of
``lu_factor`` (and ``mt.lu``) are differentiable as PyTorch's are: their gradient below the diagonal is L's, on and
above it U's.

Gradients are PyTorch's closed forms, derived from dA = P (dL U + L dU). Square: gA = P L^-T (tril_(L^T gL) +
triu(gU U^T)) U^-T (tril_: strictly lower). Tall (L = [L1; L2]): the top block as square with gU U^T - L2^T gL2 in
place of gU U^T, the bottom block gL2 U^-T. Wide (U = [U1 U2]): the left block as square with L^T gL - gU2 U2^T in
place of L^T gL, the right block L^-T gU2. For X = A^-1 B: gB = A^-T gX, gR = -U^-T gX X^T, gU = triu(gR),
gL = tril_(L^-T gR U^T); for X = A^-T B: gB = A^-1 gX, gU = -triu(Z gB^T) with Z = U^-T B, gL = -tril_(W H^T) with
W = P^T X and H = L^-1 P^T gX. Backwards are not differentiable again. ``lu_unpack`` is tril/triu of its input, so
autodiff differentiates it; the permutation matrices have no gradient.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context, no_grad
from .errors import DTypeError, IndexOutOfRangeError, ShapeError
from .linalg_extra import first_true
from .linalg_solve import (
    Factors,
    as_shape,
    broadcast_batch,
    check_float,
    check_rhs,
    check_square,
    eye_like,
    factor,
    is_tensor,
    raise_if_singular,
    substitute_,
    take_rows,
)
from .linalg_solve import lu_solve as solve_factored
from .tensor_compare import where
from .tensor_inplace import _torch_name
from .tensor_join import cat
from .tensor_order import gather_raw

if TYPE_CHECKING:
    from .tensor import Tensor


class LUFactorResult(NamedTuple):
    """(LU, pivots), as ``torch.return_types.linalg_lu_factor``."""

    LU: Tensor  # noqa: N815 - PyTorch's field name
    pivots: Tensor


class LUFactorExResult(NamedTuple):
    """(LU, pivots, info), as ``torch.return_types.linalg_lu_factor_ex``."""

    LU: Tensor  # noqa: N815 - PyTorch's field name
    pivots: Tensor
    info: Tensor


class LUResult(NamedTuple):
    """(P, L, U), as ``torch.return_types.linalg_lu``."""

    P: Tensor  # noqa: N815 - PyTorch's field names
    L: Tensor  # noqa: N815
    U: Tensor  # noqa: N815


class LUUnpackResult(NamedTuple):
    """(P, L, U), as ``torch.return_types.lu_unpack``."""

    P: Tensor  # noqa: N815
    L: Tensor  # noqa: N815
    U: Tensor  # noqa: N815


class LUWithInfoResult(NamedTuple):
    """(LU, pivots, info), as ``torch.return_types._lu_with_info`` (``torch.lu(A, get_infos=True)``)."""

    LU: Tensor  # noqa: N815
    pivots: Tensor
    info: Tensor


# --- helpers (no history: call under no_grad) ---


def permutation_of(pivots: Tensor, m: int) -> Tensor:
    """perm (B, m) int64 of LAPACK's swaps ``pivots`` (B, k) (0-based, int64): row i of PA is row perm[i] of A."""
    batch = pivots.shape[0]
    rows = pivots._lift(np.arange(m), dtypes.int64)
    perm = rows.expand(batch, m)
    for k in range(pivots.shape[-1]):
        pivot = pivots[:, k : k + 1]
        perm = gather_raw(perm, 1, where(rows == k, pivot, where(rows == pivot, k, rows)))
    return perm


def inverse_of(perm: Tensor) -> Tensor:
    """The inverse permutation (B, m): inverse[perm[i]] = i."""
    m = perm.shape[-1]
    rows = perm._lift(np.arange(m).reshape(m, 1), dtypes.int64)
    return ((perm.unsqueeze(-1) == rows.view(m)).cast(dtypes.int64) * rows).sum(1)


def p_matrix(perm: Tensor, dtype: Any) -> Tensor:
    """P (B, m, m) in ``dtype`` with A = P (PA): P[perm[i], i] = 1."""
    m = perm.shape[-1]
    return (perm.unsqueeze(-2) == perm._lift(np.arange(m).reshape(m, 1), dtypes.int64)).cast(dtype)


def factors_of(lu: Tensor, pivots: Tensor) -> Factors:
    """The Factors of packed ``lu`` (B, n, n) and LAPACK's 1-based ``pivots`` (B, n) (sign unused: ones)."""
    zero_based = pivots.cast(dtypes.int64) - 1
    return Factors(lu, permutation_of(zero_based, lu.shape[-2]), zero_based, lu._lift(np.ones(lu.shape[0])))


def left_solve(t: Tensor, x: Tensor, *, lower: bool, unit: bool) -> Tensor:
    """t^-1 x for triangular t (B, n, n) (its ``lower`` or upper triangle), x (B, n, k); x is not changed."""
    return substitute_(t, x.clone(), lower=lower, unit=unit)


def right_solve(x: Tensor, t: Tensor, *, lower: bool, unit: bool) -> Tensor:
    """x t^-1 for triangular t (B, n, n) (its ``lower`` or upper triangle), x (B, k, n): (t^-T x^T)^T."""
    return substitute_(t.mT, x.mT.clone(), lower=not lower, unit=unit).mT


def unpack(lu: Tensor) -> tuple[Tensor, Tensor]:
    """(L (B, m, k) unit lower, U (B, k, n) upper) of packed ``lu`` (B, m, n)."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    return lu[:, :, :k].tril(-1) + eye_like(lu, max(m, n))[:m, :k], lu[:, :k, :].triu()


def lu_gradient(lower: Tensor, upper: Tensor, perm: Tensor, gl: Tensor | None, gu: Tensor | None) -> Tensor:
    """gA (B, m, n) of A = P L U from gL (B, m, k) and/or gU (B, k, n) (None: zero); see the module docstring."""
    m, k = lower.shape[-2:]
    n = upper.shape[-1]
    gl = lower._zeros(lower.shape) if gl is None else gl.tril(-1)
    gu = upper._zeros(upper.shape) if gu is None else gu.triu()
    l1, u1 = lower[:, :k], upper[:, :, :k]
    if m >= n:
        l2, gl2 = lower[:, k:], gl[:, k:]
        inner = (l1.mT @ gl[:, :k]).tril(-1) + (gu @ upper.mT - l2.mT @ gl2).triu()
        top = right_solve(left_solve(l1.mT, inner, lower=False, unit=True), upper.mT, lower=True, unit=False)
        g = cat([top, right_solve(gl2, upper.mT, lower=True, unit=False)], 1) if m > n else top
    else:
        u2, gu2 = upper[:, :, k:], gu[:, :, k:]
        inner = (lower.mT @ gl - gu2 @ u2.mT).tril(-1) + (gu[:, :, :k] @ u1.mT).triu()
        g = left_solve(lower.mT, cat([right_solve(inner, u1.mT, lower=True, unit=False), gu2], 2), lower=False,
                       unit=True)
    return take_rows(g, inverse_of(perm))


# --- Functions ---


class LUFactor(F.TensorFunction):
    """The packed LU factors (*, m, n); the gradient's part below the diagonal is L's, the rest U's, both through
    :func:`lu_gradient` (PyTorch's)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, f: Factors) -> Tensor:
        with no_grad():
            lower, upper = unpack(f.lu)
        ctx.save_for_backward(lower, upper, f.perm, a.shape)
        return as_shape(f.lu, a.shape)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None]:
        lower, upper, perm, shape = ctx.saved_values
        k = lower.shape[-1]
        g = g.reshape(*lower.shape[:-1], upper.shape[-1])
        return lu_gradient(lower, upper, perm, g[:, :, :k], g[:, :k, :]).reshape(*shape), None


class LUFactorL(F.TensorFunction):
    """L of A = P L U; its gradient through :func:`lu_gradient`."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, lower: Tensor, upper: Tensor, perm: Tensor) -> Tensor:
        ctx.save_for_backward(lower, upper, perm, a.shape)
        return as_shape(lower, (*a.shape[:-2], *lower.shape[-2:]))

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None, None, None]:
        lower, upper, perm, shape = ctx.saved_values
        return lu_gradient(lower, upper, perm, g.reshape(*lower.shape), None).reshape(*shape), None, None, None


class LUFactorU(F.TensorFunction):
    """U of A = P L U; its gradient through :func:`lu_gradient`."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, lower: Tensor, upper: Tensor, perm: Tensor) -> Tensor:
        ctx.save_for_backward(lower, upper, perm, a.shape)
        return as_shape(upper, (*a.shape[:-2], *upper.shape[-2:]))

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None, None, None]:
        lower, upper, perm, shape = ctx.saved_values
        return lu_gradient(lower, upper, perm, None, g.reshape(*upper.shape)).reshape(*shape), None, None, None


class LUSolve(F.TensorFunction):
    """X = A^-1 B (A^-T B when ``adjoint``) from A's packed factors lu (*, n, n) and B (*, n, k), one batch shape;
    the gradients of the module docstring, to lu (packed as lu is) and B."""

    @staticmethod
    def forward(ctx: Context, lu: Tensor, b: Tensor, pivots: Tensor, adjoint: bool) -> Tensor:
        n, k = b.shape[-2:]
        count = math.prod(b.shape[:-2])
        with no_grad():
            f = factors_of(lu.reshape(count, n, n), pivots.reshape(count, n))
            out = solve_factored(f, b.reshape(count, n, k), adjoint=adjoint)
        ctx.save_for_backward(*f, b.reshape(count, n, k), out, adjoint, b.shape)
        return as_shape(out, b.shape)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor | None, Tensor, None, None]:
        *factors, b, out, adjoint, shape = ctx.saved_values
        f = Factors(*factors)
        g = g.reshape(*out.shape)
        grad_b = solve_factored(f, g, adjoint=not adjoint)
        if not ctx.needs_input_grad[0]:
            return None, grad_b.view(*shape), None, None
        lu = f.lu
        if not adjoint:
            r = -left_solve(lu.mT, g, lower=True, unit=False) @ out.mT  # -U^-T gX X^T
            lower_part = left_solve(lu.mT, r @ lu.triu().mT, lower=False, unit=True)
            grad_lu = lower_part.tril(-1) + r.triu()
        else:
            z = left_solve(lu.mT, b, lower=True, unit=False)
            h = left_solve(lu, take_rows(g, f.perm), lower=True, unit=True)
            grad_lu = -((take_rows(out, f.perm) @ h.mT).tril(-1) + (z @ grad_b.mT).triu())
        return grad_lu.view(*shape[:-2], *lu.shape[-2:]), grad_b.view(*shape), None, None


# --- checks ---


def check_pivots(name: str, pivots: Any, shape: tuple[int, ...], what: str) -> None:
    """TypeError unless ``pivots`` is a Tensor, DTypeError unless int32, ShapeError unless its shape is ``shape``."""
    if not is_tensor(pivots):
        raise TypeError(f"{name}(): argument '{what}' must be Tensor, not {type(pivots).__name__}")
    if pivots.dtype != dtypes.int32:
        raise DTypeError(f"{name}: {what} should be a Tensor of scalar type torch.int32, got {_torch_name(pivots.dtype)} "
                         "(pass the pivots of linalg.lu_factor)")
    if pivots.shape != shape:
        raise ShapeError(f"{name}: Expected the shape of {what} to be {shape} (the LU factors' batch shape and "
                         f"min(m, n)), but got {pivots.shape}")


def check_pivot_range(name: str, pivots: Tensor, m: int) -> None:
    """IndexOutOfRangeError unless every pivot is in [1, m] (one host read)."""
    if pivots.numel() and not bool(((pivots >= 1) & (pivots <= m)).all().item()):
        raise IndexOutOfRangeError(f"{name}: pivots must be between 1 and LU.size(-2) = {m} inclusive, but got values in "
                                   f"[{int(pivots.amin().item())}, {int(pivots.amax().item())}]. Did you properly pass "
                                   "the result of lu_factor?")


def check_lu_input(name: str, A: Any, what: str = "A") -> None:  # noqa: N803 - PyTorch's names
    """TypeError unless A is a Tensor, ShapeError unless it has at least 2 dims (PyTorch's message)."""
    if not is_tensor(A):
        raise TypeError(f"{name}(): argument '{what}' (position 1) must be Tensor, not {type(A).__name__}")
    if A.dims < 2:
        raise ShapeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead")


# --- the public ops ---


def linalg_lu_factor(A: Tensor, *, pivot: bool = True) -> LUFactorResult:  # noqa: N803
    """(LU, pivots) of each matrix of A (*, m, n), as LAPACK's getrf: L's multipliers below the diagonal and U on
    and above it; pivots (*, min(m, n)) int32, 1-based (row i was swapped with row pivots[i] - 1). LU is
    differentiable (square, tall and wide); the pivots are not."""
    if not is_tensor(A):
        raise TypeError(f"linalg.lu_factor(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.dims < 2:
        raise ShapeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead")
    result, f = lu_factor_unchecked(A, pivot)
    raise_if_singular("torch.linalg.lu_factor", A, f, LU_ZERO_PIVOT)
    return result


LU_ZERO_PIVOT = ("U[{k},{k}] is zero and using it on lu_solve would result in a division by zero. If you still want to "
                 "perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
"""PyTorch's message for a zero on U's diagonal in ``lu_factor`` (``{k}``: its 1-based position)."""


def lu_factor_unchecked(A: Tensor, pivot: bool = True) -> tuple[LUFactorResult, Factors]:  # noqa: N803
    """:func:`linalg_lu_factor` without the singularity check, and the factors (for ``lu_factor_ex``)."""
    check_float("linalg.lu_factor", A)
    if not pivot:
        raise NotImplementedError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    f = factor(A)
    with no_grad():
        pivots = (f.pivots + 1).cast(dtypes.int32).view(*A.shape[:-2], f.pivots.shape[-1])
    return LUFactorResult(LUFactor.apply(A, f), pivots), f


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> LUFactorExResult:  # noqa: N803
    """(LU, pivots, info): ``linalg.lu_factor``'s and info (*) int32, the position of U's first zero diagonal element
    (0 when none); ``check_errors``: LinAlgError instead."""
    (lu, pivots), f = lu_factor_unchecked(A, pivot)
    if check_errors:
        raise_if_singular("torch.linalg.lu_factor_ex", A, f, LU_ZERO_PIVOT)
    with no_grad():
        bad = lu.diagonal(0, -2, -1) == 0
    return LUFactorExResult(lu, pivots, first_true(bad, A.shape[:-2]))


def linalg_lu(A: Tensor, *, pivot: bool = True) -> LUResult:  # noqa: N803
    """A = P L U for each matrix of A (*, m, n) (float), k = min(m, n): P (*, m, m) a permutation matrix in A's
    dtype, L (*, m, k) unit lower triangular, U (*, k, n) upper triangular; LAPACK's pivoting. L and U are
    differentiable (also for rectangular A); P is not. ``pivot=False`` raises NotImplementedError, as PyTorch's CPU
    build does."""
    check_lu_input("linalg.lu", A)
    check_float("linalg.lu", A)
    if not pivot:
        raise NotImplementedError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    m, n = A.shape[-2:]
    f = factor(A)
    with no_grad():
        lower, upper = unpack(f.lu)
        p = as_shape(p_matrix(f.perm, A.dtype), (*A.shape[:-2], m, m))
    return LUResult(p, LUFactorL.apply(A, lower, upper, f.perm), LUFactorU.apply(A, lower, upper, f.perm))


def linalg_lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,  # noqa: N803
                    adjoint: bool = False) -> Tensor:
    """X with A X = B from ``linalg.lu_factor``'s (LU, pivots) of A (*, n, n): ``adjoint`` solves A^T X = B,
    ``left=False`` X A = B (X A^T = B with ``adjoint``); B (*, n, k) ((*, k, n) when not ``left``) of LU's dtype;
    batch dims broadcast. A singular U gives inf or nan, not an error. Differentiable in LU and B."""
    name = "linalg.lu_solve"
    check_square("torch.linalg.lu_solve", LU)
    n = LU.shape[-1]
    check_pivots(name, pivots, (*LU.shape[:-2], n), "pivots")
    if not is_tensor(B):
        raise TypeError(f"{name}(): argument 'B' (position 3) must be Tensor, not {type(B).__name__}")
    LU._check_backend(B)
    if B.dims < 2:
        raise ShapeError(f"{name}: The input tensor B must have at least 2 dimensions. (shape {B.shape})")
    if B.dtype != LU.dtype:
        raise DTypeError(f"{name}: Expected LU and B to have the same dtype, but found LU of type "
                         f"{_torch_name(LU.dtype)} and B of type {_torch_name(B.dtype)} instead")
    check_rhs(name, n, B, left)
    check_pivot_range(name, pivots, n)
    b = B if left else B.mT  # X A = B is A^T X^T = B^T; X A^T = B is A X^T = B^T
    batch = broadcast_batch(name, LU, B, LU, b)
    x = LUSolve.apply(LU.expand(*batch, n, n), b.expand(*batch, *b.shape[-2:]),
                      pivots.expand(*batch, n), adjoint != (not left))
    return x if left else x.mT


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,  # noqa: N803
              unpack_pivots: bool = True) -> LUUnpackResult:
    """(P, L, U) of ``linalg.lu_factor``'s (LU, pivots) of A (*, m, n), as ``linalg.lu`` gives them; a part not
    asked for (``unpack_data``: L and U, ``unpack_pivots``: P) is an empty tensor. L and U are tril/triu of LU_data
    (differentiable); pivots (*, min(m, n)) int32 broadcast over LU_data's batch."""
    name = "torch.lu_unpack"
    check_lu_input(name, LU_data, "LU_data")
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    empty = LU_data._zeros((0,))
    p = empty
    if unpack_pivots:
        if not is_tensor(LU_pivots) or LU_pivots.dtype != dtypes.int32:
            kind = _torch_name(LU_pivots.dtype) if is_tensor(LU_pivots) else type(LU_pivots).__name__
            raise DTypeError(f"{name}: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype, got {kind}. "
                             "Note: this function is intended to be used with the output produced by "
                             "torch.linalg.lu_factor")
        if LU_pivots.dims < 1 or LU_pivots.shape[-1] != k:
            raise ShapeError(f"{name}: Expected LU_pivots of shape (*, {k}) for LU_data of shape {LU_data.shape}, "
                             f"but got {LU_pivots.shape}")
        check_pivot_range(name, LU_pivots, m)
        with no_grad():
            batch = broadcast_batch(name, LU_data, LU_pivots, LU_data, LU_pivots.unsqueeze(-1))
            flat = LU_pivots.expand(*batch, k).reshape(-1, k).cast(dtypes.int64) - 1
            p = p_matrix(permutation_of(flat, m), LU_data.dtype).reshape(*batch, m, m)
    if not unpack_data:
        return LUUnpackResult(p, empty, empty)
    lower = LU_data[..., :k].tril(-1) + eye_like(LU_data, max(m, n))[:m, :k]
    return LUUnpackResult(p, lower, LU_data[..., :k, :].triu())


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> Any:  # noqa: N803
    """``torch.lu``: (LU, pivots) of :func:`minitensor.linalg_solve.linalg_lu_factor` without its singularity
    check; with ``get_infos`` also info (*) int32 (the position of U's first zero diagonal element, 0 if none). As
    ``linalg.lu_factor`` here, no derivative (PyTorch differentiates it)."""
    check_lu_input("torch.lu", A)
    (packed, pivots), _ = lu_factor_unchecked(A, pivot)
    if not get_infos:
        return packed, pivots
    with no_grad():
        info = first_true(packed.diagonal(0, -2, -1) == 0, A.shape[:-2])
    return LUWithInfoResult(packed, pivots, info)


def lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:  # noqa: A002, N803
    """``torch.lu_solve(b, LU_data, LU_pivots)``: X with A X = b (``input``) from (LU_data, LU_pivots) of A,
    :func:`linalg_lu_solve` with the right-hand side first."""
    return linalg_lu_solve(LU_data, LU_pivots, input)


LINALG: dict[str, Callable[..., Any]] = {"lu_factor": linalg_lu_factor, "lu_factor_ex": lu_factor_ex, "lu": linalg_lu,
                                         "lu_solve": linalg_lu_solve}
"""The ``mt.linalg`` functions of this module, by their PyTorch names."""

__all__ = ["lu", "lu_unpack", "lu_solve"]
