"""``torch.nn.modules.loss``'s names, for code that imports them from there: the loss modules and their bases ``_Loss``
and ``_WeightedLoss``."""

# ruff: noqa: F401 - re-exports, and torch's private names (not in __all__) too
from __future__ import annotations

from ..deprecated import NLLLoss2d
from ..linear_cross_entropy import LinearCrossEntropyLoss
from ..loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
    _Loss,
    _WeightedLoss,
)
from ..losses_margin import (
    CosineEmbeddingLoss,
    HingeEmbeddingLoss,
    MarginRankingLoss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from ..losses_multilabel import MultiLabelMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss
from ..losses_nll import CTCLoss, GaussianNLLLoss, PoissonNLLLoss

__all__ = [
    "L1Loss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "MSELoss", "BCELoss",
    "BCEWithLogitsLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss", "SmoothL1Loss", "HuberLoss",
    "SoftMarginLoss", "CrossEntropyLoss", "LinearCrossEntropyLoss", "MultiLabelSoftMarginLoss",
    "CosineEmbeddingLoss", "MarginRankingLoss", "MultiMarginLoss", "TripletMarginLoss",
    "TripletMarginWithDistanceLoss", "CTCLoss",
]  # fmt: skip
