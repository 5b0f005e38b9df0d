"""``torch.utils.data`` for minitensor: data sets, samplers, collation and the DataLoader.

Differences from PyTorch: random orders (shuffling, random samplers, ``random_split``) come from minitensor's
generators, so they are reproducible with ``minitensor.manual_seed`` or ``generator=`` but differ from PyTorch's for the
same seed; DataLoader workers are threads, not processes (same batches in the same order).
"""

from . import distributed
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset, random_split
from .distributed import DistributedSampler
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler
from .worker import WorkerInfo, get_worker_info

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "WorkerInfo",
    "default_collate",
    "default_convert",
    "distributed",
    "get_worker_info",
    "random_split",
]
