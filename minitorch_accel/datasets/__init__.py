"""Datasets as NumPy arrays: the IDX reader, MNIST, Fashion-MNIST, the embedded sample.

Nothing here depends on :class:`minitorch_accel.Tensor`; :class:`minitorch_accel.data.DataLoader`
turns the arrays into tensors.

>>> from minitorch_accel.datasets import MNIST
>>> images, labels = MNIST(sample=True, train=False).arrays
>>> images.shape, images.dtype, labels.dtype
((1000, 1, 28, 28), dtype('float32'), dtype('int64'))
"""

from .download import (
    FASHION_MNIST_MIRRORS,
    FASHION_MNIST_SHA256,
    FASHION_MNIST_SIZES,
    IDX_FILES,
    MNIST_MIRRORS,
    MNIST_SHA256,
    MNIST_SIZES,
    download_files,
    fetch_url,
    sha256_file,
)
from .idx import read_idx, write_idx
from .mnist import MNIST, FashionMNIST, cache_dir, find_files, search_dirs

__all__ = [
    "FASHION_MNIST_MIRRORS",
    "FASHION_MNIST_SHA256",
    "FASHION_MNIST_SIZES",
    "IDX_FILES",
    "MNIST",
    "MNIST_MIRRORS",
    "MNIST_SHA256",
    "MNIST_SIZES",
    "FashionMNIST",
    "cache_dir",
    "download_files",
    "fetch_url",
    "find_files",
    "read_idx",
    "search_dirs",
    "sha256_file",
    "write_idx",
]
