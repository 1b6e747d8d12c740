"""Feeding data to a model: datasets, splits and the DataLoader.

>>> import numpy as np
>>> from minitorch_accel.data import DataLoader, TensorDataset, random_split
>>> ds = TensorDataset(np.random.rand(100, 3).astype(np.float32), np.arange(100) % 2)
>>> train, val = random_split(ds, [0.8, 0.2], seed=0)
>>> x, y = next(iter(DataLoader(train, batch_size=16, shuffle=True, seed=0)))
>>> x.shape, y.dtype
((16, 3), dtype('int64'))
"""

from .dataset import Dataset, Sample, SizedDataset, Subset, TensorDataset, random_split
from .loader import DataLoader

__all__ = [
    "DataLoader",
    "Dataset",
    "Sample",
    "SizedDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]
