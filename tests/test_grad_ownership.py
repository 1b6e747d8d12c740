"""Leaf gradients taken without a copy from ops that promise fresh arrays
(``Function.fresh_grads``), and the cases where sharing would corrupt them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn
from minitorch_accel.backends import Device

RNG = np.random.default_rng(0)


@pytest.fixture
def clones(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every array the CPU backend copies for a leaf gradient."""
    made: list[Any] = []
    backend = Device("cpu").backend
    original = backend.clone

    def counting(array: Any) -> Any:
        made.append(array)
        return original(array)

    monkeypatch.setattr(backend, "clone", counting)
    return made


def test_linear_and_conv_gradients_are_not_copied(clones: list[Any]) -> None:
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8, 3))
    model(mta.tensor(RNG.random((2, 1, 4, 4)), dtype="float32")).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    assert clones == []  # four parameters, no copy
    w = mta.ones(3, requires_grad=True)
    (w * 2).sum().backward()  # an ordinary op: its gradient is copied
    assert len(clones) == 1


def test_a_weight_used_twice_accumulates_both_uses() -> None:
    # float64, so that the comparison does not depend on the summation order of float32
    # (an element of the gradient may be a small sum of large terms)
    layer = nn.Linear(3, 3).double()
    assert layer.bias is not None
    x = mta.tensor(RNG.standard_normal((4, 3)), dtype="float64")
    layer(layer(x)).sum().backward()
    w, b, xv = layer.weight.detach().numpy(), layer.bias.detach().numpy(), x.numpy()
    h = xv @ w.T + b
    ones = np.ones((4, 3))
    expected_w = ones.T @ h + (ones @ w).T @ xv  # outer use + inner use
    assert layer.weight.grad is not None and layer.bias.grad is not None
    np.testing.assert_allclose(layer.weight.grad.numpy(), expected_w, rtol=1e-10)
    np.testing.assert_allclose(layer.bias.grad.numpy(), 4 + (ones @ w).sum(0), rtol=1e-10)


def test_gradients_accumulate_over_backwards_and_survive_buffer_reuse() -> None:
    conv = nn.Conv2d(3, 4, 3, padding=1)
    x = mta.tensor(RNG.standard_normal((2, 3, 16, 16)), dtype="float32", requires_grad=True)
    conv(x).sum().backward()
    first = (x.grad.numpy().copy(), conv.weight.grad.numpy().copy())  # type: ignore[union-attr]
    for _ in range(2):  # the same buffers are handed out again by the cache
        conv(x).sum().backward()
    assert x.grad is not None and conv.weight.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), 3 * first[0], rtol=1e-5)
    np.testing.assert_allclose(conv.weight.grad.numpy(), 3 * first[1], rtol=1e-5)


def test_create_graph_keeps_its_graph() -> None:
    layer = nn.Linear(2, 1)
    x = mta.tensor(RNG.standard_normal((3, 2)), dtype="float32")
    (layer(x) ** 2).sum().backward(create_graph=True)
    assert layer.weight.grad is not None and layer.weight.grad.requires_grad


class SameGradientTwice(mta.autograd.Function):
    """``a + b`` whose backward hands the same fresh array to both inputs."""

    fresh_grads = True

    def forward(self, a: Any, b: Any) -> Any:
        return a + b

    def backward(self, grad: mta.Tensor) -> tuple[mta.Tensor, mta.Tensor]:
        g = grad * 1.0  # a new array...
        return g, g  # ...given twice


def test_one_array_is_given_to_one_leaf_only() -> None:
    a, b = mta.ones(3, requires_grad=True), mta.ones(3, requires_grad=True)
    SameGradientTwice.apply(a, b).sum().backward()
    assert a.grad is not None and b.grad is not None
    assert not np.shares_memory(a.grad.array, b.grad.array)
    a.grad.array += 1  # the other leaf's gradient does not follow
    np.testing.assert_array_equal(b.grad.numpy(), np.ones(3))
