"""``torch.utils.data.distributed``: the sampler that shards a data set across distributed ranks (defined with the
NumPy-array loader in :mod:`minitensor.data_loader`, which the training code uses)."""

from ...data_loader import DistributedSampler

__all__ = ["DistributedSampler"]
