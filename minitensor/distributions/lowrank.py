"""LowRankMultivariateNormal (``torch.distributions.lowrank_multivariate_normal``): N(loc, W W^T + D) for an n x m
``cov_factor`` W and a positive ``cov_diag`` D, computed through the m x m capacitance matrix C = I + W^T D^-1 W
(Woodbury's identity and the matrix determinant lemma), so no n x n factorization is needed:
Sigma^-1 = D^-1 - D^-1 W C^-1 W^T D^-1 and log det Sigma = log det C + sum log D."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .. import creation
from ..linalg_cholesky import linalg_cholesky
from ..tensor import Tensor
from ..tensor_broadcast import broadcast_tensors
from . import constraints
from .continuous import randn
from .distribution import Distribution, _size, lazy_property
from .multivariate import mahalanobis, solve_lower

LOG_2PI = math.log(2 * math.pi)


def _plus_identity(K: Tensor) -> Tensor:  # noqa: N803 - a matrix
    """K + I for square K (*, m, m)."""
    return K + creation.eye(K.shape[-1], dtype=K.dtype, backend=K.backend)


def capacitance_tril(W: Tensor, D: Tensor) -> Tensor:  # noqa: N803
    """The lower Cholesky factor of C = I + W^T D^-1 W."""
    return linalg_cholesky(_plus_identity((W.mT / D.unsqueeze(-2)) @ W))


def lowrank_logdet(D: Tensor, C_tril: Tensor) -> Tensor:  # noqa: N803
    """log det(W W^T + D) = 2 sum log diag(L_C) + sum log D."""
    return 2 * C_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def lowrank_mahalanobis(W: Tensor, D: Tensor, x: Tensor, C_tril: Tensor) -> Tensor:  # noqa: N803
    """x^T (W W^T + D)^-1 x = x^T D^-1 x - |L_C^-1 W^T D^-1 x|^2."""
    projected = ((W.mT / D.unsqueeze(-2)) @ x.unsqueeze(-1)).squeeze(-1)
    return (x.square() / D).sum(-1) - mahalanobis(C_tril, projected)


def woodbury_factor(W: Tensor, D: Tensor, C_tril: Tensor) -> Tensor:  # noqa: N803
    """A = L_C^-1 W^T D^-1, so that Sigma^-1 = D^-1 - A^T A."""
    return solve_lower(C_tril, W.mT / D.unsqueeze(-2))


class LowRankMultivariateNormal(Distribution):
    """N(loc, cov_factor cov_factor^T + diag(cov_diag))."""

    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, cov_factor: Tensor, cov_diag: Tensor, validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        n = loc.shape[-1]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if cov_factor.shape[-2] != n:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {n} x m, got {tuple(cov_factor.shape)}")
        if tuple(cov_diag.shape[-1:]) != (n,):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {(n,)}, got {tuple(cov_diag.shape)}")
        try:
            loc_, self.cov_factor, diag_ = broadcast_tensors(loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except ValueError as error:
            raise ValueError(f"Incompatible batch shapes: loc {tuple(loc.shape)}, cov_factor {tuple(cov_factor.shape)}, "
                             f"cov_diag {tuple(cov_diag.shape)}") from error
        self.loc, self.cov_diag = loc_[..., 0], diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = capacitance_tril(cov_factor, cov_diag)
        super().__init__(tuple(self.loc.shape[:-1]), (n,), validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> LowRankMultivariateNormal:
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        shape = _size(batch_shape) + self.event_shape
        new.loc, new.cov_diag = self.loc.expand(*shape), self.cov_diag.expand(*shape)
        new.cov_factor = self.cov_factor.expand(*(shape + tuple(self.cov_factor.shape[-1:])))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, _size(batch_shape), self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new  # type: ignore[no-any-return]

    def _matrix_shape(self) -> tuple[int, ...]:
        return self._batch_shape + self._event_shape + self._event_shape

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:  # type: ignore[override]
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag  # noqa: N806
        return (W.square().sum(-1) + D).expand(*(self._batch_shape + self._event_shape))

    @lazy_property
    def scale_tril(self) -> Tensor:
        """D^(1/2) chol(I + D^-1/2 W W^T D^-1/2): the lower Cholesky factor of Sigma."""
        root = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled = self._unbroadcasted_cov_factor / root
        return (root * linalg_cholesky(_plus_identity(scaled @ scaled.mT))).expand(*self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag  # noqa: N806
        return (W @ W.mT + D.diag_embed()).expand(*self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag  # noqa: N806
        A = woodbury_factor(W, D, self._capacitance_tril)  # noqa: N806
        return (D.reciprocal().diag_embed() - A.mT @ A).expand(*self._matrix_shape())

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """loc + W e_W + D^(1/2) e_D for standard normal e_W (m) and e_D (n)."""
        shape = self._extended_shape(sample_shape)
        eps_w = randn(shape[:-1] + tuple(self.cov_factor.shape[-1:]), self.loc)
        eps_d = randn(shape, self.loc)
        low_rank = (self._unbroadcasted_cov_factor @ eps_w.unsqueeze(-1)).squeeze(-1)
        return self.loc + low_rank + self._unbroadcasted_cov_diag.sqrt() * eps_d

    def _logdet(self) -> Tensor:
        return lowrank_logdet(self._unbroadcasted_cov_diag, self._capacitance_tril)

    def log_prob(self, value: Tensor) -> Tensor:
        """-(n log(2 pi) + log det Sigma + (x - loc)^T Sigma^-1 (x - loc)) / 2."""
        if self._validate_args:
            self._validate_sample(value)
        m = lowrank_mahalanobis(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, value - self.loc,
                                self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * LOG_2PI + self._logdet() + m)

    def entropy(self) -> Tensor:
        h = 0.5 * (self._event_shape[0] * (1.0 + LOG_2PI) + self._logdet())
        return h if len(self._batch_shape) == 0 else h.expand(*self._batch_shape)


__all__ = ["LowRankMultivariateNormal"]
