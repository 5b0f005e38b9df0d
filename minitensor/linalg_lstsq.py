"""What the SVD gives: ``linalg.pinv lstsq matrix_rank cond`` and ``mt.pinverse``, and the ``DecompMethods`` mixin
(``qr svd pinverse`` of Tensor).

All from the factorizations of linalg_svd.py and linalg_decomp.py (no new kernels). The pseudo-inverse keeps the
singular values above max(atol, rtol * S_max), as PyTorch (``hermitian``: |eigenvalues| of eigh), and is a Function
with PyTorch's closed-form gradient (pinv_backward). ``lstsq`` always solves through that pseudo-inverse with
rtol = rcond: the minimum-norm least-squares solution of the rank-truncated A, which is what LAPACK's gelsd/gelss
give, and gelsy's (PyTorch's default CPU driver) wherever the two rank decisions agree (gelsy truncates a
column-pivoted QR instead of the SVD). Its other fields follow the chosen driver as PyTorch's: gelsy gives the rank
and empty residuals and singular values; gelsd and gelss add the singular values, and the squared residuals when
m > n and every matrix has full rank; gels gives no rank, and residuals whenever m > n. Its gradient is PyTorch's
(through the pseudo-inverse). ``cond`` is S_max / S_min (p = None, 2; -2: the inverse) or ||A|| ||A^-1|| (p = 1, -1,
inf, -inf, 'fro', 'nuc'; inf for a singular matrix), differentiable by composition.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from . import dtypes
from . import tensor_functions as F
from .autodiff import Context, no_grad
from .errors import DTypeError, ShapeError
from .linalg_decomp import check_matrix, eigh_factors, eps_of, qr
from .linalg_extra import matrix_exp
from .linalg_solve import (
    Inverse,
    as_shape,
    check_float,
    check_square,
    diagonal_of,
    eye_like,
    factor,
    is_tensor,
    is_vector_rhs,
)
from .linalg_svd import Factors, linalg_svdvals, svd, svd_factors
from .tensor_compare import where
from .tensor_data import shape_broadcast

if TYPE_CHECKING:
    from .tensor import Tensor

Tolerance = Any
"""A tolerance: a number, or a Tensor broadcast against the batch dims."""


class LstsqResult(NamedTuple):
    """(solution, residuals, rank, singular_values), as ``torch.return_types.linalg_lstsq``."""

    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


# --- the pseudo-inverse ---


def as_tensor(like: Tensor, x: Tolerance) -> Tensor:
    """A tolerance as a tensor on like's backend in like's dtype."""
    return x.cast(like.dtype) if is_tensor(x) else like._lift(float(x))


def threshold(A: Tensor, largest: Tensor, atol: Tolerance | None, rtol: Tolerance | None) -> Tensor:  # noqa: N803
    """max(atol, rtol * largest) (largest (*, 1)), PyTorch's defaults: atol 0, rtol eps * max(m, n) when atol is
    None or not > 0, else 0."""
    default = eps_of(A) * max(A.shape[-2:])
    atol_t = as_tensor(largest, 0.0 if atol is None else atol)
    if rtol is not None:
        rtol_t = as_tensor(largest, rtol)
    elif atol is None:
        rtol_t = largest._lift(default)
    else:
        rtol_t = where(atol_t > 0, largest._lift(0.0), largest._lift(default))
    tol = rtol_t.unsqueeze(-1) * largest
    at = atol_t.unsqueeze(-1)
    return where(at > tol, at, tol)


def batch_with(A: Tensor, *tols: Tolerance) -> Tensor:  # noqa: N803
    """A expanded to the batch shape its batch dims broadcast to with the tensor tolerances' shapes."""
    batch = A.shape[:-2]
    for t in tols:
        if is_tensor(t):
            batch = shape_broadcast(batch, t.shape)
    return A if batch == A.shape[:-2] else A.expand(*batch, *A.shape[-2:])


def pinv_value(A: Tensor, atol: Tolerance | None, rtol: Tolerance | None, hermitian: bool,  # noqa: N803
               f: Factors | None = None) -> Tensor:
    """The pseudo-inverse (*, n, m) of each matrix of A (*, m, n) (from its SVD ``f`` when given), without
    history."""
    m, n = A.shape[-2:]
    batch = A.shape[:-2]
    with no_grad():
        if hermitian:
            values, v = eigh_factors(A, "L", True)
            assert v is not None
            values, v = values.view(*batch, n), v.view(*batch, n, n)
            size = values.abs()
            inverse = where(size > threshold(A, size.amax(-1, keepdim=True), atol, rtol), 1.0 / values, 0.0)
            return (v * inverse.unsqueeze(-2)) @ v.mT
        u, s, vh = svd_factors(A, False, True) if f is None else f
        assert u is not None and vh is not None
        k = s.shape[-1]
        u, s, vh = u.view(*batch, m, k), s.view(*batch, k), vh.view(*batch, k, n)
        inverse = where(s > threshold(A, s[..., :1], atol, rtol), 1.0 / s, 0.0)
        return (vh.mT * inverse.unsqueeze(-2)) @ u.mT


class Pinv(F.TensorFunction):
    """The pseudo-inverse, with PyTorch's gradient (pinv_backward)."""

    @staticmethod
    def forward(ctx: Context, a: Tensor, p: Tensor) -> Tensor:
        ctx.save_for_backward(a.detach(), p)
        return as_shape(p, p.shape)

    @staticmethod
    def backward(ctx: Context, g: Tensor) -> tuple[Tensor, None]:
        a, p = ctx.saved_values
        ph, gh = p.mT, g.mT
        if a.shape[-2] <= a.shape[-1]:
            k = gh @ p
            kph = k @ ph
            return -(p @ k).mT + kph - (a @ p) @ kph + (ph @ p) @ (gh - k @ a), None
        k = p @ gh
        phk = ph @ k
        return -(k @ p).mT + (gh - a @ k) @ p @ ph + phk - phk @ p @ a, None


def linalg_pinv(A: Tensor, *, atol: Tolerance | None = None, rtol: Tolerance | None = None,  # noqa: N803
                hermitian: bool = False) -> Tensor:
    """The pseudo-inverse (*, n, m) of each matrix of A (*, m, n), from the singular values above max(atol, rtol *
    S_max) (defaults as PyTorch: rtol = eps * max(m, n) unless atol > 0 is given); ``hermitian``: from eigh of A's
    lower triangle. Tensor tolerances broadcast against the batch dims."""
    if not is_tensor(A) or A.dims < 2 or A.dtype.kind != "f":
        what = f"{A.dtype}{list(A.shape)}" if is_tensor(A) else type(A).__name__
        error = DTypeError if is_tensor(A) and A.dims >= 2 else ShapeError if is_tensor(A) else TypeError
        raise error(f"linalg.pinv({what}): expected a tensor with 2 or more dimensions of float, double, cfloat or "
                    "cdouble types")
    if hermitian:
        check_square("linalg.eigh", A)
    A = batch_with(A, atol, rtol)  # noqa: N806
    m, n = A.shape[-2:]
    if A.numel() == 0:
        return A._zeros((*A.shape[:-2], n, m))
    return Pinv.apply(A, pinv_value(A, atol, rtol, hermitian))


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:  # noqa: A002 - PyTorch's names
    """``torch.pinverse``: :func:`linalg_pinv` with rtol = rcond."""
    return linalg_pinv(input, rtol=rcond)


def linalg_matrix_rank(A: Tensor, *, atol: Tolerance | None = None, rtol: Tolerance | None = None,  # noqa: N803
                       hermitian: bool = False) -> Tensor:
    """The number (int64, (*)) of singular values (``hermitian``: |eigenvalues|) of each matrix of A (*, m, n) above
    max(atol, rtol * the largest), with :func:`linalg_pinv`'s defaults."""
    if is_tensor(A) and A.dims < 2:
        raise ShapeError(f"torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions. (shape "
                         f"{A.shape})")
    check_matrix("linalg.matrix_rank", A)
    if hermitian:
        check_square("linalg.eigh", A)
    with no_grad():
        if min(A.shape[-2:]) == 0 or A.numel() == 0:
            s = A._zeros((*A.shape[:-2], 0))
            return (s > threshold(A, A._zeros((*A.shape[:-2], 1)), atol, rtol)).sum(-1)
        s = eigh_factors(A, "L", False)[0].abs() if hermitian else svd_factors(A, False, False).S
        s = s.view(*A.shape[:-2], s.shape[-1])
        return (s > threshold(A, s.amax(-1, keepdim=True), atol, rtol)).sum(-1)


# --- least squares ---

DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def linalg_lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None) -> LstsqResult:  # noqa: N803
    """(solution X (*, n, k) minimising ||A X - B||_F with minimum norm, residuals, rank, singular_values) for A
    (*, m, n) and B (*, m, k) or a batch of vectors (see linalg_solve.is_vector_rhs), batch dims broadcast; singular
    values at most rcond * S_max (default eps * max(m, n)) count as zero. The other fields follow ``driver`` (default
    'gelsy') as PyTorch's; see the module docstring."""
    if not is_tensor(A) or not is_tensor(B):
        raise TypeError(f"linalg.lstsq(): arguments 'A' and 'B' must be Tensors, not {type(A).__name__} and "
                        f"{type(B).__name__}")
    if A.dims < 2:
        raise ShapeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B.dims < 1:
        raise ShapeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    check_float("linalg.lstsq", A)
    if A.dtype != B.dtype:
        raise DTypeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype "
                         f"{A.dtype} and other's dtype {B.dtype}")
    if not 0 <= A.dims - B.dims <= 1:
        raise ShapeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and (input.dim() - "
                         "other.dim()) <= 1")
    if driver is not None and driver not in DRIVERS:
        raise ValueError(f"torch.linalg.lstsq: parameter `driver` should be one of ({', '.join(DRIVERS)})")
    A._check_backend(B)
    vector = is_vector_rhs(A, B)
    rhs = B.unsqueeze(-1) if vector else B
    m, n = A.shape[-2:]
    if rhs.shape[-2] != m:
        raise ShapeError(f"torch.linalg.lstsq: input.size(-2) should match other.size({-1 if vector else -2}) (shapes "
                         f"{A.shape} and {B.shape})")
    shape_broadcast(A.shape[:-2], rhs.shape[:-2])
    driver = driver or "gelsy"
    rc = eps_of(A) * max(m, n) if rcond is None else rcond
    with no_grad():
        f = svd_factors(A, False, True) if min(m, n) else None
        s = f.S.view(*A.shape[:-2], min(m, n)) if f is not None else A._zeros((*A.shape[:-2], 0))
        rank = (s > s[..., :1] * rc).sum(-1) if min(m, n) else A._zeros(A.shape[:-2]).cast(dtypes.int64)
    if A.numel() == 0 or rhs.numel() == 0:
        solution = A.mT @ rhs  # zeros of the broadcast shape (*, n, k)
    else:
        solution = Pinv.apply(A, pinv_value(A, 0.0, rc, False, f)) @ rhs
    empty = A._zeros((0,))
    full_rank = driver == "gels" or bool((rank == n).all().item())
    residuals = ((A @ solution - rhs) ** 2).sum(-2) if driver != "gelsy" and m > n and full_rank else empty
    return LstsqResult(solution.squeeze(-1) if vector else solution, residuals,
                       rank if driver != "gels" else empty.cast(dtypes.int64), s if driver in ("gelsd", "gelss") else empty)


# --- condition numbers ---

NORMS = (None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc")


def matrix_norm(x: Tensor, p: Any) -> Tensor:
    """The matrix p-norm (*) of each matrix of x (*, n, n) for p in 'fro', 'nuc', 1, -1, inf, -inf."""
    if p == "fro":
        return (x * x).sum((-2, -1)).sqrt()
    if p == "nuc":
        return linalg_svdvals(x).sum(-1)
    sums = x.abs().sum(-2 if abs(p) == 1 else -1)
    return sums.amax(-1) if p > 0 else sums.amin(-1)


def linalg_cond(A: Tensor, p: Any = None) -> Tensor:  # noqa: N803
    """The condition number (*) of each matrix of A (*, m, n) in the p-norm: S_max / S_min for p None or 2 (-2:
    S_min / S_max; any shape), else ||A||_p ||A^-1||_p for square A (inf where A is singular); 0 for empty
    matrices."""
    if is_tensor(A) and A.dims < 2:
        raise ShapeError(f"linalg.cond: The input tensor must have at least 2 dimensions. (shape {A.shape})")
    check_matrix("linalg.cond", A)
    if isinstance(p, bool) or p not in NORMS:
        raise ValueError(f"linalg.cond got an invalid norm type: {p}")
    if p is None or p in (2, -2):
        if A.numel() == 0:
            return A._zeros(A.shape[:-2])
        s = linalg_svdvals(A)
        return s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
    name = int(p) if p in (1, -1) else p
    check_square(f"linalg.cond(ord={name})", A)
    if A.numel() == 0:
        return A._zeros(A.shape[:-2])
    f = factor(A)
    with no_grad():
        singular = (diagonal_of(f) == 0).any(-1).view(*A.shape[:-2], 1, 1)
    safe = A
    if singular.any().item():  # invert the identity there instead (the result is inf, the gradient 0)
        safe = where(singular, eye_like(A, A.shape[-1]), A)
        f = factor(safe)
    value = matrix_norm(A, p) * matrix_norm(Inverse.apply(safe, f), p)
    return where(singular.view(*A.shape[:-2]), math.inf, value)


class DecompMethods:
    """The QR and singular value decompositions, the pseudo-inverse and the matrix exponential (methods of Tensor)."""

    qr = qr
    svd = svd
    pinverse = pinverse
    matrix_exp = matrix_exp


LINALG: dict[str, Callable[..., Any]] = {"pinv": linalg_pinv, "lstsq": linalg_lstsq, "matrix_rank": linalg_matrix_rank,
                                         "cond": linalg_cond}
"""The ``mt.linalg`` functions of this module, by their PyTorch names."""

__all__ = ["pinverse"]
