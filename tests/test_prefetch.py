"""The device prefetch's reused host buffers and its copies in flight.

A GPU copy reads its source some time after it was started. ``LazyCopyBackend`` (a
test double) does the same on the host: its ``upload_async`` copies nothing until the
transfer is waited for or finished, so a buffer refilled before its copy finished
would show up as wrong batches here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from minitorch_accel.backends import Device, Transfer, registry, transfer_stats
from minitorch_accel.backends.numpy.backend import NumpyBackend
from minitorch_accel.data import DataLoader, TensorDataset
from minitorch_accel.data.prefetch import PinnedRing


class LazyCopyBackend(NumpyBackend):
    """Copies to its devices only when the transfer is waited for or finished."""

    name = "lazy"
    waits: list[int] = []  # the threads that waited
    finishes = 0

    def upload_async(self, host: np.ndarray, device: Device) -> Transfer:
        out = np.empty_like(host)
        done = threading.Event()

        def copy() -> None:
            if not done.is_set():
                out[...] = host
                done.set()

        def wait() -> None:
            LazyCopyBackend.waits.append(threading.get_ident())
            copy()

        def finish() -> None:
            LazyCopyBackend.finishes += 1
            copy()

        return Transfer(out, wait, finish)


@pytest.fixture
def lazy() -> Iterator[type[LazyCopyBackend]]:
    LazyCopyBackend.waits, LazyCopyBackend.finishes = [], 0
    registry.register("lazy", LazyCopyBackend)
    yield LazyCopyBackend
    registry.unregister("lazy")


@pytest.mark.parametrize("prefetch", [1, 3])
def test_batches_survive_buffer_reuse(lazy: type[LazyCopyBackend], prefetch: int) -> None:
    images = np.arange(23 * 4, dtype=np.float32).reshape(23, 4)
    ds = TensorDataset(images, np.arange(23))
    loader = DataLoader(ds, batch_size=5, shuffle=True, seed=1, device="lazy", prefetch=prefetch)
    transfer_stats.reset()
    batches = [(x.numpy(), y.numpy()) for x, y in loader]  # all kept: none may change
    order = np.concatenate([y for _, y in batches])
    assert sorted(order.tolist()) == list(range(23))
    for x, y in batches:
        np.testing.assert_array_equal(x, images[y])
    assert [len(y) for _, y in batches] == [5, 5, 5, 5, 3]
    # every copy was waited for by the caller's thread, before it used the batch
    assert set(lazy.waits) == {threading.get_ident()} and len(lazy.waits) == 2 * len(batches)
    assert transfer_stats.host_to_device == images.nbytes + order.nbytes


class CountingBackend(NumpyBackend):
    def __init__(self) -> None:
        super().__init__()
        self.allocated: list[tuple[tuple[int, ...], Any]] = []

    def pinned_empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        self.allocated.append((tuple(shape), np.dtype(dtype)))
        return np.empty(shape, dtype)


class Finished:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> None:
        self.count += 1


def test_ring_reuses_buffers_after_their_copies_finish() -> None:
    backend = CountingBackend()
    ring = PinnedRing(backend, slots=2)
    first = []
    finished = Finished()
    for _ in range(2):
        ring.next_slot()
        first.append(ring.empty((4, 3), np.float32))
        ring.hold([Transfer(None, None, finished)])
    assert len(backend.allocated) == 2 and finished.count == 0
    ring.next_slot()  # back to slot 0: its copy must finish first
    assert finished.count == 1
    again = ring.empty((4, 3), np.float32)
    assert np.shares_memory(again, first[0]) and len(backend.allocated) == 2
    ring.next_slot()
    last = ring.empty((2, 3), np.float32)  # a smaller last batch: the same buffer's front
    assert last.shape == (2, 3) and np.shares_memory(last, first[1])
    ring.next_slot()
    other = ring.empty((4, 3), np.int64)  # another dtype: a new buffer
    assert other.dtype == np.int64 and len(backend.allocated) == 3


def test_prefetch_to_the_host_copies_nothing() -> None:
    ds = TensorDataset(np.arange(40, dtype=np.float32).reshape(10, 4), np.arange(10))
    transfer_stats.reset()
    found = [x.numpy() for x, _ in DataLoader(ds, batch_size=3, shuffle=True, seed=4, device="cpu")]
    expected = [x.numpy() for x, _ in DataLoader(ds, batch_size=3, shuffle=True, seed=4)]
    assert transfer_stats.copies == 0
    for f, e in zip(found, expected, strict=True):
        np.testing.assert_array_equal(f, e)


@pytest.mark.parametrize("device", ["cpu", "cpu:1"])
def test_upload_async_copies_even_where_memory_is_shared(device: str) -> None:
    backend = Device(device).backend
    host = np.arange(6.0)
    transfer = backend.upload_async(host, Device(device))
    transfer.wait()
    transfer.finish()
    host[:] = -1  # the source may be refilled once the copy is finished
    np.testing.assert_array_equal(transfer.array, np.arange(6.0))
    assert backend.pinned_empty((2, 3), np.float32).shape == (2, 3)
