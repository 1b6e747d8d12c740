"""The autograd engine: graph shapes, accumulation, retain_graph, grad modes, higher
order derivatives and in-place safety."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.utils.gradcheck import gradcheck


def grad_of(t: Tensor) -> np.ndarray:
    assert t.grad is not None, "no gradient was accumulated"
    return np.asarray(t.grad.detach())


# ------------------------------------------------------------------ graph shapes
def test_tensor_used_twice() -> None:
    x = mta.tensor([1.0, -2.0, 3.0], requires_grad=True)
    (x * x + x).sum().backward()
    np.testing.assert_allclose(grad_of(x), 2 * np.array([1.0, -2.0, 3.0]) + 1)


def test_diamond_graph() -> None:
    x_np = np.array([0.3, -0.7])
    x = mta.tensor(x_np, requires_grad=True)
    a = x * 2.0
    left, right = a.tanh(), a * a
    (left * right).sum().backward()
    # d/dx [tanh(2x) * 4x^2] = 2 (1 - tanh^2(2x)) 4x^2 + tanh(2x) 8x
    t = np.tanh(2 * x_np)
    np.testing.assert_allclose(grad_of(x), 2 * (1 - t**2) * 4 * x_np**2 + t * 8 * x_np)


def test_ten_thousand_op_chain_has_no_recursion_error() -> None:
    x = mta.tensor([1.0, 2.0], dtype=np.float64, requires_grad=True)
    h = x
    for _ in range(10_000):
        h = h * 1.0001
    h.sum().backward()
    np.testing.assert_allclose(grad_of(x), [1.0001**10_000] * 2, rtol=1e-9)
    # a long graph that is never run backward is freed without recursion either
    g = x
    for _ in range(10_000):
        g = g + 1.0
    del g
    gc.collect()


def test_gradient_is_summed_back_to_broadcast_input_shape() -> None:
    x = mta.ones(3, 1, requires_grad=True)
    y = mta.ones(1, 4, requires_grad=True)
    (x * y * 2.0).sum().backward()
    np.testing.assert_array_equal(grad_of(x), np.full((3, 1), 8.0))
    np.testing.assert_array_equal(grad_of(y), np.full((1, 4), 6.0))


def test_leaf_gradient_keeps_the_leaf_dtype() -> None:
    x = mta.tensor([1.0, 2.0], requires_grad=True)
    (x.double() * mta.tensor(np.array([3.0, 4.0]))).sum().backward()
    assert x.grad is not None and x.grad.dtype == np.float32
    np.testing.assert_array_equal(grad_of(x), [3.0, 4.0])


def test_constant_branch_gets_no_gradient() -> None:
    x = mta.tensor([1.0, 2.0], requires_grad=True)
    c = mta.tensor([5.0, 6.0])
    (x * c).sum().backward()
    assert c.grad is None
    assert not c.requires_grad


# ------------------------------------------------------------------ accumulation, retain_graph
def test_gradients_accumulate_across_backward_calls() -> None:
    x = mta.tensor([1.0, 2.0], requires_grad=True)
    (x * 3.0).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_array_equal(grad_of(x), [3.0 + 2.0, 3.0 + 4.0])


def test_second_backward_without_retain_graph_raises() -> None:
    x = mta.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * 2.0).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_a_second_backward_that_doubles_grads() -> None:
    x_np = np.array([0.5, -1.0])
    x = mta.tensor(x_np, requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    first = grad_of(x).copy()
    np.testing.assert_allclose(first, np.exp(x_np) * (1 + x_np), rtol=1e-6)
    y.backward()
    np.testing.assert_allclose(grad_of(x), 2 * first, rtol=1e-6)


def test_backward_frees_intermediate_tensors() -> None:
    x = mta.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2.0
    ref = weakref.ref(h)
    y = (h * 3.0).sum()
    del h
    assert ref() is not None  # the graph keeps it for backward
    y.backward()
    assert ref() is None  # ... and lets it go afterwards


# ------------------------------------------------------------------ grad modes
def test_no_grad_context_manager() -> None:
    x = mta.ones(2, requires_grad=True)
    with mta.no_grad():
        assert not mta.is_grad_enabled()
        y = x * 2
        with mta.enable_grad():
            z = x * 2
    assert mta.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn is not None


def test_no_grad_decorator_and_set_grad_enabled() -> None:
    x = mta.ones(2, requires_grad=True)

    @mta.no_grad()
    def double(t: Tensor) -> Tensor:
        return t * 2

    assert not double(x).requires_grad
    assert mta.is_grad_enabled()
    with mta.set_grad_enabled(False):
        assert not (x + 1).requires_grad
    assert (x + 1).requires_grad


def test_no_grad_is_thread_local() -> None:
    x = mta.ones(2, requires_grad=True)
    entered, done = threading.Event(), threading.Event()
    seen: dict[str, Any] = {}

    def other_thread() -> None:
        entered.wait(timeout=10)
        seen["enabled"] = mta.is_grad_enabled()
        seen["records"] = (x * 2).requires_grad
        done.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with mta.no_grad():
        entered.set()
        assert done.wait(timeout=10)
        assert not (x * 2).requires_grad
    thread.join()
    assert seen == {"enabled": True, "records": True}


def test_detach_cuts_the_graph_and_shares_memory() -> None:
    x = mta.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    assert np.shares_memory(d.array, y.array)
    (y * d).sum().backward()  # d is a constant: d(y * d)/dx = 3 d
    np.testing.assert_array_equal(grad_of(x), 3.0 * np.array([3.0, 6.0]))


def test_non_scalar_backward_needs_gradient() -> None:
    x = mta.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    with pytest.raises(RuntimeError, match=r"only for scalar outputs.*shape \(2,\)"):
        y.backward()
    with pytest.raises(ValueError, match=r"gradient has shape \(3,\).*output has shape \(2,\)"):
        y.backward(mta.ones(3))
    y.backward(mta.tensor([1.0, 10.0]))
    np.testing.assert_array_equal(grad_of(x), [2.0, 20.0])


def test_backward_of_a_tensor_without_graph_raises() -> None:
    with pytest.raises(RuntimeError, match="does not require grad"):
        mta.ones(1).backward()


# ------------------------------------------------------------------ higher order
def test_hessian_vector_product() -> None:
    x_np = np.array([0.5, -1.2, 2.0])
    v_np = np.array([1.0, 0.3, -0.7])
    x = mta.tensor(x_np, requires_grad=True)
    f = (x**3).sum() + x[0] * x[1] * x[2]
    (g,) = mta.grad(f, x, create_graph=True)
    assert g.requires_grad
    np.testing.assert_allclose(
        np.asarray(g.detach()),
        3 * x_np**2 + np.array([x_np[1] * x_np[2], x_np[0] * x_np[2], x_np[0] * x_np[1]]),
        rtol=1e-6,
    )
    (hv,) = mta.grad((g * mta.tensor(v_np)).sum(), x)
    a, b, c = x_np
    hessian = np.diag(6 * x_np) + np.array([[0, c, b], [c, 0, a], [b, a, 0]])
    np.testing.assert_allclose(np.asarray(hv), hessian @ v_np, rtol=1e-6)
    assert x.grad is None  # grad() leaves .grad alone


def test_backward_with_create_graph_records_the_gradient() -> None:
    x = mta.tensor([1.0, 3.0], dtype=np.float64, requires_grad=True)
    (x**3).sum().backward(create_graph=True)
    assert x.grad is not None and x.grad.requires_grad
    first = x.grad
    x.grad = None
    first.sum().backward()  # d/dx sum(3x^2) = 6x
    np.testing.assert_allclose(grad_of(x), [6.0, 18.0])


def gradient_penalty(x: Tensor, w: Tensor) -> Tensor:
    out = (x @ w).tanh().sum()
    (gx,) = mta.grad(out, x, create_graph=True)
    return (gx * gx).sum()


def test_gradient_penalty_matches_finite_differences(rng: Any) -> None:
    x = mta.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    w = mta.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    assert gradcheck(lambda w_: gradient_penalty(x, w_), [w])
    assert gradcheck(lambda x_: gradient_penalty(x_, w), [x])


def test_gradient_penalty_matches_torch(rng: Any) -> None:
    torch = pytest.importorskip("torch")
    x_np, w_np = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    x, w = mta.tensor(x_np, requires_grad=True), mta.tensor(w_np, requires_grad=True)
    gradient_penalty(x, w).backward()
    tx = torch.tensor(x_np, requires_grad=True)
    tw = torch.tensor(w_np, requires_grad=True)
    (gx,) = torch.autograd.grad((tx @ tw).tanh().sum(), tx, create_graph=True)
    (gx * gx).sum().backward()
    np.testing.assert_allclose(grad_of(w), tw.grad.numpy(), rtol=1e-10)


def test_grad_options() -> None:
    x = mta.tensor([1.0, 2.0], requires_grad=True)
    unused = mta.tensor([5.0], requires_grad=True)
    y = (x * x).sum()
    with pytest.raises(RuntimeError, match="not used to compute the outputs"):
        mta.grad(y, [x, unused], retain_graph=True)
    gx, gu = mta.grad(y, [x, unused], allow_unused=True, retain_graph=True)
    assert gx is not None and gx.tolist() == [2.0, 4.0] and gu is None  # None, as PyTorch
    gx, gu = mta.grad(y, [x, unused], materialize_grads=True)
    assert gu is not None and gu.tolist() == [0.0]
    with pytest.raises(RuntimeError, match="an input does not require grad"):
        mta.grad((x * 2).sum(), mta.ones(1))


# ------------------------------------------------------------------ in-place safety
def test_inplace_on_requires_grad_refused_outside_no_grad() -> None:
    w = mta.tensor([1.0, 2.0], requires_grad=True)
    updates: list[Callable[[], Any]] = [
        lambda: w.add_(1.0),
        lambda: w.mul_(2.0),
        lambda: w.fill_(0.0),
        lambda: w.zero_(),
        lambda: w.copy_(mta.zeros(2)),
        lambda: w.__setitem__(0, 5.0),
    ]
    for update in updates:
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
            update()
    assert w.tolist() == [1.0, 2.0]


def test_inplace_allowed_inside_no_grad() -> None:
    w = mta.tensor([1.0, 2.0], requires_grad=True)
    with mta.no_grad():
        w.add_(mta.tensor([1.0, 1.0]), alpha=-0.5)
        w.mul_(2.0)
        w[1] = 10.0
    assert w.tolist() == [1.0, 10.0]
    assert w.requires_grad and w.is_leaf
    with mta.no_grad():
        w.copy_(mta.tensor([3.0, 4.0], device="cpu:1"))
        assert w.tolist() == [3.0, 4.0]
        w.zero_()
    assert w.tolist() == [0.0, 0.0]


def test_inplace_on_plain_tensors_is_always_allowed() -> None:
    t = mta.zeros(2)
    t.add_(1.0)
    t[0] = 3.0
    assert t.tolist() == [3.0, 1.0]


def test_requires_grad_off_only_on_leaves() -> None:
    y = mta.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="only be turned off on leaf tensors"):
        y.requires_grad_(False)


# ------------------------------------------------------------------ custom Function
class Cube(mta.Function):
    def forward(self, a: Any) -> Any:
        return a * a * a

    def backward(self, grad: Tensor) -> Tensor:
        (a,) = self.inputs
        return grad * 3.0 * a * a


def test_custom_function_first_and_second_order() -> None:
    x = mta.tensor([1.0, -2.0], dtype=np.float64, requires_grad=True)
    assert gradcheck(lambda t: Cube.apply(t), [x])
    y = Cube.apply(x)
    assert repr(y.grad_fn) == "<CubeBackward>"
    (g,) = mta.grad(y.sum(), x, create_graph=True)
    (h,) = mta.grad(g.sum(), x)
    np.testing.assert_allclose(np.asarray(h), [6.0, -12.0])


# ------------------------------------------------------------------ leaf gradients are owned
def test_leaf_gradient_is_writable() -> None:
    x = mta.ones(2, 3, requires_grad=True)
    x.sum().backward()
    with mta.no_grad():
        assert x.grad is not None
        x.grad.zero_()  # what zero_grad(set_to_none=False) does
    assert grad_of(x).tolist() == [[0.0] * 3] * 2


def test_leaf_gradients_do_not_alias() -> None:
    a = mta.tensor([1.0, 2.0], requires_grad=True)
    b = mta.tensor([3.0, 4.0], requires_grad=True)
    seed = mta.ones(2)
    (a + b).backward(seed)
    assert a.grad is not None and b.grad is not None
    assert not np.shares_memory(a.grad.array, b.grad.array)
    assert not np.shares_memory(a.grad.array, seed.array)
