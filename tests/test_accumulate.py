"""Gradient accumulation, ``fit(..., FitConfig(..., accumulate=k))``: the same training as
the whole batch, with the activation memory of one micro-batch."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import memory, nn, optim
from minitorch_accel.data import DataLoader, TensorDataset
from minitorch_accel.train import FitConfig, fit


def _train(accumulate: int, device: str = "cpu") -> tuple[list[np.ndarray], list[float]]:
    rng = np.random.default_rng(5)
    ds = TensorDataset(rng.standard_normal((96, 12)), rng.integers(0, 4, 96))
    loader = DataLoader(ds, batch_size=32, shuffle=True, seed=2)
    mta.manual_seed(4)
    model = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 4)).to(dtype=np.float64)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    config = FitConfig(epochs=2, device=device, progress=False, accumulate=accumulate)
    history = fit(model, loader, opt, nn.CrossEntropyLoss(), config)
    return [np.array(p.array) for p in model.parameters()], list(history.train_loss)


@pytest.mark.parametrize("accumulate", [2, 5, 32])
def test_accumulation_equals_the_whole_batch(accumulate: int) -> None:
    whole, whole_loss = _train(1)
    parts, parts_loss = _train(accumulate)
    for a, b in zip(whole, parts, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(parts_loss, whole_loss, rtol=1e-10)


def test_accumulate_is_checked() -> None:
    with pytest.raises(ValueError, match="accumulate must be an integer >= 1, got 0"):
        _train(0)


def test_accumulation_lowers_the_peak_memory() -> None:
    peaks = {}
    for k in (1, 4):
        device = f"cpu:{11 + k}"
        with memory.tracking():
            memory.reset_peak_memory_stats(device)
            _train(k, device)
            peaks[k] = memory.max_memory_allocated(device)
    assert peaks[4] < peaks[1]
