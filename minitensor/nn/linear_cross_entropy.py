"""Cross entropy of linearly projected inputs: ``F.linear_cross_entropy``, ``nn.LinearCrossEntropyLoss`` and
``nn.LinearCrossEntropyOptions`` (PyTorch 2.13's names, arguments and checks).

The loss is ``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``, the logits viewed as
(N, C, d_1, ..., d_K) when ``linear_weight`` is (C, d_1, ..., d_K, in_features). PyTorch's ``options`` select a
chunked implementation that never holds all the logits at once (less memory, the same loss up to rounding);
minitensor checks them and computes the reference path.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ..errors import ShapeError
from ..tensor import Tensor
from .common import tensor_args
from .linear import Linear, linear
from .loss import _WeightedLoss
from .losses import cross_entropy

__all__ = ["linear_cross_entropy", "LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]

ACC_POLICIES = ("auto", "accurate", "balanced", "compact")


@dataclasses.dataclass(frozen=True)
class LinearCrossEntropyOptions:
    """PyTorch's chunking options for :func:`linear_cross_entropy`, with its checks. Accepted for compatibility: the
    loss is always computed in one piece here."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None

    def __post_init__(self) -> None:
        if self.acc_policy not in ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, colon, factor = self.chunking_method.partition(":")
            factor = factor if colon else "1"
            if name != "aspect_ratio" or not factor.isdigit() or int(factor) < 1:
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        chunk = self.batch_chunk_size
        if chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, int) or chunk <= 0):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {chunk!r}")


@tensor_args("input", "linear_weight")
def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Any, *,  # noqa: A002
                         linear_bias: Tensor | None = None, weight: Tensor | None = None, reduction: str = "mean",
                         ignore_index: int | None = None, label_smoothing: float = 0.0,
                         options: LinearCrossEntropyOptions | None = None) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias).view(N, C, d_1, ..., d_K), target, ...)`` for a
    (in_features,) or (N, in_features) input and a (C, [d_1, ..., d_K,] in_features) weight (K >= 1 needs a batched
    input). ``ignore_index`` None means -100; it may not be given with a probability target (the logits' shape)."""
    if input.dims not in (1, 2):
        raise ShapeError(f"expected input with dimensionality 1 or 2, got {input.dims}")
    if linear_weight.dims < 2:
        raise ShapeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dims}")
    batch, in_features = input.shape[:-1], input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise ShapeError(f"expected equal input and linear_weight last dimensions (in_features), got {in_features} and "
                         f"{linear_weight.shape[-1]}, respectively")
    classes, extra = linear_weight.shape[0], linear_weight.shape[1:-1]
    if linear_bias is not None and linear_bias.shape != (classes, *extra):
        raise ShapeError(f"expected linear_bias shape {(classes, *extra)}, got {linear_bias.shape}")
    if extra and not batch:
        raise ShapeError(f"K-dimensional loss defined by linear_weight shape {linear_weight.shape} requires batched "
                         f"input, (N, {in_features}), got unbatched input with shape {input.shape}")
    logits_shape = (*batch, classes, *extra)
    if tuple(getattr(target, "shape", ())) == logits_shape and ignore_index is not None:
        raise ValueError("ignore_index cannot be specified when target contains probabilities")
    if options is not None and not isinstance(options, LinearCrossEntropyOptions):
        raise TypeError(f"options must be a LinearCrossEntropyOptions or None, got {type(options).__name__}")
    outputs = math.prod(extra, start=classes)
    flat_bias = linear_bias.reshape(outputs) if linear_bias is not None else None
    logits = linear(input, linear_weight.reshape(outputs, in_features), flat_bias).reshape(*logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index, label_smoothing=label_smoothing)


class LinearCrossEntropyLoss(_WeightedLoss):
    """A ``Linear(in_features, C * prod(out_features), bias)`` (the child ``linear``, its weight viewed as
    (C, *out_features, in_features)) followed by cross entropy: see :func:`linear_cross_entropy`."""

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple[int, ...] = (), bias: bool = False,
                 device: Any = None, dtype: Any = None, reduction: str = "mean", weight: Tensor | None = None,
                 ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: LinearCrossEntropyOptions | None = None, backend: Any = None) -> None:
        if weight is not None and weight.shape != (num_classes,):
            raise ShapeError(f"expected weight shape to be {(num_classes,)}, got {weight.shape}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise ValueError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight, None, None, reduction)
        self.num_classes, self.out_features = num_classes, tuple(out_features)
        self.ignore_index, self.label_smoothing, self.options = ignore_index, label_smoothing, options
        self.linear = Linear(in_features, math.prod(self.out_features, start=num_classes), bias=bias, device=device,
                             dtype=dtype, backend=backend)

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        shape = (self.num_classes, *self.out_features)
        bias = self.linear.bias.reshape(*shape) if self.linear.bias is not None else None
        return linear_cross_entropy(input, self.linear.weight.reshape(*shape, self.linear.in_features), target,
                                    linear_bias=bias, weight=self.weight, reduction=self.reduction,
                                    ignore_index=self.ignore_index, label_smoothing=self.label_smoothing,
                                    options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, reduction={self.reduction}, "
                f"ignore_index={self.ignore_index}, label_smoothing={self.label_smoothing}, options={self.options}")
