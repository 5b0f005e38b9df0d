"""``torch.utils`` for minitensor: the data loading tools in :mod:`minitensor.utils.data`."""

from . import data

__all__ = ["data"]
