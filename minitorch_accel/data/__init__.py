"""Feeding data to a model: datasets, splits, collation and the DataLoader.

The same objects are importable as :mod:`minitorch_accel.utils.data`, PyTorch's place:
datasets (map-style and iterable), their combinations, samplers, collation and the loader.

>>> import numpy as np
>>> from minitorch_accel.data import DataLoader, TensorDataset, random_split
>>> ds = TensorDataset(np.random.rand(100, 3).astype(np.float32), np.arange(100) % 2)
>>> train, val = random_split(ds, [0.8, 0.2], seed=0)
>>> x, y = next(iter(DataLoader(train, batch_size=16, shuffle=True, seed=0)))
>>> x.shape, y.dtype
((16, 3), dtype('int64'))
"""

from .collate import collate_arrays, default_collate, default_convert
from .combine import ChainDataset, ConcatDataset, StackDataset
from .dataset import (
    Dataset,
    IterableDataset,
    Sample,
    SizedDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .loader import DataLoader
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from .workers import WorkerInfo, get_worker_info

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sample",
    "Sampler",
    "SequentialSampler",
    "SizedDataset",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "WorkerInfo",
    "collate_arrays",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
