"""Loading batches in worker processes, as PyTorch's ``DataLoader(num_workers=N)``.

Each worker is a process holding the dataset. The main process sends it the indices
of a batch; the worker reads the samples (``dataset[i]``, where the per-sample work such
as decoding and augmentation happens), collates them and sends the batch back. Up to
``prefetch_factor`` batches per worker are in flight, so the workers load while the
main process trains; batches come out in order.

Seeding follows PyTorch: each epoch draws a ``base_seed`` from the loader's generator,
and worker ``i`` seeds itself with ``base_seed + i`` before ``worker_init_fn(i)`` runs.
Inside a worker, :func:`get_worker_info` says which one it is.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import queue
import random
import traceback
from collections.abc import Callable, Generator, Sequence
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


def _worker_loop(
    dataset: Any,
    collate: Callable[[list[Any]], Any],
    worker_id: int,
    num_workers: int,
    seed: int,
    init_fn: Callable[[int], None] | None,
    tasks: Any,
    results: Any,
) -> None:
    """The body of one worker process: batches in, collated batches out, until None."""
    global _worker_info
    _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
    _seed_everything(seed)
    failed: _Failure | None = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
    except Exception as exc:
        failed = _Failure(worker_id, exc)
    while True:
        task = tasks.get()
        if task is None:
            break
        index, indices = task
        try:
            if failed is not None:
                raise RuntimeError(failed.text)
            results.put((index, collate([dataset[int(i)] for i in indices])))
        except Exception as exc:
            results.put((index, _Failure(worker_id, exc)))
    results.cancel_join_thread()  # batches nobody will read must not hold up the exit


def run_workers(
    dataset: Any,
    collate: Callable[[list[Any]], Any],
    batches: Sequence[Any],
    num_workers: int,
    base_seed: int,
    worker_init_fn: Callable[[int], None] | None,
    prefetch_factor: int,
    context: Any = None,
) -> Generator[Any, None, None]:
    """Collated batches, in order, loaded by ``num_workers`` processes.

    The processes start on the first ``next()`` and stop (joined, or terminated if they
    do not stop within seconds) when the generator finishes, fails or is closed.
    """
    ctx = context if not isinstance(context, (str, type(None))) else _context(context)
    results = ctx.Queue()
    tasks = [ctx.Queue() for _ in range(num_workers)]
    workers = [
        ctx.Process(
            target=_worker_loop,
            args=(
                dataset,
                collate,
                i,
                num_workers,
                base_seed + i,
                worker_init_fn,
                tasks[i],
                results,
            ),
            daemon=True,
            name=f"minitorch_accel-loader-{i}",
        )
        for i in range(num_workers)
    ]
    for w in workers:
        w.start()
    sent = 0

    def send() -> None:
        nonlocal sent
        tasks[sent % num_workers].put((sent, batches[sent]))
        sent += 1

    try:
        while sent < min(len(batches), prefetch_factor * num_workers):
            send()
        done: dict[int, Any] = {}
        for index in range(len(batches)):
            while index not in done:
                got, payload = _receive(results, workers)
                done[got] = payload
            payload = done.pop(index)
            if sent < len(batches):
                send()
            if isinstance(payload, _Failure):
                payload.reraise()
            yield payload
    finally:
        _shut_down(workers, tasks, results)


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
