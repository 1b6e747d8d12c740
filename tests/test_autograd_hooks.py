"""The graph as PyTorch shows it: grad_fn.name() and next_functions, tensor hooks,
retain_grad, requires_grad_, is_leaf, and detect_anomaly."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.core.function import AccumulateGrad


def test_grad_fn_names_and_next_functions() -> None:
    w = mta.tensor([1.0, 2.0], requires_grad=True)
    x = mta.tensor([3.0, 4.0])
    y = w * x
    loss = y.sum()
    assert loss.grad_fn is not None and loss.grad_fn.name() == "SumBackward"
    ((mul, index),) = loss.grad_fn.next_functions
    assert mul is y.grad_fn and index == 0 and mul.name() == "MulBackward"
    (leaf, _), (constant, _) = mul.next_functions
    assert isinstance(leaf, AccumulateGrad) and leaf.variable is w
    assert leaf.name() == "AccumulateGrad" and leaf.next_functions == ()
    assert constant is None
    loss.backward()  # the graph's shape survives the freeing of saved values
    assert loss.grad_fn.next_functions[0][0] is mul
    assert isinstance(mul.next_functions[0][0], AccumulateGrad)


def test_walking_the_graph_like_the_tutorial() -> None:
    torch = pytest.importorskip("torch")
    names = {}
    for label, lib in (("torch", torch), ("mta", mta)):
        x = lib.ones(2, requires_grad=True)
        out = ((x * 2).exp() + 1).sum()
        chain, node = [], out.grad_fn
        while node is not None:
            chain.append(node.name().removeprefix("torch::autograd::").rstrip("0"))
            node = node.next_functions[0][0] if node.next_functions else None
        names[label] = chain
    assert names["mta"] == names["torch"]


def test_is_leaf_and_requires_grad_() -> None:
    a = mta.ones(2)
    assert a.is_leaf and not a.requires_grad
    assert a.requires_grad_() is a and a.requires_grad and a.is_leaf
    b = a * 2
    assert not b.is_leaf and b.grad_fn is not None
    with pytest.raises(RuntimeError, match="leaf"):
        b.requires_grad_(False)
    with pytest.raises(RuntimeError, match="floating-point"):
        mta.tensor([1, 2]).requires_grad_()


def test_retain_grad_keeps_a_non_leaf_gradient_and_accumulates() -> None:
    x = mta.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert not y.retains_grad
    y.retain_grad()
    assert y.retains_grad
    z = (y * y).sum()
    z.backward(retain_graph=True)
    assert y.grad is not None and y.grad.tolist() == [4.0, 8.0]
    z.backward()
    assert y.grad.tolist() == [8.0, 16.0]
    w = x * 3  # without retain_grad no gradient is kept
    w.sum().backward()
    assert w.grad is None


def test_hook_replaces_the_gradient_of_a_leaf_and_a_non_leaf() -> None:
    x = mta.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))  # returns None: observe only
    y = x * 3
    y.register_hook(lambda g: g * 10)  # flows on to x
    (y * x).sum().backward()  # d/dx (3x * x) = 6x, of which y's path (3x) is scaled by 10
    # y's gradient is x; the hook makes it 10x, times 3 -> 30x; the direct path adds 3x
    assert seen == [[33.0, 66.0]]  # the leaf hook sees the summed gradient once
    assert x.grad is not None and x.grad.tolist() == [33.0, 66.0]


def test_hook_removal_and_bad_hooks() -> None:
    x = mta.tensor([1.0], requires_grad=True)
    handle = x.register_hook(lambda g: g * 100)
    handle.remove()
    (x * 2).sum().backward()
    assert x.grad is not None and x.grad.tolist() == [2.0]
    x.register_hook(lambda g: mta.ones(3))
    with pytest.raises(RuntimeError, match="hook returned a gradient of shape"):
        (x * 2).sum().backward()
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        mta.ones(1).register_hook(lambda g: g)


def test_hooks_and_retain_grad_match_pytorch() -> None:
    torch = pytest.importorskip("torch")
    found = {}
    for label, lib in (("torch", torch), ("mta", mta)):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        h = x.tanh()
        h.retain_grad()
        h.register_hook(lambda g: g * 2)
        x.register_hook(lambda g: g + 1)
        out = (h * h * x).sum()
        out.backward()
        found[label] = (x.grad.tolist(), h.grad.tolist())
    np.testing.assert_allclose(found["mta"][0], found["torch"][0], rtol=1e-12)
    np.testing.assert_allclose(found["mta"][1], found["torch"][1], rtol=1e-12)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_detect_anomaly_names_the_forward_op() -> None:
    x = mta.tensor([0.0, 1.0], requires_grad=True)
    with mta.autograd.detect_anomaly():
        y = x.sqrt()  # the gradient of sqrt at 0 is inf
        loss = (y * 2).sum()
        with pytest.raises(RuntimeError, match="SqrtBackward") as info:
            loss.backward()
    message = str(info.value)
    assert "forward op Sqrt" in message and "test_autograd_hooks.py" in message
    assert x.grad is None
    assert not mta.autograd.is_anomaly_enabled()
    y = x.sqrt()  # without detection the inf goes through
    y.sum().backward()
    assert x.grad is not None and np.isinf(x.grad.numpy()[0])


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_set_detect_anomaly_as_a_call_and_a_context() -> None:
    mta.autograd.set_detect_anomaly(True)
    try:
        assert mta.autograd.is_anomaly_enabled()
        with mta.autograd.set_detect_anomaly(False):
            assert not mta.autograd.is_anomaly_enabled()
        assert mta.autograd.is_anomaly_enabled()
        x = mta.tensor([0.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="'LogBackward' returned nan or inf"):
            x.log().sum().backward()  # 1 / 0
    finally:
        mta.autograd.set_detect_anomaly(False)
    assert not mta.autograd.is_anomaly_enabled()


def test_data_is_a_detached_tensor_sharing_storage() -> None:
    w = mta.tensor([1.0, 2.0], requires_grad=True)
    d = w.data
    assert isinstance(d, mta.Tensor) and not d.requires_grad and d.is_leaf
    assert np.shares_memory(d.array, w.array)
    d.sub_(1.0)
    assert w.tolist() == [0.0, 1.0] and w.requires_grad
    assert float((w.data * w.data).sum()) == 1.0
    w.data = mta.tensor([7.0, 8.0, 9.0])  # may change the shape, as in PyTorch
    assert w.shape == (3,) and w.tolist() == [7.0, 8.0, 9.0] and w.requires_grad
    with pytest.raises(TypeError, match=r"assign to \.array"):
        w.data = np.zeros(3)  # type: ignore[assignment]


def test_autograd_grad_runs_a_leaf_hook_like_pytorch() -> None:
    torch = pytest.importorskip("torch")
    found = {}
    for label, lib in (("torch", torch), ("mta", mta)):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        x.register_hook(lambda g: g * 3)
        (g,) = lib.autograd.grad((x * x).sum(), x)
        found[label] = (g.tolist(), x.grad)
    assert found["mta"] == found["torch"] == ([6.0, 12.0], None)
