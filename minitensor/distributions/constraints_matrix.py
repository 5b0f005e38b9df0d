"""Matrix constraints: lower-triangular, lower Cholesky (and of a correlation matrix), square, symmetric, positive
semidefinite and positive definite matrices (``event_dim`` 2)."""

from __future__ import annotations

from typing import Any

from .. import creation, linalg
from ..tensor import Tensor
from ..type_info import finfo
from .constraint_base import Constraint


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        return (value.tril() == value).all(-1).all(-1)


class _LowerCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        lower = (value.tril() == value).all(-1).all(-1)
        return lower & (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: lower-triangular, positive diagonal, rows of unit norm (to
    within 10 n eps of the dtype)."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        tol = finfo(value.dtype).eps * value.shape[-1] * 10
        unit_rows = ((value.detach().norm(dim=-1) - 1.0).abs() <= tol).all(-1)
        return _LowerCholesky().check(value) & unit_rows


class _Square(Constraint):
    """Square matrices (a property of the shape: every batch entry alike)."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        square = value.shape[-2] == value.shape[-1]
        return creation.full(tuple(value.shape[:-2]), square, dtype="bool", backend=value.backend)


class _Symmetric(_Square):
    """Square matrices equal to their transpose (isclose with atol 1e-6)."""

    def check(self, value: Tensor) -> Tensor:
        square = super().check(value)
        if not bool(square.all().item()):
            return square
        return ((value - value.mT).abs() <= 1e-6 + 1e-5 * value.mT.abs()).all(-1).all(-1)

    def _when_symmetric(self, value: Tensor, test: Any) -> Tensor:
        """``test(value)`` when every matrix is symmetric; else (as PyTorch) the symmetry check alone."""
        symmetric = _Symmetric.check(self, value)
        return test(value.detach()) if bool(symmetric.all().item()) else symmetric  # type: ignore[no-any-return]


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices with no negative eigenvalue."""

    def check(self, value: Tensor) -> Tensor:
        return self._when_symmetric(value, lambda v: (linalg.eigvalsh(v) >= 0).all(-1))  # type: ignore[attr-defined]


class _PositiveDefinite(_Symmetric):
    """Symmetric matrices with a Cholesky factor."""

    def check(self, value: Tensor) -> Tensor:
        return self._when_symmetric(value, lambda v: linalg.cholesky_ex(v).info == 0)  # type: ignore[attr-defined]
