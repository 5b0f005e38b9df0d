"""Transforms: maps y = f(x) with their inverse and log |det dy/dx| (``torch.distributions.transforms``).

The public module, as in torch: the base class and the combinators live in :mod:`.transform_base`, the elementwise
maps in :mod:`.transforms_elementwise`, the maps that couple a vector's or a matrix's entries in
:mod:`.transforms_vector`, those applying transforms to slices (cat, stack) in :mod:`.transforms_join`.
"""

from .transform_base import ComposeTransform, IndependentTransform, ReshapeTransform, Transform, identity_transform
from .transforms_elementwise import (
    AbsTransform,
    AffineTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftplusTransform,
    TanhTransform,
)
from .transforms_join import CatTransform, StackTransform
from .transforms_vector import (
    CorrCholeskyTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    SoftmaxTransform,
    StickBreakingTransform,
)

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
    "CumulativeDistributionTransform", "ExpTransform", "StackTransform",
    "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
    "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StickBreakingTransform",
    "TanhTransform", "Transform", "identity_transform",
]
