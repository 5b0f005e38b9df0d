"""``minitensor.distributions``: probability distributions with sampling, log-densities, moments and KL divergences
(PyTorch's ``torch.distributions``).

Draws come from minitensor's shared generator (so they differ from PyTorch's for one seed); everything else is built
from differentiable tensor ops, so log-densities, entropies, KL divergences and ``rsample`` draws carry gradients on
every backend. The distributions drawn through gamma variates (Gamma, Beta, Dirichlet, StudentT, Chi2, InverseGamma,
FisherSnedecor, Wishart) have no ``rsample`` here (see :mod:`.gamma`).
"""

# ruff: noqa: F401 - this module re-exports the public API
from . import constraints, kl_extra, kl_transformed, relaxed, transforms
from .categorical import Categorical, OneHotCategorical, OneHotCategoricalStraightThrough
from .constraint_registry import biject_to, transform_to
from .continuous import Cauchy, Exponential, Laplace, LogNormal, Normal, Uniform
from .continuous_bernoulli import ContinuousBernoulli
from .counts import Multinomial, NegativeBinomial
from .discrete import Bernoulli, Binomial, Geometric, Poisson
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma import Beta, Dirichlet, Gamma, StudentT
from .gamma_derived import Chi2, FisherSnedecor, InverseGamma
from .generalized_pareto import GeneralizedPareto
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .lowrank import LowRankMultivariateNormal
from .multivariate import Independent, MixtureSameFamily, MultivariateNormal
from .random_matrices import LKJCholesky, Wishart
from .relaxed import RelaxedBernoulli, RelaxedOneHotCategorical
from .transformed import Gumbel, HalfCauchy, HalfNormal, LogisticNormal, Pareto, TransformedDistribution, Weibull
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
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
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .von_mises import VonMises

__all__ = [
    "constraints", "Distribution", "ExponentialFamily", "Normal", "LogNormal", "Uniform", "Exponential", "Laplace",
    "Cauchy", "Bernoulli", "Binomial", "Geometric", "Poisson", "Categorical", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "Gamma", "Beta", "Dirichlet", "StudentT", "Chi2", "InverseGamma",
    "FisherSnedecor", "ContinuousBernoulli", "GeneralizedPareto", "Kumaraswamy", "VonMises", "NegativeBinomial",
    "Multinomial", "MultivariateNormal", "LowRankMultivariateNormal", "Wishart", "LKJCholesky", "Independent",
    "MixtureSameFamily", "kl_divergence", "register_kl",
    "transforms", "TransformedDistribution", "Gumbel", "HalfNormal", "HalfCauchy", "Weibull", "Pareto", "LogisticNormal",
    "RelaxedBernoulli", "RelaxedOneHotCategorical", "biject_to", "transform_to", "Transform", "ComposeTransform",
    "ExpTransform", "AffineTransform", "SigmoidTransform", "SoftplusTransform", "TanhTransform", "PowerTransform",
    "AbsTransform", "SoftmaxTransform", "StickBreakingTransform", "IndependentTransform", "ReshapeTransform",
    "LowerCholeskyTransform", "PositiveDefiniteTransform", "CumulativeDistributionTransform", "identity_transform",
    "CatTransform", "StackTransform", "CorrCholeskyTransform",
]
