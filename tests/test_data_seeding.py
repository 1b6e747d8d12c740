"""``manual_seed`` makes shuffles and splits repeat, as ``torch.manual_seed`` does."""

from __future__ import annotations

import numpy as np

import minitorch_accel as mta
from minitorch_accel.data import DataLoader, TensorDataset, random_split


def _dataset() -> TensorDataset:
    return TensorDataset(np.arange(40, dtype=np.float32).reshape(20, 2), np.arange(20))


def _first_epoch(loader: DataLoader) -> list[int]:
    return [int(i) for _, y in loader for i in y.tolist()]


def test_a_shuffling_loader_repeats_after_manual_seed() -> None:
    mta.manual_seed(7)
    first = _first_epoch(DataLoader(_dataset(), batch_size=4, shuffle=True))
    mta.manual_seed(7)
    again = _first_epoch(DataLoader(_dataset(), batch_size=4, shuffle=True))
    assert first == again
    assert sorted(first) == list(range(20)) and first != list(range(20))


def test_two_loaders_made_in_a_row_shuffle_differently() -> None:
    mta.manual_seed(7)
    a = _first_epoch(DataLoader(_dataset(), batch_size=4, shuffle=True))
    b = _first_epoch(DataLoader(_dataset(), batch_size=4, shuffle=True))
    assert a != b  # each drew its own seed from the host generator


def test_an_explicit_seed_ignores_the_global_generator() -> None:
    mta.manual_seed(1)
    a = _first_epoch(DataLoader(_dataset(), batch_size=4, shuffle=True, seed=5))
    mta.manual_seed(2)
    b = _first_epoch(DataLoader(_dataset(), batch_size=4, shuffle=True, seed=5))
    assert a == b


def test_random_split_repeats_after_manual_seed() -> None:
    mta.manual_seed(3)
    first = [list(s.indices) for s in random_split(_dataset(), [15, 5])]
    mta.manual_seed(3)
    again = [list(s.indices) for s in random_split(_dataset(), [15, 5])]
    assert first == again
