"""Each process its own part of every epoch."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..data.sampler import Sampler
from .comm import rank as current_rank
from .comm import world_size as current_world_size


class DistributedSampler(Sampler[int]):
    """The indices of one epoch for one rank: disjoint across ranks, together the epoch.

    All ranks draw the same permutation of ``range(dataset_len)`` from ``(seed,
    epoch)`` and rank ``r`` takes positions ``r, r + R, r + 2R, ...``. Without
    ``drop_last`` the permutation is padded by wrapping around so that every rank gets
    the same number of samples (as PyTorch's sampler); with it the tail is dropped.

    A :class:`~minitorch_accel.data.Sampler`, with PyTorch's arguments. The permutation
    comes from NumPy's generator, so the order differs from PyTorch's for the same
    ``seed`` (the split across ranks is the same rule).

    Parameters
    ----------
    dataset : sized or int
        The dataset (only its length is used), or its number of samples.
    num_replicas, rank : int, optional
        Default: the MPI world size and this process's rank.
    shuffle : bool
        A new permutation each epoch (call :meth:`set_epoch`).
    seed : int
        Shared by every rank.
    drop_last : bool
        Drop the tail instead of padding.

    Examples
    --------
    >>> s = DistributedSampler(10, num_replicas=3, rank=1, shuffle=False)
    >>> list(s)
    [1, 4, 7, 0]
    >>> from minitorch_accel.data import Sampler
    >>> isinstance(s, Sampler), len(s)
    (True, 4)
    """

    def __init__(
        self,
        dataset: int | object,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        n = dataset if isinstance(dataset, int) else len(dataset)  # type: ignore[arg-type]
        self.dataset_len = int(n)
        self.num_replicas = current_world_size() if num_replicas is None else int(num_replicas)
        self.rank = current_rank() if rank is None else int(rank)
        if not 0 <= self.rank < self.num_replicas:
            raise ValueError(f"rank {self.rank} is not in [0, {self.num_replicas})")
        self.shuffle, self.seed, self.drop_last = bool(shuffle), int(seed), bool(drop_last)
        self.epoch = 0
        if self.drop_last:
            self.num_samples = self.dataset_len // self.num_replicas
        else:
            self.num_samples = -(-self.dataset_len // self.num_replicas)

    def set_epoch(self, epoch: int) -> None:
        """Choose the epoch whose permutation :meth:`__iter__` yields."""
        self.epoch = int(epoch)

    def indices(self) -> np.ndarray:
        """This rank's indices for the current epoch."""
        if self.shuffle:
            order = np.random.default_rng([self.seed, self.epoch]).permutation(self.dataset_len)
        else:
            order = np.arange(self.dataset_len)
        total = self.num_samples * self.num_replicas
        if total > len(order):
            order = np.resize(order, total)  # wraps around
        return order[:total][self.rank :: self.num_replicas]

    def __iter__(self) -> Iterator[int]:
        return iter(self.indices().tolist())

    def __len__(self) -> int:
        return self.num_samples
