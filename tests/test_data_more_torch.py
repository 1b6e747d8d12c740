"""The rest of ``torch.utils.data``: samplers, ``batch_sampler=``, ``batch_size=None``,
``len(loader)``, ConcatDataset, IterableDataset (with and without workers),
ChainDataset, StackDataset, Subset of a Subset, random_split with fractions,
default_collate and default_convert.

Each behaviour is checked against a separately written expectation (exact, by
construction with fixed seeds: the NumPy draws a sampler must make are replayed from a
twin generator) and, where PyTorch is deterministic, against PyTorch's own classes and
error messages.
"""

from __future__ import annotations

import warnings
from collections import Counter, namedtuple
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    Sampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def error_of(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[type, str]:
    """The type and message of the exception ``fn(*args, **kwargs)`` raises."""
    with pytest.raises(Exception) as info:  # noqa: PT011  (any type: compared by the caller)
        fn(*args, **kwargs)
    return type(info.value), str(info.value)


def structure(batch: Any) -> Any:
    """A comparable picture of a batch (ours or PyTorch's): containers, and per
    tensor its dtype, shape and values.
    """
    if isinstance(batch, Tensor) or type(batch).__name__ == "Tensor":
        a = batch.numpy()
        return ("tensor", str(a.dtype), a.shape, a.tolist())
    if isinstance(batch, dict):
        return ("dict", {k: structure(v) for k, v in batch.items()})
    if isinstance(batch, (list, tuple)):
        return (type(batch).__name__, [structure(v) for v in batch])
    if isinstance(batch, np.ndarray):
        return ("array", str(batch.dtype), batch.tolist())
    return ("value", type(batch).__name__, batch)


def flat(loader: Any) -> list[list[int]]:
    """The first field of every batch of ``loader``, as lists of ints."""
    out = []
    for batch in loader:
        first = batch[0] if isinstance(batch, list) else batch
        out.append(np.asarray(first.numpy()).reshape(-1).tolist())
    return out


class Items(Dataset[Any]):
    """A map-style dataset with no arrays (the sample-by-sample path): sample ``i`` is
    ``(i, 10 * i)`` as Python ints.
    """

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> Any:
        return i, 10 * i


# ------------------------------------------------------------------------- samplers


def test_sequential_sampler_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    for n in (0, 1, 7):
        ours = SequentialSampler(range(n))
        assert list(ours) == list(torch.utils.data.SequentialSampler(range(n))) == list(range(n))
        assert len(ours) == n


def test_random_sampler_without_replacement_is_a_permutation_per_epoch() -> None:
    sampler = RandomSampler(range(9), generator=rng(4))
    twin = rng(4)
    for _ in range(3):  # a fresh permutation every epoch, drawn from the generator
        epoch = list(sampler)
        assert sorted(epoch) == list(range(9))
        assert epoch == twin.permutation(9).tolist()
    assert len(sampler) == 9


@pytest.mark.parametrize("num_samples", [1, 4, 9, 10, 23])
def test_random_sampler_num_samples(num_samples: int) -> None:
    n = 5
    epoch = list(RandomSampler(range(n), num_samples=num_samples, generator=rng(1)))
    assert len(epoch) == num_samples == len(RandomSampler(range(n), num_samples=num_samples))
    for start in range(0, num_samples - num_samples % n, n):  # whole passes: each index once
        assert sorted(epoch[start : start + n]) == list(range(n))
    tail = epoch[num_samples - num_samples % n :]
    assert len(set(tail)) == len(tail)  # the part of a pass: no repeats
    counts = Counter(epoch)
    assert all(num_samples // n <= counts[i] <= -(-num_samples // n) for i in range(n))


def test_random_sampler_with_replacement_draws_from_the_generator() -> None:
    epoch = list(RandomSampler(range(6), replacement=True, num_samples=40, generator=rng(2)))
    assert epoch == rng(2).integers(0, 6, size=40).tolist()
    assert all(0 <= i < 6 for i in epoch) and len(epoch) == 40


def test_random_sampler_without_a_generator_repeats_after_manual_seed() -> None:
    sampler = RandomSampler(range(50))
    mta.manual_seed(11)
    first = [list(sampler), list(sampler)]
    mta.manual_seed(11)
    again = [list(sampler), list(sampler)]
    assert first == again and first[0] != first[1]
    assert sorted(first[0]) == list(range(50))


def test_random_sampler_errors_match_torch() -> None:
    torch = pytest.importorskip("torch")
    torch_cls = torch.utils.data.RandomSampler
    cases: list[dict[str, Any]] = [
        {"num_samples": 0},
        {"num_samples": 3.0},
        {"replacement": 1},
    ]
    for kwargs in cases:
        assert error_of(RandomSampler, range(3), **kwargs) == error_of(
            torch_cls, range(3), **kwargs
        )
    assert error_of(RandomSampler, []) == error_of(torch_cls, [])
    with pytest.raises(TypeError, match=r"numpy\.random\.Generator"):
        RandomSampler(range(3), generator=torch.Generator())  # type: ignore[arg-type]


def test_subset_random_sampler() -> None:
    indices = [7, 3, 9, 12, 0]
    sampler = SubsetRandomSampler(indices, generator=rng(5))
    twin = rng(5)
    for _ in range(2):
        epoch = list(sampler)
        assert sorted(epoch) == sorted(indices)
        assert epoch == [indices[p] for p in twin.permutation(5)]
    assert len(sampler) == 5


def test_weighted_random_sampler_with_replacement() -> None:
    weights = [0.0, 1.0, 3.0, 0.0, 0.5]
    epoch = list(WeightedRandomSampler(weights, 200, generator=rng(3)))
    assert len(epoch) == 200
    assert set(epoch) <= {1, 2, 4}  # a weight of 0 is never drawn
    # the reference: inverse CDF of the normalised weights at the generator's uniforms
    cdf = np.cumsum(np.asarray(weights) / sum(weights))
    cdf /= cdf[-1]
    assert epoch == np.searchsorted(cdf, rng(3).random(200), side="right").tolist()


def test_weighted_random_sampler_without_replacement() -> None:
    weights = np.array([0.0, 2.0, 1.0, 0.0, 4.0, 1.0])
    sampler = WeightedRandomSampler(weights, 4, replacement=False, generator=rng(0))
    for _ in range(3):
        epoch = list(sampler)
        assert sorted(epoch) == [1, 2, 4, 5]  # every positive weight once, no zero
    with pytest.raises(ValueError, match="cannot draw 5 samples without replacement from 4"):
        list(WeightedRandomSampler(weights, 5, replacement=False))
    with pytest.raises(ValueError, match="sum to 0"):
        list(WeightedRandomSampler([0.0, 0.0], 2))
    for bad in ([-1.0, 2.0], [1.0, np.nan], [1.0, np.inf]):
        with pytest.raises(ValueError, match="finite and >= 0"):
            list(WeightedRandomSampler(bad, 2))


def test_weighted_random_sampler_errors_match_torch() -> None:
    torch = pytest.importorskip("torch")
    torch_cls = torch.utils.data.WeightedRandomSampler
    for args in (([1.0, 2.0], 0), ([1.0, 2.0], True), ([[1.0, 2.0]], 1)):
        assert error_of(WeightedRandomSampler, *args) == error_of(torch_cls, *args)
    assert error_of(WeightedRandomSampler, [1.0], 1, replacement=1) == error_of(
        torch_cls, [1.0], 1, replacement=1
    )
    assert len(WeightedRandomSampler([1.0, 2.0], 7)) == len(torch_cls([1.0, 2.0], 7)) == 7


@pytest.mark.parametrize("n", [0, 1, 9, 10, 11])
@pytest.mark.parametrize("batch_size", [1, 3, 10])
@pytest.mark.parametrize("drop_last", [False, True])
def test_batch_sampler_matches_torch(n: int, batch_size: int, drop_last: bool) -> None:
    torch = pytest.importorskip("torch")
    ours = BatchSampler(SequentialSampler(range(n)), batch_size, drop_last)
    theirs = torch.utils.data.BatchSampler(range(n), batch_size, drop_last)
    assert list(ours) == list(theirs)
    assert len(ours) == len(theirs)
    # the separately written expectation: cut range(n) every batch_size
    cuts = [list(range(n))[i : i + batch_size] for i in range(0, n, batch_size)]
    if drop_last and cuts and len(cuts[-1]) < batch_size:
        cuts.pop()
    assert list(ours) == cuts
    order = np.arange(n, dtype=np.int64)[::-1].copy()  # the loader's fast path, same cuts
    assert [b.tolist() for b in ours.split(order)] == list(
        BatchSampler(order.tolist(), batch_size, drop_last)
    )


def test_batch_sampler_of_any_iterable_and_errors() -> None:
    torch = pytest.importorskip("torch")
    assert list(BatchSampler(iter([5, 1, 4]), 2, False)) == [[5, 1], [4]]
    torch_cls = torch.utils.data.BatchSampler
    for args in (
        (range(4), 0, False),
        (range(4), 2.0, False),
        (range(4), True, False),
        (range(4), 2, 1),
    ):
        assert error_of(BatchSampler, *args) == error_of(torch_cls, *args)


def test_sampler_base_class() -> None:
    with pytest.raises(NotImplementedError, match="must implement __iter__"):
        iter(Sampler())

    class EvenFirst(Sampler[int]):
        def __init__(self, n: int) -> None:
            self.n = n

        def __iter__(self) -> Iterator[int]:
            return iter([*range(0, self.n, 2), *range(1, self.n, 2)])

        def __len__(self) -> int:
            return self.n

    loader = DataLoader(TensorDataset(np.arange(5)), batch_size=2, sampler=EvenFirst(5))
    assert flat(loader) == [[0, 2], [4, 1], [3]] and len(loader) == 3


# -------------------------------------------------- DataLoader: sampler, batch_sampler


def torch_tensor_dataset(torch: Any, n: int) -> Any:
    return torch.utils.data.TensorDataset(torch.arange(n), torch.arange(n) * 10)


@pytest.mark.parametrize("dataset", ["arrays", "items"])
def test_loader_sampler_and_batch_sampler_match_torch(dataset: str) -> None:
    torch = pytest.importorskip("torch")
    n = 11
    ours_ds: Any = (
        TensorDataset(np.arange(n), np.arange(n) * 10) if dataset == "arrays" else Items(n)
    )
    theirs_ds = torch_tensor_dataset(torch, n)
    torch_loader = torch.utils.data.DataLoader
    order = [10, 3, 3, 0, 7, 1, 2]  # any iterable of indices, repeats allowed
    batches = [[4, 0], [9], [1, 2, 3, 5]]
    cases = [
        ({"batch_size": 3, "sampler": order}, {"batch_size": 3, "sampler": order}),
        ({"batch_size": 3, "sampler": order, "drop_last": True}, None),
        ({"batch_sampler": batches}, None),
        (
            {"batch_sampler": BatchSampler(order, 2, True)},
            {"batch_sampler": BatchSampler(order, 2, True)},
        ),
        ({"batch_size": 4}, None),
        ({"batch_size": 4, "drop_last": True}, None),
    ]
    for ours_kw, theirs_kw in cases:
        ours = DataLoader(ours_ds, **ours_kw)
        theirs = torch_loader(theirs_ds, **(theirs_kw or ours_kw))
        got = [[t.numpy().tolist() for t in b] for b in ours]
        want = [[t.numpy().tolist() for t in b] for b in theirs]
        assert got == want, ours_kw
        assert len(ours) == len(theirs) == len(got), ours_kw
        # the separately written expectation: sample i is (i, 10 i)
        for batch in got:
            assert batch[1] == [10 * i for i in batch[0]]


def test_loader_batch_sampler_of_a_generator_function() -> None:
    class ByParity(Sampler[list[int]]):
        def __iter__(self) -> Iterator[list[int]]:
            yield [0, 2, 4]
            yield [1, 3]

        def __len__(self) -> int:
            return 2

    for ds in (TensorDataset(np.arange(5)), Items(5)):
        loader = DataLoader(ds, batch_sampler=ByParity())
        assert flat(loader) == [[0, 2, 4], [1, 3]] and len(loader) == 2
        assert loader.batch_size is None and not loader.drop_last


def test_loader_default_samplers_are_torch_s() -> None:
    loader = DataLoader(TensorDataset(np.arange(10)), batch_size=4, shuffle=True, seed=3)
    assert isinstance(loader.sampler, RandomSampler)
    assert isinstance(loader.batch_sampler, BatchSampler)
    assert loader.batch_sampler.sampler is loader.sampler
    twin = rng(3)  # each epoch is the next permutation of the loader's generator
    for _ in range(2):
        perm = twin.permutation(10).tolist()
        assert flat(loader) == [perm[0:4], perm[4:8], perm[8:10]]
    plain = DataLoader(TensorDataset(np.arange(3)))
    assert isinstance(plain.sampler, SequentialSampler) and flat(plain) == [[0], [1], [2]]


def test_loader_weighted_sampler() -> None:
    weights = [0.0, 1.0, 0.0, 2.0, 1.0, 0.0]
    loader = DataLoader(
        TensorDataset(np.arange(6)),
        batch_size=8,
        sampler=WeightedRandomSampler(weights, 20, generator=rng(9)),
    )
    drawn = [i for batch in flat(loader) for i in batch]
    assert len(loader) == 3 and len(drawn) == 20 and set(drawn) <= {1, 3, 4}
    assert drawn == list(WeightedRandomSampler(weights, 20, generator=rng(9)))


def test_loader_exclusive_options_match_torch() -> None:
    torch = pytest.importorskip("torch")
    ours_ds, theirs_ds = TensorDataset(np.arange(5)), torch_tensor_dataset(torch, 5)
    torch_loader = torch.utils.data.DataLoader
    cases: list[dict[str, Any]] = [
        {"batch_sampler": [[0]], "batch_size": 2},
        {"batch_sampler": [[0]], "shuffle": True},
        {"batch_sampler": [[0]], "sampler": [0]},
        {"batch_sampler": [[0]], "drop_last": True},
        {"batch_size": None, "drop_last": True},
        {"sampler": [1], "shuffle": True},
    ]
    for kwargs in cases:
        assert error_of(DataLoader, ours_ds, **kwargs) == error_of(
            torch_loader, theirs_ds, **kwargs
        ), kwargs


# -------------------------------------------------------------- batch_size=None


Point = namedtuple("Point", ["x", "y"])


def test_no_batching_converts_each_sample_as_torch() -> None:
    torch = pytest.importorskip("torch")
    samples = [
        {"image": np.full((2, 2), 0.5, np.float32), "label": 3, "name": "a"},
        (np.arange(3), np.float32(1.5), np.int8(2), 7, 2.5, "s", b"b"),
        Point(np.ones(2), [np.int64(4), (5, np.array(["x"]))]),
        np.array(True),
        mta.tensor([1.0, 2.0]),
    ]

    class Listed(Dataset[Any]):
        def __init__(self, items: list[Any]) -> None:
            self.items = items

        def __len__(self) -> int:
            return len(self.items)

        def __getitem__(self, i: int) -> Any:
            return self.items[i]

    def to_torch(sample: Any) -> Any:
        return torch.from_numpy(sample.numpy()) if isinstance(sample, Tensor) else sample

    ours = list(DataLoader(Listed(samples), batch_size=None))
    theirs = list(
        torch.utils.data.DataLoader(Listed([to_torch(s) for s in samples]), batch_size=None)
    )
    assert [structure(b) for b in ours] == [structure(b) for b in theirs]
    assert [structure(default_convert(s)) for s in samples] == [
        structure(torch.utils.data.default_convert(to_torch(s))) for s in samples
    ]
    assert len(DataLoader(Listed(samples), batch_size=None)) == len(samples)


def test_no_batching_of_a_tensor_dataset() -> None:
    ds = TensorDataset(np.arange(6, dtype=np.int32), np.linspace(0, 1, 6).astype(np.float32))
    loader = DataLoader(ds, batch_size=None, shuffle=True, seed=2)
    perm = rng(2).permutation(6).tolist()
    got = list(loader)
    assert len(loader) == 6 and len(got) == 6
    for i, sample in zip(perm, got, strict=True):
        assert isinstance(sample, list) and sample[0].shape == () and sample[0].dtype == np.int32
        assert int(sample[0].item()) == i
        assert sample[1].item() == pytest.approx(float(ds.arrays[1][i]), abs=0)
    moved = list(DataLoader(ds, batch_size=None, device="cpu:1"))
    assert [m[0].shape for m in moved] == [()] * 6
    assert all(str(m[0].device) == "cpu:1" for m in moved)
    assert [int(m[0].item()) for m in moved] == list(range(6))


def test_collate_fn_is_used_for_array_backed_datasets() -> None:
    calls: list[int] = []

    def count(samples: list[Any]) -> int:
        calls.append(len(samples))
        return len(samples)

    assert list(DataLoader(TensorDataset(np.arange(5)), batch_size=2, collate_fn=count)) == [
        2,
        2,
        1,
    ]
    assert calls == [2, 2, 1]


# ------------------------------------------------------------------ ConcatDataset


def test_concat_dataset_indexing_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    parts = [list(range(0, 3)), [], list(range(100, 102)), list(range(200, 205))]
    ours = ConcatDataset(parts)
    theirs = torch.utils.data.ConcatDataset(parts)
    assert ours.cumulative_sizes == theirs.cumulative_sizes == [3, 3, 5, 10]
    assert len(ours) == len(theirs) == 10
    everything = [x for p in parts for x in p]  # the separately written expectation
    for i in range(-10, 10):
        assert ours[i] == theirs[i] == everything[i]
    assert error_of(lambda: ours[-11]) == error_of(lambda: theirs[-11])
    with pytest.raises(IndexError, match="index 10 is out of range for a ConcatDataset of 10"):
        ours[10]
    assert error_of(ConcatDataset, []) == error_of(torch.utils.data.ConcatDataset, [])
    assert ConcatDataset.cumsum([[1], [2, 3]]) == [1, 3]


def test_concat_dataset_refuses_an_iterable_dataset_as_torch() -> None:
    torch = pytest.importorskip("torch")

    class TorchStream(torch.utils.data.IterableDataset):  # type: ignore[misc,name-defined]
        def __iter__(self) -> Iterator[int]:
            return iter(range(3))

    assert error_of(ConcatDataset, [[1], Stream(3)]) == error_of(
        torch.utils.data.ConcatDataset, [[1], TorchStream()]
    )


def test_concat_dataset_in_a_loader_and_by_addition() -> None:
    a = TensorDataset(np.arange(7, dtype=np.float32), np.arange(7))
    b = TensorDataset(np.arange(10, 15, dtype=np.float32), np.arange(10, 15))
    both = a + b
    assert isinstance(both, ConcatDataset) and len(both) == 12
    everything = np.concatenate([a.arrays[0], b.arrays[0]])
    perm = rng(6).permutation(12)
    got = [x.numpy().tolist() for x, _ in DataLoader(both, batch_size=5, shuffle=True, seed=6)]
    assert got == [everything[perm[i : i + 5]].tolist() for i in range(0, 12, 5)]


# --------------------------------------------------------------- IterableDataset


class Stream(IterableDataset[int]):
    """``range(n)``; with ``shard``, worker ``k`` of ``K`` reads ``k, k + K, ...``."""

    def __init__(self, n: int, shard: bool = False, length: bool = True) -> None:
        self.n, self.shard, self.length = n, shard, length

    def __iter__(self) -> Iterator[int]:
        info = get_worker_info()
        if self.shard and info is not None:
            return iter(range(info.id, self.n, info.num_workers))
        return iter(range(self.n))

    def __len__(self) -> int:
        if not self.length:
            return super().__len__()
        return self.n


def torch_stream(torch: Any, n: int, shard: bool = False) -> Any:
    class TorchStream(torch.utils.data.IterableDataset):  # type: ignore[misc,name-defined]
        def __iter__(self) -> Iterator[int]:
            info = torch.utils.data.get_worker_info()
            if shard and info is not None:
                return iter(range(info.id, n, info.num_workers))
            return iter(range(n))

        def __len__(self) -> int:
            return n

    return TorchStream()


def batches_of(loader: Any) -> list[list[int]]:
    return [b.numpy().reshape(-1).tolist() for b in loader]


@pytest.mark.parametrize("drop_last", [False, True])
def test_iterable_dataset_in_a_loader_matches_torch(drop_last: bool) -> None:
    torch = pytest.importorskip("torch")
    ours = DataLoader(Stream(11), batch_size=4, drop_last=drop_last)
    theirs = torch.utils.data.DataLoader(torch_stream(torch, 11), batch_size=4, drop_last=drop_last)
    want = [[0, 1, 2, 3], [4, 5, 6, 7]] + ([] if drop_last else [[8, 9, 10]])
    assert batches_of(ours) == batches_of(theirs) == want
    assert len(ours) == len(theirs) == len(want)
    assert ours.sampler is None and ours.batch_sampler is None
    unbatched = DataLoader(Stream(3), batch_size=None)
    assert [structure(x) for x in unbatched] == [("value", "int", i) for i in range(3)]
    assert len(unbatched) == 3


def test_iterable_dataset_options_and_errors_match_torch() -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = Stream(4), torch_stream(torch, 4)
    torch_loader = torch.utils.data.DataLoader
    for kwargs in ({"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}):
        assert error_of(DataLoader, ours, **kwargs) == error_of(torch_loader, theirs, **kwargs)
    no_len = DataLoader(Stream(4, length=False), batch_size=2)
    assert batches_of(no_len) == [[0, 1], [2, 3]]
    with pytest.raises(TypeError, match="has no len"):
        len(no_len)
    assert repr(no_len).startswith("DataLoader(n=?, batch_size=2")
    with pytest.raises(TypeError, match="iterate over it instead of indexing"):
        Stream(3)[0]


@pytest.mark.parametrize("shard, drop_last", [(False, False), (True, False), (True, True)])
def test_iterable_dataset_with_workers_matches_torch(shard: bool, drop_last: bool) -> None:
    torch = pytest.importorskip("torch")
    n, workers = 13, 3
    ours = DataLoader(
        Stream(n, shard=shard), batch_size=2, num_workers=workers, drop_last=drop_last
    )
    theirs = torch.utils.data.DataLoader(
        torch_stream(torch, n, shard=shard), batch_size=2, num_workers=workers, drop_last=drop_last
    )
    got = batches_of(ours)
    assert got == batches_of(theirs)
    # the separately written expectation: each worker cuts its own stream into batches of
    # 2 (dropping its short last one with drop_last); batch k comes from worker k mod 3
    # while every worker still has batches, then the rest in turn
    streams = [list(range(w, n, workers)) if shard else list(range(n)) for w in range(workers)]
    per_worker = [
        [s[i : i + 2] for i in range(0, len(s), 2) if not (drop_last and len(s[i : i + 2]) < 2)]
        for s in streams
    ]
    want = []
    for k in range(max(len(p) for p in per_worker)):
        want += [p[k] for p in per_worker if k < len(p)]
    assert got == want
    counts = Counter(i for b in got for i in b)
    if not shard:  # each worker has a copy of the whole stream
        assert counts == Counter({i: workers for i in range(n)})
    elif not drop_last:
        assert counts == Counter(range(n))


def test_iterable_dataset_worker_failure_is_raised() -> None:
    class Broken(IterableDataset[int]):
        def __iter__(self) -> Iterator[int]:
            yield 1
            raise KeyError("stream broke")

    with pytest.raises(KeyError, match="stream broke"):
        list(DataLoader(Broken(), batch_size=1, num_workers=2))


def test_chain_dataset_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    chain = ChainDataset([Stream(2), Stream(3)])
    theirs_chain = torch.utils.data.ChainDataset([torch_stream(torch, 2), torch_stream(torch, 3)])
    assert list(chain) == list(theirs_chain) == [0, 1, 0, 1, 2]
    assert len(chain) == len(theirs_chain) == 5
    assert list(Stream(2) + Stream(1)) == [0, 1, 0]
    assert batches_of(DataLoader(chain, batch_size=2)) == [[0, 1], [0, 1], [2]]
    bad = ChainDataset([Stream(2), [5]])
    theirs = torch.utils.data.ChainDataset([torch_stream(torch, 2), [5]])
    assert error_of(list, bad) == error_of(list, theirs)
    assert error_of(len, bad) == error_of(len, theirs)
    with pytest.raises(TypeError, match="has no len"):
        len(ChainDataset([Stream(2, length=False)]))


# -------------------------------------------------------------------- StackDataset


def test_stack_dataset_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    images, labels = list(range(10, 14)), list("abcd")
    torch_stack = torch.utils.data.StackDataset
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    for args, kwargs in (((images, labels), {}), ((), {"image": images, "label": labels})):
        ours, theirs = StackDataset(*args, **kwargs), torch_stack(*args, **kwargs)
        assert len(ours) == len(theirs) == 4
        assert [ours[i] for i in range(4)] == [theirs[i] for i in range(4)]
    assert StackDataset(x=images, y=labels)[1] == {"x": 11, "y": "b"}
    for args, kwargs in (
        ((), {}),
        ((images,), {"y": labels}),
        ((images, [1]), {}),
        ((), {"a": images, "b": [1]}),
    ):
        assert error_of(StackDataset, *args, **kwargs) == error_of(torch_stack, *args, **kwargs)
    batch = next(
        iter(DataLoader(StackDataset(x=TensorDataset(np.arange(4)), y=labels), batch_size=4))
    )
    assert batch["x"][0].numpy().tolist() == [0, 1, 2, 3] and batch["y"] == labels


# ------------------------------------------------------ Subset of a Subset, random_split


def test_subset_of_a_subset() -> None:
    ds = TensorDataset(np.arange(20) * 3)
    inner = Subset(ds, [19, 2, 5, 7, 11, -1])
    outer = Subset(inner, [4, 0, -2])
    want = [11 * 3, 19 * 3, 11 * 3]  # inner[4], inner[0], inner[-2] = ds[11], ds[19], ds[11]
    assert [int(outer[i][0]) for i in range(3)] == want
    fast = [x[0].numpy().tolist() for x in DataLoader(outer, batch_size=2)]
    slow = [x.numpy().tolist() for x, _ in DataLoader(Subset(Items(20), [19, 2, 11]), batch_size=2)]
    assert fast == [want[:2], want[2:]] and slow == [[19, 2], [11]]


@pytest.mark.parametrize(
    "n, fractions",
    [
        (10, [0.3, 0.3, 0.4]),
        (7, [1 / 3] * 3),
        (5, [0.5, 0.5]),
        (11, [0.1] * 10),
        (3, [0.2, 0.8]),
        (1, [1, 0]),
    ],
)
def test_random_split_fractions_match_torch(n: int, fractions: list[float]) -> None:
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings(record=True) as ours_warned:
        warnings.simplefilter("always")
        parts = random_split(TensorDataset(np.arange(n)), fractions, seed=0)
    with warnings.catch_warnings(record=True) as theirs_warned:
        warnings.simplefilter("always")
        theirs = torch.utils.data.random_split(range(n), fractions)
    assert [len(p) for p in parts] == [len(p) for p in theirs]
    assert [str(w.message) for w in ours_warned] == [str(w.message) for w in theirs_warned]
    # the separately written expectation: floor, then the remainder round robin
    counts = [int(np.floor(n * f)) for f in fractions]
    for i in range(n - sum(counts)):
        counts[i % len(counts)] += 1
    assert [len(p) for p in parts] == counts
    assert sorted(np.concatenate([p.indices for p in parts]).tolist()) == list(range(n))


def test_random_split_rules_match_torch() -> None:
    torch = pytest.importorskip("torch")
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        parts = random_split(TensorDataset(np.arange(5)), [1, 0], seed=0)  # fractions, as torch
    assert [len(p) for p in parts] == [5, 0]
    for lengths in ([1.5, -0.5], [-0.2, 1.2]):
        assert error_of(random_split, TensorDataset(np.arange(4)), lengths) == error_of(
            torch.utils.data.random_split, range(4), lengths
        )


# ---------------------------------------------------------------- default_collate


CollateCase = list[Any]
COLLATE: dict[str, CollateCase] = {
    "list of tuples": [[(1, 2.0), (3, 4.0)], [(5, 6.0), (7, 8.0)]],
    "dict of lists of tuples": [{"pairs": [(i, np.float32(i))], "id": i} for i in range(3)],
    "numpy dtypes": [
        (np.array([i], np.uint8), np.array([True]), np.array([i], np.float16), np.int32(i))
        for i in range(3)
    ],
    "bytes": [b"a", b"b"],
    "namedtuple of dicts": [Point({"a": i}, [np.float64(i)]) for i in range(2)],
}


@pytest.mark.parametrize("kind", list(COLLATE))
def test_default_collate_more_cases_match_torch(kind: str) -> None:
    torch = pytest.importorskip("torch")
    samples = COLLATE[kind]
    ours = default_collate(samples)
    assert structure(ours) == structure(torch.utils.data.default_collate(samples))
    assert structure(
        DataLoader(_Listed(samples), batch_size=len(samples)).__iter__().__next__()
    ) == structure(ours)


class _Listed(Dataset[Any]):
    def __init__(self, items: list[Any]) -> None:
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> Any:
        return self.items[i]


def test_default_collate_list_of_tuples_by_hand() -> None:
    batch = default_collate(COLLATE["list of tuples"])
    # a list sample stays a list; each tuple becomes a list of its fields' batches
    assert isinstance(batch, list) and len(batch) == 2
    assert batch[0][0].numpy().tolist() == [1, 5] and batch[0][0].dtype == np.int64
    assert batch[1][1].numpy().tolist() == [4.0, 8.0] and batch[1][1].dtype == np.float64


def test_utils_data_is_the_same_module_surface() -> None:
    import minitorch_accel.data as data
    import minitorch_accel.utils.data as utils_data

    for name in utils_data.__all__:
        assert getattr(utils_data, name) is getattr(data, name)
    torch = pytest.importorskip("torch")
    wanted = {
        "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
        "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset",
        "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
        "default_collate", "default_convert", "get_worker_info", "random_split",
    }  # fmt: skip
    assert wanted <= set(torch.utils.data.__all__)
    assert wanted <= set(utils_data.__all__)
