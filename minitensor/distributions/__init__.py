"""``minitensor.distributions``: probability distributions with sampling, log-densities, moments and KL divergences
(PyTorch's ``torch.distributions``).

Draws come from minitensor's shared generator (so they differ from PyTorch's for one seed); everything else is built
from differentiable tensor ops, so log-densities, entropies, KL divergences and ``rsample`` draws carry gradients on
every backend. Gamma, Beta, Dirichlet and StudentT have no ``rsample`` here (see :mod:`.gamma`).
"""

# ruff: noqa: F401 - this module re-exports the public API
from . import constraints, kl_transformed, relaxed, transforms
from .categorical import Categorical, OneHotCategorical
from .constraint_registry import biject_to, transform_to
from .continuous import Cauchy, Exponential, Laplace, LogNormal, Normal, Uniform
from .discrete import Bernoulli, Binomial, Geometric, Poisson
from .distribution import Distribution
from .gamma import Beta, Dirichlet, Gamma, StudentT
from .kl import kl_divergence, register_kl
from .multivariate import Independent, MixtureSameFamily, MultivariateNormal
from .relaxed import RelaxedBernoulli, RelaxedOneHotCategorical
from .transformed import Gumbel, HalfCauchy, HalfNormal, LogisticNormal, Pareto, TransformedDistribution, Weibull
from .transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)

__all__ = [
    "constraints", "Distribution", "Normal", "LogNormal", "Uniform", "Exponential", "Laplace", "Cauchy", "Bernoulli",
    "Binomial", "Geometric", "Poisson", "Categorical", "OneHotCategorical", "Gamma", "Beta", "Dirichlet", "StudentT",
    "MultivariateNormal", "Independent", "MixtureSameFamily", "kl_divergence", "register_kl",
    "transforms", "TransformedDistribution", "Gumbel", "HalfNormal", "HalfCauchy", "Weibull", "Pareto", "LogisticNormal",
    "RelaxedBernoulli", "RelaxedOneHotCategorical", "biject_to", "transform_to", "Transform", "ComposeTransform",
    "ExpTransform", "AffineTransform", "SigmoidTransform", "SoftplusTransform", "TanhTransform", "PowerTransform",
    "AbsTransform", "SoftmaxTransform", "StickBreakingTransform", "IndependentTransform", "ReshapeTransform",
    "LowerCholeskyTransform", "PositiveDefiniteTransform", "CumulativeDistributionTransform", "identity_transform",
]
