"""Distributions over matrices: Wishart (positive-definite matrices, the law of X^T X for ``df`` Gaussian rows) and
LKJCholesky (lower Cholesky factors of correlation matrices, density proportional to det(R)^(concentration - 1)).
Both sample outside the graph (Wishart through chi-squared variates, which have no ``rsample`` here, see
:mod:`.gamma`)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from numbers import Number
from typing import Any

from .. import creation, linalg
from ..autodiff import no_grad
from ..linalg_cholesky import linalg_cholesky
from ..tensor import Tensor
from ..tensor_broadcast import broadcast_shapes
from ..tensor_compare import where
from ..tensor_join import cat
from ..type_info import finfo
from . import constraints
from .continuous import randn
from .distribution import Distribution, _size, broadcast_all
from .exp_family import ExponentialFamily
from .gamma import Beta, standard_gamma
from .multivariate import ScaleTrilMatrices, precision_to_scale_tril, solve_lower

LOG2 = math.log(2.0)


def mvdigamma(x: Tensor, p: int) -> Tensor:
    """The multivariate digamma sum_{i<p} digamma(x - i/2), for x > (p - 1)/2."""
    if not bool((x > (p - 1) / 2).all().item()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    offsets = creation.arange(p, dtype=x.dtype, backend=x.backend) / 2
    return (x.unsqueeze(-1) - offsets).digamma().sum(-1)  # type: ignore[no-any-return]


def trace_solve(L: Tensor, X: Tensor) -> Tensor:  # noqa: N803 - a Cholesky factor
    """tr((L L^T)^-1 X), batch dims broadcast."""
    inner = solve_lower(L, X)
    return linalg.solve_triangular(L.mT, inner, upper=True).diagonal(dim1=-2, dim2=-1).sum(-1)  # type: ignore[attr-defined, no-any-return]


def logabsdet(X: Tensor) -> Tensor:  # noqa: N803
    return linalg.slogdet(X).logabsdet  # type: ignore[attr-defined, no-any-return]


class Wishart(ScaleTrilMatrices, ExponentialFamily):
    """W_p(df, Sigma) for Sigma given by exactly one of ``covariance_matrix``, ``precision_matrix`` (Sigma^-1) or
    ``scale_tril`` (its lower Cholesky factor); ``df`` > p - 1. Natural parameters (-Sigma^-1 / 2, (df - p - 1) / 2)."""

    support = constraints.positive_definite
    has_rsample = False
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:  # type: ignore[override]
        return {"covariance_matrix": constraints.positive_definite, "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df: Any, covariance_matrix: Tensor | None = None, precision_matrix: Tensor | None = None,
                 scale_tril: Tensor | None = None, validate_args: bool | None = None) -> None:
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix), ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, Number):  # broadcast to the batch (torch keeps it 0-d, and a batch of matrices then fails)
            batch = tuple(param.shape[:-2])
            self.df = creation.tensor(float(df), dtype=param.dtype, backend=param.backend).expand(*batch)  # type: ignore[arg-type]
        else:
            batch = tuple(broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(*batch)
        p = param.shape[-1]
        if bool((self.df <= p - 1).any().item()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        self.__dict__[name] = param.expand(*(batch + (p, p)))
        if bool((self.df < p).any().item()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < ndim.",
                          stacklevel=2)
        super().__init__(batch, (p, p), validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = param
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg_cholesky(param)
        else:
            self._unbroadcasted_scale_tril = precision_to_scale_tril(param)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Wishart:
        new = self._get_checked_instance(Wishart, _instance)
        shape = _size(batch_shape)
        matrix_shape = shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(*matrix_shape)
        new.df = self.df.expand(*shape)
        for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
            if name in self.__dict__:
                new.__dict__[name] = self.__dict__[name].expand(*matrix_shape)
        Distribution.__init__(new, shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new  # type: ignore[no-any-return]

    def _matrix_shape(self) -> tuple[int, ...]:
        return self._batch_shape + self._event_shape

    def _per_matrix(self, t: Tensor) -> Tensor:
        """A batch-shaped tensor shaped to scale the batch's matrices."""
        return t.reshape(self._batch_shape + (1, 1))

    @property
    def mean(self) -> Tensor:
        return self._per_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        """(df - p - 1) Sigma; nan where df <= p + 1."""
        factor = self.df - self._event_shape[-1] - 1
        factor = where(factor > 0, factor, math.nan)
        return self._per_matrix(factor) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        """df (Sigma_ij^2 + Sigma_ii Sigma_jj)."""
        V = self.covariance_matrix  # noqa: N806
        diagonal = V.diagonal(dim1=-2, dim2=-1)
        return self._per_matrix(self.df) * (V.square() + diagonal.unsqueeze(-1) * diagonal.unsqueeze(-2))

    def _bartlett(self, sample_shape: Sequence[int]) -> Tensor:
        """L A A^T L^T for A lower-triangular: sqrt(chi2(df - i)) on the diagonal, standard normal below it."""
        p = self._event_shape[-1]
        shape = _size(sample_shape) + self._batch_shape
        dofs = self.df.unsqueeze(-1) - creation.arange(p, dtype=self.df.dtype, backend=self.df.backend)
        chi2 = 2 * standard_gamma((0.5 * dofs).expand(*(shape + (p,))))
        diagonal = chi2.sqrt().clamp(min=finfo(chi2.dtype).eps)
        A = randn(shape + (p, p), self.df).tril(-1) + diagonal.diag_embed()  # noqa: N806
        factor = self._unbroadcasted_scale_tril @ A
        return factor @ factor.mT

    def sample(self, sample_shape: Sequence[int] = (), max_try_correction: int = 10) -> Tensor:
        """Bartlett draws; draws that are not positive-definite (possible for df < p) are drawn again, up to
        ``max_try_correction`` times, with a warning."""
        with no_grad():
            draws = self._bartlett(sample_shape)
            singular = ~self.support.check(draws)
            if bool(singular.any().item()):
                warnings.warn("Singular sample detected.", stacklevel=2)
                for _ in range(max_try_correction):
                    mask = singular.reshape(tuple(singular.shape) + (1, 1))
                    draws = where(mask, self._bartlett(sample_shape), draws)
                    singular = ~self.support.check(draws)
                    if not bool(singular.any().item()):
                        break
            return draws

    def log_prob(self, value: Tensor) -> Tensor:
        """-df (p log 2 / 2 + log det L) - log Gamma_p(df / 2) + (df - p - 1) / 2 log det X - tr(Sigma^-1 X) / 2."""
        if self._validate_args:
            self._validate_sample(value)
        nu, p, L = self.df, self._event_shape[-1], self._unbroadcasted_scale_tril  # noqa: N806
        half_log_det = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (-nu * (p * LOG2 / 2 + half_log_det) - (nu / 2).mvlgamma(p)
                + (nu - p - 1) / 2 * logabsdet(value) - trace_solve(L, value) / 2)

    def entropy(self) -> Tensor:
        nu, p = self.df, self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * LOG2 / 2 + half_log_det) + (nu / 2).mvlgamma(p)
                - (nu - p - 1) / 2 * mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:  # type: ignore[override]
        """(y + (p + 1)/2) (p log 2 - log det(-2 x)) + log Gamma_p(y + (p + 1)/2)."""
        p = self._event_shape[-1]
        shifted = y + (p + 1) / 2
        return shifted * (p * LOG2 - logabsdet(-2 * x)) + shifted.mvlgamma(p)


class LKJCholesky(Distribution):
    """The LKJ distribution over lower Cholesky factors L of dim x dim correlation matrices (Lewandowski, Kurowicka and
    Joe, 2009): density proportional to det(L L^T)^(concentration - 1) times the Jacobian of L -> L L^T. Draws by the
    onion method: row i (i >= 1) is sqrt(y) times a uniform unit vector of its first i entries, y ~ Beta(i / 2,
    concentration + (dim - 2 - i) / 2), completed on the diagonal. (torch 2.13 draws y ~ Beta(i - 1/2, ...), which
    is not the LKJ law for dim >= 3: its off-diagonal correlations come out too spread.)"""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Any = 1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        c = self.concentration
        offset = cat([creation.zeros(1, dtype=c.dtype, backend=c.backend),
                      creation.arange(dim - 1, dtype=c.dtype, backend=c.backend)])  # 0, 0, 1, ..., dim - 2
        marginal = c + 0.5 * (dim - 2)
        self._beta = Beta(0.5 * offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)  # row i: Beta(i / 2, ...)
        super().__init__(tuple(c.shape), (dim, dim), validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> LKJCholesky:
        new = self._get_checked_instance(LKJCholesky, _instance)
        shape = _size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(*shape)
        new._beta = self._beta.expand(shape + (self.dim,))
        Distribution.__init__(new, shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new  # type: ignore[no-any-return]

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """Row i: sqrt(y_i) times a uniform direction in its first i coordinates (y_i ~ Beta), completed to unit norm
        on the diagonal."""
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            normal = randn(self._extended_shape(sample_shape), y).tril(-1)
            length = normal.norm(dim=-1, keepdim=True).clamp(min=finfo(y.dtype).tiny)  # row 0 stays 0
            w = y.sqrt() * (normal / length)
            diagonal = (1 - w.square().sum(-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
            return w + diagonal.diag_embed()

    def log_prob(self, value: Tensor) -> Tensor:
        """sum_{i>=2} (2 (c - 1) + dim - i) log L_ii - log of the normalizer (Gamma functions of c + (dim - 1)/2)."""
        if self._validate_args:
            self._validate_sample(value)
        c, dim = self.concentration, self.dim
        diagonal = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        order = creation.arange(2, dim + 1, dtype=c.dtype, backend=c.backend)
        exponents = 2 * (c - 1).unsqueeze(-1) + dim - order
        unnormalised = (exponents * diagonal.log()).sum(-1)
        dm1 = dim - 1
        alpha = c + 0.5 * dm1
        normaliser = 0.5 * dm1 * math.log(math.pi) + (alpha - 0.5).mvlgamma(dm1) - alpha.lgamma() * dm1
        return unnormalised - normaliser


__all__ = ["Wishart", "LKJCholesky"]
