"""DataLoader: shuffled mini-batches as Tensors, optionally loaded by worker processes
and prefetched to a device.

Which samples make each batch is the samplers' business (:mod:`minitorch_accel.data.sampler`):
by default a :class:`SequentialSampler` (or, with ``shuffle=True``, a
:class:`RandomSampler`) grouped by a :class:`BatchSampler`, as in PyTorch. An
:class:`IterableDataset` has no sampler: its batches are consecutive items of its stream.

Two ways to build a batch of a map-style dataset:

* **array-backed** datasets (an ``arrays`` attribute and no ``transform``, or a
  :class:`Subset` of one), with the default ``collate_fn``: one NumPy fancy-indexing call per field,
  ``images[batch_indices]``; thousands of samples per millisecond. The batch is the
  list of fields, as PyTorch collates the tuples ``(image, label)``.
* anything else: ``dataset[i]`` for each index, then ``collate_fn`` (by default
  :func:`~minitorch_accel.data.default_collate`); with ``num_workers > 0`` this runs
  in worker processes (see :mod:`minitorch_accel.data.workers`).

With ``device=``, a background thread builds each batch in reused page-locked
buffers and starts its copy to the device while the caller trains on the previous
one (PCIe is a thin pipe: hiding the copy behind compute is the point), staying at
most ``prefetch`` batches ahead (see :mod:`minitorch_accel.data.prefetch`).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..backends import Device, DeviceLike, registry
from ..core.factories import host_generator
from ..core.tensor import Tensor
from .collate import collate_arrays, convert_arrays, host_tensor, map_leaves
from .dataset import IterableDataset, SizedDataset, Subset, seeded_rng
from .prefetch import Empty, Fields, Gather, prefetch
from .sampler import BatchSampler, RandomSampler, SequentialSampler
from .workers import Fetcher, IterableFetcher, MapFetcher, run_workers

__all__ = ["DataLoader"]


def _check_stream_options(shuffle: bool, sampler: Any, batch_sampler: Any) -> None:
    """Refuse what an IterableDataset cannot take, with PyTorch's messages."""
    if shuffle:
        raise ValueError(
            "DataLoader with IterableDataset: expected unspecified shuffle option, "
            f"but got shuffle={shuffle}"
        )
    if sampler is not None:
        raise ValueError(
            "DataLoader with IterableDataset: expected unspecified sampler option, "
            f"but got sampler={sampler}"
        )
    if batch_sampler is not None:
        raise ValueError(
            "DataLoader with IterableDataset: expected unspecified batch_sampler option, "
            f"but got batch_sampler={batch_sampler}"
        )


def _check_exclusive(
    dataset: Any,
    batch_size: int | None,
    shuffle: bool,
    sampler: Any,
    batch_sampler: Any,
    drop_last: bool,
) -> None:
    """Refuse the options that exclude each other, with PyTorch's messages."""
    if isinstance(dataset, IterableDataset):
        _check_stream_options(shuffle, sampler, batch_sampler)
    if sampler is not None and shuffle:
        raise ValueError("sampler option is mutually exclusive with shuffle")
    if batch_sampler is not None:
        if batch_size != 1 or shuffle or sampler is not None or drop_last:
            raise ValueError(
                "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                "sampler, and drop_last"
            )
    elif batch_size is None:
        if drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive "
                "with drop_last"
            )
    elif isinstance(batch_size, bool) or int(batch_size) != batch_size or batch_size < 1:
        raise ValueError(f"DataLoader batch_size must be an integer >= 1, got {batch_size!r}")


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
    if getattr(dataset, "target_transform", None) is not None:
        return None
    host = tuple(a.numpy() if isinstance(a, Tensor) else a for a in fields)
    if not all(isinstance(a, np.ndarray) and a.ndim >= 1 for a in host):
        return None
    if any(len(a) != len(dataset) for a in host):
        return None
    return host, None


def _flatten(batch: Any) -> tuple[Fields, Any]:
    """The arrays of a collated ``batch`` (host tensors become arrays) and the structure
    they sit in (the batch with a :class:`_Slot` for each), for :func:`_rebuild`.
    """
    leaves: list[npt.NDArray[Any]] = []

    def take(leaf: Any) -> Any:
        if isinstance(leaf, np.ndarray) and leaf.dtype.kind in "SaUO":
            return leaf  # strings or objects (left so by default_convert): not a tensor
        if isinstance(leaf, Tensor):
            if not leaf.device.shares_host_memory:
                return leaf  # already on a device: passed through as it is
            leaf = leaf.detach().numpy()
        leaves.append(leaf)
        return _Slot(len(leaves) - 1)

    spec = map_leaves(batch, take, (np.ndarray, Tensor))
    return tuple(leaves), spec


class _Slot:
    """Where the ``index``-th array of a flattened batch goes back."""

    def __init__(self, index: int) -> None:
        self.index = index


def _rebuild(spec: Any, tensors: Sequence[Tensor]) -> Any:
    if isinstance(spec, _Slot):
        return tensors[spec.index]
    if isinstance(spec, dict):
        return {k: _rebuild(v, tensors) for k, v in spec.items()}
    if isinstance(spec, tuple) and hasattr(spec, "_fields"):
        return type(spec)(*(_rebuild(v, tensors) for v in spec))
    if isinstance(spec, (list, tuple)):
        return type(spec)(_rebuild(v, tensors) for v in spec)
    return spec


def _pinned_empty() -> Empty | None:
    """Page-locked host buffers from the first backend that has them and a device."""
    for name in registry.registered():
        try:
            backend = registry.get(name)
            if backend.has_pinned_memory and backend.device_count() > 0:
                return backend.pinned_empty
        except (RuntimeError, ImportError):
            continue
    return None


class DataLoader:
    """Iterate over a dataset in mini-batches of Tensors.

    Parameters
    ----------
    dataset : dataset
        Any object with ``__len__`` and ``__getitem__`` (a map-style dataset), or an
        :class:`IterableDataset` (read as a stream). Its samples may be arrays,
        tensors, numbers, strings, or tuples, lists and dicts of them. Array-backed
        datasets (with ``arrays`` and no ``transform``, e.g. :class:`TensorDataset`,
        :class:`~minitorch_accel.datasets.MNIST`, or a :class:`Subset` of one) are
        batched by fancy indexing, the rest sample by sample.
    batch_size : int or None, default 1
        Samples per batch. None turns batching off: each sample is passed alone
        through ``collate_fn`` (by default :func:`default_convert`: arrays become
        tensors, with no batch dimension added).
    shuffle : bool, default False
        A new random order every epoch (every ``iter(loader)``): a
        :class:`RandomSampler` drawing from ``generator``, or, without ``generator``
        and ``seed``, from a seed drawn from the framework's host generator when each
        epoch starts, as PyTorch's: ``manual_seed`` called after making the loader and
        before the loop makes the order repeat, and two epochs differ.
    sampler : iterable of int, optional
        The indices of one epoch, in order (e.g. a :class:`WeightedRandomSampler`, or a
        :class:`~minitorch_accel.distributed.DistributedSampler` giving each process
        its own part). ``len(loader)`` needs its ``__len__``; ``shuffle`` must be False.
    batch_sampler : iterable of lists of int, optional
        The indices of each batch of one epoch (e.g. a :class:`BatchSampler`, or
        batches of samples of similar lengths). Excludes ``batch_size``, ``shuffle``,
        ``sampler`` and ``drop_last``.
    num_workers : int, default 0
        Worker processes that read and collate the samples of the sample-by-sample path
        in parallel (0: the calling process does it). Array-backed datasets are always
        sliced in the calling process: one fancy-indexing call per field is faster than
        sending the batch between processes.
    collate_fn : callable, optional
        Makes a batch of a list of samples; default
        :func:`~minitorch_accel.data.default_collate` (PyTorch's rules). With workers it
        runs in the workers.
    pin_memory : bool, default False
        Return host batches in page-locked memory (faster, asynchronous copies to a
        GPU) when an accelerator backend has a device; without one it changes nothing.
    drop_last : bool, default False
        Drop the last batch when it is smaller than ``batch_size`` (for an
        :class:`IterableDataset` with workers: each worker's last batch).
    worker_init_fn : callable, optional
        Called as ``worker_init_fn(worker_id)`` in each worker after it is seeded.
    multiprocessing_context : str, optional
        ``"fork"``, ``"spawn"`` or ``"forkserver"`` (default: Python's default). With
        ``"spawn"``, the dataset and functions must be picklable.
    generator : numpy.random.Generator, optional
        Draws each epoch's shuffled order and the workers' base seed (without it,
        and without ``seed``, both come from the host generator at each epoch).
    prefetch_factor : int, default 2
        With workers: batches in flight per worker.
    seed : int, optional
        Seed of a new generator (when ``generator`` is not given; not a PyTorch
        argument): two loaders with the same seed give the same sequence of epochs,
        whatever the host generator does.
    device : str or Device, optional
        Move each batch there in a background thread, overlapped with the caller's
        work. None yields host (``"cpu"``) tensors.
    prefetch : int, default 2
        With ``device``: how many batches the thread may have ready ahead of the
        caller.

    Yields
    ------
    batch
        What ``collate_fn`` makes of the samples: for samples ``(image, label)``, the
        list ``[images, labels]`` of tensors (float32 and int64 for MNIST); for a
        single array, one tensor. Python floats become float64, ints int64; arrays keep
        their dtype.

    Attributes
    ----------
    sampler : iterable of int or None
        The indices of an epoch: the one given, or a :class:`SequentialSampler` or
        :class:`RandomSampler`; None for an :class:`IterableDataset` (where PyTorch has
        an internal infinite sampler) or with ``batch_sampler``.
    batch_sampler : iterable of lists of int or None
        The indices of each batch: the one given, or a :class:`BatchSampler` over
        ``sampler``; None without batching or for an :class:`IterableDataset`.

    Raises
    ------
    ValueError
        For a batch size, worker count or prefetch depth out of range, and, with
        PyTorch's messages, for options that exclude each other (``sampler`` and
        ``shuffle``; ``batch_sampler`` and the batching options; ``batch_size=None``
        and ``drop_last``; an :class:`IterableDataset` and ``shuffle`` or a sampler).

    Notes
    -----
    The arguments after ``batch_sampler`` are keyword-only (PyTorch also accepts them
    by position, in an order that includes ``timeout``, which this loader does not
    have). Samples are read with ``dataset[i]``; PyTorch's batched ``__getitems__`` is
    not used.

    An exception raised while building a batch, in a worker or in the background
    thread, is raised again in the caller. Leaving the loop early (``break``) stops the
    thread and the workers. Workers are seeded as in PyTorch (``base_seed +
    worker_id``: Python's ``random`` and this package's generators), and NumPy's global
    generator too, which PyTorch leaves alone (so that random augmentations written with
    ``np.random`` differ between workers).

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
        batch_size: int | None = 1,
        shuffle: bool = False,
        sampler: Iterable[int] | None = None,
        batch_sampler: Iterable[Sequence[int]] | None = None,
        *,
        num_workers: int = 0,
        collate_fn: Callable[[Any], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: np.random.Generator | None = None,
        prefetch_factor: int | None = None,
        seed: int | None = None,
        device: DeviceLike | None = None,
        prefetch: int = 2,
    ) -> None:
        if isinstance(prefetch, bool) or int(prefetch) != prefetch or prefetch < 1:
            raise ValueError(f"DataLoader prefetch must be an integer >= 1, got {prefetch!r}")
        if isinstance(num_workers, bool) or int(num_workers) != num_workers or num_workers < 0:
            raise ValueError(f"DataLoader num_workers must be an integer >= 0, got {num_workers!r}")
        if prefetch_factor is not None and num_workers == 0:
            raise ValueError(
                "DataLoader prefetch_factor option could only be specified in "
                "multiprocessing: let num_workers > 0 to enable multiprocessing"
            )
        if prefetch_factor is not None and prefetch_factor < 1:
            raise ValueError(f"DataLoader prefetch_factor must be >= 1, got {prefetch_factor!r}")
        if generator is not None and not isinstance(generator, np.random.Generator):
            raise TypeError(
                f"DataLoader generator must be a numpy.random.Generator, got "
                f"{type(generator).__name__}; or pass seed=<int>"
            )
        _check_exclusive(dataset, batch_size, shuffle, sampler, batch_sampler, drop_last)
        self.dataset = dataset
        self.shuffle = bool(shuffle)
        self.num_workers = int(num_workers)
        self.collate_fn = collate_fn
        self.pin_memory = bool(pin_memory)
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.prefetch_factor = 2 if prefetch_factor is None else int(prefetch_factor)
        self.seed = seed
        self.device: Device | None = None if device is None else Device(device)
        self.prefetch = int(prefetch)
        # None: each epoch draws from the host generator (PyTorch's RandomSampler).
        self._rng = generator if generator is not None or seed is None else seeded_rng(seed)
        # The samplers, as PyTorch builds them: none for a stream; the given batch
        # sampler; else a sampler (given, random or sequential) in batches of batch_size.
        self.batch_size = None if batch_sampler is not None else batch_size
        self.drop_last = bool(drop_last)
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if isinstance(dataset, IterableDataset) or batch_sampler is not None:
            return
        if sampler is None:
            self.sampler = (
                RandomSampler(dataset, generator=self._rng)
                if shuffle
                else SequentialSampler(dataset)
            )
        if batch_size is not None:
            self.batch_sampler = BatchSampler(self.sampler, int(batch_size), self.drop_last)  # type: ignore[arg-type]

    @property
    def generator(self) -> np.random.Generator | None:
        """The generator that draws each epoch's shuffled order (its state can be saved
        and restored to replay an epoch); None, as PyTorch's, when neither
        ``generator`` nor ``seed`` was given (each epoch then draws from the host
        generator).
        """
        return self._rng

    @property
    def _iterable(self) -> bool:
        return isinstance(self.dataset, IterableDataset)

    def __len__(self) -> int:
        """Number of batches per epoch (for an :class:`IterableDataset`, computed from its
        ``len()``, as PyTorch does, which raises TypeError if it has none).
        """
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)  # type: ignore[arg-type]
        return len(self.sampler)  # type: ignore[arg-type]

    def _requests(self) -> list[Any]:
        """What each batch of this epoch reads: an array of indices per batch, or a
        single index per sample without batching (drawn now, in the caller).
        """
        batch_sampler = self.batch_sampler
        if batch_sampler is None:
            return [int(i) for i in self.sampler]  # type: ignore[union-attr]
        if type(batch_sampler) is BatchSampler:  # cut the whole epoch at once: fast
            return batch_sampler.split(np.fromiter(iter(batch_sampler.sampler), dtype=np.int64))
        return [np.asarray(batch, dtype=np.int64).reshape(-1) for batch in batch_sampler]

    @property
    def _batched(self) -> bool:
        """Whether samples are grouped into batches (PyTorch's "auto-collation")."""
        return self.batch_size is not None if self._iterable else self.batch_sampler is not None

    def _collate(self, samples: Any) -> Any:
        """The batch of ``samples`` (or the one sample, unbatched), with NumPy arrays for
        the default collation.
        """
        if self.collate_fn is not None:
            return self.collate_fn(samples)
        return collate_arrays(samples) if self._batched else convert_arrays(samples)

    def _host_batches(self) -> Iterator[Any]:
        """The collated batches of the sample-by-sample path and of streams, in order."""
        fetch: Fetcher
        requests: list[Any] | None = None  # a stream has none: it is read until it ends
        if self._iterable:
            fetch = IterableFetcher(self.dataset, self._collate, self.batch_size, self.drop_last)
        else:
            fetch = MapFetcher(self.dataset, self._collate, self._batched)
            requests = self._requests()
        if self.num_workers == 0:
            return _fetch_all(fetch, requests)
        rng = self._rng if self._rng is not None else host_generator()
        base_seed = int(rng.integers(2**62))  # drawn once per epoch, as PyTorch
        return run_workers(
            self.dataset,
            fetch,
            requests,
            self.num_workers,
            base_seed,
            self.worker_init_fn,
            self.prefetch_factor,
            self.multiprocessing_context,
        )

    def __iter__(self) -> Iterator[Any]:
        """One epoch of batches (the shuffled order is drawn here, in the caller)."""
        source = None
        if self._batched and self.collate_fn is None and not self._iterable:
            source = _array_source(self.dataset)
        specs: collections.deque[Any] = collections.deque()
        host: Iterator[Any] | None = None
        gathers: Iterable[Gather]
        if source is not None:
            batches = self._requests()
            arrays, mapping = source
            gathers = [
                _array_gather(arrays, idx if mapping is None else mapping[idx]) for idx in batches
            ]
            specs.extend([_Slot(k) for k in range(len(arrays))] for _ in batches)
        else:
            host = self._host_batches()
            gathers = (_sample_gather(batch, specs) for batch in host)
        if self.device is None:
            empty = _pinned_empty() if self.pin_memory else None
            return _host_epoch(gathers, specs, empty, host)
        return _device_epoch(prefetch(gathers, self.device, self.prefetch), specs, host)

    def __repr__(self) -> str:
        try:
            n: int | str = len(self.dataset)
        except TypeError:  # a stream without a length
            n = "?"
        return (
            f"DataLoader(n={n}, batch_size={self.batch_size}, "
            f"shuffle={self.shuffle}, drop_last={self.drop_last}, "
            f"num_workers={self.num_workers}, device={self.device})"
        )


def _array_gather(arrays: tuple[npt.NDArray[Any], ...], rows: npt.NDArray[np.int64]) -> Gather:
    """Builds one batch of an array-backed dataset: one fancy-indexing call per field."""

    def gather(empty: Empty | None) -> Fields:
        return tuple(
            np.take(
                a,
                rows,
                axis=0,
                out=None if empty is None else empty((len(rows), *a.shape[1:]), a.dtype),
            )
            for a in arrays
        )

    return gather


def _fetch_all(fetch: Fetcher, requests: list[Any] | None) -> Iterator[Any]:
    """The batches of ``requests`` read in this process, or of a stream until it ends."""
    if requests is not None:
        yield from (fetch(request) for request in requests)
        return
    while True:
        try:
            batch = fetch(None)
        except StopIteration:
            return
        yield batch


def _sample_gather(batch: Any, specs: collections.deque[Any]) -> Gather:
    """Hands over the arrays of a collated ``batch``; its structure goes to ``specs``."""

    def gather(empty: Empty | None) -> Fields:
        fields, spec = _flatten(batch)
        specs.append(spec)
        if empty is None:
            return fields
        buffers = tuple(empty(f.shape, f.dtype) for f in fields)
        for buffer, f in zip(buffers, fields, strict=True):
            buffer[...] = f
        return buffers

    return gather


def _host_epoch(
    gathers: Iterable[Gather], specs: collections.deque[Any], empty: Empty | None, host: Any
) -> Iterator[Any]:
    try:
        for gather in gathers:
            fields = gather(empty)
            yield _rebuild(specs.popleft(), [host_tensor(f) for f in fields])
    finally:
        _close(host)  # stops the workers when the caller leaves early


def _device_epoch(
    batches: Iterator[tuple[Tensor, ...]], specs: collections.deque[Any], host: Any
) -> Iterator[Any]:
    try:
        for tensors in batches:
            yield _rebuild(specs.popleft(), tensors)
    finally:
        _close(batches)  # first the thread that reads from the workers, then the workers
        _close(host)


def _close(generator: Any) -> None:
    close = getattr(generator, "close", None)
    if close is not None:
        close()
