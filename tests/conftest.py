"""Fixtures shared by the test suite (see ``helpers.py`` for the op-checking helpers)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DEVICES

import minitorch_accel as mta


@pytest.fixture
def rng() -> np.random.Generator:
    """A NumPy generator with a fixed seed, fresh for every test."""
    return np.random.default_rng(1234)


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> str:
    """Each device name in turn: ``"cpu"``, ``"cpu:1"``, and ``"cuda"`` when there is one
    (skipped, saying why, otherwise)."""
    return str(request.param)


@pytest.fixture
def transfers() -> mta.backends.TransferStats:
    """The global transfer counters, reset before the test."""
    mta.backends.transfer_stats.reset()
    return mta.backends.transfer_stats
