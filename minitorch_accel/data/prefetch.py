"""Batches built and copied to a device in a background thread, ahead of the caller.

The thread gathers each batch straight into page-locked ("pinned") host buffers that
are reused batch after batch (:class:`PinnedRing`), starts the copies to the device
without waiting for them (:meth:`Backend.upload_async
<minitorch_accel.backends.Backend.upload_async>`), and hands the batch over with its
copies in flight. The caller's thread then orders its own work after those copies
(:meth:`Transfer.wait <minitorch_accel.backends.Transfer.wait>`: on a GPU, its stream
waits for the copies' events) instead of the host waiting for the whole device. A
buffer is refilled only once the copies out of it have finished.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from ..backends import Backend, Device, Transfer, transfer_stats
from ..core.convert import HOST
from ..core.tensor import Tensor
from .collate import host_tensor

Batch = tuple[Tensor, ...]
Fields = tuple[npt.NDArray[Any], ...]
#: ``empty(shape, dtype)``: a buffer for one field of a batch.
Empty = Callable[[tuple[int, ...], Any], npt.NDArray[Any]]
#: Makes one batch's fields: ``gather(empty)`` fills buffers from ``empty``, or, given
#: None, returns arrays of its own.
Gather = Callable[[Empty | None], Fields]


class PinnedRing:
    """Host buffers for batches on their way to a device, used in turn.

    Parameters
    ----------
    backend : Backend
        Gives the buffers (:meth:`~minitorch_accel.backends.Backend.pinned_empty`).
    slots : int
        Buffers sets in the ring: batches that may be in flight at once.
    """

    def __init__(self, backend: Backend, slots: int) -> None:
        self.backend = backend
        self._buffers: list[dict[int, npt.NDArray[Any]]] = [{} for _ in range(slots)]
        self._pending: list[list[Transfer]] = [[] for _ in range(slots)]
        self._slot = -1
        self._field = 0

    def next_slot(self) -> None:
        """Move to the next slot, once the copies out of it have finished."""
        self._slot = (self._slot + 1) % len(self._buffers)
        for transfer in self._pending[self._slot]:
            transfer.finish()
        self._pending[self._slot] = []
        self._field = 0

    def empty(self, shape: tuple[int, ...], dtype: Any) -> npt.NDArray[Any]:
        """A buffer of the current slot for the next field of the batch. A smaller
        last batch uses the front of the buffer the full batches used.
        """
        buffers, field = self._buffers[self._slot], self._field
        self._field += 1
        buffer = buffers.get(field)
        if (
            buffer is None
            or buffer.dtype != np.dtype(dtype)
            or buffer.shape[1:] != shape[1:]
            or buffer.shape[0] < shape[0]
        ):
            buffer = buffers[field] = self.backend.pinned_empty(shape, dtype)
        return buffer[: shape[0]]

    def hold(self, transfers: list[Transfer]) -> None:
        """The copies reading the current slot (waited for before it is refilled)."""
        self._pending[self._slot] = transfers


def move(fields: Fields, device: Device) -> tuple[Batch, list[Transfer]]:
    """Start copying each field to ``device``; the tensors and the copies in flight."""
    backend = device.backend
    transfers = [
        backend.upload_async(f if f.flags.c_contiguous else np.ascontiguousarray(f), device)
        for f in fields
    ]
    for f in fields:
        transfer_stats.record(HOST, device, int(f.nbytes))
    batch = tuple(Tensor._make(t.array, device, False, None) for t in transfers)
    return batch, transfers


class _Failure:
    """An exception raised in the worker thread, carried to the caller."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


_END = object()


def prefetch(gathers: Iterable[Gather], device: Device, depth: int) -> Iterator[Batch]:
    """Run each gather and copy its batch to ``device`` in a background thread, at
    most ``depth`` batches ahead of the caller.
    """
    ring = PinnedRing(device.backend, depth + 2)  # + the caller's batch + the next one
    ready: queue.Queue[Any] = queue.Queue()
    slots = threading.Semaphore(depth)  # one per batch built and not yet taken
    stop = threading.Event()

    def build(gather: Gather) -> tuple[Batch, list[Transfer]]:
        if device is HOST:  # nothing to copy: the gathered arrays are the batch
            return tuple(host_tensor(f) for f in gather(None)), []
        if device.shares_host_memory:  # virtual devices share the host's memory: pinning
            return move(gather(None), device)  # buys nothing
        ring.next_slot()
        batch, transfers = move(gather(ring.empty), device)
        ring.hold(transfers)
        return batch, transfers

    def work() -> None:
        try:
            pending = iter(gathers)  # may read a batch when asked: only once a slot is free
            while True:
                while not slots.acquire(timeout=0.05):
                    if stop.is_set():
                        return
                gather = None if stop.is_set() else next(pending, None)
                if gather is None:
                    break
                ready.put(build(gather))
            ready.put(_END)
        except BaseException as exc:  # handed to the caller, not swallowed
            ready.put(_Failure(exc))

    return _consume(
        threading.Thread(target=work, name="minitorch_accel-prefetch", daemon=True),
        ready,
        slots,
        stop,
    )


def _consume(
    thread: threading.Thread,
    ready: queue.Queue[Any],
    slots: threading.Semaphore,
    stop: threading.Event,
) -> Generator[Batch, None, None]:
    thread.start()
    try:
        while True:
            item = ready.get()
            if item is _END:
                return
            if isinstance(item, _Failure):
                raise item.error
            batch, transfers = item
            for transfer in transfers:  # this thread's work comes after the copies
                transfer.wait()
            slots.release()
            yield batch
    finally:
        stop.set()
        thread.join()
