"""The QR decomposition (``linalg.qr``, ``mt.qr``) and the symmetric eigendecomposition (``linalg.eigh eigvalsh``),
with the helpers the SVD (linalg_svd.py) shares: the round-robin Jacobi schedule, the rotation and the sign rule.

As in :mod:`minitensor.linalg_solve`, no new kernels: every step is a batched tensor op under ``no_grad``, so every
backend runs it, batched over the leading dims. QR is LAPACK's Householder QR (geqrf, then orgqr for Q): min(m, n)
reflector steps with LAPACK's choice of sign (R's diagonal element is -sign(x0) ||x||, a column already zero below
the diagonal is left as it is), so Q and R are LAPACK's (and PyTorch's). eigh is the cyclic Jacobi method: a sweep
rotates every pair (p, q) once, in n - 1 rounds (n odd: n) of disjoint pairs in round-robin order, each round one
set of batched element-wise ops and gathers on all pairs at once (the rotated (p, q) entries are then set to exactly
0); sweeps run until the off-diagonal Frobenius norm is at most eps ||A||_F in every matrix (at most MAX_SWEEPS,
else LinAlgError). Each input is first divided by a power of two near its largest |entry| (exact) so that squares
neither overflow nor underflow. Eigenvalues ascend; each eigenvector is normalised so that its component of largest
magnitude (the first of equal ones) is positive (PyTorch leaves the sign to LAPACK), and a non-finite matrix gives
nan instead of LAPACK's unspecified values.

Gradients are PyTorch's closed forms; each output is its own Function (the formulas are linear in the output
gradients), so an output that is not used adds nothing, as an undefined gradient in PyTorch: eigh gA = V (diag(gL)
+ skew(V^T gV) / (L_j - L_i)) V^T; QR (mode reduced, or complete with m <= n) gA = (gQ + Q copyltu(M)) R^-T with
M = R gR^T - Q^T gQ, and for m < n the same on the first m columns with gQ + Y gV^T, and Q gV for the rest Y.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context, no_grad
from .errors import GradientError, LinAlgError, ShapeError
from .linalg_solve import as_shape, batch_prefix, check_float, check_square, eye_like, first_failure, is_tensor, substitute_
from .tensor_compare import where
from .tensor_join import cat
from .tensor_order import gather_raw, sort_indices
from .tensor_reduce import arg_extreme

if TYPE_CHECKING:
    from .tensor import Tensor

MAX_SWEEPS = 30
"""The most Jacobi sweeps before LinAlgError (LAPACK's one-sided Jacobi, gesvj, allows 30)."""


class QRResult(NamedTuple):
    """(Q, R), as ``torch.return_types.linalg_qr`` (and ``torch.return_types.qr``)."""

    Q: Tensor  # noqa: N815 - PyTorch's field names
    R: Tensor  # noqa: N815


class EighResult(NamedTuple):
    """(eigenvalues, eigenvectors), as ``torch.return_types.linalg_eigh``."""

    eigenvalues: Tensor
    eigenvectors: Tensor


# --- shared helpers (no history: call under no_grad) ---


def check_matrix(name: str, A: Any, what: str = "A") -> None:  # noqa: N803 - PyTorch's names
    """TypeError unless A is a Tensor, ShapeError unless it has at least 2 dims, DTypeError unless it is float."""
    if not is_tensor(A):
        raise TypeError(f"{name}(): argument '{what}' (position 1) must be Tensor, not {type(A).__name__}")
    if A.dims < 2:
        raise ShapeError(f"{name}: The input tensor {what} must have at least 2 dimensions. (shape {A.shape})")
    check_float(name, A)


def flat_copy(a: Tensor) -> Tensor:
    """A contiguous copy without history of a (*, m, n), seen as (B, m, n)."""
    return a.detach().clone().view(math.prod(a.shape[:-2]), *a.shape[-2:])


def eps_of(a: Tensor) -> float:
    """The machine epsilon of a's dtype."""
    return float(np.finfo(a.dtype).eps)


def power_of_two(a: Tensor) -> Tensor:
    """(B, 1, 1): 2^floor(log2 max|a|) for each matrix of a (B, m, n) (1 where it is 0 or not finite): dividing by
    it is exact and puts the largest |entry| in [1, 2)."""
    amax = a.abs().amax((-2, -1), keepdim=True)
    ok = (amax > 0) & (amax < math.inf)
    return where(ok, 2.0 ** where(ok, amax, 1.0).log2().floor(), 1.0)


@functools.lru_cache(maxsize=64)
def schedule(n: int) -> tuple[tuple[int, ...], ...]:
    """The rounds of a round-robin over n indices (the circle method), each as the partner of every index (itself
    for the one sitting out when n is odd): every pair meets once, and a round's pairs are disjoint."""
    players = n + n % 2
    order = list(range(players))
    rounds = []
    for _ in range(players - 1):
        partner = list(range(n))
        for k in range(players // 2):
            p, q = order[k], order[players - 1 - k]
            if p < n and q < n:
                partner[p], partner[q] = q, p
        rounds.append(tuple(partner))
        order = [order[0], order[-1], *order[1:-1]]
    return tuple(rounds)


class Round(NamedTuple):
    """One round's constants on a backend: ``partner`` (n,) int64; ``lo`` (n,) +1 for the first index of a pair,
    -1 for the second, 0 for one sitting out; ``keep`` (n, n) 0 at each pair's two off-diagonal entries, else 1;
    ``flat`` (3n,) int64 positions in a row-major n x n matrix of a_ii, a_jj and a_max(i,j),min(i,j) (j = partner)."""

    partner: Tensor
    lo: Tensor
    keep: Tensor
    flat: Tensor


def rounds_on(like: Tensor, n: int) -> list[Round]:
    """The rounds of :func:`schedule` as tensors on like's backend (float ones in like's dtype)."""
    out = []
    for partner in schedule(n):
        p = np.array(partner)
        i = np.arange(n)
        keep = np.ones((n, n))
        keep[i[p != i], p[p != i]] = 0.0
        flat = np.concatenate([i * (n + 1), p * (n + 1), np.maximum(i, p) * n + np.minimum(i, p)])
        out.append(Round(like._lift(p, dtypes.int64), like._lift(np.sign(p - i).astype(float)), like._lift(keep),
                         like._lift(flat, dtypes.int64)))
    return out


def rotation(alpha: Tensor, beta: Tensor, gamma: Tensor, lo: Tensor) -> tuple[Tensor, Tensor]:
    """(c, s) (B, n) of the Jacobi rotation that makes [[alpha, gamma], [gamma, beta]] diagonal, for each index with
    alpha its own value, beta its partner's: t = sign(zeta) / (|zeta| + sqrt(1 + zeta^2)), zeta = (beta - alpha) / 2
    gamma (no rotation where gamma is 0); the second index of a pair gets -s. A pair's columns then become
    x_i c - x_partner s (see :func:`rotate`)."""
    zero = gamma == 0
    zeta = (beta - alpha) / (where(zero, 1.0, gamma) * 2.0)
    t = where(zeta == 0, lo, zeta.sign()) / (zeta.abs() + (zeta * zeta + 1.0).sqrt())
    t = where(zero, 0.0, t)
    c = 1.0 / (t * t + 1.0).sqrt()
    return c, c * t


def pairs_of(x: Tensor, dim: int, partner: Tensor) -> Tensor:
    """x with each index along ``dim`` (-1 or -2) replaced by its partner's (a gather, no history)."""
    shape = [1] * x.dims
    shape[dim] = x.shape[dim]
    return gather_raw(x, dim, partner.view(*shape).expand(*x.shape))


def rotate(x: Tensor, dim: int, c: Tensor, s: Tensor, partner: Tensor) -> Tensor:
    """The rotation (c, s (B, n)) applied to the columns (``dim=-1``) or rows (-2) of x (B, ., .)."""
    at = -2 if dim == -1 else -1
    c, s = c.unsqueeze(at), s.unsqueeze(at)
    return x * c - pairs_of(x, dim, partner) * s


def positive_largest(v: Tensor, dim: int = -2) -> Tensor:
    """The signs (+-1, v's shape with ``dim`` of size 1) that make each vector along ``dim`` of v have its
    largest-magnitude component (the first of equal ones) positive."""
    dim %= v.dims
    return signs(gather_raw(v, dim, arg_extreme(v.abs(), dim, "max")).signbit())


def signs(negative: Tensor) -> Tensor:
    """-1 where ``negative``, else 1, in the default float dtype (products promote it to the other operand's)."""
    return where(negative, -1.0, 1.0)


# --- QR ---


def householder(a: Tensor) -> tuple[Tensor, list[Tensor], list[Tensor]]:
    """(R, reflectors, taus) of LAPACK's geqrf on a (B, m, n), overwritten by R: step j reflects rows j: with
    H = I - tau v v^T, v (B, m - j, 1) with v[0] = 1, tau (B, 1, 1)."""
    b, m, n = a.shape
    one = a._lift(np.ones((1, 1, 1))).expand(b, 1, 1)
    vs, taus = [], []
    for j in range(min(m, n)):
        alpha, rest = a[:, j : j + 1, j : j + 1], a[:, j + 1 :, j : j + 1]
        rest2 = (rest * rest).sum(-2, keepdim=True)
        norm = (alpha * alpha + rest2).sqrt()
        beta = where(alpha.signbit(), norm, -norm)  # -sign(alpha) ||x||, as Fortran's SIGN (-0.0 counts as negative)
        trivial = rest2 == 0
        tau = where(trivial, 0.0, (beta - alpha) / where(trivial, 1.0, beta))
        v = cat([one, rest / where(trivial, 1.0, alpha - beta)], 1)
        if j + 1 < n:
            block = a[:, j:, j + 1 :]
            block.sub_(v * (tau * (v.mT @ block)))
        alpha.copy_(where(trivial, alpha, beta))
        rest.zero_()
        vs.append(v)
        taus.append(tau)
    return a, vs, taus


def form_q(like: Tensor, vs: list[Tensor], taus: list[Tensor], m: int, cols: int) -> Tensor:
    """The first ``cols`` columns of H_0 H_1 ... (B, m, cols), as LAPACK's orgqr."""
    q = eye_like(like, m)[:, :cols].expand(like.shape[0], m, cols).clone()
    for j in reversed(range(len(vs))):
        block = q[:, j:, :]
        block.sub_(vs[j] * (taus[j] * (vs[j].mT @ block)))
    return q


def solve_rt(x: Tensor, r: Tensor) -> Tensor:
    """x R^-T for R (B, n, n) upper triangular and x (B, m, n)."""
    return substitute_(r, x.mT.contiguous(), lower=False, unit=False).mT


def qr_gradient(q: Tensor, r: Tensor, gq: Tensor | None, gr: Tensor | None) -> Tensor:
    """PyTorch's QR gradient for Q (B, m, k), R (B, k, n) (reduced; Q square when m < n) from gQ or gR (the other
    None)."""
    m, n = q.shape[-2], r.shape[-1]
    if m < n:  # A = [X | Y]: X = Q U is square QR, V = Q^T Y
        u, gv = r[..., :m], gr[..., m:] if gr is not None else None
        if gv is not None:
            gq = q @ r[..., m:] @ gv.mT if gq is None else gq + q @ r[..., m:] @ gv.mT
        gx = qr_gradient(q, u, gq, gr[..., :m] if gr is not None else None)
        return cat([gx, q @ gv if gv is not None else q._zeros((*q.shape[:-1], n - m))], -1)
    mm = gr @ r.mT if gr is not None else q._zeros((*q.shape[:-2], n, n))
    if gq is not None:
        mm = mm - q.mT @ gq
    upper = mm.triu()
    g = q @ (upper + upper.triu(1).mT)
    return solve_rt(g + gq if gq is not None else g, r)


class QRQ(F.TensorFunction):
    """Q of A = QR; its gradient through :func:`qr_gradient`."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, q: Tensor, r: Tensor, complete: bool) -> Tensor:
        ctx.save_for_backward(q, r, complete, a.shape)
        with no_grad():
            return as_shape(q.clone(), (*a.shape[:-2], *q.shape[-2:]))

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None, None, None]:
        q, r, complete, shape = ctx.saved_values
        if math.prod(shape) == 0:
            return g._zeros(shape), None, None, None
        if complete and shape[-2] > shape[-1]:
            raise GradientError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        return qr_gradient(q, r, g.reshape(*q.shape), None).reshape(*shape), None, None, None


class QRR(F.TensorFunction):
    """R of A = QR; its gradient through :func:`qr_gradient` (none in mode 'r')."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, q: Tensor | None, r: Tensor, complete: bool) -> Tensor:
        ctx.save_for_backward(q, r, complete, a.shape)
        with no_grad():
            return as_shape(r.clone(), (*a.shape[:-2], *r.shape[-2:]))

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None, None, None]:
        q, r, complete, shape = ctx.saved_values
        if math.prod(shape) == 0:
            return g._zeros(shape), None, None, None
        if q is None:
            raise GradientError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                                "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
        if complete and shape[-2] > shape[-1]:
            raise GradientError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        return qr_gradient(q, r, None, g.reshape(*r.shape)).reshape(*shape), None, None, None


def qr_factors(a: Tensor, cols: int, with_q: bool = True) -> tuple[Tensor | None, Tensor]:
    """(Q (B, m, cols) or None, R (B, cols, n)) of each matrix of a (*, m, n), without history."""
    m, n = a.shape[-2:]
    with no_grad():
        x = flat_copy(a)
        scale = power_of_two(x) if x.numel() else 1.0
        r, vs, taus = householder(x / scale)
        q = form_q(x, vs, taus, m, cols) if with_q else None
        return q, r[:, :cols] * scale


def linalg_qr(A: Tensor, mode: str = "reduced") -> QRResult:  # noqa: N803 - PyTorch's names
    """A = QR for each matrix of A (*, m, n), k = min(m, n): ``mode='reduced'`` Q (*, m, k) with orthonormal
    columns and R (*, k, n) upper triangular; ``'complete'`` Q (*, m, m), R (*, m, n); ``'r'`` only R (Q is empty).
    R's diagonal follows LAPACK's signs. Differentiable except mode 'r' and 'complete' with m > n."""
    check_matrix("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or "
                         "'complete'")
    m, n = A.shape[-2:]
    q, r = qr_factors(A, m if mode == "complete" else min(m, n), mode != "r")
    R = QRR.apply(A, q, r, mode == "complete")  # noqa: N806
    if q is None:
        return QRResult(A._zeros((0,)), R)
    return QRResult(QRQ.apply(A, q, r, mode == "complete"), R)


def qr(input: Tensor, some: bool = True) -> QRResult:  # noqa: A002 - PyTorch's names
    """``torch.qr``: :func:`linalg_qr` with mode 'reduced' (``some=True``) or 'complete'."""
    return linalg_qr(input, "reduced" if some else "complete")


# --- eigh ---


def jacobi_eigh(a: Tensor, vectors: bool, source: Tensor) -> tuple[Tensor, Tensor | None]:
    """(unsorted eigenvalues (B, n), eigenvectors (B, n, n) or None) of each symmetric matrix of a (B, n, n) by
    cyclic Jacobi sweeps; LinAlgError (naming the batch element of ``source``, the input) after MAX_SWEEPS sweeps
    without convergence."""
    b, n = a.shape[0], a.shape[-1]
    v = eye_like(a, n).expand(b, n, n).clone() if vectors else None
    if n < 2 or a.numel() == 0:
        return a.diagonal(0, -2, -1), v
    rounds = rounds_on(a, n)
    off_diagonal = 1.0 - eye_like(a, n)
    limit = (a * a).sum((-2, -1)) * eps_of(a) ** 2
    for _ in range(MAX_SWEEPS):
        left = (a * a * off_diagonal).sum((-2, -1)) > limit  # a nan matrix stops at once (and gives nan)
        if not left.any().item():
            break
        for p, lo, keep, flat in rounds:
            alpha, beta, gamma = gather_raw(a.view(b, n * n), 1, flat.expand(b, 3 * n)).view(b, 3, n).unbind(1)
            c, s = rotation(alpha, beta, gamma, lo)
            a = rotate(rotate(a, -1, c, s, p), -2, c, s, p) * keep
            if v is not None:
                v = rotate(v, -1, c, s, p)
    else:
        element = first_failure(left.view(b, 1))
        raise LinAlgError(f"linalg.eigh: {batch_prefix(source, element[0] if element else 0)}The algorithm failed to "
                          f"converge in {MAX_SWEEPS} Jacobi sweeps")
    return a.diagonal(0, -2, -1), v


def eigh_factors(A: Tensor, UPLO: str, vectors: bool) -> tuple[Tensor, Tensor | None]:  # noqa: N803
    """(eigenvalues (B, n) ascending, eigenvectors (B, n, n) with the sign rule, or None) of each matrix of A
    (*, n, n), reading its lower (``UPLO='L'``) or upper triangle; without history."""
    if UPLO not in ("L", "U"):
        raise ValueError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    with no_grad():
        x = flat_copy(A)
        x = x.tril() + x.tril(-1).mT if UPLO == "L" else x.triu() + x.triu(1).mT
        if x.numel() == 0:
            return x.diagonal(0, -2, -1).clone(), x if vectors else None
        scale = power_of_two(x)
        values, v = jacobi_eigh(x / scale, vectors, A)
        order = sort_indices(values, 1, False)
        finite = x.isfinite().view(x.shape[0], -1).all(-1)
        values = where(finite.view(-1, 1), gather_raw(values, -1, order) * scale.view(-1, 1), math.nan)
        if v is not None:
            v = gather_raw(v, -1, order.unsqueeze(-2).expand(*v.shape))
            v = where(finite.view(-1, 1, 1), v * positive_largest(v), math.nan)
        return values, v


class EighValues(F.TensorFunction):
    """The eigenvalues; gA = V diag(gL) V^T."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, values: Tensor, v: Tensor | None) -> Tensor:
        ctx.save_for_backward(v, a.shape)
        with no_grad():
            return as_shape(values.clone(), a.shape[:-1])

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None, None]:
        v, shape = ctx.saved_values
        return ((v * g.reshape(v.shape[0], 1, -1)) @ v.mT).reshape(*shape), None, None


class EighVectors(F.TensorFunction):
    """The eigenvectors; gA = V (skew(V^T gV) / (L_j - L_i)) V^T, skew(X) = (X - X^T) / 2 (infinite at repeated
    eigenvalues)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, values: Tensor, v: Tensor) -> Tensor:
        ctx.save_for_backward(values, v, a.shape)
        with no_grad():
            return as_shape(v.clone(), a.shape)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None, None]:
        values, v, shape = ctx.saved_values
        n = v.shape[-1]
        k = v.mT @ g.reshape(*v.shape)
        gaps = values.unsqueeze(-2) - values.unsqueeze(-1) + eye_like(v, n)
        inner = (k - k.mT) * 0.5 / gaps * (1.0 - eye_like(v, n))
        return (v @ inner @ v.mT).reshape(*shape), None, None


def linalg_eigh(A: Tensor, UPLO: str = "L") -> EighResult:  # noqa: N803
    """(eigenvalues (*, n) ascending, eigenvectors (*, n, n) as columns) of each symmetric matrix of A (*, n, n),
    reading only its lower (``UPLO='L'``) or upper triangle. Each eigenvector's largest-magnitude component is
    positive (PyTorch: LAPACK's sign). Gradients of the eigenvectors are infinite at repeated eigenvalues."""
    check_square("linalg.eigh", A)
    values, v = eigh_factors(A, UPLO, True)
    assert v is not None
    return EighResult(EighValues.apply(A, values, v), EighVectors.apply(A, values, v))


def linalg_eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803
    """The eigenvalues (*, n), ascending, of each symmetric matrix of A (*, n, n) (its ``UPLO`` triangle read)."""
    check_square("linalg.eigvalsh", A)
    values, v = eigh_factors(A, UPLO, A.requires_grad)
    return EighValues.apply(A, values, v)


LINALG: dict[str, Callable[..., Any]] = {"qr": linalg_qr, "eigh": linalg_eigh, "eigvalsh": linalg_eigvalsh}
"""The ``mt.linalg`` functions of this module, by their PyTorch names."""

__all__ = ["qr"]
