"""Fixtures shared by the test suite (``support/`` holds the op helpers and test doubles)."""

from __future__ import annotations

import numpy as np
import pytest
from support.helpers import DEVICES, cuda_available

import minitorch_accel as mta


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The one GPU rule: a test marked ``gpu`` is skipped, saying why, without CuPy and a
    CUDA GPU. (``pytest -m gpu`` selects them on a machine that has one.)"""
    if cuda_available():
        return
    skip = pytest.mark.skip(reason="needs CuPy and a CUDA GPU")
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)


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
