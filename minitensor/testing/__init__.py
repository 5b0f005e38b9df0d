"""PyTorch's ``torch.testing``: ``assert_close`` (closeness of tensors, numbers, NumPy arrays and nested sequences or
mappings of them, with per-dtype default tolerances), ``make_tensor`` (random test inputs) and the deprecated
``assert_allclose``."""

from .comparison import assert_allclose, assert_close
from .creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
