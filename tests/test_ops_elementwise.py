"""Elementwise ops: forward against NumPy, gradcheck and gradgradcheck in float64, on
every device."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from support.helpers import check_op, sample

import minitorch_accel as mta
from minitorch_accel.core.tensor import Tensor

BROADCAST_PAIRS = [
    ((3, 4), (3, 4)),
    ((3, 4), (4,)),
    ((2, 1, 4), (3, 1)),
    ((), (2, 3)),
    ((2, 3), (1, 1)),
]


def nonzero_pair(
    shapes: tuple[tuple[int, ...], tuple[int, ...]], positive_a: bool = False
) -> list[np.ndarray]:
    """Inputs for division and powers: ``b`` well away from 0, ``a`` positive if asked."""
    shape_a, shape_b = shapes
    rng = np.random.default_rng(7)
    a = rng.uniform(0.5, 2.0, shape_a) if positive_a else sample(shape_a, rng)
    b = sample(shape_b, rng, -1.5, 1.5, margin=0.5)
    return [a, b]


BINARY: list[tuple[str, Callable[..., Any], Callable[..., Any]]] = [
    ("add", lambda a, b: a + b, np.add),
    ("sub", lambda a, b: a - b, np.subtract),
    ("mul", lambda a, b: a * b, np.multiply),
    ("maximum", mta.maximum, np.maximum),
    ("minimum", mta.minimum, np.minimum),
    ("functional_add", mta.add, np.add),
    ("functional_mul", mta.mul, np.multiply),
    ("functional_sub", mta.sub, np.subtract),
]


@pytest.mark.parametrize("shapes", BROADCAST_PAIRS, ids=str)
@pytest.mark.parametrize("name,fn,ref", BINARY, ids=[b[0] for b in BINARY])
def test_binary_broadcasting(
    name: str, fn: Callable[..., Tensor], ref: Callable[..., Any], shapes: Any, device: str
) -> None:
    check_op(fn, ref, shapes, device)


@pytest.mark.parametrize("shapes", BROADCAST_PAIRS, ids=str)
def test_div(shapes: Any, device: str) -> None:
    check_op(lambda a, b: a / b, np.divide, [], device, arrays=nonzero_pair(shapes))
    check_op(mta.div, np.divide, [], device, arrays=nonzero_pair(shapes))


@pytest.mark.parametrize("shapes", BROADCAST_PAIRS, ids=str)
def test_pow_tensor_exponent(shapes: Any, device: str) -> None:
    arrays = nonzero_pair(shapes, positive_a=True)
    check_op(lambda a, b: a**b, np.power, [], device, arrays=arrays)


SCALAR_CASES: list[tuple[str, Callable[..., Any], Callable[..., Any], dict[str, float]]] = [
    ("x+2.5", lambda x: x + 2.5, lambda x: x + 2.5, {}),
    ("2.5+x", lambda x: 2.5 + x, lambda x: 2.5 + x, {}),
    ("x-1.5", lambda x: x - 1.5, lambda x: x - 1.5, {}),
    ("1.5-x", lambda x: 1.5 - x, lambda x: 1.5 - x, {}),
    ("x*3", lambda x: x * 3, lambda x: x * 3, {}),
    ("3*x", lambda x: 3 * x, lambda x: 3 * x, {}),
    ("x/4", lambda x: x / 4, lambda x: x / 4, {}),
    ("2/x", lambda x: 2 / x, lambda x: 2 / x, {"margin": 0.5}),
    ("x**2", lambda x: x**2, lambda x: x**2, {}),
    ("x**3", lambda x: x**3, lambda x: x**3, {}),
    ("x**-2", lambda x: x**-2, lambda x: x**-2.0, {"margin": 0.5}),
    ("x**0.5", lambda x: x**0.5, np.sqrt, {"low": 0.3}),
    ("x**1", lambda x: x**1, lambda x: x, {}),
    ("2**x", lambda x: 2**x, lambda x: 2.0**x, {}),
    ("pow(x,3)", lambda x: mta.pow(x, 3), lambda x: x**3, {}),
    ("-x", lambda x: -x, np.negative, {}),
    ("neg", mta.neg, np.negative, {}),
]


@pytest.mark.parametrize("name,fn,ref,kwargs", SCALAR_CASES, ids=[c[0] for c in SCALAR_CASES])
def test_with_python_scalar(
    name: str, fn: Callable[..., Tensor], ref: Callable[..., Any], kwargs: Any, device: str
) -> None:
    check_op(fn, ref, [(2, 3)], device, **kwargs)


def sigmoid_ref(x: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-x)))


UNARY: list[tuple[str, Callable[..., Any], Callable[..., Any], dict[str, float]]] = [
    ("exp", mta.exp, np.exp, {}),
    ("exp_method", lambda x: x.exp(), np.exp, {}),
    ("log", mta.log, np.log, {"low": 0.2, "high": 3.0}),
    ("sqrt", mta.sqrt, np.sqrt, {"low": 0.2, "high": 3.0}),
    ("abs", mta.abs, np.abs, {"margin": 0.1}),
    ("relu", mta.relu, lambda x: np.maximum(x, 0), {"margin": 0.1}),
    ("sigmoid", mta.sigmoid, sigmoid_ref, {"low": -4.0, "high": 4.0}),
    ("tanh", mta.tanh, np.tanh, {}),
    ("relu_method", lambda x: x.relu(), lambda x: np.maximum(x, 0), {"margin": 0.1}),
    ("sigmoid_method", lambda x: x.sigmoid(), sigmoid_ref, {}),
    ("tanh_method", lambda x: x.tanh(), np.tanh, {}),
    ("log_method", lambda x: x.log(), np.log, {"low": 0.5}),
    ("sqrt_method", lambda x: x.sqrt(), np.sqrt, {"low": 0.5}),
    ("abs_method", lambda x: x.abs(), np.abs, {"margin": 0.1}),
]


@pytest.mark.parametrize("shape", [(), (5,), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("name,fn,ref,kwargs", UNARY, ids=[c[0] for c in UNARY])
def test_unary(
    name: str,
    fn: Callable[..., Tensor],
    ref: Callable[..., Any],
    kwargs: Any,
    shape: tuple[int, ...],
    device: str,
) -> None:
    check_op(fn, ref, [shape], device, **kwargs)


CLAMP_INPUT = np.array([[-1.7, -0.8, -0.2, 0.1], [0.3, 0.9, 1.4, -0.05]])


@pytest.mark.parametrize(
    "low,high", [(-0.5, 0.5), (None, 0.5), (-0.5, None)], ids=["both", "max", "min"]
)
def test_clamp(low: float | None, high: float | None, device: str) -> None:
    check_op(
        lambda x: mta.clamp(x, low, high),
        lambda x: np.clip(x, low, high),
        [],
        device,
        arrays=[CLAMP_INPUT],
    )
    check_op(
        lambda x: x.clamp(min=low, max=high),
        lambda x: np.clip(x, low, high),
        [],
        device,
        arrays=[CLAMP_INPUT],
    )


def test_clamp_gradient_is_zero_outside(device: str) -> None:
    x = mta.tensor(CLAMP_INPUT, device=device, requires_grad=True)
    x.clamp(-0.5, 0.5).sum().backward()
    assert x.grad is not None
    np.testing.assert_array_equal(np.asarray(x.grad), (np.abs(CLAMP_INPUT) <= 0.5) * 1.0)


@pytest.mark.parametrize(
    "shapes",
    [((2, 3), (2, 3), (2, 3)), ((2, 3), (3,), (2, 1)), ((3,), (2, 3), ())],
    ids=str,
)
def test_where(shapes: Any, device: str) -> None:
    cond_shape, a_shape, b_shape = shapes
    cond_np = np.random.default_rng(3).random(cond_shape) > 0.5
    cond = mta.tensor(cond_np, device=device)
    check_op(
        lambda a, b: mta.where(cond, a, b),
        lambda a, b: np.where(cond_np, a, b),
        [a_shape, b_shape],
        device,
    )


def test_where_with_scalars(device: str) -> None:
    x = mta.tensor([-1.0, 2.0, -3.0], device=device, requires_grad=True)
    out = mta.where(x > 0, x, 0.0)
    np.testing.assert_array_equal(np.asarray(out.detach()), [0.0, 2.0, 0.0])
    out.sum().backward()
    assert x.grad is not None
    np.testing.assert_array_equal(np.asarray(x.grad), [0.0, 1.0, 0.0])
    assert mta.where(x > 0, 1.0, -1.0).tolist() == [-1.0, 1.0, -1.0]


def test_where_needs_a_bool_condition() -> None:
    with pytest.raises(TypeError, match="condition must be a bool tensor, got float32"):
        mta.where(mta.ones(2), mta.ones(2), mta.zeros(2))


def test_maximum_minimum_split_ties_evenly(device: str) -> None:
    a = mta.tensor([1.0, 2.0, 5.0], device=device, requires_grad=True)
    b = mta.tensor([1.0, 3.0, 4.0], device=device, requires_grad=True)
    (mta.maximum(a, b) + 10 * mta.minimum(a, b)).sum().backward()
    assert a.grad is not None and b.grad is not None
    np.testing.assert_allclose(np.asarray(a.grad), [5.5, 10.0, 1.0])
    np.testing.assert_allclose(np.asarray(b.grad), [5.5, 1.0, 10.0])


COMPARISONS = [
    ("==", lambda a, b: a == b, np.equal),
    ("!=", lambda a, b: a != b, np.not_equal),
    ("<", lambda a, b: a < b, np.less),
    ("<=", lambda a, b: a <= b, np.less_equal),
    (">", lambda a, b: a > b, np.greater),
    (">=", lambda a, b: a >= b, np.greater_equal),
    ("eq", mta.eq, np.equal),
    ("ne", mta.ne, np.not_equal),
    ("lt", mta.lt, np.less),
    ("le", mta.le, np.less_equal),
    ("gt", mta.gt, np.greater),
    ("ge", mta.ge, np.greater_equal),
]


@pytest.mark.parametrize("name,fn,ref", COMPARISONS, ids=[c[0] for c in COMPARISONS])
def test_comparisons(
    name: str, fn: Callable[..., Any], ref: Callable[..., Any], device: str
) -> None:
    a_np = np.array([[1.0, 2.0, 3.0], [4.0, 2.0, 0.0]])
    b_np = np.array([2.0, 2.0, 1.0])
    a = mta.tensor(a_np, device=device, requires_grad=True)
    b = mta.tensor(b_np, device=device)
    for x, y, rx, ry in [(a, b, a_np, b_np), (a, 2.0, a_np, 2.0), (2.0, a, 2.0, a_np)]:
        out = fn(x, y)
        assert out.dtype == np.bool_
        assert not out.requires_grad and out.grad_fn is None
        assert out.device == mta.Device(device)
        np.testing.assert_array_equal(np.asarray(out), ref(rx, ry))


def test_logical_not_of_comparison() -> None:
    x = mta.tensor([1.0, -1.0])
    assert (~(x > 0)).tolist() == [False, True]


@pytest.mark.parametrize(
    "fn", [mta.exp, mta.log, mta.sqrt, mta.sigmoid, mta.tanh], ids=lambda f: f.__name__
)
def test_float_math_on_ints_gives_float32(fn: Callable[[Tensor], Tensor]) -> None:
    x = mta.tensor([1, 2, 3])
    out = fn(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), np.asarray(fn(x.float())))


def test_int_tensor_to_fractional_power_is_float32() -> None:
    out = mta.tensor([1, 4, 9]) ** 0.5
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), [1.0, 2.0, 3.0])


def test_int_tensor_to_negative_power_is_float32() -> None:
    out = mta.tensor([1, 2, 4]) ** -1
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), [1.0, 0.5, 0.25])


def test_pow_zero_has_zero_gradient_at_zero() -> None:
    x = mta.tensor([0.0, 2.0], requires_grad=True)
    (x**0).sum().backward()
    assert x.grad is not None
    np.testing.assert_array_equal(np.asarray(x.grad), [0.0, 0.0])


def test_true_division_of_ints_is_float32() -> None:
    out = mta.tensor([1, 2, 3]) / 2
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), [0.5, 1.0, 1.5])
    assert (6 / mta.tensor([1, 2, 3])).tolist() == [6.0, 3.0, 2.0]


def test_sigmoid_does_not_overflow() -> None:
    out = mta.sigmoid(mta.tensor([-1000.0, 0.0, 1000.0]))
    np.testing.assert_allclose(np.asarray(out), [0.0, 0.5, 1.0])


def test_clone_is_a_differentiable_copy(device: str) -> None:
    x = mta.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x.clone()
    assert y.array is not x.array
    (y * 3).sum().backward()
    assert x.grad is not None
    assert x.grad.tolist() == [3.0, 3.0]


def test_clamp_of_ints() -> None:
    ints = mta.tensor([1, 2, 3])
    assert mta.clamp(ints, 2).tolist() == [2, 2, 3] and mta.clamp(ints, 2).dtype == np.int64
    out = mta.clamp(ints, 1.5, 2.5)
    assert out.dtype == np.float32 and out.tolist() == [1.5, 2.0, 2.5]


def test_clamp_needs_a_bound() -> None:
    with pytest.raises(ValueError, match="at least one of min and max"):
        mta.clamp(mta.ones(2))
