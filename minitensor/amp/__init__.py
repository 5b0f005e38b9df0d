"""``minitensor.amp`` (``torch.amp``): :class:`autocast`, :class:`GradScaler`, ``custom_fwd``/``custom_bwd`` and
``is_autocast_available``.

minitensor has no float16/bfloat16: autocast regions cast nothing (ops run in their inputs' dtypes, float32 is the
region's dtype) and GradScaler scales float32/float64 losses, which still skips steps with inf/NaN gradients. The
deprecated ``minitensor.cuda.amp`` and ``minitensor.cpu.amp`` are :mod:`.cuda_amp` and :mod:`.cpu_amp`.
"""

from . import autocast_mode, autocast_state, grad_scaler  # noqa: F401 - the submodules, as torch.amp's
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler, OptState

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler", "OptState"]
