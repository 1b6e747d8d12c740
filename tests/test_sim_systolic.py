"""The systolic-array simulator: its result is A @ B, its cycle count the closed form."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minitorch_accel.sim import SystolicArray, cycle_count, systolic_matmul, utilisation
from minitorch_accel.sim.systolic import IDLE

dims = st.integers(min_value=1, max_value=13)


@settings(max_examples=60, deadline=None)
@given(m=dims, k=dims, n=dims, size=st.integers(min_value=1, max_value=6), seed=st.integers(0, 99))
def test_integer_product_is_exact_and_cycles_match_the_closed_form(
    m: int, k: int, n: int, size: int, seed: int
) -> None:
    # Integers: every sum is exact, whatever the order, so == against NumPy's matmul.
    rng = np.random.default_rng(seed)
    a = rng.integers(-9, 10, (m, k))
    b = rng.integers(-9, 10, (k, n))
    run = systolic_matmul(a, b, size=size)
    np.testing.assert_array_equal(run.output, a @ b)
    assert run.output.dtype == (a @ b).dtype
    assert run.cycles == cycle_count(m, k, n, size)
    assert run.macs == m * k * n
    assert run.utilisation == pytest.approx(utilisation(m, k, n, size))
    assert 0 < run.utilisation <= 1


@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 16, 9), (33, 8, 8), (5, 17, 3)])
def test_float_product_matches_numpy(shape: tuple[int, int, int]) -> None:
    m, k, n = shape
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    np.testing.assert_allclose(systolic_matmul(a, b, size=8).output, a @ b, rtol=1e-12, atol=1e-12)


def test_closed_form_by_hand() -> None:
    # One 4x4 tile: 4 cycles to load the weights, then m + 2*4 - 2 to stream.
    assert cycle_count(m=10, k=4, n=4, size=4) == 4 + 10 + 6
    # k = 5 needs two tiles over k, n = 9 three over n: six tiles.
    assert cycle_count(m=10, k=5, n=9, size=4) == 6 * 20


def test_padding_and_batch_change_the_utilisation() -> None:
    # A multiple of the array size wastes nothing; one more column doubles the tiles.
    full = utilisation(m=1024, k=128, n=128, size=128)
    padded = utilisation(m=1024, k=129, n=128, size=128)
    assert padded < 0.51 * full
    # A small batch leaves the array mostly filling and draining.
    assert utilisation(m=8, k=128, n=128, size=128) < 0.03
    assert full > 0.7  # 1024 / (128 + 1024 + 254)


def test_wavefront_moves_one_pe_per_cycle() -> None:
    run = systolic_matmul(np.ones((3, 4)), np.ones((4, 4)), size=4, record=True)
    assert len(run.wavefront) == 3 + 2 * 4 - 2
    for t, rows in enumerate(run.wavefront):
        for i in range(4):
            for j in range(4):
                r = t - i - j  # row of A at PE (i, j) at cycle t
                assert rows[i, j] == (r if 0 <= r < 3 else IDLE)


def test_weights_end_where_they_belong() -> None:
    array = SystolicArray(3)
    tile = np.arange(9).reshape(3, 3)
    assert array.load_weights(tile) == 3
    np.testing.assert_array_equal(array.weights, tile)


@pytest.mark.parametrize(
    "a, b, message",
    [
        (np.ones(3), np.ones((3, 2)), "must be 2-D"),
        (np.ones((2, 3)), np.ones((4, 2)), "inner dimensions differ"),
        (np.ones((0, 3)), np.ones((3, 2)), "empty operand"),
    ],
)
def test_bad_operands_are_named(a: np.ndarray, b: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        systolic_matmul(a, b, size=2)


def test_bad_sizes_are_named() -> None:
    with pytest.raises(ValueError, match="size must be at least 1"):
        SystolicArray(0)
    with pytest.raises(ValueError, match="must be 2x2"):
        SystolicArray(2).load_weights(np.ones((3, 3)))
    with pytest.raises(ValueError, match="k must be at least 1"):
        cycle_count(4, 0, 4, 2)
