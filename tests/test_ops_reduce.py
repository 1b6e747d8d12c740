"""Reductions, softmax and friends: values against NumPy, gradients in float64."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from support.helpers import check_op

import minitorch_accel as mta
from minitorch_accel.core.tensor import Tensor

SHAPE = (2, 3, 4)
DIMS: list[Any] = [None, 0, -1, 1, (0, 2), (-1, 0)]


def np_axis(dim: Any) -> Any:
    return tuple(dim) if isinstance(dim, (tuple, list)) else dim


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
def test_sum(dim: Any, keepdim: bool, device: str) -> None:
    check_op(
        lambda x: mta.sum(x, dim, keepdim),
        lambda x: np.sum(x, axis=np_axis(dim), keepdims=keepdim),
        [SHAPE],
        device,
    )
    check_op(
        lambda x: x.sum(dim=dim, keepdim=keepdim),
        lambda x: np.sum(x, axis=np_axis(dim), keepdims=keepdim),
        [SHAPE],
        device,
        gradgrad=False,
    )


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
def test_mean(dim: Any, keepdim: bool, device: str) -> None:
    check_op(
        lambda x: x.mean(dim, keepdim=keepdim),
        lambda x: np.mean(x, axis=np_axis(dim), keepdims=keepdim),
        [SHAPE],
        device,
    )


@pytest.mark.parametrize("correction", [0, 1])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 1, (0, 2)], ids=str)
def test_var(dim: Any, keepdim: bool, correction: int, device: str) -> None:
    check_op(
        lambda x: mta.var(x, dim, keepdim=keepdim, correction=correction),
        lambda x: np.var(x, axis=np_axis(dim), keepdims=keepdim, ddof=correction),
        [SHAPE],
        device,
    )


def test_var_method_is_unbiased_by_default() -> None:
    x = np.array([1.0, 2.0, 4.0, 7.0])
    assert mta.tensor(x).var().item() == pytest.approx(np.var(x, ddof=1))


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1, -1], ids=str)
@pytest.mark.parametrize("which", ["max", "min"])
def test_max_min(which: str, dim: Any, keepdim: bool, device: str) -> None:
    ref = np.max if which == "max" else np.min
    fn = mta.max if which == "max" else mta.min
    # with a dim: named (values, indices), as PyTorch; without: a tensor
    check_op(
        lambda x: fn(x, dim, keepdim) if dim is None else fn(x, dim, keepdim).values,
        lambda x: ref(x, axis=dim, keepdims=keepdim),
        [SHAPE],
        device,
    )
    method = Tensor.max if which == "max" else Tensor.min
    check_op(
        lambda x: method(x, keepdim=keepdim) if dim is None else method(x, dim, keepdim)[0],
        lambda x: ref(x, axis=dim, keepdims=keepdim),
        [(5, 3)],
        device,
        gradgrad=False,
    )


def test_max_gradient_at_ties_follows_pytorch(device: str) -> None:
    # with a dim: all of it to the element at `indices` (the first maximum)
    x = mta.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], device=device, requires_grad=True)
    x.max(dim=1).values.sum().backward()
    assert x.grad is not None
    assert x.grad.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    # without: shared evenly by the tied maxima (PyTorch's evenly_distribute_backward)
    y = mta.tensor([1.0, 5.0, 5.0], device=device, requires_grad=True)
    y.max().backward()
    assert y.grad is not None
    assert y.grad.tolist() == [0.0, 0.5, 0.5]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 2, -2], ids=str)
@pytest.mark.parametrize("which", ["argmax", "argmin"])
def test_argmax_argmin(which: str, dim: Any, keepdim: bool, device: str, rng: Any) -> None:
    data = rng.standard_normal(SHAPE)
    x = mta.tensor(data, device=device, requires_grad=True)
    out = getattr(mta, which)(x, dim, keepdim)
    ref = getattr(np, which)(data, axis=dim, keepdims=keepdim)
    assert out.dtype == np.int64
    assert not out.requires_grad
    assert out.device == mta.Device(device)
    assert out.shape == np.shape(ref)
    np.testing.assert_array_equal(np.asarray(out), ref)
    np.testing.assert_array_equal(np.asarray(getattr(x, which)(dim, keepdim)), ref)


def logsumexp_ref(x: np.ndarray, dim: Any = None, keepdim: bool = False) -> np.ndarray:
    return np.asarray(np.log(np.sum(np.exp(x), axis=np_axis(dim), keepdims=keepdim)))


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 1)], ids=str)
def test_logsumexp(dim: Any, keepdim: bool, device: str) -> None:
    check_op(
        lambda x: mta.logsumexp(x, dim, keepdim),
        lambda x: logsumexp_ref(x, dim, keepdim),
        [SHAPE],
        device,
    )


def test_logsumexp_is_stable() -> None:
    x = mta.tensor([1000.0, 1000.0, -1000.0])
    assert x.logsumexp().item() == pytest.approx(1000.0 + np.log(2.0))
    y = mta.tensor([-np.inf, -np.inf])
    with np.errstate(divide="ignore"):
        assert y.logsumexp().item() == -np.inf


def softmax_ref(x: np.ndarray, dim: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return np.asarray(e / e.sum(axis=dim, keepdims=True))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax(dim: int, device: str) -> None:
    check_op(lambda x: mta.softmax(x, dim), lambda x: softmax_ref(x, dim), [SHAPE], device)
    check_op(
        lambda x: x.softmax(dim), lambda x: softmax_ref(x, dim), [(3, 5)], device, gradgrad=False
    )


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_log_softmax(dim: int, device: str) -> None:
    check_op(
        lambda x: mta.log_softmax(x, dim),
        lambda x: np.log(softmax_ref(x, dim)),
        [SHAPE],
        device,
    )
    check_op(
        lambda x: x.log_softmax(dim),
        lambda x: np.log(softmax_ref(x, dim)),
        [(3, 5)],
        device,
        gradgrad=False,
    )


def test_softmax_of_large_values_is_finite() -> None:
    x = mta.tensor([[1000.0, 0.0, -1000.0]])
    np.testing.assert_allclose(np.asarray(x.softmax(-1)), [[1.0, 0.0, 0.0]])
    np.testing.assert_allclose(np.asarray(x.log_softmax(-1)), [[0.0, -1000.0, -2000.0]])


def test_reductions_match_torch(rng: Any) -> None:
    torch = pytest.importorskip("torch")
    data = rng.standard_normal((4, 5)).astype(np.float32)
    ours = mta.tensor(data, requires_grad=True)
    theirs = torch.tensor(data, requires_grad=True)
    loss_ours = ours.log_softmax(1).sum() * 0.3 + ours.var(0).sum() + ours.logsumexp(1).mean()
    loss_theirs = (
        theirs.log_softmax(1).sum() * 0.3 + theirs.var(0).sum() + theirs.logsumexp(1).mean()
    )
    loss_ours.backward()
    loss_theirs.backward()
    assert loss_ours.item() == pytest.approx(loss_theirs.item(), rel=1e-5)
    assert ours.grad is not None
    np.testing.assert_allclose(np.asarray(ours.grad), theirs.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_sum_of_bools_and_ints_is_int64() -> None:
    assert mta.tensor([True, False, True]).sum().item() == 2
    assert mta.tensor([True, False, True]).sum().dtype == np.int64
    assert mta.tensor(np.array([1, 2], dtype=np.int32)).sum().dtype == np.int64
    assert mta.sum(mta.tensor([1, 2]), dtype=np.float64).dtype == np.float64


def test_mean_of_ints_raises() -> None:
    with pytest.raises(TypeError, match="mean needs a floating-point tensor, got int64"):
        mta.tensor([1, 2]).mean()


@pytest.mark.parametrize("fn", [mta.max, mta.min], ids=["max", "min"])
def test_max_of_empty_raises(fn: Callable[..., Tensor]) -> None:
    with pytest.raises(ValueError, match="of an empty tensor"):
        fn(mta.zeros(0))


def test_reductions_of_a_0d_tensor_accept_dim_0() -> None:
    x = mta.tensor(3.0, requires_grad=True)
    for out in (x.sum(0), x.mean(-1), x.max(0).values, x.min(dim=-1)[0], x.logsumexp(0)):
        assert out.shape == () and out.item() == pytest.approx(3.0)
    assert x.sum(0, keepdim=True).shape == ()
    x.max(0).values.backward()
    assert x.grad is not None and x.grad.item() == 1.0


def test_variance_of_too_few_samples_is_nan() -> None:
    assert np.isnan(mta.tensor([5.0]).var().item())
    assert mta.tensor([5.0]).var(correction=0).item() == 0.0
    assert np.isnan(mta.zeros(2, 0).mean(1).numpy()).all()
