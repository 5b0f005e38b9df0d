"""The factorization methods of Tensor (the ``FactorMethods`` mixin): ``lu`` and ``lu_solve`` (linalg_lu.py),
``geqrf``, ``orgqr`` and ``ormqr`` (linalg_householder.py), each the ``torch.*`` function with the tensor first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .linalg_householder import GeqrfResult, geqrf, orgqr, ormqr
from .linalg_lu import lu, lu_solve

if TYPE_CHECKING:
    from .tensor import Tensor


class FactorMethods:
    """lu, lu_solve, geqrf, orgqr and ormqr of Tensor."""

    def lu(self: Any, pivot: bool = True, get_infos: bool = False) -> Any:
        """(LU, pivots[, infos]) of this (batch of) matrix, as ``torch.lu``."""
        return lu(self, pivot, get_infos)

    def lu_solve(self: Any, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:  # noqa: N803 - PyTorch's names
        """X with A X = self from A's (LU_data, LU_pivots), as ``torch.lu_solve``."""
        return lu_solve(self, LU_data, LU_pivots)

    def geqrf(self: Any) -> GeqrfResult:
        """(a, tau): LAPACK's compact QR of this (batch of) matrix, as ``torch.geqrf``."""
        return geqrf(self)

    def orgqr(self: Any, input2: Tensor) -> Tensor:
        """The product of the Householder reflectors in (self, tau = input2), as ``torch.orgqr``."""
        return orgqr(self, input2)

    def ormqr(self: Any, input2: Tensor, input3: Tensor, left: bool = True, transpose: bool = False) -> Tensor:
        """That product (or its transpose) applied to ``input3`` from the left or right, as ``torch.ormqr``."""
        return ormqr(self, input2, input3, left, transpose)
