"""Matrix multiplication: 2-D, batched, broadcast batch dims and 1-D operands."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from support.helpers import check_op

import minitorch_accel as mta

MATMUL_SHAPES = [
    ((3, 4), (4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((3, 4), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((4,), (4,)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 4, 5)),
    ((1, 4), (4, 1)),
]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul(shapes: Any, device: str) -> None:
    check_op(lambda a, b: a @ b, np.matmul, shapes, device)


@pytest.mark.parametrize("shapes", [((3, 4), (4, 2)), ((4,), (4,))], ids=str)
def test_matmul_function_and_method(shapes: Any, device: str) -> None:
    check_op(mta.matmul, np.matmul, shapes, device, gradgrad=False)
    check_op(lambda a, b: a.matmul(b), np.matmul, shapes, device, grad=False)


def test_vector_dot_is_a_scalar() -> None:
    a = mta.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = a @ mta.tensor([4.0, 5.0, 6.0])
    assert out.shape == ()
    assert out.item() == 32.0
    out.backward()
    assert a.grad is not None
    assert a.grad.tolist() == [4.0, 5.0, 6.0]


def test_matmul_of_ints_stays_int() -> None:
    out = mta.tensor([[1, 2], [3, 4]]) @ mta.tensor([[1], [1]])
    assert out.dtype == np.int64
    assert out.tolist() == [[3], [7]]


def test_broadcast_batch_gradient_is_summed(rng: Any) -> None:
    a_np = rng.standard_normal((3, 2, 4))
    w_np = rng.standard_normal((4, 5))
    a = mta.tensor(a_np)
    w = mta.tensor(w_np, requires_grad=True)
    (a @ w).sum().backward()
    assert w.grad is not None
    expected = np.einsum("bik,bij->kj", a_np, np.ones((3, 2, 5)))
    np.testing.assert_allclose(np.asarray(w.grad), expected, rtol=1e-12)


def test_matmul_matches_torch(rng: Any) -> None:
    torch = pytest.importorskip("torch")
    a_np = rng.standard_normal((2, 1, 3, 4)).astype(np.float32)
    b_np = rng.standard_normal((5, 4, 2)).astype(np.float32)
    a, b = mta.tensor(a_np, requires_grad=True), mta.tensor(b_np, requires_grad=True)
    ta, tb = torch.tensor(a_np, requires_grad=True), torch.tensor(b_np, requires_grad=True)
    (a @ b).tanh().sum().backward()
    (ta @ tb).tanh().sum().backward()
    assert a.grad is not None and b.grad is not None
    np.testing.assert_allclose(np.asarray(a.grad), ta.grad.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(np.asarray(b.grad), tb.grad.numpy(), rtol=1e-4, atol=1e-6)
