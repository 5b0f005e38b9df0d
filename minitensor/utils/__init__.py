"""``torch.utils`` for minitensor: the data loading tools (:mod:`minitensor.utils.data`), activation checkpointing
(:mod:`minitensor.utils.checkpoint`), hook handles (:mod:`minitensor.utils.hooks`) and pytrees
(:mod:`minitensor.utils._pytree`)."""

from . import _pytree as _pytree  # torch.utils._pytree (private in torch too, so not in __all__)
from . import checkpoint, data, hooks

__all__ = ["checkpoint", "data", "hooks"]
