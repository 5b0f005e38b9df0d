"""``torch.nn.modules.upsampling``'s names, for code that imports them from there: ``Upsample UpsamplingNearest2d
UpsamplingBilinear2d``."""

from __future__ import annotations

from ..resample import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
