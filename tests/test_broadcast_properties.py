"""Property tests: for random broadcast-compatible shapes, binary ops match NumPy, and the
gradient of each input has that input's shape and equals the NumPy sum of the broadcast
gradient over the broadcast dims."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import minitorch_accel as mta
from minitorch_accel.core.tensor import Tensor

Grads = tuple[np.ndarray, np.ndarray]
# (our op, NumPy forward, local gradients (g, a, b) -> (dL/da, dL/db) at full broadcast shape)
OPS: dict[str, tuple[Callable[..., Tensor], Callable[..., Any], Callable[..., Grads]]] = {
    "add": (lambda a, b: a + b, np.add, lambda g, a, b: (g, g)),
    "sub": (lambda a, b: a - b, np.subtract, lambda g, a, b: (g, -g)),
    "mul": (lambda a, b: a * b, np.multiply, lambda g, a, b: (g * b, g * a)),
    "div": (lambda a, b: a / b, np.divide, lambda g, a, b: (g / b, -g * a / b**2)),
    "maximum": (mta.maximum, np.maximum, lambda g, a, b: (g * (a > b), g * (a < b))),
    "minimum": (mta.minimum, np.minimum, lambda g, a, b: (g * (a < b), g * (a > b))),
    "pow": (
        lambda a, b: a**b,
        np.power,
        lambda g, a, b: (g * b * a ** (b - 1), g * a**b * np.log(a)),
    ),
}

SHAPES = mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4)
PROPERTY = settings(max_examples=60, deadline=None)


def unbroadcast(full: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a full-shape gradient back to ``shape``: the reference for the engine."""
    extra = full.ndim - len(shape)
    out = full.sum(axis=tuple(range(extra))) if extra else full
    dims = tuple(i for i, s in enumerate(shape) if s == 1 and out.shape[i] != 1)
    return out.sum(axis=dims, keepdims=True) if dims else out


def inputs(seed: int, shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> list[np.ndarray]:
    """Continuous random values (no ties); positive ``a`` and ``b`` away from 0 (div, pow)."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, shape_a)
    b = rng.uniform(0.5, 2.0, shape_b) * rng.choice([-1.0, 1.0], shape_b)
    return [a, b]


@PROPERTY
@given(shapes=SHAPES, op=st.sampled_from(sorted(OPS)), seed=st.integers(0, 2**31 - 1))
def test_binary_op_forward_and_gradients(shapes: Any, op: str, seed: int) -> None:
    (shape_a, shape_b), out_shape = shapes.input_shapes, shapes.result_shape
    ours, reference, local_grads = OPS[op]
    a_np, b_np = inputs(seed, shape_a, shape_b)
    if op == "pow":
        b_np = np.abs(b_np)  # keep a ** b smooth and finite
    a = mta.tensor(a_np, requires_grad=True)
    b = mta.tensor(b_np, requires_grad=True)

    out = ours(a, b)
    assert out.shape == out_shape
    np.testing.assert_allclose(np.asarray(out.detach()), reference(a_np, b_np), rtol=1e-12)

    g_np = np.random.default_rng(seed + 1).standard_normal(out_shape)
    out.backward(mta.tensor(g_np))
    full_a, full_b = local_grads(
        g_np, np.broadcast_to(a_np, out_shape), np.broadcast_to(b_np, out_shape)
    )
    for leaf, full in ((a, full_a), (b, full_b)):
        assert leaf.grad is not None
        assert leaf.grad.shape == leaf.shape and leaf.grad.dtype == np.float64
        expected = unbroadcast(np.asarray(full, dtype=np.float64), leaf.shape)
        np.testing.assert_allclose(np.asarray(leaf.grad), expected, rtol=1e-10, atol=1e-12)


@PROPERTY
@given(shapes=SHAPES, seed=st.integers(0, 2**31 - 1))
def test_where_broadcasts_three_ways(shapes: Any, seed: int) -> None:
    (shape_a, shape_b), out_shape = shapes.input_shapes, shapes.result_shape
    rng = np.random.default_rng(seed)
    a_np, b_np = inputs(seed, shape_a, shape_b)
    cond_np = rng.random(out_shape[1:]) > 0.5  # fewer dims: broadcasts as well
    a = mta.tensor(a_np, requires_grad=True)
    b = mta.tensor(b_np, requires_grad=True)
    out = mta.where(mta.tensor(cond_np), a, b)
    np.testing.assert_array_equal(np.asarray(out.detach()), np.where(cond_np, a_np, b_np))
    out.sum().backward()
    cond_full = np.broadcast_to(cond_np, out_shape)
    assert a.grad is not None and b.grad is not None
    np.testing.assert_array_equal(np.asarray(a.grad), unbroadcast(cond_full * 1.0, shape_a))
    np.testing.assert_array_equal(np.asarray(b.grad), unbroadcast(~cond_full * 1.0, shape_b))


@PROPERTY
@given(shapes=SHAPES, scalar=st.floats(-3, 3, allow_subnormal=False), seed=st.integers(0, 2**16))
def test_chained_broadcast_against_scalars(shapes: Any, scalar: float, seed: int) -> None:
    (shape_a, shape_b), out_shape = shapes.input_shapes, shapes.result_shape
    a_np, b_np = inputs(seed, shape_a, shape_b)
    a = mta.tensor(a_np, requires_grad=True)
    b = mta.tensor(b_np, requires_grad=True)
    ((a * scalar - b) * b).sum().backward()
    ones = np.ones(out_shape)
    a_full, b_full = np.broadcast_to(a_np, out_shape), np.broadcast_to(b_np, out_shape)
    assert a.grad is not None and b.grad is not None
    expected_a = unbroadcast(ones * scalar * b_full, shape_a)
    expected_b = unbroadcast(ones * (a_full * scalar - 2 * b_full), shape_b)
    np.testing.assert_allclose(np.asarray(a.grad), expected_a, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(b.grad), expected_b, rtol=1e-10, atol=1e-12)


@PROPERTY
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple),
    data=st.data(),
)
def test_sum_over_random_dims(shape: tuple[int, ...], data: st.DataObject) -> None:
    dims = data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1).map(sorted))
    keepdim = data.draw(st.booleans())
    x_np = np.random.default_rng(len(dims)).standard_normal(shape)
    x = mta.tensor(x_np, requires_grad=True)
    out = x.sum(dim=tuple(dims), keepdim=keepdim)
    expected = x_np.sum(axis=tuple(dims), keepdims=keepdim)
    np.testing.assert_allclose(np.asarray(out.detach()), expected, rtol=1e-12)
    g_np = np.random.default_rng(0).standard_normal(expected.shape)
    out.backward(mta.tensor(g_np))
    kept = g_np if keepdim else np.expand_dims(g_np, tuple(dims))
    assert x.grad is not None
    np.testing.assert_array_equal(np.asarray(x.grad), np.broadcast_to(kept, shape))
