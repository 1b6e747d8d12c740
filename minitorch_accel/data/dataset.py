"""Datasets: anything with ``__len__`` and ``__getitem__``, plus the array-backed kind.

A dataset that holds its whole data as NumPy arrays exposes them as ``arrays``
(a tuple of arrays with the same first dimension, one per field). The
:class:`~minitorch_accel.data.DataLoader` then cuts a batch out of each array with
one fancy-indexing call instead of fetching samples one by one, which is what
makes it fast. :class:`TensorDataset` and the datasets of
:mod:`minitorch_accel.datasets` are array-backed.
"""

from __future__ import annotations

import abc
import math
import operator
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from ..core.factories import host_generator
from ..core.tensor import Tensor

if TYPE_CHECKING:
    from .combine import ChainDataset, ConcatDataset


def seeded_rng(seed: int | None) -> np.random.Generator:
    """A new NumPy generator: seeded with ``seed``, or, for None, with a number drawn from
    the host's generator (the one :func:`minitorch_accel.manual_seed` seeds), so that
    shuffles and splits repeat after ``manual_seed`` as in PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.manual_seed(3); a = seeded_rng(None).permutation(5)
    >>> mta.manual_seed(3); b = seeded_rng(None).permutation(5)
    >>> bool((a == b).all())
    True
    """
    if seed is None:
        seed = int(host_generator().integers(2**63))
    return np.random.default_rng(seed)


__all__ = [
    "Dataset",
    "IterableDataset",
    "Sample",
    "SizedDataset",
    "Subset",
    "TensorDataset",
    "random_split",
    "seeded_rng",
]

T_co = TypeVar("T_co", covariant=True)
Sample = tuple[Any, ...]


class SizedDataset(Protocol[T_co]):
    """What the data utilities need of a dataset: a length and integer indexing."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: int) -> T_co: ...


class Dataset(abc.ABC, Generic[T_co]):
    """Base class of map-style datasets: ``dataset[i]`` for ``0 <= i < len(dataset)``.

    Subclasses implement :meth:`__getitem__` and :meth:`__len__`. Any object with
    those two methods works with :class:`DataLoader` too, subclass or not.

    Examples
    --------
    >>> class Squares(Dataset[tuple[int, int]]):
    ...     def __len__(self) -> int:
    ...         return 4
    ...     def __getitem__(self, i: int) -> tuple[int, int]:
    ...         return i, i * i
    >>> Squares()[3]
    (3, 9)
    """

    @abc.abstractmethod
    def __getitem__(self, index: int) -> T_co:
        """Return sample ``index``."""

    @abc.abstractmethod
    def __len__(self) -> int:
        """Return the number of samples."""

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        """``ConcatDataset([self, other])``: the samples of ``self``, then of ``other``."""
        from .combine import ConcatDataset  # combine.py builds on this module

        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """Base class of datasets read as a stream: subclasses implement :meth:`__iter__`.

    For data that cannot be indexed (records read from a file or a socket, samples
    generated on the fly). The :class:`~minitorch_accel.data.DataLoader` batches
    consecutive items; it takes no sampler or shuffle. With ``num_workers > 0`` every
    worker iterates its own copy of the dataset, so each item comes out once per worker
    unless ``__iter__`` uses :func:`~minitorch_accel.data.get_worker_info` to read only
    its share (see the example). A subclass may define ``__len__``; without it,
    ``len()`` raises TypeError, as in PyTorch.

    Examples
    --------
    >>> from minitorch_accel.data import get_worker_info
    >>> class Range(IterableDataset[int]):
    ...     def __init__(self, n: int) -> None:
    ...         self.n = n
    ...     def __iter__(self) -> Iterator[int]:
    ...         info = get_worker_info()  # None in the main process
    ...         if info is None:
    ...             return iter(range(self.n))
    ...         return iter(range(info.id, self.n, info.num_workers))  # worker i: i, i+k, ...
    >>> list(Range(4))
    [0, 1, 2, 3]
    >>> list(Range(2) + Range(3))
    [0, 1, 0, 1, 2]
    """

    @abc.abstractmethod
    def __iter__(self) -> Iterator[T_co]:
        """The items of the stream."""

    def __getitem__(self, index: int) -> T_co:
        """Refused: an iterable-style dataset is read by iterating over it."""
        raise TypeError(
            f"{type(self).__name__} is an IterableDataset: iterate over it instead of indexing"
        )

    def __len__(self) -> int:
        """Refused unless a subclass defines it (PyTorch's IterableDataset has no length)."""
        raise TypeError(f"object of type '{type(self).__name__}' has no len()")

    def __add__(self, other: Dataset[T_co]) -> ChainDataset:  # type: ignore[override]
        """``ChainDataset([self, other])``: the items of ``self``, then of ``other``."""
        from .combine import ChainDataset

        return ChainDataset([self, other])


def _as_numpy(value: Any) -> npt.NDArray[Any]:
    if isinstance(value, Tensor):
        return value.numpy()
    return np.asarray(value)


class TensorDataset(Dataset[Sample]):
    """A dataset of equally long arrays or tensors; sample ``i`` is ``(a[i], b[i], ...)``.

    Parameters
    ----------
    *arrays : numpy.ndarray or Tensor
        At least one; all with the same length along the first dimension. The loader
        builds batches from host copies of them (``arrays``) and moves each batch to a
        device.

    Attributes
    ----------
    arrays : tuple of numpy.ndarray
        The data on the host, used by :class:`DataLoader` to build batches by fancy
        indexing.
    tensors : tuple
        The data as given: indexing the dataset (``ds[i]``, ``ds[i:j]``) indexes these,
        so a part given as a Tensor comes back as a Tensor (as in PyTorch) and a part
        given as a NumPy array as an array.

    Raises
    ------
    ValueError
        With no array, a 0-dimensional one, or first dimensions that differ (all
        shapes named).

    Examples
    --------
    >>> import numpy as np
    >>> ds = TensorDataset(np.zeros((5, 3), np.float32), np.arange(5))
    >>> len(ds), ds[2][1]
    (5, np.int64(2))
    >>> import minitorch_accel as mta
    >>> x, y = TensorDataset(mta.arange(10.0), mta.arange(10))[2:5]
    >>> x, y
    (tensor([2., 3., 4.]), tensor([2, 3, 4]))
    """

    def __init__(self, *arrays: npt.ArrayLike | Tensor) -> None:
        if not arrays:
            raise ValueError("TensorDataset needs at least one array")
        data = tuple(_as_numpy(a) for a in arrays)
        shapes = ", ".join(str(a.shape) for a in data)
        if any(a.ndim == 0 for a in data):
            raise ValueError(f"TensorDataset needs arrays with a first dimension, got {shapes}")
        if len({a.shape[0] for a in data}) != 1:
            raise ValueError(
                f"TensorDataset arrays must have the same first dimension, got shapes {shapes}"
            )
        self.arrays: tuple[npt.NDArray[Any], ...] = data
        self.tensors: tuple[Any, ...] = tuple(
            a if isinstance(a, Tensor) else d for a, d in zip(arrays, data, strict=True)
        )

    def __len__(self) -> int:
        """Number of samples (the common first dimension)."""
        return int(self.arrays[0].shape[0])

    def __getitem__(self, index: Any) -> Sample:
        """Return ``(a[index], b[index], ...)``, each part as its input's kind."""
        return tuple(t[index] for t in self.tensors)

    def __repr__(self) -> str:
        shapes = ", ".join(f"{a.dtype}{list(a.shape)}" for a in self.arrays)
        return f"TensorDataset({shapes})"


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order.

    Parameters
    ----------
    dataset : dataset
        Any object with ``__len__`` and ``__getitem__``.
    indices : sequence of int
        Positions in ``dataset`` (negative ones count from the end).

    Raises
    ------
    IndexError
        If an index is out of range for ``dataset``.

    Examples
    --------
    >>> import numpy as np
    >>> ds = TensorDataset(np.arange(10))
    >>> [int(x[0]) for x in Subset(ds, [9, 0, 3])]
    [9, 0, 3]
    """

    def __init__(self, dataset: SizedDataset[T_co], indices: Sequence[int] | npt.ArrayLike) -> None:
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        n = len(dataset)
        if idx.size and (idx.min() < -n or idx.max() >= n):
            bad = int(idx[(idx < -n) | (idx >= n)][0])
            raise IndexError(f"Subset index {bad} out of range for a dataset of {n} samples")
        self.dataset = dataset
        self.indices: npt.NDArray[np.int64] = np.where(idx < 0, idx + n, idx)

    def __len__(self) -> int:
        """Number of selected samples."""
        return int(self.indices.size)

    def __getitem__(self, index: int) -> T_co:
        """Return ``dataset[indices[index]]``."""
        return self.dataset[int(self.indices[operator.index(index)])]

    def __repr__(self) -> str:
        return f"Subset({self.dataset!r}, n={len(self)})"


def _split_lengths(n: int, lengths: Sequence[float]) -> list[int]:
    total = sum(lengths)
    if math.isclose(total, 1.0) and total <= 1:  # fractions, as PyTorch decides
        for i, fraction in enumerate(lengths):
            if not 0 <= fraction <= 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        counts = [int(math.floor(n * float(x))) for x in lengths]
        for i in range(n - sum(counts)):  # hand out the remainder one by one, round robin
            counts[i % len(counts)] += 1
        for i, count in enumerate(counts):
            if count == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.",
                    stacklevel=3,
                )
        return counts
    if any(x < 0 for x in lengths):
        raise ValueError(f"random_split lengths must not be negative, got {list(lengths)}")
    if not all(isinstance(x, (int, np.integer)) for x in lengths):
        raise ValueError(
            f"random_split fractions {list(lengths)} sum to {total}, not 1 "
            "(give integer lengths or fractions)"
        )
    if sum(int(x) for x in lengths) != n:
        raise ValueError(
            f"random_split lengths {list(lengths)} sum to {sum(int(x) for x in lengths)}, "
            f"but the dataset has {n} samples"
        )
    return [int(x) for x in lengths]


def random_split(
    dataset: SizedDataset[T_co],
    lengths: Sequence[float],
    seed: int | None = None,
    generator: np.random.Generator | None = None,
) -> list[Subset[T_co]]:
    """Split a dataset at random into non-overlapping subsets.

    Parameters
    ----------
    dataset : dataset
        What to split.
    lengths : sequence of int or float
        Sizes of the parts, summing to ``len(dataset)``, or fractions summing to 1
        (each part gets ``floor(n * fraction)``, the remainder is handed out one
        sample at a time from the first part on, as PyTorch >= 1.13). As in PyTorch,
        lengths that sum to 1 are fractions even when they are ints (``[1, 0]`` puts
        every sample in the first part), and a part of length 0 gives a warning.
    seed : int, optional
        Seed of the permutation: the same seed gives the same split. None seeds it
        from the framework's host generator, so that :func:`minitorch_accel.manual_seed`
        makes the split reproducible, as ``torch.manual_seed`` does.
    generator : numpy.random.Generator, optional
        Draws the permutation instead (PyTorch's argument, with a NumPy generator
        where PyTorch takes a ``torch.Generator``); excludes ``seed``.

    Returns
    -------
    list of Subset

    Raises
    ------
    ValueError
        If a length is negative, a fraction above 1, or the lengths do not add up.

    Examples
    --------
    >>> import numpy as np
    >>> train, val = random_split(TensorDataset(np.arange(10)), [0.8, 0.2], seed=0)
    >>> len(train), len(val)
    (8, 2)
    """
    counts = _split_lengths(len(dataset), lengths)
    if generator is not None and seed is not None:
        raise ValueError("random_split: pass seed or generator, not both")
    if generator is not None and not isinstance(generator, np.random.Generator):
        raise TypeError(
            f"random_split generator must be a numpy.random.Generator, got "
            f"{type(generator).__name__}; or pass seed=<int>"
        )
    rng = generator if generator is not None else seeded_rng(seed)
    order = rng.permutation(len(dataset))
    bounds = np.cumsum([0, *counts])
    return [Subset(dataset, order[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
