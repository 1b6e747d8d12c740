"""Dataset, TensorDataset, Subset, random_split and the DataLoader (incl. prefetching)."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.core.factories import from_numpy
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.data import DataLoader, Dataset, Subset, TensorDataset, random_split
from minitorch_accel.datasets import MNIST


def prefetch_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "minitorch_accel-prefetch"]


class Counting(Dataset[tuple[float, int]]):
    """Sample i is (float(i), i); counts fetches; may fail at one index."""

    def __init__(self, n: int, fail_at: int | None = None) -> None:
        self.n, self.fail_at, self.fetched = n, fail_at, 0

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int) -> tuple[float, int]:
        if index == self.fail_at:
            raise KeyError(f"boom at {index}")
        self.fetched += 1
        return float(index), index


class ArraysOnly:
    """Array-backed, and ``__getitem__`` must not be used for batching."""

    def __init__(self, n: int) -> None:
        self.arrays = (np.arange(n * 2, dtype=np.float32).reshape(n, 2), np.arange(n))

    def __len__(self) -> int:
        return len(self.arrays[1])

    def __getitem__(self, index: int) -> Any:
        raise AssertionError("the array path must not fetch samples one by one")


# ----------------------------------------------------------------------- datasets


def test_dataset_is_abstract() -> None:
    with pytest.raises(TypeError):
        Dataset()  # type: ignore[abstract]
    ds = Counting(3)
    assert len(ds) == 3 and ds[2] == (2.0, 2)


def test_tensor_dataset() -> None:
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    y = from_numpy(np.array([1, 0, 1, 0]))
    ds = TensorDataset(x, y)
    assert len(ds) == 4
    assert isinstance(ds.arrays[1], np.ndarray) and ds.arrays[1].dtype == np.int64
    row, label = ds[2]
    np.testing.assert_array_equal(row, x[2])
    assert label == 1
    with pytest.raises(ValueError, match=r"\(4, 3\), \(3,\)"):
        TensorDataset(x, np.zeros(3))
    with pytest.raises(ValueError, match="at least one"):
        TensorDataset()
    with pytest.raises(ValueError, match="first dimension"):
        TensorDataset(np.float32(1.0))


def test_subset() -> None:
    ds = Counting(10)
    sub = Subset(ds, [9, -1, 0, 3])
    assert len(sub) == 4 and [sub[i][1] for i in range(4)] == [9, 9, 0, 3]
    nested = Subset(sub, [3, 0])
    assert [nested[i][1] for i in range(2)] == [3, 9]
    with pytest.raises(IndexError, match="index 10 out of range for a dataset of 10"):
        Subset(ds, [1, 10])
    with pytest.raises(IndexError, match="-11"):
        Subset(ds, [-11])
    assert len(Subset(ds, [])) == 0


def test_random_split_lengths_and_fractions() -> None:
    ds = TensorDataset(np.arange(10))
    parts = random_split(ds, [3, 7], seed=1)
    assert [len(p) for p in parts] == [3, 7]
    everything = np.concatenate([p.indices for p in parts])
    assert sorted(everything.tolist()) == list(range(10))
    again = random_split(ds, [3, 7], seed=1)
    assert all(np.array_equal(a.indices, b.indices) for a, b in zip(parts, again, strict=True))
    other = random_split(ds, [3, 7], seed=2)
    assert not np.array_equal(parts[0].indices, other[0].indices)
    assert [len(p) for p in random_split(ds, [0.5, 0.25, 0.25], seed=0)] == [6, 2, 2]
    assert [len(p) for p in random_split(TensorDataset(np.arange(7)), [1 / 3] * 3)] == [3, 2, 2]
    with pytest.raises(ValueError, match="sum to 9, but the dataset has 10"):
        random_split(ds, [4, 5])
    with pytest.raises(ValueError, match="not 1"):
        random_split(ds, [0.5, 0.4])
    with pytest.raises(ValueError, match="negative"):
        random_split(ds, [11, -1])


# --------------------------------------------------------------------- DataLoader


@pytest.mark.parametrize("drop_last, sizes", [(False, [4, 4, 2]), (True, [4, 4])])
def test_batches_in_order(drop_last: bool, sizes: list[int]) -> None:
    loader = DataLoader(ArraysOnly(10), batch_size=4, drop_last=drop_last)
    assert len(loader) == len(sizes)
    batches = list(loader)
    assert [len(y) for _, y in batches] == sizes
    x, y = batches[1]
    assert isinstance(x, Tensor) and x.dtype == np.float32 and x.shape == (4, 2)
    assert y.dtype == np.int64 and y.numpy().tolist() == [4, 5, 6, 7]
    np.testing.assert_array_equal(x.numpy(), np.arange(8, 16, dtype=np.float32).reshape(4, 2))
    assert str(x.device) == "cpu"


def test_batches_are_copies() -> None:
    ds = ArraysOnly(4)
    x, _ = next(iter(DataLoader(ds, batch_size=4)))
    x.numpy()[:] = -1
    assert ds.arrays[0].min() == 0.0  # changing a batch never changes the dataset


def test_subset_of_array_dataset_uses_arrays() -> None:
    train, val = random_split(ArraysOnly(20), [15, 5], seed=0)
    (y,) = [b[1] for b in DataLoader(val, batch_size=5)]
    assert y.numpy().tolist() == val.indices.tolist()
    nested = Subset(train, [2, 0])
    _, y2 = next(iter(DataLoader(nested, batch_size=2)))
    assert y2.numpy().tolist() == [int(train.indices[2]), int(train.indices[0])]


def test_sample_by_sample_collates_python_scalars() -> None:
    ds = Counting(5)
    x, y = next(iter(DataLoader(ds, batch_size=3)))
    assert x.dtype == np.float64 and y.dtype == np.int64  # PyTorch's default_collate
    assert x.numpy().tolist() == [0.0, 1.0, 2.0] and y.numpy().tolist() == [0, 1, 2]
    assert ds.fetched == 3


def test_transform_forces_sample_path() -> None:
    ds = MNIST(
        sample=True, train=False, transform=lambda im: 1.0 - im[None].astype(np.float32) / 255
    )
    x, y = next(iter(DataLoader(ds, batch_size=8)))
    raw = MNIST(sample=True, train=False).arrays[0][:8]
    np.testing.assert_allclose(x.numpy(), 1.0 - raw)
    assert x.shape == (8, 1, 28, 28) and y.dtype == np.int64


def test_mnist_sample_batches() -> None:
    loader = DataLoader(MNIST(sample=True), batch_size=256, shuffle=True, seed=0)
    assert len(loader) == 16
    seen = np.zeros(10, dtype=int)
    for x, y in loader:
        assert x.dtype == np.float32 and x.shape[1:] == (1, 28, 28)
        assert y.dtype == np.int64
        seen += np.bincount(y.numpy(), minlength=10)
    assert seen.tolist() == [400] * 10


def epoch_orders(loader: DataLoader, epochs: int) -> list[list[int]]:
    return [np.concatenate([y.numpy() for _, y in loader]).tolist() for _ in range(epochs)]


def test_shuffle_is_reproducible_and_changes_every_epoch() -> None:
    a = epoch_orders(DataLoader(ArraysOnly(50), batch_size=7, shuffle=True, seed=3), 3)
    b = epoch_orders(DataLoader(ArraysOnly(50), batch_size=7, shuffle=True, seed=3), 3)
    c = epoch_orders(DataLoader(ArraysOnly(50), batch_size=7, shuffle=True, seed=4), 1)
    assert a == b
    assert a[0] != a[1] != a[2] and a[0] != c[0]
    assert all(sorted(order) == list(range(50)) for order in a)
    assert epoch_orders(DataLoader(ArraysOnly(5), batch_size=2), 1) == [[0, 1, 2, 3, 4]]
    dropped = epoch_orders(DataLoader(ArraysOnly(50), 7, shuffle=True, drop_last=True), 1)
    assert len(dropped[0]) == 49 and len(set(dropped[0])) == 49


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(ArraysOnly(3), batch_size=0)
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(ArraysOnly(3), batch_size=2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="prefetch"):
        DataLoader(ArraysOnly(3), device="cpu:1", prefetch=0)
    assert len(DataLoader(ArraysOnly(0), batch_size=4)) == 0
    assert list(DataLoader(ArraysOnly(0), batch_size=4)) == []


# --------------------------------------------------------------- device prefetch


@pytest.mark.parametrize("dataset", [ArraysOnly(23), Counting(23)], ids=["arrays", "samples"])
def test_device_prefetch_gives_the_same_batches(dataset: Any) -> None:
    host = list(DataLoader(dataset, batch_size=5, shuffle=True, seed=7))
    moved = list(DataLoader(dataset, batch_size=5, shuffle=True, seed=7, device="cpu:1"))
    assert len(host) == len(moved) == 5
    for h, m in zip(host, moved, strict=True):
        assert all(str(t.device) == "cpu:1" for t in m)
        for a, b in zip(h, m, strict=True):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert prefetch_threads() == []


def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)


@pytest.mark.parametrize("prefetch", [1, 2, 4])
def test_prefetch_stays_bounded(prefetch: int) -> None:
    ds = Counting(50)
    it = iter(DataLoader(ds, batch_size=1, device="cpu:1", prefetch=prefetch))
    next(it)
    wait_for(lambda: ds.fetched >= 1 + prefetch)  # a slow step: the thread fills up...
    time.sleep(0.1)
    assert ds.fetched == 1 + prefetch  # ...and waits
    next(it)
    wait_for(lambda: ds.fetched >= 2 + prefetch)
    time.sleep(0.1)
    assert ds.fetched == 2 + prefetch
    it.close()  # type: ignore[attr-defined]
    assert prefetch_threads() == []


def test_worker_exception_is_raised_in_caller() -> None:
    loader = DataLoader(Counting(20, fail_at=7), batch_size=2, device="cpu:1")
    got = []
    with pytest.raises(KeyError, match="boom at 7"):  # noqa: PT012  (raised mid-iteration)
        for _, y in loader:
            got.append(y.numpy().tolist())
    assert got == [[0, 1], [2, 3], [4, 5]]
    assert prefetch_threads() == []


def test_early_break_stops_the_thread() -> None:
    ds = Counting(1000)
    for _ in DataLoader(ds, batch_size=10, device="cpu:1", prefetch=3):
        break
    gc.collect()
    assert prefetch_threads() == []
    assert ds.fetched <= 10 * (1 + 3)


@pytest.mark.gpu
def test_prefetch_to_gpu() -> None:
    pytest.importorskip("cupy")
    from minitorch_accel.backends import Device

    try:
        _ = Device("cuda").backend
    except Exception as exc:  # no CUDA device
        pytest.skip(str(exc))
    loader = DataLoader(MNIST(sample=True, train=False), batch_size=256, device="cuda")
    total = 0
    for x, y in loader:
        assert str(x.device) == "cuda:0" and x.dtype == np.float32 and y.dtype == np.int64
        total += int(y.numpy().shape[0])
    assert total == 1000


@pytest.mark.gpu
def test_prefetched_batches_are_not_overwritten_while_the_gpu_still_reads_them() -> None:
    """Each batch is read by slow GPU work queued before the next batch is made: the next
    batch's copy must not land in memory that work still reads (a freed block reused).
    """
    pytest.importorskip("cupy")
    rng = np.random.default_rng(0)
    images = rng.random((64 * 12, 1024), dtype=np.float32)
    labels = np.arange(64 * 12, dtype=np.int64)
    dataset = TensorDataset(mta.tensor(images), mta.tensor(labels))
    loader = DataLoader(dataset, batch_size=64, device="cuda", prefetch=2)
    weights = mta.randn(1024, 1024, device="cuda") / 32
    sums = []
    for x, y in loader:
        h = x
        for _ in range(50):  # queued work that reads the batch for a while
            h = (h @ weights).tanh()
        sums.append((h.sum() * 0 + y.to(dtype=np.float32).sum()).detach())
        del x, y, h  # the batch's blocks go back to the pool while the GPU works
    found = [float(s.item()) for s in sums]
    expected = [float(labels[i * 64 : (i + 1) * 64].sum()) for i in range(12)]
    assert found == expected
