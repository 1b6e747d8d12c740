"""PyTorch's ``torch.utils.data`` names: the objects of :mod:`minitorch_accel.data`.

``from minitorch_accel.utils.data import DataLoader, TensorDataset`` gives the very
same classes as ``from minitorch_accel.data import ...``.

Examples
--------
>>> import minitorch_accel.data
>>> from minitorch_accel.utils.data import DataLoader
>>> DataLoader is minitorch_accel.data.DataLoader
True
"""

from __future__ import annotations

from ..data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    Sampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    WorkerInfo,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
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
    "get_worker_info",
    "random_split",
]
