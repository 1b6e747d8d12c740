"""``inplace=True`` of the activation and dropout layers, and ``relu_``/``sigmoid_``/
``tanh_``: PyTorch's values, autograd's in-place rules, and reprs."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from support.helpers import DEVICES, to_host

import minitorch_accel as mta
import minitorch_accel.nn.functional as F
from minitorch_accel import nn

# name -> (layer factory taking inplace, NumPy reference of its forward)
LAYERS: dict[str, tuple[Callable[[bool], nn.Module], Callable[[np.ndarray], np.ndarray]]] = {
    "ReLU": (lambda inplace: nn.ReLU(inplace=inplace), lambda x: np.maximum(x, 0)),
    "LeakyReLU": (
        lambda inplace: nn.LeakyReLU(0.1, inplace=inplace),
        lambda x: np.where(x > 0, x, 0.1 * x),
    ),
    "ELU": (
        lambda inplace: nn.ELU(0.5, inplace=inplace),
        lambda x: np.where(x > 0, x, 0.5 * np.expm1(np.minimum(x, 0))),
    ),
    "SiLU": (lambda inplace: nn.SiLU(inplace=inplace), lambda x: x / (1 + np.exp(-x))),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", [*LAYERS, "Dropout"])
def test_an_inplace_layer_changes_its_input_and_gives_the_same_values_and_gradients(
    name: str, device: str
) -> None:
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((4, 5))
    make = (lambda inplace: nn.Dropout(0.5, inplace=inplace)) if name == "Dropout" else None
    make = make or LAYERS[name][0]
    results = []
    for inplace in (False, True):
        mta.manual_seed(3)  # the same dropout mask both times
        x = mta.tensor(x_np, device=device, requires_grad=True)
        hidden = x * 2.0  # not a leaf: in place is allowed
        out = make(inplace)(hidden)
        assert (out is hidden) == inplace
        (out * out).sum().backward()
        assert x.grad is not None
        results.append((to_host(out), to_host(x.grad)))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12, atol=0)
    if name != "Dropout":
        np.testing.assert_allclose(results[1][0], LAYERS[name][1](2.0 * x_np), rtol=1e-12)


@pytest.mark.parametrize("fn", [F.relu, F.silu, F.elu, F.leaky_relu, F.dropout])
def test_in_place_on_a_leaf_that_requires_grad_raises_pytorchs_error(fn: Callable) -> None:
    w = mta.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        fn(w, inplace=True)
    with mta.no_grad():  # allowed there, as in PyTorch
        assert F.relu(w, inplace=True) is w
    assert bool((w >= 0).all())


def test_a_value_saved_for_backward_then_changed_in_place_is_caught() -> None:
    x = mta.tensor([-1.0, 2.0], dtype=mta.float64, requires_grad=True)
    h = x * 1.0
    y = (h * h).sum()  # saves h
    F.relu(h, inplace=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_tensor_in_place_activations() -> None:
    values = np.array([-2.0, -0.5, 0.0, 1.5])
    for method, reference in (
        ("relu_", np.maximum(values, 0)),
        ("sigmoid_", 1 / (1 + np.exp(-values))),
        ("tanh_", np.tanh(values)),
    ):
        t = mta.tensor(values, dtype=mta.float64)
        assert getattr(t, method)() is t
        np.testing.assert_allclose(t.numpy(), reference, rtol=1e-15)


def test_reprs_match_pytorch() -> None:
    torch = pytest.importorskip("torch")
    pairs = [
        (nn.ReLU(), torch.nn.ReLU()),
        (nn.ReLU(inplace=True), torch.nn.ReLU(inplace=True)),
        (nn.LeakyReLU(0.2, inplace=True), torch.nn.LeakyReLU(0.2, inplace=True)),
        (nn.ELU(), torch.nn.ELU()),
        (nn.SiLU(inplace=True), torch.nn.SiLU(inplace=True)),
        (nn.Dropout(0.25), torch.nn.Dropout(0.25)),
    ]
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)


def test_a_first_inplace_relu_before_pooling_changes_the_input_as_written() -> None:
    x = mta.tensor(np.random.default_rng(0).standard_normal((1, 1, 4, 4)))
    before = x.numpy().copy()
    first = nn.Sequential(nn.ReLU(inplace=True), nn.MaxPool2d(2))
    assert not first.runs_pool_first(0)
    y = first(x)
    np.testing.assert_array_equal(x.numpy(), np.maximum(before, 0))  # changed in place
    later = nn.Sequential(nn.Identity(), nn.ReLU(inplace=True), nn.MaxPool2d(2))
    assert later.runs_pool_first(1)
    np.testing.assert_array_equal(to_host(later(mta.tensor(before))), to_host(y))


@pytest.mark.parametrize("method", ["masked_fill_", "scatter_", "clamp_", "relu_"])
def test_in_place_methods_on_a_recorded_tensor_give_the_out_of_place_gradient(
    method: str,
) -> None:
    """masked_fill and scatter keep their input for backward: the in-place forms must
    not change what they saved (PyTorch runs these without error)."""
    x_np = np.array([-1.0, 0.5, 2.0])
    calls: dict[str, Callable[[mta.Tensor], mta.Tensor]] = {
        "masked_fill_": lambda h: h.masked_fill_(mta.tensor([True, False, False]), 3.0),
        "scatter_": lambda h: h.scatter_(0, mta.tensor([0]), mta.tensor([5.0], dtype=mta.float64)),
        "clamp_": lambda h: h.clamp_(0.0, 4.0),
        "relu_": lambda h: h.relu_(),
    }
    x = mta.tensor(x_np, dtype=mta.float64, requires_grad=True)
    h = x * 3.0
    assert calls[method](h) is h
    (h * h).sum().backward()
    assert x.grad is not None
    # d/dx (f(3x))^2 = 2 f(3x) f'(3x) 3, f' 0 where the op replaced or clipped the value
    kept = {
        "masked_fill_": np.array([0.0, 1, 1]),
        "scatter_": np.array([0.0, 1, 1]),
        "clamp_": ((3 * x_np > 0) & (3 * x_np < 4)).astype(float),
        "relu_": (x_np > 0).astype(float),
    }[method]
    np.testing.assert_allclose(x.grad.numpy(), 18.0 * x_np * kept, rtol=1e-15)
