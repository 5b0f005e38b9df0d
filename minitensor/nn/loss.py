"""Loss Modules (``nn.CrossEntropyLoss``, ``nn.MSELoss`` ...): torch's constructors around :mod:`.losses`.

Class weights (``weight``) and ``pos_weight`` are buffers, registered even when None, as in PyTorch, so they move
with ``module.to(...)`` and appear in ``state_dict`` when set. ``repr`` lists the settings that differ from the
defaults (``CrossEntropyLoss()`` for a default one, like PyTorch).
"""

from __future__ import annotations

from typing import Any

from ..module import Module
from ..tensor import Tensor
from . import losses as F

__all__ = [
    "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss",
    "BCELoss", "BCEWithLogitsLoss", "KLDivLoss",
]


class _Loss(Module):
    """Holds ``reduction`` (the legacy ``size_average``/``reduce`` flags map onto it, as in PyTorch)."""

    _allowed: tuple[str, ...] = F.REDUCTIONS
    _defaults: dict[str, Any] = {"reduction": "mean"}

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = F._reduction(reduction, size_average, reduce, self._allowed)

    def extra_repr(self) -> str:
        shown = {name: getattr(self, name) for name, default in self._defaults.items() if getattr(self, name) != default}
        return ", ".join(f"{name}={value!r}" for name, value in shown.items())


class _WeightedLoss(_Loss):
    """A loss with an optional ``weight`` buffer."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)

    def extra_repr(self) -> str:
        weight = self.weight
        rest = super().extra_repr()
        if weight is None:
            return rest
        return ", ".join(part for part in (f"weight=Tensor{tuple(weight.shape)}", rest) if part)


class CrossEntropyLoss(_WeightedLoss):
    """Softmax cross-entropy of logits against class indices or class probabilities; see :func:`.losses.cross_entropy`."""

    _defaults = {"ignore_index": -100, "reduction": "mean", "label_smoothing": 0.0}

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, ignore_index: int = -100,
                 reduce: bool | None = None, reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002 - torch's name
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of class indices under log-probabilities; see :func:`.losses.nll_loss`."""

    _defaults = {"ignore_index": -100, "reduction": "mean"}

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, ignore_index: int = -100,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean squared error (input - target)^2; see :func:`.losses.mse_loss`."""

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error |input - target|; see :func:`.losses.l1_loss`."""

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """0.5 d^2 / beta below beta, |d| - 0.5 beta above; see :func:`.losses.smooth_l1_loss`."""

    _defaults = {"reduction": "mean", "beta": 1.0}

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """0.5 d^2 below delta, delta (|d| - 0.5 delta) above; see :func:`.losses.huber_loss`."""

    _defaults = {"reduction": "mean", "delta": 1.0}

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities; see :func:`.losses.binary_cross_entropy`."""

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of sigmoid(logits), computed stably; see :func:`.losses.binary_cross_entropy_with_logits`."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy_with_logits(input, target, weight=self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)

    def extra_repr(self) -> str:
        parts = [f"{name}=Tensor{tuple(value.shape)}" for name in ("weight", "pos_weight")
                 if (value := getattr(self, name)) is not None]
        return ", ".join([*parts, *filter(None, [super().extra_repr()])])


class KLDivLoss(_Loss):
    """Pointwise KL divergence of log-probabilities ``input`` from ``target``; see :func:`.losses.kl_div`."""

    _allowed = (*F.REDUCTIONS, "batchmean")
    _defaults = {"reduction": "mean", "log_target": False}

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
