"""Datasets made of other datasets: one after another, or side by side.

* :class:`ConcatDataset`: the samples of several map-style datasets, one after another
  (``train + extra`` builds one).
* :class:`ChainDataset`: the items of several iterable-style datasets, one after another.
* :class:`StackDataset`: sample ``i`` is the tuple (or dict) of sample ``i`` of each dataset.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Iterable, Iterator
from typing import Any

from .dataset import Dataset, IterableDataset, SizedDataset, T_co

__all__ = ["ChainDataset", "ConcatDataset", "StackDataset"]


class ConcatDataset(Dataset[T_co]):
    """The samples of ``datasets``, one dataset after another.

    Sample ``i`` is found by bisection in :attr:`cumulative_sizes`: it is sample
    ``i - cumulative_sizes[k - 1]`` of the first dataset ``k`` whose cumulative size
    exceeds ``i``.

    Parameters
    ----------
    datasets : iterable of datasets
        Map-style datasets (at least one).

    Attributes
    ----------
    datasets : list
        The datasets.
    cumulative_sizes : list of int
        ``cumulative_sizes[k]`` is the number of samples in ``datasets[: k + 1]``.

    Raises
    ------
    AssertionError
        For no dataset or an :class:`~minitorch_accel.data.IterableDataset`, with
        PyTorch's messages.

    Examples
    --------
    >>> import numpy as np
    >>> from minitorch_accel.data import TensorDataset
    >>> both = ConcatDataset([TensorDataset(np.arange(3)), TensorDataset(np.arange(10, 12))])
    >>> len(both), both.cumulative_sizes, int(both[3][0]), int(both[-1][0])
    (5, [3, 5], 10, 11)
    """

    def __init__(self, datasets: Iterable[SizedDataset[T_co]]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    @staticmethod
    def cumsum(sequence: Iterable[SizedDataset[Any]]) -> list[int]:
        """The running total of the lengths of ``sequence``."""
        totals, total = [], 0
        for d in sequence:
            total += len(d)
            totals.append(total)
        return totals

    def __len__(self) -> int:
        """Total number of samples."""
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> T_co:
        """Sample ``index`` of the concatenation (negative indices count from the end).

        Raises ValueError for a negative index beyond the length (PyTorch's message) and
        IndexError for a positive one (where PyTorch's message is "list index out of
        range").
        """
        index = operator.index(index)
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index += len(self)
        if index >= len(self):
            raise IndexError(f"index {index} is out of range for a ConcatDataset of {len(self)}")
        k = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[k - 1] if k > 0 else 0
        return self.datasets[k][index - start]

    def __repr__(self) -> str:
        return f"ConcatDataset(sizes={[len(d) for d in self.datasets]})"


class ChainDataset(IterableDataset[Any]):
    """The items of the iterable-style ``datasets``, one after another, read lazily.

    Parameters
    ----------
    datasets : iterable of IterableDataset
        Checked when iterated, as PyTorch does.

    Raises
    ------
    AssertionError
        When iterating or taking ``len()``, if a dataset is not an
        :class:`~minitorch_accel.data.IterableDataset` (PyTorch's message).

    Examples
    --------
    >>> from minitorch_accel.data import IterableDataset
    >>> class Letters(IterableDataset[str]):
    ...     def __init__(self, text: str) -> None:
    ...         self.text = text
    ...     def __iter__(self) -> Iterator[str]:
    ...         return iter(self.text)
    ...     def __len__(self) -> int:
    ...         return len(self.text)
    >>> chain = ChainDataset([Letters("ab"), Letters("cde")])
    >>> "".join(chain), len(chain)
    ('abcde', 5)
    """

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = datasets

    def _checked(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield d

    def __iter__(self) -> Iterator[Any]:
        """The items of the first dataset, then of the second, ..."""
        for d in self._checked():
            yield from d

    def __len__(self) -> int:
        """The sum of the datasets' lengths (TypeError if one has none)."""
        return sum(len(d) for d in self._checked())


class StackDataset(Dataset[Any]):
    """Several datasets of one length, side by side: sample ``i`` is
    ``(a[i], b[i], ...)``, or ``{"x": a[i], "y": b[i], ...}`` when given by keyword.

    Parameters
    ----------
    *args : datasets
        Stacked as a tuple.
    **kwargs : datasets
        Stacked as a dict (give positional or keyword datasets, not both).

    Raises
    ------
    ValueError
        For no dataset, both kinds, or different lengths (PyTorch's messages).

    Examples
    --------
    >>> import numpy as np
    >>> from minitorch_accel.data import TensorDataset
    >>> images, labels = TensorDataset(np.zeros((4, 2))), TensorDataset(np.arange(4))
    >>> sample = StackDataset(image=images, label=labels)[3]
    >>> sorted(sample), int(sample["label"][0])
    (['image', 'label'], 3)
    """

    datasets: tuple[SizedDataset[Any], ...] | dict[str, SizedDataset[Any]]

    def __init__(self, *args: SizedDataset[Any], **kwargs: SizedDataset[Any]) -> None:
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or"
                "``dict``- (via ``kwargs``) like input/output, but both types are given."
            )
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        members = list(args) if args else list(kwargs.values())
        self._length = len(members[0])
        if any(len(d) != self._length for d in members):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else dict(kwargs)

    def __getitem__(self, index: int) -> Any:
        """The tuple or dict of sample ``index`` of every dataset."""
        if isinstance(self.datasets, dict):
            return {key: d[index] for key, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        """The common length."""
        return self._length
