"""linalg.inv: values against NumPy, first and second derivatives, batches, errors."""

from __future__ import annotations

import numpy as np
import pytest
from support.helpers import check_op

import minitorch_accel as mta


def well_conditioned(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Random matrices plus 3 I: diagonally dominant, so invertible and well conditioned."""
    rng = np.random.default_rng(seed)
    n = shape[-1]
    return rng.uniform(-1, 1, shape) + 3 * np.eye(n)


@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 4, 4)])
def test_inv_values_and_gradients(device: str, shape: tuple[int, ...]) -> None:
    check_op(mta.linalg.inv, np.linalg.inv, [], device, arrays=[well_conditioned(shape)], atol=1e-5)


def test_inv_times_matrix_is_identity() -> None:
    a = mta.tensor(well_conditioned((5, 5), seed=1))
    np.testing.assert_allclose((a @ mta.linalg.inv(a)).numpy(), np.eye(5), atol=1e-12)


def test_inv_gradient_matches_the_closed_form() -> None:
    # d sum(W * inv(A)) / dA = -inv(A)^T W inv(A)^T, written out in NumPy.
    a_np, w_np = well_conditioned((4, 4), seed=2), np.random.default_rng(3).normal(size=(4, 4))
    a = mta.tensor(a_np, requires_grad=True)
    (mta.linalg.inv(a) * mta.tensor(w_np)).sum().backward()
    y = np.linalg.inv(a_np)
    np.testing.assert_allclose(a.grad.numpy(), -y.T @ w_np @ y.T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "value, error, message",
    [
        (np.ones(3), ValueError, r"square matrix .* got shape \(3,\)"),
        (np.ones((2, 3)), ValueError, r"got shape \(2, 3\)"),
        (np.ones((2, 2), dtype=np.int64), TypeError, "float32 or float64, got int64"),
        (np.ones((2, 2)), np.linalg.LinAlgError, "singular"),
    ],
)
def test_inv_bad_input_is_named(value: np.ndarray, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        mta.linalg.inv(mta.tensor(value))
