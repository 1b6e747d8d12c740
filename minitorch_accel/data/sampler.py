"""Samplers: which sample indices an epoch visits, and in which order, as PyTorch's.

A sampler is any iterable of indices into a dataset (with ``__len__`` if the loader
is to know its length). :class:`BatchSampler` groups another sampler's indices into
the lists of indices of mini-batches. The :class:`~minitorch_accel.data.DataLoader`
builds the ones it needs (``shuffle=True`` is a :class:`RandomSampler`, batching a
:class:`BatchSampler`) unless it is given its own ``sampler=`` or ``batch_sampler=``.

Random draws come from ``generator``, a :class:`numpy.random.Generator` (PyTorch's
argument, with a NumPy generator where PyTorch takes a ``torch.Generator``). Without
one, each epoch seeds a new generator from the framework's host generator, so that
:func:`minitorch_accel.manual_seed` makes the epochs repeat, as ``torch.manual_seed``
does (the numbers drawn are not PyTorch's).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from .dataset import seeded_rng

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]

T_co = TypeVar("T_co", covariant=True)


def _check_generator(generator: Any, owner: str) -> None:
    if generator is not None and not isinstance(generator, np.random.Generator):
        raise TypeError(
            f"{owner} generator must be a numpy.random.Generator, got {type(generator).__name__}"
        )


def _positive_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and bool(value > 0)


class Sampler(Generic[T_co]):
    """Base class of samplers: :meth:`__iter__` yields indices (or lists of indices).

    Subclasses implement ``__iter__`` and, so that ``len(loader)`` works, ``__len__``.

    Examples
    --------
    >>> class Backwards(Sampler[int]):
    ...     def __init__(self, n: int) -> None:
    ...         self.n = n
    ...     def __iter__(self) -> Iterator[int]:
    ...         return iter(range(self.n - 1, -1, -1))
    ...     def __len__(self) -> int:
    ...         return self.n
    >>> list(Backwards(4))
    [3, 2, 1, 0]
    """

    def __iter__(self) -> Iterator[T_co]:
        """The indices of one epoch."""
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``, every epoch.

    Parameters
    ----------
    data_source : sized
        The dataset (only its length is used).

    Examples
    --------
    >>> list(SequentialSampler(range(4)))
    [0, 1, 2, 3]
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        """``range(len(data_source))``."""
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        """``len(data_source)``."""
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Indices in random order: a new permutation every epoch, or draws with replacement.

    Without replacement, an epoch is ``num_samples // n`` whole permutations of
    ``range(n)`` followed by the first ``num_samples % n`` indices of one more, so that
    each index appears exactly once per ``n`` samples. With replacement, each of the
    ``num_samples`` indices is drawn uniformly and independently.

    Parameters
    ----------
    data_source : sized
        The dataset (only its length ``n`` is used).
    replacement : bool, default False
        Draw with replacement.
    num_samples : int, optional
        Indices per epoch; default ``len(data_source)``.
    generator : numpy.random.Generator, optional
        Draws the indices (see the module's notes); None seeds a new one every epoch
        from the framework's host generator.

    Raises
    ------
    TypeError
        If ``replacement`` is not a bool.
    ValueError
        If ``num_samples`` (or the dataset's length, by default) is not a positive int.

    Examples
    --------
    >>> import numpy as np
    >>> sorted(RandomSampler(range(5), generator=np.random.default_rng(0)))
    [0, 1, 2, 3, 4]
    >>> len(RandomSampler(range(5), replacement=True, num_samples=12))
    12
    """

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: np.random.Generator | None = None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        if not _positive_int(self.num_samples):
            raise ValueError(
                "num_samples should be a positive integer value, "
                f"but got num_samples={self.num_samples}"
            )
        _check_generator(generator, "RandomSampler")

    @property
    def num_samples(self) -> int:
        """Indices per epoch: ``num_samples``, or the dataset's length."""
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        """The indices of one epoch, drawn now."""
        n, count = len(self.data_source), self.num_samples
        rng = self.generator if self.generator is not None else seeded_rng(None)
        if self.replacement:
            yield from rng.integers(0, n, size=count).tolist()
            return
        for _ in range(count // n):
            yield from rng.permutation(n).tolist()
        if count % n:
            yield from rng.permutation(n)[: count % n].tolist()

    def __len__(self) -> int:
        """``num_samples``."""
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices``, in a new random order every epoch (without replacement).

    Parameters
    ----------
    indices : sequence of int
        The indices to visit.
    generator : numpy.random.Generator, optional
        Draws the order; None seeds a new one every epoch from the host generator.

    Examples
    --------
    >>> import numpy as np
    >>> sorted(SubsetRandomSampler([7, 3, 9], generator=np.random.default_rng(0)))
    [3, 7, 9]
    """

    def __init__(
        self, indices: Sequence[int], generator: np.random.Generator | None = None
    ) -> None:
        _check_generator(generator, "SubsetRandomSampler")
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        """``indices[p]`` for a random permutation ``p`` of their positions."""
        rng = self.generator if self.generator is not None else seeded_rng(None)
        for position in rng.permutation(len(self.indices)).tolist():
            yield self.indices[position]

    def __len__(self) -> int:
        """``len(indices)``."""
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices of ``range(len(weights))``, index ``i`` drawn with
    probability ``weights[i] / sum(weights)``.

    Without replacement, an index drawn once is not drawn again in the epoch, and the
    remaining weights are renormalised after each draw.

    Parameters
    ----------
    weights : sequence of float
        One non-negative weight per index, not necessarily summing to 1. An index of
        weight 0 is never drawn.
    num_samples : int
        Indices per epoch.
    replacement : bool, default True
        Draw with replacement.
    generator : numpy.random.Generator, optional
        Draws the indices; None seeds a new one every epoch from the host generator.

    Raises
    ------
    ValueError
        If ``num_samples`` is not a positive int, ``replacement`` not a bool, or
        ``weights`` not one-dimensional. When iterating: if a weight is negative or not
        finite, if they sum to 0, or if, without replacement, fewer than
        ``num_samples`` weights are positive. PyTorch raises RuntimeError for the bad
        weights, and in the last case draws indices of weight 0.

    Examples
    --------
    >>> import numpy as np
    >>> draws = list(WeightedRandomSampler([0.0, 1.0, 3.0], 6, generator=np.random.default_rng(0)))
    >>> len(draws), 0 in draws
    (6, False)
    """

    def __init__(
        self,
        weights: Sequence[float] | npt.ArrayLike,
        num_samples: int,
        replacement: bool = True,
        generator: np.random.Generator | None = None,
    ) -> None:
        if not _positive_int(num_samples):
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        weights_array = np.asarray(weights, dtype=np.float64)
        if weights_array.ndim != 1:
            raise ValueError(
                "weights should be a 1d sequence but given "
                f"weights have shape {tuple(weights_array.shape)}"
            )
        _check_generator(generator, "WeightedRandomSampler")
        self.weights: npt.NDArray[np.float64] = weights_array
        self.num_samples = int(num_samples)
        self.replacement = replacement
        self.generator = generator

    def _probabilities(self) -> npt.NDArray[np.float64]:
        w = self.weights
        if not np.isfinite(w).all() or (w < 0).any():
            raise ValueError(
                "WeightedRandomSampler weights must be finite and >= 0, got "
                f"{w[~np.isfinite(w) | (w < 0)][:3].tolist()} among them"
            )
        if w.sum() <= 0:
            raise ValueError("WeightedRandomSampler weights sum to 0: nothing can be drawn")
        if not self.replacement and np.count_nonzero(w) < self.num_samples:
            raise ValueError(
                f"WeightedRandomSampler cannot draw {self.num_samples} samples without "
                f"replacement from {np.count_nonzero(w)} positive weights; lower num_samples "
                "or pass replacement=True"
            )
        probabilities: npt.NDArray[np.float64] = w / w.sum()
        return probabilities

    def __iter__(self) -> Iterator[int]:
        """The indices of one epoch, drawn now."""
        p = self._probabilities()
        rng = self.generator if self.generator is not None else seeded_rng(None)
        drawn = rng.choice(len(p), size=self.num_samples, replace=self.replacement, p=p)
        return iter(drawn.tolist())

    def __len__(self) -> int:
        """``num_samples``."""
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """The indices of ``sampler`` in lists of ``batch_size``: one list per mini-batch.

    Parameters
    ----------
    sampler : iterable of int
        Gives the indices (a sampler, a list, a range...).
    batch_size : int
        Indices per list.
    drop_last : bool
        Drop the last list if it is shorter than ``batch_size``.

    Raises
    ------
    ValueError
        If ``batch_size`` is not a positive int or ``drop_last`` not a bool.

    Examples
    --------
    >>> list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=False))
    [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    >>> list(BatchSampler(range(10), batch_size=3, drop_last=True))
    [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not _positive_int(batch_size):
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = int(batch_size)
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        """Successive lists of ``batch_size`` indices (the last one maybe shorter)."""
        indices = iter(self.sampler)
        while batch := list(itertools.islice(indices, self.batch_size)):
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch

    def __len__(self) -> int:
        """Number of lists: ``len(sampler) / batch_size``, rounded down with
        ``drop_last``, up without.
        """
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def split(self, order: npt.NDArray[np.int64]) -> list[npt.NDArray[np.int64]]:
        """The batches of ``order`` (a whole epoch of indices) as arrays: what
        iterating gives for a sampler that yields ``order``, without a Python list per
        batch (the DataLoader's fast path).
        """
        size, n = self.batch_size, len(order)
        stop = n - n % size if self.drop_last else n
        return [order[i : i + size] for i in range(0, stop, size)]
