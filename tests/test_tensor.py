"""The Tensor API: factories, dtype rules, attributes and conversions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.core.tensor import Tensor


# ------------------------------------------------------------------ factories
@pytest.mark.parametrize(
    "data,dtype",
    [
        (1.5, np.float32),
        ([1.0, 2.0], np.float32),
        ([1, 2.5], np.float32),
        (3, np.int64),
        ([[1, 2], [3, 4]], np.int64),
        ([True, False], np.bool_),
        (np.array([1.0, 2.0]), np.float64),
        (np.array([1, 2], dtype=np.int32), np.int32),
        (np.array([1.0], dtype=np.float16), np.float16),
        (np.array([7], dtype=np.uint8), np.uint8),
        (np.float32(2.0), np.float32),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, type) else v.__name__,
)
def test_tensor_dtype_from_data(data: Any, dtype: Any) -> None:
    t = mta.tensor(data)
    assert t.dtype == dtype
    np.testing.assert_array_equal(np.asarray(t), np.asarray(data))
    assert t.device == mta.Device("cpu")
    assert not t.requires_grad and t.grad is None and t.is_leaf


def test_tensor_copies_and_converts() -> None:
    source = np.array([1.0, 2.0])
    t = mta.tensor(source, dtype=mta.float32, device="cpu:2", requires_grad=True)
    source[0] = 100.0
    assert t.tolist() == [1.0, 2.0]
    assert (t.dtype, str(t.device), t.requires_grad) == (np.dtype(np.float32), "cpu:2", True)
    copy = mta.tensor(t)
    assert not copy.requires_grad and not np.shares_memory(copy.array, t.array)
    assert copy.device == t.device


def test_from_numpy_shares_memory() -> None:
    array = np.arange(4, dtype=np.int32)
    t = mta.from_numpy(array)
    assert t.dtype == np.int32
    array[0] = 42
    assert t.tolist()[0] == 42
    t[1] = 7
    assert array[1] == 7
    with pytest.raises(TypeError, match="from_numpy expects a numpy.ndarray, got list"):
        mta.from_numpy([1, 2])  # type: ignore[arg-type]


@pytest.mark.parametrize("make", [mta.zeros, mta.ones, mta.empty], ids=lambda f: f.__name__)
def test_filled_factories(make: Any) -> None:
    assert make(2, 3).shape == (2, 3) and make((2, 3)).shape == (2, 3)
    assert make(2).dtype == np.float32
    t = make(4, dtype=mta.int64, device="cpu:1", requires_grad=False)
    assert (t.dtype, str(t.device)) == (np.int64, "cpu:1")
    assert make(2, requires_grad=True).requires_grad
    assert make().shape == ()


def test_zeros_ones_full_values() -> None:
    assert mta.zeros(2, 2).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert mta.ones(3).tolist() == [1.0, 1.0, 1.0]
    f = mta.full((2,), 2.5)
    assert f.tolist() == [2.5, 2.5] and f.dtype == np.float32
    assert mta.full((1,), 3, dtype=mta.int64).tolist() == [3]
    np.testing.assert_array_equal(np.asarray(mta.eye(2, 3)), np.eye(2, 3))


@pytest.mark.parametrize(
    "fill, dtype",
    [(7, np.int64), (np.int32(7), np.int64), (True, np.bool_), (2.5, np.float32), (-1, np.int64)],
)
def test_full_infers_its_dtype_from_the_fill_value_as_pytorch(fill: Any, dtype: Any) -> None:
    t = mta.full((2, 3), fill)
    assert t.dtype == dtype and t.shape == (2, 3) and t.tolist() == [[fill] * 3] * 2
    assert mta.full((2,), fill, dtype=mta.float64).dtype == np.float64  # dtype wins


@pytest.mark.parametrize("fill", [7, np.int32(7), True, 2.5, -1])
def test_full_infers_the_dtype_pytorch_infers(fill: Any) -> None:
    torch = pytest.importorskip("torch")
    assert str(torch.full((1,), fill).dtype) == f"torch.{mta.full((1,), fill).dtype.name}"


@pytest.mark.parametrize("op", ["any", "all"])
def test_any_and_all_return_bool_tensors_over_dims_as_pytorch(op: str) -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, (3, 4, 2)) * rng.integers(0, 2, (3, 4, 2))
    t = mta.tensor(x.astype(np.float32))
    reference = getattr(np, op)
    for dim in (None, 0, 1, -1, (0, 2)):
        for keepdim in (False, True):
            got = getattr(t, op)(dim, keepdim=keepdim)
            expected = reference(x != 0, axis=dim, keepdims=keepdim)
            assert isinstance(got, Tensor) and got.dtype == np.bool_
            assert got.shape == np.shape(expected) and got.tolist() == np.asarray(expected).tolist()
            assert getattr(mta, op)(t, dim, keepdim).tolist() == got.tolist()
    assert bool(t.any()) is bool((x != 0).any())  # `if t.any():` reads it as a Python bool


@pytest.mark.parametrize("op", ["any", "all"])
def test_any_and_all_equal_pytorchs(op: str) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, (3, 4, 2)) * rng.integers(0, 2, (3, 4, 2))
    tt, t = torch.tensor(x), mta.tensor(x)
    for dim in (0, 2):
        assert getattr(tt, op)(dim).tolist() == getattr(t, op)(dim).tolist()


def test_like_factories_keep_shape_dtype_device() -> None:
    ref = mta.tensor(np.ones((2, 3)), device="cpu:1")
    for t in (mta.zeros_like(ref), mta.ones_like(ref), mta.full_like(ref, 4.0)):
        assert (t.shape, t.dtype, t.device) == ((2, 3), np.dtype(np.float64), ref.device)
    assert mta.zeros_like(ref).tolist() == [[0.0] * 3] * 2
    assert mta.ones_like(ref, dtype=mta.int64).dtype == np.int64
    assert mta.full_like(ref, 4.0).tolist() == [[4.0] * 3] * 2


def test_arange() -> None:
    assert mta.arange(4).tolist() == [0, 1, 2, 3] and mta.arange(4).dtype == np.int64
    assert mta.arange(1, 7, 2).tolist() == [1, 3, 5]
    assert mta.arange(5, 0, -2).tolist() == [5, 3, 1]
    f = mta.arange(0, 1, 0.25)
    assert f.dtype == np.float32 and f.tolist() == [0.0, 0.25, 0.5, 0.75]
    assert mta.arange(3, dtype=mta.float64).dtype == np.float64
    with pytest.raises(ValueError, match="step must not be zero"):
        mta.arange(0, 3, 0)


def test_random_factories() -> None:
    mta.manual_seed(0)
    n = mta.randn(2000)
    u = mta.rand(2000, dtype=mta.float64)
    assert n.dtype == np.float32 and u.dtype == np.float64
    assert abs(n.mean().item()) < 0.1 and abs(n.var().item() - 1.0) < 0.1
    assert u.min().item() >= 0.0 and u.max().item() < 1.0
    r = mta.randint(0, 3, (500,))
    assert r.dtype == np.int64 and set(r.tolist()) == {0, 1, 2}
    assert mta.randn(2, 3, requires_grad=True).requires_grad
    with pytest.raises(TypeError, match="randn makes floating-point tensors, not int64"):
        mta.randn(2, dtype=mta.int64)


def test_manual_seed_reproducibility() -> None:
    mta.manual_seed(123)
    first = (mta.randn(5).tolist(), mta.rand(3).tolist(), mta.randn(2, device="cpu:1").tolist())
    mta.manual_seed(123)
    second = (mta.randn(5).tolist(), mta.rand(3).tolist(), mta.randn(2, device="cpu:1").tolist())
    assert first == second
    mta.manual_seed(124)
    assert mta.randn(5).tolist() != first[0]


def test_explicit_generator() -> None:
    a = mta.randn(3, generator=np.random.default_rng(9))
    b = mta.randn(3, generator=np.random.default_rng(9))
    assert a.tolist() == b.tolist()


@pytest.mark.parametrize("bad", [(-1,), (2.5,), ("3",)], ids=str)
def test_bad_shapes_raise(bad: tuple[Any, ...]) -> None:
    with pytest.raises(ValueError, match="a shape is made of non-negative ints"):
        mta.zeros(*bad)


# ------------------------------------------------------------------ dtype rules
@pytest.mark.parametrize(
    "dtype,scalar,expected",
    [
        (np.float32, 2.5, np.float32),
        (np.float32, 2, np.float32),
        (np.float64, 2.5, np.float64),
        (np.float16, 1.0, np.float16),
        (np.int64, 2.5, np.float32),
        (np.int64, 2, np.int64),
        (np.int32, 2, np.int32),
        (np.bool_, 1, np.int64),
        (np.bool_, True, np.bool_),
        (np.float32, np.float64(2.0), np.float32),
    ],
    ids=str,
)
def test_scalar_keeps_tensor_dtype(dtype: Any, scalar: Any, expected: Any) -> None:
    t = mta.tensor(np.array([1, 0], dtype=dtype))
    for out in (t + scalar, scalar + t, t * scalar, scalar * t):
        assert out.dtype == expected
    if dtype != np.bool_:  # bool - bool is refused, as by NumPy and PyTorch
        assert (t - scalar).dtype == expected


def test_tensor_tensor_promotion() -> None:
    f32, f64, i64 = mta.ones(2), mta.tensor(np.ones(2)), mta.tensor([1, 2])
    i32 = mta.tensor(np.array([1, 1], dtype=np.int32))
    assert (f32 + f64).dtype == np.float64
    assert (i64 + i32).dtype == np.int64
    # next to a float, integers take the float's dtype (PyTorch's rule, not NumPy's float64)
    for out in (f32 * i64, i64 * f32, i32 + f32, f32 / i64, mta.maximum(i64, f32)):
        assert out.dtype == np.float32
    assert (mta.tensor([True, False]) * f32).dtype == np.float32
    assert mta.where(mta.tensor([True, False]), i64, f32).dtype == np.float32
    assert mta.cat([i64, f32]).dtype == np.float32


# ------------------------------------------------------------------ attributes, conversion
def test_attributes() -> None:
    t = mta.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert t.shape == (2, 3) and t.ndim == 2 and t.size() == (2, 3) and t.numel() == 6
    assert t.nbytes == 24 and len(t) == 2
    assert t.dtype == np.float32 and t.device == mta.Device("cpu") and t.device == "cpu"
    assert t.requires_grad and t.grad is None and t.grad_fn is None and t.is_leaf
    y = t * 2
    assert y.grad_fn is not None and not y.is_leaf


def test_numpy_item_tolist_array() -> None:
    t = mta.tensor([[1.5, 2.0]])
    host = t.numpy()
    assert isinstance(host, np.ndarray) and np.shares_memory(host, t.array)
    assert t.tolist() == [[1.5, 2.0]]
    assert mta.tensor([3]).item() == 3 and isinstance(mta.tensor([3]).item(), int)
    assert mta.tensor(2.5).item() == 2.5 and float(mta.tensor(2.5)) == 2.5
    assert int(mta.tensor(7)) == 7 and bool(mta.tensor(True))
    as_f64 = np.asarray(t, dtype=np.float64)
    assert as_f64.dtype == np.float64 and as_f64.tolist() == [[1.5, 2.0]]
    assert np.asarray(mta.tensor([1, 2], device="cpu:3")).tolist() == [1, 2]
    with pytest.raises(ValueError, match=r"item\(\) needs a tensor with one element.*\(1, 2\)"):
        t.item()
    with pytest.raises(RuntimeError, match="truth value of a tensor with shape"):
        bool(mta.ones(2))
    with pytest.raises(RuntimeError, match=r"use .detach\(\).numpy\(\)"):
        mta.ones(1, requires_grad=True).numpy()
    with pytest.raises(TypeError, match="len"):
        len(mta.tensor(1.0))


def test_to_cpu_and_dtype_conversions() -> None:
    t = mta.tensor([1.0, 2.0])
    assert t.to("cpu") is t and t.cpu() is t and t.to(dtype=mta.float32) is t
    moved = t.to("cpu:1")
    assert str(moved.device) == "cpu:1" and moved.tolist() == [1.0, 2.0]
    assert moved.cpu().device == mta.Device("cpu")
    both = t.to("cpu:2", dtype=mta.float64)
    assert (str(both.device), both.dtype) == ("cpu:2", np.dtype(np.float64))
    assert t.double().dtype == np.float64 and t.half().dtype == np.float16
    assert t.long().tolist() == [1, 2] and t.long().float().dtype == np.float32


def test_dtype_conversion_is_differentiable() -> None:
    x = mta.tensor([1.0, 2.0], requires_grad=True)
    (x.double() ** 2).sum().backward()
    assert x.grad is not None and x.grad.dtype == np.float32
    assert x.grad.tolist() == [2.0, 4.0]


def test_repr() -> None:
    assert repr(mta.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(mta.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(mta.tensor(np.array([0.5]))) == "tensor([0.5], dtype=float64)"
    assert repr(mta.ones(1, device="cpu:1")) == "tensor([1.], device='cpu:1')"
    assert repr(mta.ones(1, requires_grad=True)) == "tensor([1.], requires_grad=True)"
    assert repr(mta.ones(1, requires_grad=True) * 2) == "tensor([2.], grad_fn=<MulBackward>)"
    assert "dtype=float32" in repr(mta.zeros(0))


def test_constructor_and_class() -> None:
    t = Tensor([1.0, 2.0]).requires_grad_()
    assert isinstance(t, Tensor) and t.requires_grad
    assert isinstance(mta.tensor(1.0), mta.Tensor)


def test_numpy_array_on_the_left_defers_to_tensor() -> None:
    t = mta.tensor([1.0, 2.0], requires_grad=True)
    out = np.array([1.0, 1.0]) + t
    assert isinstance(out, Tensor) and out.requires_grad
    assert out.tolist() == [2.0, 3.0]


@pytest.mark.parametrize(
    "make",
    [
        lambda: mta.tensor(1.5) * 1,
        lambda: mta.tensor([1.5, 2.0]).sum() * 1,
        lambda: mta.tensor(1.5, dtype="float64").exp().log(),
        lambda: mta.tensor([3.0, 1.5])[1] + 0,
    ],
    ids=["mul", "sum-mul", "exp-log", "index-add"],
)
def test_a_0d_result_has_memory_that_views_and_in_place_ops_share(make: Any) -> None:
    """A 0-d result of math (NumPy gives a scalar there) is a 0-d array of its own:
    ``detach`` and ``view`` share it, so an in-place change shows through them, as in
    PyTorch (before, the scalar was replaced and the aliases kept the old value)."""
    x = make()
    assert x.shape == () and isinstance(x.array, np.ndarray)
    alias, view, want = x.detach(), x.view(()), (x.item() + 1.0) * 2.0
    x.add_(1.0)
    view.mul_(2.0)
    assert x.item() == alias.item() == view.item() == want
    assert np.shares_memory(x.array, alias.array)
    torch = pytest.importorskip("torch")
    t = torch.tensor(1.5) * 1
    t_alias, t_view = t.detach(), t.view(())
    t.add_(1.0)
    t_view.mul_(2.0)
    assert t.item() == t_alias.item() == t_view.item() == 5.0
