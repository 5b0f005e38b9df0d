"""The singular value decomposition: ``linalg.svd svdvals`` and ``mt.svd`` (``torch.svd``: V instead of Vh).

No new kernels (see :mod:`minitensor.linalg_decomp`): one-sided (Hestenes) Jacobi on the columns of A (of A^T when
m < n), after dividing A by a power of two near its largest |entry|: each sweep rotates every pair of columns once,
in round-robin rounds of disjoint pairs (each round one set of batched ops), until every pair's cosine |g_p . g_q| /
(|g_p| |g_q|) is at most TOLERANCE_ULPS * m * eps (at most MAX_SWEEPS sweeps, else LinAlgError). Then S is the
column norms (sorted descending), V the accumulated rotations, and U the Q of the Householder QR of the rotated
columns G = A V with the signs of R's diagonal, which is orthonormal to working precision even where S is 0 and
gives the complete U (``full_matrices``) for free. The singular values have high relative accuracy (Jacobi's), the
vectors are accurate to within about eps / (relative gap). The sign of each singular pair (u_i, v_i) is fixed so that
u_i's largest-magnitude component (the first of equal ones) is positive; the extra columns of a complete U (or rows
of a complete Vh) are normalised on their own. NaN input raises LinAlgError, as PyTorch; a matrix with an
infinite entry gives nan S, U and Vh (PyTorch: nan S, U and Vh unspecified).

Gradients are PyTorch's (svd_backward), each of U, S, Vh its own Function so that unused outputs add nothing:
gA = U [diag(gS) + (skew(U^T gU) S + S skew(V^T gV)) / (S_j^2 - S_i^2)] Vh, plus (I - U U^T) gU S^-1 Vh when m > n
(or U S^-1 gVh (I - V V^T) when m < n); the extra columns of complete U or Vh get no gradient, as in PyTorch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from . import tensor_functions as F
from .autodiff import Context, no_grad
from .errors import LinAlgError
from .linalg_decomp import (
    MAX_SWEEPS,
    check_matrix,
    eps_of,
    flat_copy,
    form_q,
    householder,
    pairs_of,
    positive_largest,
    power_of_two,
    rotate,
    rotation,
    rounds_on,
    signs,
)
from .linalg_solve import as_shape, batch_prefix, eye_like, first_failure
from .tensor_compare import where
from .tensor_join import cat
from .tensor_order import gather_raw, sort_indices

if TYPE_CHECKING:
    from .tensor import Tensor

TOLERANCE_ULPS = 4
"""Columns count as orthogonal when their cosine is at most TOLERANCE_ULPS * m * eps (rounding alone leaves about
sqrt(m) eps)."""


class SVDResult(NamedTuple):
    """(U, S, Vh), as ``torch.return_types.linalg_svd``."""

    U: Tensor  # noqa: N815 - PyTorch's field names
    S: Tensor  # noqa: N815
    Vh: Tensor  # noqa: N815


class SVDOldResult(NamedTuple):
    """(U, S, V), as ``torch.return_types.svd``."""

    U: Tensor  # noqa: N815
    S: Tensor  # noqa: N815
    V: Tensor  # noqa: N815


class Factors(NamedTuple):
    """U (B, m, m or k), S (B, k) descending, Vh (B, k or n, n), without history (U and Vh None for values only)."""

    U: Tensor | None  # noqa: N815
    S: Tensor  # noqa: N815
    Vh: Tensor | None  # noqa: N815


def jacobi_columns(g: Tensor, source: Tensor) -> tuple[Tensor, Tensor]:
    """(G V, V) with V (B, n, n) orthogonal and the columns of G V mutually orthogonal, for g (B, m, n), m >= n;
    LinAlgError (naming the batch element of ``source``, the input) after MAX_SWEEPS sweeps."""
    b, m, n = g.shape
    v = eye_like(g, n).expand(b, n, n).clone()
    if n < 2 or g.numel() == 0:
        return g, v
    rounds = rounds_on(g, n)
    tol = TOLERANCE_ULPS * m * eps_of(g)
    off_diagonal = 1.0 - eye_like(g, n)
    for _ in range(MAX_SWEEPS):
        gram = g.mT @ g
        norms = gram.diagonal(0, -2, -1)
        left = ((gram * gram * off_diagonal > (norms.unsqueeze(-1) * norms.unsqueeze(-2)) * tol**2).sum((-2, -1))) > 0
        if not left.any().item():
            break
        for p, lo, _, _ in rounds:
            partners = pairs_of(g, -1, p)
            alpha = (g * g).sum(-2)
            gamma = (g * partners).sum(-2)
            beta = pairs_of(alpha, -1, p)
            gamma = where(gamma.abs() > (alpha * beta).sqrt() * tol, gamma, 0.0)  # orthogonal enough: no rotation
            c, s = rotation(alpha, beta, gamma, lo)
            at = c.unsqueeze(-2), s.unsqueeze(-2)
            g = g * at[0] - partners * at[1]
            v = rotate(v, -1, c, s, p)
    else:
        element = first_failure(left.view(b, 1))
        raise LinAlgError(f"linalg.svd: {batch_prefix(source, element[0] if element else 0)}The algorithm failed to converge "
                          f"in {MAX_SWEEPS} Jacobi sweeps")
    return g, v


def svd_factors(A: Tensor, full_matrices: bool, vectors: bool) -> Factors:  # noqa: N803 - PyTorch's names
    """The SVD of each matrix of A (*, m, n) as (B, ...) tensors without history (see the module docstring)."""
    m, n = A.shape[-2:]
    k = min(m, n)
    with no_grad():
        x = flat_copy(A)
        b = x.shape[0]
        if x.numel() == 0:
            rows, cols = (m, n) if full_matrices else (k, k)
            return Factors(eye_like(x, m)[:, :rows].expand(b, m, rows).clone(), x._zeros((b, k)),
                           eye_like(x, n)[:cols].expand(b, cols, n).clone())
        finite = x.isfinite().view(b, -1).all(-1)
        infinite = not finite.all().item()
        if infinite:  # nan: LinAlgError, as PyTorch; inf: nan results (PyTorch: nan S, unspecified U and Vh)
            failure = first_failure(x.isnan().view(b, -1).any(-1, keepdim=True))
            if failure is not None:
                raise LinAlgError(f"linalg.svd: {batch_prefix(A, failure[0])}The algorithm failed to converge because "
                                  "the input matrix contained non-finite values.")
            x = where(finite.view(b, 1, 1), x, 0.0)
        scale = power_of_two(x)
        g, v = jacobi_columns((x if m >= n else x.mT) / scale, A)
        s = (g * g).sum(-2).sqrt()
        order = sort_indices(s, 1, True)
        s = gather_raw(s, -1, order)
        s = s * scale.view(b, 1)
        if infinite:
            s = where(finite.view(b, 1), s, math.nan)
        if not vectors:
            return Factors(None, s, None)
        g = gather_raw(g, -1, order.unsqueeze(-2).expand(*g.shape))
        v = gather_raw(v, -1, order.unsqueeze(-2).expand(*v.shape))
        r, vs, taus = householder(g)
        w = form_q(g, vs, taus, g.shape[1], g.shape[1] if full_matrices else k)
        w[..., :k].mul_(signs(r.diagonal(0, -2, -1).signbit()).unsqueeze(-2))
        u, vh = (w, v.mT) if m >= n else (v, w.mT)
        flip = positive_largest(u[..., :k])
        u = cat([u[..., :k] * flip, u[..., k:] * positive_largest(u[..., k:])], -1) if u.shape[-1] > k else u * flip
        vh_k = vh[:, :k] * flip.mT
        vh = cat([vh_k, vh[:, k:] * positive_largest(vh[:, k:], -1)], 1) if vh.shape[1] > k else vh_k
        if infinite:
            u, vh = where(finite.view(b, 1, 1), u, math.nan), where(finite.view(b, 1, 1), vh, math.nan)
        return Factors(u.contiguous(), s, vh.contiguous())


# --- Functions: each saves the reduced (B, m, k) U and (B, k, n) Vh ---


def reduced(f: Factors) -> tuple[Tensor, Tensor, Tensor]:
    """(U, S, Vh) of ``f`` with only the first k columns of U and rows of Vh."""
    assert f.U is not None and f.Vh is not None
    k = f.S.shape[-1]
    return f.U[..., :k], f.S, f.Vh[:, :k]


def gaps(s: Tensor) -> Tensor:
    """E (B, k, k): S_j^2 - S_i^2 off the diagonal, 1 on it."""
    s2 = s * s
    return s2.unsqueeze(-2) - s2.unsqueeze(-1) + eye_like(s, s.shape[-1])


class SVDValues(F.TensorFunction):
    """S; gA = U diag(gS) Vh."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, f: Factors) -> Tensor:
        if f.U is not None:
            ctx.save_for_backward(*reduced(f), a.shape)
        with no_grad():
            return as_shape(f.S.clone(), (*a.shape[:-2], f.S.shape[-1]))

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None]:
        u, s, vh, shape = ctx.saved_values
        return ((u * g.reshape(*s.shape).unsqueeze(-2)) @ vh).reshape(*shape), None


class SVDU(F.TensorFunction):
    """U; gA = U (skew(U^T gU) S / E) Vh (+ (I - U U^T) gU S^-1 Vh when m > n)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, f: Factors) -> Tensor:
        assert f.U is not None
        ctx.save_for_backward(*reduced(f), a.shape)
        with no_grad():
            return as_shape(f.U.clone(), (*a.shape[:-2], *f.U.shape[-2:]))

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None]:
        u, s, vh, shape = ctx.saved_values
        gu = g.reshape(s.shape[0], *g.shape[-2:])[..., : s.shape[-1]]
        k = u.mT @ gu
        core = u @ ((k - k.mT) * s.unsqueeze(-2) / gaps(s))
        if shape[-2] > shape[-1]:
            gus = gu / s.unsqueeze(-2)
            core = core + gus - u @ (u.mT @ gus)
        return (core @ vh).reshape(*shape), None


class SVDVh(F.TensorFunction):
    """Vh; gA = U (S skew(V^T gV) / E) Vh (+ U S^-1 gVh (I - V V^T) when m < n)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, f: Factors) -> Tensor:
        assert f.Vh is not None
        ctx.save_for_backward(*reduced(f), a.shape)
        with no_grad():
            return as_shape(f.Vh.clone(), (*a.shape[:-2], *f.Vh.shape[-2:]))

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None]:
        u, s, vh, shape = ctx.saved_values
        gvh = g.reshape(s.shape[0], *g.shape[-2:])[:, : s.shape[-1]]
        k = vh @ gvh.mT
        core = (s.unsqueeze(-1) * (k - k.mT) / gaps(s)) @ vh
        if shape[-2] < shape[-1]:
            sg = gvh / s.unsqueeze(-1)
            core = core + sg - (sg @ vh.mT) @ vh
        return (u @ core).reshape(*shape), None


# --- the public ops ---


def linalg_svd(A: Tensor, full_matrices: bool = True) -> SVDResult:  # noqa: N803
    """A = U diag(S) Vh for each matrix of A (*, m, n), k = min(m, n): S (*, k) descending, U (*, m, m) and Vh
    (*, n, n) orthogonal (``full_matrices=False``: (*, m, k) and (*, k, n)). Signs: see the module docstring.
    LinAlgError for non-finite input; gradients infinite at repeated or (m != n) zero singular values."""
    check_matrix("linalg.svd", A)
    f = svd_factors(A, full_matrices, True)
    return SVDResult(SVDU.apply(A, f), SVDValues.apply(A, f), SVDVh.apply(A, f))


def linalg_svdvals(A: Tensor) -> Tensor:  # noqa: N803
    """The singular values (*, min(m, n)), descending, of each matrix of A (*, m, n)."""
    check_matrix("linalg.svd", A)
    return SVDValues.apply(A, svd_factors(A, False, A.requires_grad))


def svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> SVDOldResult:  # noqa: A002 - PyTorch's names
    """``torch.svd``: (U, S, V) with A = U diag(S) V^T, reduced when ``some`` (else complete); with ``compute_uv``
    False only S, and U (*, m, m) and V (*, n, n) zero-filled."""
    check_matrix("linalg.svd", input)
    if not compute_uv:
        m, n = input.shape[-2:]
        batch = input.shape[:-2]
        return SVDOldResult(input._zeros((*batch, m, m)), linalg_svdvals(input), input._zeros((*batch, n, n)))
    u, s, vh = linalg_svd(input, full_matrices=not some)
    return SVDOldResult(u, s, vh.mT)


LINALG: dict[str, Callable[..., Any]] = {"svd": linalg_svd, "svdvals": linalg_svdvals}
"""The ``mt.linalg`` functions of this module, by their PyTorch names."""

__all__ = ["svd"]
