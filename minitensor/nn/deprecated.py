"""PyTorch's deprecated nn names, kept working with PyTorch's warnings: ``nn.NLLLoss2d`` (NLLLoss, which takes 2-D
targets too) and ``F.upsample``, ``F.upsample_bilinear``, ``F.upsample_nearest`` (forms of :func:`interpolate`)."""

from __future__ import annotations

import warnings
from typing import Any

from ..tensor import Tensor
from .loss import NLLLoss
from .resample import interpolate

__all__ = ["NLLLoss2d", "upsample", "upsample_bilinear", "upsample_nearest"]


class NLLLoss2d(NLLLoss):
    """:class:`NLLLoss` under its old name; constructing one warns (FutureWarning), as in PyTorch."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, ignore_index: int = -100,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement and see "
                      "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.", FutureWarning,
                      stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",  # noqa: A002
             align_corners: bool | None = None) -> Tensor:
    """``interpolate(input, size, scale_factor, mode, align_corners)``, warning (UserWarning) as PyTorch's."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:  # noqa: A002
    """``interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)``, warning as PyTorch's."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:  # noqa: A002
    """``interpolate(input, size, scale_factor, mode="nearest")``, warning as PyTorch's."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")
