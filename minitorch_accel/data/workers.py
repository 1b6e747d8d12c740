"""Loading batches in worker processes, as PyTorch's ``DataLoader(num_workers=N)``.

Each worker is a process holding the dataset. The main process sends it the indices
of a batch; the worker reads the samples (``dataset[i]``, where the per-sample work such
as decoding and augmentation happens), collates them and sends the batch back. Up to
``prefetch_factor`` batches per worker are in flight, so the workers load while the
main process trains; batches come out in order.

An :class:`~minitorch_accel.data.IterableDataset` has no indices to send: each worker
iterates its own copy of the dataset and answers each request with its next batch of
consecutive items, until its stream ends. Requests go to the workers in turn, and the
batches come out in the order they were requested, as in PyTorch: batch ``k`` from
worker ``k % num_workers``, for as long as every worker still has items.

Seeding follows PyTorch: each epoch draws a ``base_seed`` from the loader's generator,
and worker ``i`` seeds itself with ``base_seed + i`` before ``worker_init_fn(i)`` runs.
Inside a worker, :func:`get_worker_info` says which one it is.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import queue
import random
import traceback
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.factories import manual_seed

__all__ = ["WorkerInfo", "get_worker_info"]


@dataclass(frozen=True)
class WorkerInfo:
    """What a worker process knows about itself (see :func:`get_worker_info`).

    Attributes
    ----------
    id : int
        The worker's number, from 0 to ``num_workers - 1``.
    num_workers : int
        How many workers the loader runs.
    seed : int
        The seed of this worker for this epoch (``base_seed + id``).
    dataset : object
        This worker's copy of the dataset.
    """

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker process, its :class:`WorkerInfo`; in any other, None.

    Examples
    --------
    >>> get_worker_info() is None  # the main process
    True
    """
    return _worker_info


class _Failure:
    """An exception raised in a worker, carried to the main process as text."""

    def __init__(self, worker_id: int, error: BaseException) -> None:
        self.error_type = type(error)
        self.text = (
            f"Caught {type(error).__name__} in DataLoader worker process {worker_id}.\n"
            f"Original {''.join(traceback.format_exception(error))}"
        )

    def reraise(self) -> None:
        try:
            error = self.error_type(self.text)
        except Exception:  # an exception type that wants other arguments
            error = RuntimeError(self.text)
        raise error


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    manual_seed(seed)


class MapFetcher:
    """Reads a batch of a map-style dataset: ``collate([dataset[i] for i in indices])``,
    or ``collate(dataset[index])`` for a single index (no batching).
    """

    def __init__(self, dataset: Any, collate: Callable[[Any], Any], batched: bool) -> None:
        self.dataset, self.collate, self.batched = dataset, collate, batched

    def __call__(self, indices: Any) -> Any:
        if self.batched:
            return self.collate([self.dataset[int(i)] for i in indices])
        return self.collate(self.dataset[int(indices)])


class IterableFetcher:
    """Reads the next batch of ``batch_size`` consecutive items of an iterable-style
    dataset (or the next single item, for ``batch_size=None``); raises StopIteration
    at the end of the stream, or before a short last batch with ``drop_last``.
    """

    def __init__(
        self,
        dataset: Any,
        collate: Callable[[Any], Any],
        batch_size: int | None,
        drop_last: bool,
    ) -> None:
        self.dataset, self.collate = dataset, collate
        self.batch_size, self.drop_last = batch_size, drop_last
        self._items: Iterator[Any] | None = None

    def __call__(self, _: Any = None) -> Any:
        if self._items is None:
            self._items = iter(self.dataset)  # in the process that reads: a worker's copy
        if self.batch_size is None:
            return self.collate(next(self._items))
        batch = list(itertools.islice(self._items, self.batch_size))
        if not batch or (self.drop_last and len(batch) < self.batch_size):
            raise StopIteration
        return self.collate(batch)


Fetcher = Callable[[Any], Any]


class _Exhausted:
    """A worker's answer once its stream has ended."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


def _worker_loop(
    dataset: Any,
    fetch: Fetcher,
    worker_id: int,
    num_workers: int,
    seed: int,
    init_fn: Callable[[int], None] | None,
    tasks: Any,
    results: Any,
) -> None:
    """The body of one worker process: requests in, collated batches out, until None."""
    global _worker_info
    _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
    _seed_everything(seed)
    failed: _Failure | None = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
    except Exception as exc:
        failed = _Failure(worker_id, exc)
    ended = False
    while True:
        task = tasks.get()
        if task is None:
            break
        index, request = task
        try:
            if failed is not None:
                raise RuntimeError(failed.text)
            if ended:
                raise StopIteration
            results.put((index, fetch(request)))
        except StopIteration:
            ended = True
            results.put((index, _Exhausted(worker_id)))
        except Exception as exc:
            results.put((index, _Failure(worker_id, exc)))
    results.cancel_join_thread()  # batches nobody will read must not hold up the exit


def run_workers(
    dataset: Any,
    fetch: Fetcher,
    batches: Sequence[Any] | None,
    num_workers: int,
    base_seed: int,
    worker_init_fn: Callable[[int], None] | None,
    prefetch_factor: int,
    context: Any = None,
) -> Generator[Any, None, None]:
    """Collated batches, in order, loaded by ``num_workers`` processes.

    ``batches`` holds the request of each batch (its indices) for a map-style dataset;
    None means a stream (``fetch`` is an :class:`IterableFetcher`): requests go on
    until every worker has answered that its stream ended. The processes start on the
    first ``next()`` and stop (joined, or terminated if they do not stop within
    seconds) when the generator finishes, fails or is closed.
    """
    workers, tasks, results = _start(
        dataset, fetch, num_workers, base_seed, worker_init_fn, context
    )
    active = set(range(num_workers))  # workers whose stream has not ended
    turns = itertools.cycle(range(num_workers))
    sent = 0

    def can_send() -> bool:
        return bool(active) and (batches is None or sent < len(batches))

    def send() -> None:
        nonlocal sent
        worker = next(w for w in turns if w in active)
        tasks[worker].put((sent, None if batches is None else batches[sent]))
        sent += 1

    try:
        while can_send() and sent < prefetch_factor * num_workers:
            send()
        done: dict[int, Any] = {}
        index = 0
        while index < sent:
            while index not in done:
                got, payload = _receive(results, workers)
                done[got] = payload
            payload = done.pop(index)
            index += 1
            if isinstance(payload, _Exhausted):
                active.discard(payload.worker_id)
            if can_send():
                send()
            if isinstance(payload, _Failure):
                payload.reraise()
            if not isinstance(payload, _Exhausted):
                yield payload
    finally:
        _shut_down(workers, tasks, results)


def _start(
    dataset: Any,
    fetch: Fetcher,
    num_workers: int,
    base_seed: int,
    worker_init_fn: Callable[[int], None] | None,
    context: Any,
) -> tuple[list[Any], list[Any], Any]:
    """Start the worker processes: the processes, their request queues, the result queue."""
    ctx = context if not isinstance(context, (str, type(None))) else _context(context)
    results = ctx.Queue()
    tasks = [ctx.Queue() for _ in range(num_workers)]
    workers = [
        ctx.Process(
            target=_worker_loop,
            args=(dataset, fetch, i, num_workers, base_seed + i, worker_init_fn, tasks[i], results),
            daemon=True,
            name=f"minitorch_accel-loader-{i}",
        )
        for i in range(num_workers)
    ]
    for w in workers:
        w.start()
    return workers, tasks, results


def _context(name: str | None) -> Any:
    return multiprocessing.get_context(name)


def _receive(results: Any, workers: list[Any]) -> tuple[int, Any]:
    """The next ``(index, batch)`` from any worker; raises if a worker died."""
    while True:
        try:
            item: tuple[int, Any] = results.get(timeout=1.0)
            return item
        except queue.Empty:
            dead = [w for w in workers if not w.is_alive()]
            if dead:
                w = dead[0]
                raise RuntimeError(
                    f"DataLoader worker (pid {w.pid}) exited unexpectedly with exit code "
                    f"{w.exitcode}; if it ran out of memory, use fewer workers or smaller batches"
                ) from None


def _shut_down(workers: list[Any], tasks: list[Any], results: Any) -> None:
    """Tell every worker to stop, wait for it (draining what it still sends), and
    terminate any that does not stop within 5 seconds.
    """
    for q in tasks:
        with contextlib.suppress(OSError, ValueError):
            q.put(None)
    for w in workers:
        w.join(timeout=5.0)
        if w.is_alive():
            w.terminate()
            w.join()
    while True:
        try:
            results.get_nowait()
        except (queue.Empty, OSError, ValueError):
            break
    for q in [*tasks, results]:
        q.close()
        q.join_thread()
