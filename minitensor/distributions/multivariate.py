"""Distributions over vectors and built from others: MultivariateNormal, Independent and MixtureSameFamily."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .. import creation, linalg
from ..autodiff import no_grad
from ..linalg_cholesky import linalg_cholesky
from ..tensor import Tensor
from ..tensor_broadcast import broadcast_shapes
from . import constraints
from .categorical import Categorical
from .continuous import randn
from .distribution import Distribution, _size, lazy_property, sum_rightmost


def solve_lower(L: Tensor, b: Tensor) -> Tensor:  # noqa: N803 - the usual name of a Cholesky factor
    """L^-1 b for lower-triangular ``L`` (batch dims broadcast)."""
    return linalg.solve_triangular(L, b, upper=False)  # type: ignore[attr-defined, no-any-return]


def mahalanobis(L: Tensor, x: Tensor) -> Tensor:  # noqa: N803
    """|L^-1 x|^2 over the last dim of ``x``: the squared Mahalanobis distance for covariance L L^T."""
    return solve_lower(L, x.unsqueeze(-1)).squeeze(-1).square().sum(-1)


def precision_to_scale_tril(P: Tensor) -> Tensor:  # noqa: N803
    """The lower Cholesky factor of P^-1, from the Cholesky factor of P with its rows and columns reversed."""
    flipped = linalg_cholesky(P.flip((-2, -1)))
    inverse = flipped.flip((-2, -1)).mT  # the inverse of the wanted factor, lower-triangular
    eye = creation.eye(P.shape[-1], dtype=P.dtype, backend=P.backend)
    return solve_lower(inverse, eye)


class ScaleTrilMatrices:
    """``scale_tril``, ``covariance_matrix`` (L L^T) and ``precision_matrix`` ((L L^T)^-1 by two triangular solves)
    of a distribution with an ``_unbroadcasted_scale_tril`` L, each expanded to its ``_matrix_shape()``."""

    _unbroadcasted_scale_tril: Tensor

    def _matrix_shape(self) -> tuple[int, ...]:
        raise NotImplementedError

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(*self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril  # noqa: N806
        return (L @ L.mT).expand(*self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril  # noqa: N806
        eye = creation.eye(L.shape[-1], dtype=L.dtype, backend=L.backend)
        inverse = solve_lower(L, eye)
        return (inverse.mT @ inverse).expand(*self._matrix_shape())


class MultivariateNormal(ScaleTrilMatrices, Distribution):
    """N(loc, Sigma) given by exactly one of ``covariance_matrix`` (Sigma), ``precision_matrix`` (Sigma^-1) or
    ``scale_tril`` (the lower Cholesky factor of Sigma)."""

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None, precision_matrix: Tensor | None = None,
                 scale_tril: Tensor | None = None, validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix), ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional leading batch dimensions")
        batch = tuple(broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        n = loc.shape[-1]
        self.__dict__[name] = matrix.expand(*(batch + tuple(matrix.shape[-2:])))
        self.loc = loc.expand(*(batch + (n,)))
        super().__init__(batch, (n,), validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg_cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = precision_to_scale_tril(matrix)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        shape = _size(batch_shape)
        n = self.event_shape[0]
        new.loc = self.loc.expand(*(shape + (n,)))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
            if name in self.__dict__:
                new.__dict__[name] = self.__dict__[name].expand(*(shape + (n, n)))
        Distribution.__init__(new, shape, self.event_shape, validate_args=False)
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

    @property
    def variance(self) -> Tensor:
        return self._unbroadcasted_scale_tril.square().sum(-1).expand(*(self._batch_shape + self._event_shape))

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        eps = randn(self._extended_shape(sample_shape), self.loc)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        """-(n log(2 pi) + (x - loc)^T Sigma^-1 (x - loc)) / 2 - log det L."""
        if self._validate_args:
            self._validate_sample(value)
        m = mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self.event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self) -> Tensor:
        h = 0.5 * self.event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if len(self._batch_shape) == 0 else h.expand(*self._batch_shape)

    def __repr__(self) -> str:
        return f"MultivariateNormal(loc: {tuple(self.loc.shape)})"


class Independent(Distribution):
    """``base_distribution`` with its ``reinterpreted_batch_ndims`` rightmost batch dims read as event dims (so
    ``log_prob`` sums over them)."""

    arg_constraints: dict[str, constraints.Constraint] = {}

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual "
                             f"{reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}")
        shape = base_distribution.batch_shape + base_distribution.event_shape
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> Independent:
        new = self._get_checked_instance(Independent, _instance)
        shape = _size(batch_shape)
        new.base_dist = self.base_dist.expand(shape + self.event_shape[: self.reinterpreted_batch_ndims])
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        Distribution.__init__(new, shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new  # type: ignore[no-any-return]

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:  # type: ignore[override]
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        base = self.base_dist.support
        return constraints.independent(base, self.reinterpreted_batch_ndims) if self.reinterpreted_batch_ndims else base

    @property
    def mean(self) -> Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Tensor:
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self) -> str:
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"


class MixtureSameFamily(Distribution):
    """A mixture of the components of ``component_distribution`` (its rightmost batch dim) with weights from the
    Categorical ``mixture_distribution``."""

    arg_constraints: dict[str, constraints.Constraint] = {}
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical, component_distribution: Distribution,
                 validate_args: bool | None = None) -> None:
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of minitensor.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of minitensor.distributions.Distribution")
        mixture_batch = mixture_distribution.batch_shape
        component_batch = component_distribution.batch_shape[:-1]
        for a, b in zip(reversed(mixture_batch), reversed(component_batch)):
            if a != 1 and b != 1 and a != b:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mixture_batch}) is not compatible with "
                                 f"`component_distribution.batch_shape`({component_batch})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(component_batch, component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Any = None) -> MixtureSameFamily:
        shape = _size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(shape)
        new._num_component, new._event_ndims = self._num_component, self._event_ndims
        Distribution.__init__(new, shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new  # type: ignore[no-any-return]

    @constraints.dependent_property
    def support(self) -> Any:
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    def _pad(self, x: Tensor) -> Tensor:
        return x.unsqueeze(-1 - self._event_ndims)

    def _mixture_weights(self) -> Tensor:
        probs = self._mixture_distribution.probs
        return probs.reshape(tuple(probs.shape) + (1,) * self._event_ndims)

    @property
    def mean(self) -> Tensor:
        return (self._mixture_weights() * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        """E[Var[X | component]] + Var[E[X | component]]."""
        w, d = self._mixture_weights(), -1 - self._event_ndims
        means = self._component_distribution.mean
        within = (w * self._component_distribution.variance).sum(d)
        between = (w * (means - self._pad(self.mean)).square()).sum(d)
        return within + between

    def cdf(self, x: Tensor) -> Tensor:
        x = self._pad(x)
        return (self._component_distribution.cdf(x) * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self._component_distribution.log_prob(self._pad(x))
        log_mix = self._mixture_distribution.logits.log_softmax(-1)
        return (log_prob_x + log_mix).logsumexp(-1)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        with no_grad():
            shape = _size(sample_shape)
            index = self._mixture_distribution.sample(shape)  # sample + batch
            components = self._component_distribution.sample(shape)  # sample + batch + (K,) + event
            k_dim = len(shape) + len(self.batch_shape)
            index = index.reshape(tuple(index.shape) + (1,) + (1,) * self._event_ndims)
            index = index.expand(*(tuple(index.shape[: k_dim]) + (1,) + self.event_shape))
            return components.gather(k_dim, index).squeeze(k_dim)

    def __repr__(self) -> str:
        return (f"MixtureSameFamily(\n  {self._mixture_distribution!r},\n  {self._component_distribution!r})")


__all__ = ["MultivariateNormal", "Independent", "MixtureSameFamily"]
