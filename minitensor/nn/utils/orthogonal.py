"""The orthogonal parametrization ``torch.nn.utils.parametrizations.orthogonal``.

A matrix (or batch of matrices) W of shape (n, k) is replaced by Q with orthonormal columns (rows when n < k; the
maps work on the tall W^T and transpose back). Maps from an unconstrained X (tall, n >= k):

* ``"matrix_exp"``: Q = exp(A)[:, :k], A = L - L^T, L the lower triangle of X padded with zero columns to n x n;
* ``"cayley"``: Q = ((I - A/2)^{-1} (I + A/2))[:, :k], A as above;
* ``"householder"``: Q = H_1 ... H_k [:, :k] times the signs of X's diagonal, H_j = I - tau_j v_j v_j^T with v_j
  column j of X's strict lower triangle plus e_j and tau_j = 2 / ||v_j||^2.

With ``use_trivialization=True`` (default) the buffer ``base`` (n x n orthogonal) multiplies Q from the left:
assigning W stores base = the QR Q factor (with R's diagonal positive) of W (completed by random columns when W is
not square) and X = -I, which every map sends to I, so the weight equals W's orthonormal factor.
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from ...autodiff import no_grad
from ...creation import eye, randn, zeros
from ...linalg_decomp import householder, linalg_qr
from ...linalg_extra import matrix_exp
from ...linalg_householder import householder_product
from ...linalg_solve import linalg_solve
from ...module import Module
from ...tensor import Tensor
from ...tensor_join import cat, stack
from . import parametrize

__all__ = ["orthogonal"]


class OrthMaps(enum.Enum):
    matrix_exp = enum.auto()
    cayley = enum.auto()
    householder = enum.auto()


def _is_orthogonal(q: Tensor) -> bool:
    """Whether Q^T Q = I up to 10 n eps (q real, (*, n, k))."""
    n, k = q.shape[-2:]
    eps = 10.0 * n * float(np.finfo(q.dtype).eps)
    return bool((q.mT @ q).allclose(eye(k, dtype=q.dtype, backend=q.backend), atol=eps))


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q factor of a = QR with R's diagonal positive."""
    q, r = linalg_qr(a)
    return q * r.diagonal(0, -2, -1).sign().unsqueeze(-2)


def _reflectors(q: Tensor) -> Tensor:
    """LAPACK's geqrf of each tall matrix of q (*, n, k), as the householder map's input: the reflectors below the
    diagonal and on it the sign of R's diagonal (flipped where no reflection was taken, tau = 0)."""
    n, k = q.shape[-2:]
    r, vs, taus = householder(q.reshape(-1, n, k).clone())
    columns = []
    for j in range(k):
        sign = r[:, j, j].sign() * (1.0 - 2.0 * (taus[j][:, 0, 0] == 0).cast(q.dtype))
        parts = [zeros(r.shape[0], j, dtype=q.dtype, backend=q.backend), sign.unsqueeze(1), vs[j][:, 1:, 0]]
        columns.append(cat(parts, 1))
    return stack(columns, -1).reshape(*q.shape)


class _Orthogonal(Module):
    """The parametrization module: ``forward(X)`` maps X to an orthogonal matrix, ``right_inverse(Q)`` stores Q."""

    base: Tensor | None

    def __init__(self, weight: Tensor, orthogonal_map: OrthMaps, *, use_trivialization: bool = True) -> None:
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        self.use_trivialization = use_trivialization
        self.registered = False  # torch keeps the weight as it is when right_inverse is impossible at registration
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:  # noqa: N803 - torch's names
        n, k = X.shape[-2:]
        transposed = n < k
        if transposed:
            X, n, k = X.mT, k, n  # noqa: N806
        if self.orthogonal_map is OrthMaps.householder:
            A = X.tril(-1)  # noqa: N806
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            Q = householder_product(A, tau) * X.diagonal(0, -2, -1).detach().trunc().unsqueeze(-2)  # noqa: N806
        else:
            X = X.tril()  # noqa: N806
            if n != k:
                X = cat([X, zeros(*X.shape[:-2], n, n - k, dtype=X.dtype, backend=X.backend)], -1)  # noqa: N806
            A = X - X.mT  # noqa: N806
            if self.orthogonal_map is OrthMaps.matrix_exp:
                Q = matrix_exp(A)  # noqa: N806
            else:
                unit = eye(n, dtype=A.dtype, backend=A.backend)
                Q = linalg_solve(unit - 0.5 * A, unit + 0.5 * A)  # noqa: N806
            Q = Q.narrow(-1, 0, k) if n != k else Q  # noqa: N806
        if self.use_trivialization and self.base is not None:
            Q = self.base @ Q  # noqa: N806
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:  # noqa: N803 - torch's names
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of shape "
                             f"{Q.shape}.")
        with no_grad():
            original = Q
            n, k = Q.shape[-2:]
            transpose = n < k
            if transpose:
                Q, n, k = Q.mT, k, n  # noqa: N806
            if not self.use_trivialization:
                if self.orthogonal_map is not OrthMaps.householder:
                    if not self.registered:
                        return original
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                A = _reflectors(Q)  # noqa: N806
                return A.mT if transpose else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)  # noqa: N806
            else:  # complete Q with random columns to an n x n orthogonal matrix
                extra = randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype, backend=Q.backend)
                Q = _make_orthogonal(cat([Q, extra], -1))  # noqa: N806
            self.base = Q
            rows, cols = original.shape[-2:]
            return (-eye(rows, cols, dtype=Q.dtype, backend=Q.backend)).expand(*original.shape).contiguous()


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Parametrize ``module.<name>`` (a matrix or batch of matrices) to have orthonormal columns (rows when wide)
    through ``orthogonal_map`` (default: ``"matrix_exp"`` for square, ``"householder"`` otherwise); see the module
    docstring. The original is kept as ``parametrizations.<name>.original``. Returns ``module``."""
    weight: Any = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dims < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.dims} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    chosen = OrthMaps.__members__.get(orthogonal_map) if isinstance(orthogonal_map, str) else None
    if chosen is None:
        raise ValueError(f'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: {orthogonal_map}')
    parametrization = _Orthogonal(weight, chosen, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, parametrization, unsafe=True)
    parametrization.registered = True
    return module
