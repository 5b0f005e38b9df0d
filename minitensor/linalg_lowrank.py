"""Randomized low-rank decompositions, ``svd_lowrank pca_lowrank``, and the legacy matrix-norm names of torch,
``frobenius_norm nuclear_norm`` (the nuclear norm, the sum of the singular values, is the convex envelope of rank).

``svd_lowrank`` is Halko, Martinsson and Tropp's randomized SVD (2009, Algorithms 4.4 and 5.1): the columns of
(A - M) P for a Gaussian probe P (n, q) are orthonormalized by QR and refined by ``niter`` rounds of subspace
iteration (a QR after each product with (A - M)^T and with A - M), which gives Q (m, <= q) with Q Q^T (A - M)
close to A - M; the SVD of the small Q^T (A - M) = U' S V^T then gives U = Q U'. A wide matrix is handled as its
transpose. Everything is matmul, ``linalg.qr`` and ``linalg.svd``, so gradients come from autodiff through their
closed forms, as in torch. The probe is drawn from the shared generator (one (n, q) draw per call, shared by the
batch, as torch does), so results differ from torch's by the random stream: when rank(A - M) <= q they are the
exact SVD, up to the sign of each singular pair. ``pca_lowrank`` applies it to A minus its column means. The norms
are compositions of :func:`minitensor.linalg_norms.vector_norm` and ``matrix_norm``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .errors import DTypeError, ShapeError
from .linalg_decomp import check_matrix, linalg_qr
from .linalg_norms import matrix_norm, vector_norm
from .linalg_solve import is_tensor
from .linalg_svd import linalg_svd
from .random_state import rng_for
from .tensor_inplace import _torch_name

if TYPE_CHECKING:
    from .tensor import Tensor


def _require_tensor(name: str, x: Any) -> None:
    """PyTorch's TypeError for a non-tensor first argument."""
    if not is_tensor(x):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")


# --- the randomized SVD ---


def shifted_product(a: Tensor, shift: Tensor | None, x: Tensor) -> Tensor:
    """(a - shift) x, without forming a - shift (shift None: a x)."""
    return a @ x if shift is None else a @ x - shift @ x


def orthonormal_columns(x: Tensor) -> Tensor:
    """Q of the reduced QR of x: orthonormal columns spanning x's."""
    return linalg_qr(x).Q


def range_basis(a: Tensor, shift: Tensor | None, q: int, niter: int) -> Tensor:
    """Q (*, m, min(m, q)) with orthonormal columns and Q Q^T (a - shift) ~ a - shift, for a (*, m, n): a Gaussian
    probe's image orthonormalized, then ``niter`` rounds of subspace iteration."""
    probe = a._lift(rng_for(None).standard_normal((a.shape[-1], q)), a.dtype)
    shift_t = None if shift is None else shift.mT
    basis = orthonormal_columns(shifted_product(a, shift, probe))
    for _ in range(niter):
        basis = orthonormal_columns(shifted_product(a.mT, shift_t, basis))
        basis = orthonormal_columns(shifted_product(a, shift, basis))
    return basis


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,  # noqa: N803 - PyTorch's names
                M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """(U (*, m, k), S (*, k), V (*, n, k)) with A - M ~ U diag(S) V^T, k = min(q, m, n) (q None: 6), by the randomized
    SVD with ``niter`` (None: 2) subspace iterations; M (broadcast to A's shape) defaults to 0. Exact, up to the signs
    of the singular pairs, when rank(A - M) <= q; differentiable in A and M."""
    name = "svd_lowrank"
    check_matrix(name, A)
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    if q < 0:
        raise ValueError(f"{name}: q(={q}) must be a non-negative integer (A of shape {A.shape})")
    shift = None
    if M is not None:
        if not is_tensor(M):
            raise TypeError(f"{name}(): argument 'M' must be Tensor or None, not {type(M).__name__}")
        A._check_backend(M)
        shift = M.broadcast_to(A.shape)
    wide = A.shape[-2] < A.shape[-1]
    a = A.mT if wide else A
    shift = shift.mT if wide and shift is not None else shift
    basis = range_basis(a, shift, q, niter)
    projected = basis.mT @ a if shift is None else basis.mT @ a - basis.mT @ shift  # Q^T (A - M), (*, <= q, n)
    u, s, vh = linalg_svd(projected, full_matrices=False)
    u, v = basis @ u, vh.mT
    return (v, s, u) if wide else (u, s, v)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,  # noqa: N803
                niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """The principal components of the rows of A (*, m, n): :func:`svd_lowrank` of A minus its column means
    (``center``; else of A) with q (None: min(6, m, n)) between 0 and min(m, n); V's columns are the principal
    directions, S**2 / (m - 1) the variances along them."""
    name = "pca_lowrank"
    check_matrix(name, A)
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    return svd_lowrank(A - A.mean(-2, keepdim=True) if center else A, q, niter)


# --- the legacy norm names ---


def frobenius_norm(input: Tensor, dim: int | Sequence[int], keepdim: bool = False) -> Tensor:  # noqa: A002
    """sqrt(sum input**2) over ``dim`` (an int or at most two dims; () means every dim), as ``torch.frobenius_norm``."""
    name = "frobenius_norm"
    _require_tensor(name, input)
    if isinstance(dim, bool) or not isinstance(dim, (int, Sequence)):
        raise TypeError(f"{name}(): argument 'dim' (position 2) must be tuple of ints, not {type(dim).__name__}")
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) > 2:
        raise ShapeError(f"{name}: Expected at most 2 dimensions, but got {len(dims)} dimensions instead. "
                         f"(dim {tuple(dims)}, shape {input.shape})")
    if input.dtype.kind != "f":
        raise DTypeError(f"{name}: norm(): input dtype should be either floating point or complex. Got "
                         f"{_torch_name(input.dtype)} instead. ({input.dtype}, shape {input.shape})")
    return vector_norm(input, 2, dims, keepdim)


def nuclear_norm(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """The sum of the singular values of each matrix of input over the two dims ``dim`` (default the last two), as
    ``torch.nuclear_norm(input, keepdim=False)`` and ``torch.nuclear_norm(input, dim, keepdim=False)``: a bool in
    ``dim``'s place is ``keepdim``; an int d stands for (d, d), as in torch (and is refused as a repeated dim)."""
    _require_tensor("nuclear_norm", input)
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    dims = (-2, -1) if dim is None else (dim, dim) if isinstance(dim, int) else dim
    return matrix_norm(input, "nuc", dims, keepdim)


__all__ = ["svd_lowrank", "pca_lowrank", "frobenius_norm", "nuclear_norm"]
