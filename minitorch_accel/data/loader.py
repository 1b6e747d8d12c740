"""DataLoader: shuffled mini-batches as Tensors, optionally prefetched to a device.

Two ways to build a batch:

* **array-backed** datasets (an ``arrays`` attribute and no ``transform``, or a
  :class:`Subset` of one): one NumPy fancy-indexing call per field,
  ``images[batch_indices]``; thousands of samples per millisecond.
* anything else: ``dataset[i]`` for each index, then the samples are stacked.

With ``device=``, a background thread builds each batch in reused page-locked
buffers and starts its copy to the device while the caller trains on the previous
one (PCIe is a thin pipe: hiding the copy behind compute is the point), staying at
most ``prefetch`` batches ahead (see :mod:`minitorch_accel.data.prefetch`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..backends import Device, DeviceLike
from ..factories import from_numpy
from ..tensor import Tensor
from .dataset import SizedDataset, Subset
from .prefetch import Empty, Fields, Gather, prefetch

__all__ = ["DataLoader"]

Batch = tuple[Tensor, ...]
ArraySource = tuple[tuple[npt.NDArray[Any], ...], npt.NDArray[np.int64] | None]


def _array_source(dataset: Any) -> ArraySource | None:
    """The arrays behind ``dataset`` and the index map into them, if it is array-backed."""
    if isinstance(dataset, Subset):
        inner = _array_source(dataset.dataset)
        if inner is None:
            return None
        arrays, mapping = inner
        return arrays, dataset.indices if mapping is None else mapping[dataset.indices]
    fields = getattr(dataset, "arrays", None)
    if not isinstance(fields, tuple) or not fields:
        return None
    if getattr(dataset, "transform", None) is not None:
        return None
    host = tuple(a.numpy() if isinstance(a, Tensor) else a for a in fields)
    if not all(isinstance(a, np.ndarray) and a.ndim >= 1 for a in host):
        return None
    if any(len(a) != len(dataset) for a in host):
        return None
    return host, None


def _to_host_array(values: list[Any]) -> npt.NDArray[Any]:
    """Stack one field of several samples; Python floats become float32, ints int64."""
    first = values[0]
    if isinstance(first, Tensor):
        return np.stack([v.numpy() for v in values])
    if isinstance(first, bool):
        return np.asarray(values, dtype=np.bool_)
    if isinstance(first, int):
        return np.asarray(values, dtype=np.int64)
    if isinstance(first, float):
        return np.asarray(values, dtype=np.float32)
    return np.stack([np.asarray(v) for v in values])


def _collate(samples: list[Any]) -> tuple[npt.NDArray[Any], ...]:
    if isinstance(samples[0], tuple):
        width = len(samples[0])
        if any(not isinstance(s, tuple) or len(s) != width for s in samples):
            raise ValueError("DataLoader: samples of one batch have different numbers of fields")
        return tuple(_to_host_array([s[k] for s in samples]) for k in range(width))
    return (_to_host_array(samples),)


class DataLoader:
    """Iterate over a dataset in mini-batches of Tensors.

    Parameters
    ----------
    dataset : dataset
        Any object with ``__len__`` and ``__getitem__``. Array-backed datasets (with
        ``arrays`` and no ``transform``, e.g. :class:`TensorDataset`,
        :class:`~minitorch_accel.datasets.MNIST`, or a :class:`Subset` of one) are
        batched by fancy indexing, the rest sample by sample.
    batch_size : int, default 1
        Samples per batch.
    shuffle : bool, default False
        A new random order every epoch (every ``iter(loader)``).
    drop_last : bool, default False
        Drop the last batch when it is smaller than ``batch_size``.
    seed : int, optional
        Seed of the shuffling generator: two loaders with the same seed give the
        same sequence of epochs. None draws fresh entropy.
    device : str or Device, optional
        Move each batch there in a background thread, overlapped with the caller's
        work. None yields host (``"cpu"``) tensors built in the calling thread.
    prefetch : int, default 2
        With ``device``: how many batches the thread may have ready ahead of the
        caller.
    sampler : iterable of int, optional
        The indices of one epoch, in order (e.g. a
        :class:`~minitorch_accel.distributed.DistributedSampler` giving each process
        its own part). It must have ``__len__``; ``shuffle`` must then be False.

    Yields
    ------
    tuple of Tensor
        One tensor per field of the samples, e.g. ``(images, labels)``: float32 and
        int64 for MNIST. Python floats become float32, Python ints int64; arrays keep
        their dtype.

    Raises
    ------
    ValueError
        For a batch size or prefetch depth below 1.

    Notes
    -----
    An exception raised while building or moving a batch in the background thread is
    raised again in the caller. Leaving the loop early (``break``) stops the thread.

    Examples
    --------
    >>> import numpy as np
    >>> from minitorch_accel.data import TensorDataset
    >>> ds = TensorDataset(np.zeros((10, 3), np.float32), np.arange(10))
    >>> loader = DataLoader(ds, batch_size=4, shuffle=True, seed=0)
    >>> len(loader), [tuple(x.shape) for x, y in loader]
    (3, [(4, 3), (4, 3), (2, 3)])
    """

    def __init__(
        self,
        dataset: SizedDataset[Any],
        batch_size: int = 1,
        shuffle: bool = False,
        drop_last: bool = False,
        seed: int | None = None,
        device: DeviceLike | None = None,
        prefetch: int = 2,
        sampler: Any = None,
    ) -> None:
        if isinstance(batch_size, bool) or int(batch_size) != batch_size or batch_size < 1:
            raise ValueError(f"DataLoader batch_size must be an integer >= 1, got {batch_size!r}")
        if isinstance(prefetch, bool) or int(prefetch) != prefetch or prefetch < 1:
            raise ValueError(f"DataLoader prefetch must be an integer >= 1, got {prefetch!r}")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler and shuffle=True exclude each other")
        self.sampler = sampler
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.seed = seed
        self.device: Device | None = None if device is None else Device(device)
        self.prefetch = int(prefetch)
        self._rng = np.random.default_rng(seed)

    @property
    def generator(self) -> np.random.Generator:
        """The generator that draws each epoch's shuffled order (its state can be saved
        and restored to replay an epoch).
        """
        return self._rng

    def __len__(self) -> int:
        """Number of batches per epoch."""
        n = len(self.dataset) if self.sampler is None else len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _batch_indices(self) -> list[npt.NDArray[np.int64]]:
        if self.sampler is not None:
            order = np.fromiter(iter(self.sampler), dtype=np.int64)
        elif self.shuffle:
            order = self._rng.permutation(len(self.dataset))
        else:
            order = np.arange(len(self.dataset), dtype=np.int64)
        n = len(order)
        stop = len(self) * self.batch_size
        return [order[i : min(i + self.batch_size, n)] for i in range(0, stop, self.batch_size)]

    def _gathers(self, batches: Sequence[npt.NDArray[np.int64]]) -> list[Gather]:
        """One function per batch that builds its fields (see :data:`.prefetch.Gather`)."""
        source = _array_source(self.dataset)

        def gather_for(idx: npt.NDArray[np.int64]) -> Gather:
            def gather(empty: Empty | None) -> Fields:
                if source is not None:  # one fancy-indexing call per field
                    arrays, mapping = source
                    rows = idx if mapping is None else mapping[idx]
                    return tuple(
                        np.take(
                            a,
                            rows,
                            axis=0,
                            out=None
                            if empty is None
                            else empty((len(rows), *a.shape[1:]), a.dtype),
                        )
                        for a in arrays
                    )
                fields = _collate([self.dataset[int(i)] for i in idx])
                if empty is None:
                    return fields
                buffers = tuple(empty(f.shape, f.dtype) for f in fields)
                for buffer, f in zip(buffers, fields, strict=True):
                    buffer[...] = f
                return buffers

            return gather

        return [gather_for(idx) for idx in batches]

    def __iter__(self) -> Iterator[Batch]:
        """One epoch of batches (the shuffled order is drawn here, in the caller)."""
        gathers = self._gathers(self._batch_indices())
        if self.device is None:
            return (
                tuple(from_numpy(np.ascontiguousarray(f)) for f in gather(None))
                for gather in gathers
            )
        return prefetch(gathers, self.device, self.prefetch)

    def __repr__(self) -> str:
        return (
            f"DataLoader(n={len(self.dataset)}, batch_size={self.batch_size}, "
            f"shuffle={self.shuffle}, drop_last={self.drop_last}, device={self.device})"
        )
