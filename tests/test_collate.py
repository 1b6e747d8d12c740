"""default_collate and the DataLoader over any map-style dataset: PyTorch's batch
structure and dtypes for arrays, tensors, numbers, strings, tuples, lists, named tuples
and dicts; collate_fn; pin_memory; the array fast path equal to the sample path."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.data import DataLoader, Dataset, TensorDataset, default_collate

Point = namedtuple("Point", ["x", "label"])

SAMPLES: dict[str, list[Any]] = {
    "array": [np.full((2, 3), i, np.float32) for i in range(4)],
    "tensor": [mta.tensor(np.full(3, i, np.float64)) for i in range(4)],
    "int": [0, 5, 7, 9],
    "float": [0.5, 1.5, 2.5, 3.5],
    "bool": [True, False, True, True],
    "numpy scalar": [np.float32(i) / 2 for i in range(4)],
    "numpy int8 array": [np.arange(3, dtype=np.int8) + i for i in range(4)],
    "string": ["a", "b", "c", "d"],
    "tuple": [(np.ones(2, np.float32) * i, i) for i in range(4)],
    "1-tuple": [(np.ones(2, np.float32) * i,) for i in range(4)],
    "list": [[i, float(i)] for i in range(4)],
    "namedtuple": [Point(np.ones(2) * i, i) for i in range(4)],
    "dict": [
        {"image": np.ones((1, 2), np.float32) * i, "label": i, "name": str(i)} for i in range(4)
    ],
    "nested": [{"pair": (i, [np.int64(i), 2.0 * i]), "meta": {"id": i}} for i in range(4)],
}


def _structure(batch: Any, torch: Any = None) -> Any:
    """A comparable picture of a batch: container types, and (dtype, values) per leaf."""
    if torch is not None and isinstance(batch, torch.Tensor):
        return ("tensor", str(batch.numpy().dtype), batch.numpy().tolist())
    if isinstance(batch, Tensor):
        return ("tensor", str(batch.numpy().dtype), batch.numpy().tolist())
    if isinstance(batch, dict):
        return ("dict", {k: _structure(v, torch) for k, v in batch.items()})
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return (type(batch).__name__, [_structure(v, torch) for v in batch])
    if isinstance(batch, (list, tuple)):
        return (type(batch).__name__, [_structure(v, torch) for v in batch])
    return ("value", batch)


def _torch_sample(sample: Any, torch: Any) -> Any:
    if isinstance(sample, Tensor):
        return torch.from_numpy(sample.numpy())
    if isinstance(sample, (list, tuple)) and not hasattr(sample, "_fields"):
        return type(sample)(_torch_sample(s, torch) for s in sample)
    if isinstance(sample, dict):
        return {k: _torch_sample(v, torch) for k, v in sample.items()}
    return sample


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_default_collate_matches_torch(kind: str) -> None:
    torch = pytest.importorskip("torch")
    from torch.utils.data import default_collate as torch_collate

    samples = SAMPLES[kind]
    want = _structure(torch_collate([_torch_sample(s, torch) for s in samples]), torch)
    assert _structure(default_collate(samples)) == want


def test_default_collate_without_torch() -> None:
    batch = default_collate(SAMPLES["tuple"])
    assert isinstance(batch, list) and len(batch) == 2  # a tuple sample gives a list
    assert batch[0].shape == (4, 2) and batch[0].dtype == np.float32
    assert batch[1].dtype == np.int64 and batch[1].numpy().tolist() == [0, 1, 2, 3]
    one = default_collate(SAMPLES["1-tuple"])
    assert isinstance(one, list) and len(one) == 1 and one[0].shape == (4, 2)
    assert default_collate(SAMPLES["float"]).dtype == np.float64
    assert default_collate(SAMPLES["bool"]).dtype == np.bool_
    assert default_collate(SAMPLES["numpy scalar"]).dtype == np.float32
    assert default_collate(SAMPLES["string"]) == ["a", "b", "c", "d"]
    point = default_collate(SAMPLES["namedtuple"])
    assert isinstance(point, Point) and point.label.numpy().tolist() == [0, 1, 2, 3]
    d = default_collate(SAMPLES["dict"])
    assert list(d) == ["image", "label", "name"] and d["image"].shape == (4, 1, 2)
    assert d["name"] == ["0", "1", "2", "3"]
    nested = default_collate(SAMPLES["nested"])
    assert nested["meta"]["id"].numpy().tolist() == [0, 1, 2, 3]
    np.testing.assert_array_equal(nested["pair"][1][1].numpy(), [0.0, 2.0, 4.0, 6.0])


def test_default_collate_errors() -> None:
    with pytest.raises(TypeError, match="batch must contain tensors, numpy arrays, numbers.*None"):
        default_collate([None, None])
    with pytest.raises(RuntimeError, match=r"different shapes \[\(2,\), \(3,\)\]"):
        default_collate([np.zeros(2), np.zeros(3)])
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match="dtype <U1"):
        default_collate([np.array("a"), np.array("b")])


class Squares(Dataset[Any]):
    """A user dataset: sample ``i`` is whatever ``make(i)`` returns."""

    def __init__(self, n: int, make: Any) -> None:
        self.n, self.make = n, make

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> Any:
        return self.make(i)


def test_loader_single_array_items_give_a_tensor() -> None:
    ds = Squares(10, lambda i: np.full(3, i * i, np.float32))
    batches = list(DataLoader(ds, batch_size=4))
    assert [type(b) for b in batches] == [Tensor] * 3
    assert batches[0].numpy()[:, 0].tolist() == [0.0, 1.0, 4.0, 9.0]
    assert batches[2].shape == (2, 3)


def test_loader_tensor_dataset_of_one_array_gives_a_one_element_list() -> None:
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    (batch,) = [b for b in DataLoader(TensorDataset(x), batch_size=6)]
    assert isinstance(batch, list) and len(batch) == 1
    np.testing.assert_array_equal(batch[0].numpy(), x)


def test_loader_dicts_numbers_and_tensor_items() -> None:
    ds = Squares(5, lambda i: {"x": mta.tensor([float(i), 1.0]), "y": i, "w": 0.5 * i})
    batch = next(iter(DataLoader(ds, batch_size=5)))
    assert set(batch) == {"x", "y", "w"}
    assert batch["x"].dtype == np.float32 and batch["x"].shape == (5, 2)
    assert batch["y"].dtype == np.int64 and batch["w"].dtype == np.float64


def test_collate_fn_is_used() -> None:
    ds = Squares(6, lambda i: (i, np.ones(i + 1)))

    def pad(samples: list[Any]) -> Any:
        width = max(len(a) for _, a in samples)
        padded = np.zeros((len(samples), width))
        for row, (_, a) in enumerate(samples):
            padded[row, : len(a)] = a
        return mta.tensor([i for i, _ in samples]), mta.tensor(padded)

    idx, padded = next(iter(DataLoader(ds, batch_size=3, collate_fn=pad)))
    assert idx.numpy().tolist() == [0, 1, 2] and padded.shape == (3, 3)
    assert padded.numpy().sum() == 6.0


class Wrapped(Dataset[Any]):
    """Hides the arrays of a TensorDataset: forces the sample-by-sample path."""

    def __init__(self, inner: TensorDataset) -> None:
        self.inner = inner

    def __len__(self) -> int:
        return len(self.inner)

    def __getitem__(self, i: int) -> Any:
        return self.inner[i]


@pytest.mark.parametrize("device", [None, "cpu:1"])
@pytest.mark.parametrize("pin_memory", [False, True])
def test_array_path_equals_sample_path(device: str | None, pin_memory: bool) -> None:
    rng = np.random.default_rng(0)
    ds = TensorDataset(rng.standard_normal((23, 2, 3)).astype(np.float32), np.arange(23))
    fast = DataLoader(ds, batch_size=5, shuffle=True, seed=1, device=device, pin_memory=pin_memory)
    slow = DataLoader(Wrapped(ds), batch_size=5, shuffle=True, seed=1, device=device)
    for a, b in zip(fast, slow, strict=True):
        assert isinstance(a, list) and isinstance(b, list)
        for ta, tb in zip(a, b, strict=True):
            assert ta.dtype == tb.dtype and ta.device == tb.device
            np.testing.assert_array_equal(ta.cpu().numpy(), tb.cpu().numpy())


def test_device_with_dict_samples() -> None:
    ds = Squares(4, lambda i: {"x": np.full(2, i, np.float32), "tag": "s"})
    batch = next(iter(DataLoader(ds, batch_size=4, device="cpu:1")))
    assert batch["x"].device == mta.Device("cpu:1") and batch["tag"] == ["s"] * 4


def test_utils_data_holds_the_same_objects() -> None:
    import minitorch_accel.data as data
    import minitorch_accel.utils.data as utils_data

    for name in ("DataLoader", "Dataset", "TensorDataset", "Subset", "random_split"):
        assert getattr(utils_data, name) is getattr(data, name)
    assert mta.utils.data.default_collate is default_collate


def test_random_split_with_a_generator() -> None:
    from minitorch_accel.utils.data import random_split

    ds = TensorDataset(np.arange(10))
    a = random_split(ds, [0.7, 0.3], generator=np.random.default_rng(4))
    b = random_split(ds, [7, 3], seed=4)
    assert [len(s) for s in a] == [7, 3]
    assert [s.indices.tolist() for s in a] == [s.indices.tolist() for s in b]
    assert sorted(a[0].indices.tolist() + a[1].indices.tolist()) == list(range(10))
    with pytest.raises(ValueError, match="seed or generator, not both"):
        random_split(ds, [5, 5], seed=1, generator=np.random.default_rng(1))
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        random_split(ds, [5, 5], generator=3)  # type: ignore[arg-type]
