"""nn.functional: losses, batch norm, dropout, linear against NumPy, PyTorch and
finite differences."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from support.helpers import DEVICES, to_host

import minitorch_accel as mta
import minitorch_accel.nn.functional as F
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

RNG = np.random.default_rng(1234)


def t64(*shape: int, requires_grad: bool = True) -> mta.Tensor:
    return mta.tensor(RNG.standard_normal(shape), requires_grad=requires_grad)


def np_log_softmax(x: np.ndarray) -> np.ndarray:
    shifted = x - x.max(axis=1, keepdims=True)
    return np.asarray(shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True)))


def np_cross_entropy(x: np.ndarray, y: np.ndarray, smoothing: float = 0.0) -> np.ndarray:
    """Per-row loss of logits (N, C), by the definition with a smoothed one-hot target."""
    classes = x.shape[1]
    q = np.full(x.shape, smoothing / classes)
    q[np.arange(len(y)), y] += 1.0 - smoothing
    return np.asarray(-(q * np_log_softmax(x)).sum(axis=1))


# ------------------------------------------------------------------ cross_entropy
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy_matches_numpy_for_each_reduction(smoothing: float) -> None:
    x = RNG.standard_normal((6, 5)) * 3
    y = np.array([0, 4, 2, 2, 1, 3])
    rows = np_cross_entropy(x, y, smoothing)
    logits, target = mta.tensor(x), mta.tensor(y)
    none = F.cross_entropy(logits, target, reduction="none", label_smoothing=smoothing)
    assert none.shape == (6,)
    np.testing.assert_allclose(none.numpy(), rows, rtol=1e-12)
    np.testing.assert_allclose(
        F.cross_entropy(logits, target, reduction="sum", label_smoothing=smoothing).item(),
        rows.sum(),
    )
    np.testing.assert_allclose(
        F.cross_entropy(logits, target, reduction="mean", label_smoothing=smoothing).item(),
        rows.mean(),
    )


def test_cross_entropy_is_stable_for_huge_logits() -> None:
    x = mta.tensor([[1000.0, 0.0, -1000.0], [0.0, 1000.0, 1000.0]])
    loss = F.cross_entropy(x, mta.tensor([0, 1]), reduction="none")
    np.testing.assert_allclose(loss.numpy(), [0.0, np.log(2.0)], atol=1e-6)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
def test_cross_entropy_gradients(reduction: str, smoothing: float) -> None:
    x = t64(4, 3)
    y = mta.tensor([2, 0, 1, 1])
    assert gradcheck(
        lambda a: F.cross_entropy(a, y, reduction=reduction, label_smoothing=smoothing), [x]
    )
    assert gradgradcheck(
        lambda a: F.cross_entropy(a, y, reduction=reduction, label_smoothing=smoothing), [x]
    )


def test_cross_entropy_gradient_is_softmax_minus_onehot_over_n() -> None:
    x_np = RNG.standard_normal((5, 4))
    y_np = np.array([3, 0, 1, 1, 2])
    x = mta.tensor(x_np, requires_grad=True)
    F.cross_entropy(x, mta.tensor(y_np)).backward()
    assert x.grad is not None
    expected = np.exp(np_log_softmax(x_np))
    expected[np.arange(5), y_np] -= 1.0
    np.testing.assert_allclose(x.grad.numpy(), expected / 5, rtol=1e-12)


def test_cross_entropy_ignore_index_and_spatial_targets_match_torch() -> None:
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 4, 3, 2))
    y = RNG.integers(0, 4, size=(2, 3, 2))
    y[0, 1, 1] = -100
    for reduction in ("mean", "sum", "none"):
        ours = F.cross_entropy(
            mta.tensor(x), mta.tensor(y), reduction=reduction, label_smoothing=0.2
        )
        ref = torch.nn.functional.cross_entropy(
            torch.tensor(x), torch.tensor(y), reduction=reduction, label_smoothing=0.2
        )
        assert ours.shape == tuple(ref.shape)
        np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-10, atol=1e-12)
    xt = mta.tensor(x, requires_grad=True)
    F.cross_entropy(xt, mta.tensor(y), label_smoothing=0.2).backward()
    xr = torch.tensor(x, requires_grad=True)
    torch.nn.functional.cross_entropy(xr, torch.tensor(y), label_smoothing=0.2).backward()
    assert xt.grad is not None
    np.testing.assert_allclose(xt.grad.numpy(), xr.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_cross_entropy_single_sample_and_float32() -> None:
    x = RNG.standard_normal(5).astype(np.float32)
    loss = F.cross_entropy(mta.tensor(x), mta.tensor(3))
    assert loss.dtype == np.float32
    expected = np_cross_entropy(x[None].astype(np.float64), np.array([3]))[0]
    np.testing.assert_allclose(loss.item(), expected, rtol=1e-5)


def test_cross_entropy_float16_logits_get_float16_gradients() -> None:
    x = mta.tensor(RNG.standard_normal((3, 4)), dtype="float16", requires_grad=True)
    F.cross_entropy(x, mta.tensor([0, 1, 2])).backward()
    assert x.grad is not None and x.grad.dtype == np.float16
    assert np.isfinite(x.grad.numpy()).all()


def test_cross_entropy_errors() -> None:
    x = mta.zeros(3, 5)
    with pytest.raises(IndexError, match=r"label 7 is out of range for 5 classes"):
        F.cross_entropy(x, mta.tensor([0, 7, 1]))
    with pytest.raises(IndexError, match=r"label -1 is out of range for 5 classes"):
        F.cross_entropy(x, mta.tensor([0, -1, 1]))
    with pytest.raises(TypeError, match=r"integer tensor, got float32"):
        F.cross_entropy(x, mta.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match=r"needs a target of shape \(3,\), got \(3, 1\)"):
        F.cross_entropy(x, mta.tensor([[0], [1], [2]]))
    with pytest.raises(ValueError, match=r"reduction must be one of"):
        F.cross_entropy(x, mta.tensor([0, 1, 2]), reduction="avg")
    with pytest.raises(ValueError, match=r"label_smoothing must be in \[0, 1\]"):
        F.cross_entropy(x, mta.tensor([0, 1, 2]), label_smoothing=1.5)
    with pytest.raises(TypeError, match=r"input must be floating point"):
        F.cross_entropy(mta.tensor([[1, 2]]), mta.tensor([0]))


def test_cross_entropy_with_every_row_ignored_is_nan() -> None:
    loss = F.cross_entropy(mta.zeros(2, 3), mta.tensor([-100, -100]))
    assert np.isnan(loss.item())


# ------------------------------------------------------------------ nll_loss, mse_loss
def test_nll_loss_picks_minus_the_labelled_log_probability() -> None:
    x = RNG.standard_normal((4, 3))
    y = np.array([2, 0, 0, 1])
    log_probs = mta.tensor(np_log_softmax(x))
    none = F.nll_loss(log_probs, mta.tensor(y), reduction="none")
    np.testing.assert_allclose(none.numpy(), -np_log_softmax(x)[np.arange(4), y])
    fused = F.cross_entropy(mta.tensor(x), mta.tensor(y))
    composed = F.nll_loss(F.log_softmax(mta.tensor(x), dim=1), mta.tensor(y))
    np.testing.assert_allclose(composed.item(), fused.item(), rtol=1e-12)
    ignored = F.nll_loss(log_probs, mta.tensor([2, -100, 0, 1]), reduction="mean")
    np.testing.assert_allclose(ignored.item(), none.numpy()[[0, 2, 3]].mean())


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_gradients(reduction: str) -> None:
    y = mta.tensor([1, 1, 0])
    assert gradcheck(lambda a: F.nll_loss(a, y, reduction=reduction), [t64(3, 2)])
    assert gradgradcheck(
        lambda a: F.nll_loss(F.log_softmax(a, dim=1), y, reduction=reduction), [t64(3, 2)]
    )


def test_nll_loss_rejects_bad_labels() -> None:
    with pytest.raises(IndexError, match=r"label 3 is out of range for 3 classes"):
        F.nll_loss(mta.zeros(2, 3), mta.tensor([0, 3]))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_values_and_gradients(reduction: str) -> None:
    a, b = t64(3, 4), t64(3, 4)
    diff2 = (a.detach().numpy() - b.detach().numpy()) ** 2
    expected = {"mean": diff2.mean(), "sum": diff2.sum(), "none": diff2}[reduction]
    np.testing.assert_allclose(F.mse_loss(a, b, reduction).detach().numpy(), expected)
    assert gradcheck(lambda x, y: F.mse_loss(x, y, reduction), [a, b])
    assert gradgradcheck(lambda x, y: F.mse_loss(x, y, reduction), [a, b])


def test_mse_loss_refuses_to_broadcast() -> None:
    with pytest.raises(ValueError, match=r"input shape \(4, 1\) and target shape \(4,\) differ"):
        F.mse_loss(mta.zeros(4, 1), mta.zeros(4))


# ------------------------------------------------------------------ batch_norm
def np_batch_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    axes = (0, *range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    return np.asarray((x - mean) / np.sqrt(var + eps) * w.reshape(shape) + b.reshape(shape))


@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5, 6), (2, 3, 7)])
def test_batch_norm_training_forward_and_running_stats(shape: tuple[int, ...]) -> None:
    channels, axes = shape[1], (0, *range(2, len(shape)))
    w, b = RNG.standard_normal(channels), RNG.standard_normal(channels)
    running_mean, running_var = (
        mta.zeros(channels, dtype="float64"),
        mta.ones(channels, dtype="float64"),
    )
    expected_mean, expected_var = np.zeros(channels), np.ones(channels)
    for _ in range(4):
        x = RNG.standard_normal(shape) * 3 + 2
        out = F.batch_norm(
            mta.tensor(x), running_mean, running_var, mta.tensor(w), mta.tensor(b), True, 0.2
        )
        np.testing.assert_allclose(out.numpy(), np_batch_norm(x, w, b, 1e-5), atol=1e-12)
        expected_mean = 0.8 * expected_mean + 0.2 * x.mean(axis=axes)
        expected_var = 0.8 * expected_var + 0.2 * x.var(axis=axes, ddof=1)
        np.testing.assert_allclose(running_mean.numpy(), expected_mean, rtol=1e-12)
        np.testing.assert_allclose(running_var.numpy(), expected_var, rtol=1e-12)
    x = RNG.standard_normal(shape)
    evaluated = F.batch_norm(
        mta.tensor(x), running_mean, running_var, mta.tensor(w), mta.tensor(b), False
    )
    view = (1, -1) + (1,) * (len(shape) - 2)
    expected = (x - expected_mean.reshape(view)) / np.sqrt(expected_var.reshape(view) + 1e-5)
    expected = expected * w.reshape(view) + b.reshape(view)
    np.testing.assert_allclose(evaluated.numpy(), expected, atol=1e-12)
    np.testing.assert_allclose(running_mean.numpy(), expected_mean)  # eval changes nothing


def test_batch_norm_matches_torch_over_several_steps() -> None:
    torch = pytest.importorskip("torch")
    ours_mean, ours_var = mta.zeros(4), mta.ones(4)
    ref_mean, ref_var = torch.zeros(4), torch.ones(4)
    w, b = RNG.standard_normal(4).astype(np.float32), RNG.standard_normal(4).astype(np.float32)
    for _ in range(5):
        x = (RNG.standard_normal((6, 4, 3, 3)) * 2 - 1).astype(np.float32)
        ours = F.batch_norm(mta.tensor(x), ours_mean, ours_var, mta.tensor(w), mta.tensor(b), True)
        ref = torch.nn.functional.batch_norm(
            torch.tensor(x), ref_mean, ref_var, torch.tensor(w), torch.tensor(b), True
        )
        np.testing.assert_allclose(ours.numpy(), ref.numpy(), atol=2e-5)
    np.testing.assert_allclose(ours_mean.numpy(), ref_mean.numpy(), atol=1e-5)
    np.testing.assert_allclose(ours_var.numpy(), ref_var.numpy(), rtol=1e-5)


@pytest.mark.parametrize("shape", [(5, 2), (3, 2, 3, 2)])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_gradients(shape: tuple[int, ...], training: bool, affine: bool) -> None:
    channels = shape[1]
    running_mean = mta.tensor(RNG.standard_normal(channels))
    running_var = mta.tensor(RNG.uniform(0.5, 2.0, channels))
    inputs = [t64(*shape)]
    if affine:
        inputs += [t64(channels), t64(channels)]

    def fn(x: mta.Tensor, *wb: mta.Tensor) -> mta.Tensor:
        w, b = wb if wb else (None, None)
        # training with running stats would update them at every evaluation: use none
        mean, var = (None, None) if training else (running_mean, running_var)
        return F.batch_norm(x, mean, var, w, b, training)

    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_batch_norm_keeps_float16_and_float32() -> None:
    x = RNG.standard_normal((4, 3, 2, 2))
    ref = np_batch_norm(x, np.ones(3), np.zeros(3), 1e-5)
    for dtype, tol in (("float32", 1e-5), ("float16", 5e-3)):
        out = F.batch_norm(mta.tensor(x, dtype=dtype), None, None, training=True)
        assert out.dtype == np.dtype(dtype)
        np.testing.assert_allclose(out.numpy().astype(np.float64), ref, atol=tol)


def test_batch_norm_errors() -> None:
    with pytest.raises(ValueError, match=r"more than 1 value per channel"):
        F.batch_norm(mta.zeros(1, 3), mta.zeros(3), mta.ones(3), training=True)
    with pytest.raises(ValueError, match=r"running_mean must have shape \(3,\).*got \(4,\)"):
        F.batch_norm(mta.zeros(2, 3), mta.zeros(4), mta.ones(4))
    with pytest.raises(ValueError, match=r"weight must have shape \(3,\)"):
        F.batch_norm(mta.zeros(2, 3), None, None, weight=mta.ones(2), training=True)
    with pytest.raises(ValueError, match=r"expected an input of shape \(N, C, ...\)"):
        F.batch_norm(mta.zeros(3), None, None)
    with pytest.raises(ValueError, match=r"both running_mean and running_var"):
        F.batch_norm(mta.zeros(2, 3), mta.zeros(3), None)


# ------------------------------------------------------------------ dropout
def test_dropout_zeroes_a_fraction_p_and_scales_the_rest() -> None:
    mta.manual_seed(0)
    out = F.dropout(mta.ones(100_000), p=0.3).numpy()
    np.testing.assert_allclose(np.unique(out), [0.0, 1 / 0.7], rtol=1e-6)
    assert abs((out == 0).mean() - 0.3) < 0.01
    assert abs(out.mean() - 1.0) < 0.02  # inverted scaling keeps the expectation


def test_dropout_identity_cases_and_validation() -> None:
    x = mta.randn(10)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), np.zeros(10))
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match=r"probability p must be in \[0, 1\]"):
            F.dropout(x, p)


def test_dropout_is_reproducible_and_its_gradient_is_the_mask() -> None:
    mta.manual_seed(7)
    first = F.dropout(mta.ones(50), 0.5).numpy()
    mta.manual_seed(7)
    x = mta.ones(50, requires_grad=True)
    second = F.dropout(x, 0.5)
    np.testing.assert_array_equal(first, second.detach().numpy())
    second.sum().backward()
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), first)


def test_dropout_gradients_with_a_fixed_mask() -> None:
    def fn(a: mta.Tensor) -> mta.Tensor:
        mta.manual_seed(3)  # the same mask at every evaluation
        return F.dropout(a, 0.4) * a

    assert gradcheck(fn, [t64(4, 3)])
    assert gradgradcheck(fn, [t64(4, 3)])


# ------------------------------------------------------------------ linear and re-exports
@pytest.mark.parametrize("x_shape", [(4,), (3, 4), (2, 3, 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_values_and_gradients(x_shape: tuple[int, ...], bias: bool) -> None:
    x, w = t64(*x_shape), t64(5, 4)
    b = t64(5) if bias else None
    expected = x.detach().numpy() @ w.detach().numpy().T
    if b is not None:
        expected = expected + b.detach().numpy()
    np.testing.assert_allclose(F.linear(x, w, b).detach().numpy(), expected, rtol=1e-12)
    inputs = [x, w] + ([b] if b is not None else [])
    assert gradcheck(lambda *a: F.linear(*a), inputs)
    assert gradgradcheck(lambda *a: F.linear(*a), inputs)


def test_linear_shape_errors_name_the_shapes() -> None:
    with pytest.raises(
        ValueError, match=r"input of shape \(2, 3\) does not fit a weight of shape \(5, 4\)"
    ):
        F.linear(mta.zeros(2, 3), mta.zeros(5, 4))
    with pytest.raises(ValueError, match=r"bias of shape \(4,\)"):
        F.linear(mta.zeros(2, 4), mta.zeros(5, 4), mta.zeros(4))
    with pytest.raises(TypeError, match=r"input is float64 but weight is float32"):
        F.linear(mta.zeros(2, 4, dtype="float64"), mta.zeros(5, 4))


def test_functional_reexports_the_core_ops() -> None:
    assert F.softmax is mta.softmax and F.log_softmax is mta.log_softmax
    x = mta.tensor([-1.0, 0.5])
    assert F.relu(x).tolist() == mta.relu(x).tolist() == [0.0, 0.5]


def test_conv_and_pool_functions_come_from_ops_or_say_they_are_missing() -> None:
    for name, module in (
        ("conv2d", "minitorch_accel.ops.conv"),
        ("max_pool2d", "minitorch_accel.ops.pool"),
        ("avg_pool2d", "minitorch_accel.ops.pool"),
        ("adaptive_avg_pool2d", "minitorch_accel.ops.pool"),
    ):
        if importlib.util.find_spec(module) is not None:
            assert getattr(F, name) is getattr(importlib.import_module(module), name)
        else:
            with pytest.raises(RuntimeError, match=rf"{name} is unavailable: {module}"):
                getattr(F, name)(mta.zeros(1, 1, 4, 4), 2)


# ------------------------------------------------------------------ every device
@pytest.mark.parametrize("device", DEVICES)
def test_functionals_on_each_device_match_the_host_in_float64(device: str) -> None:
    x = RNG.standard_normal((6, 4, 3, 3))
    w, b = RNG.standard_normal(4), RNG.standard_normal(4)
    labels = np.array([0, 3, 1, 1, 2, -100])
    lin_w = RNG.standard_normal((5, 36))

    def run(dev: str) -> list[np.ndarray]:
        leaves = [mta.tensor(a, device=dev, requires_grad=True) for a in (x, w, b, lin_w)]
        xt, wt, bt, lwt = leaves
        mean = mta.zeros(4, dtype="float64", device=dev)
        var = mta.ones(4, dtype="float64", device=dev)
        normed = F.batch_norm(xt, mean, var, wt, bt, training=True)
        logits = F.linear(F.relu(normed).flatten(1), lwt)
        target = mta.tensor(labels, device=dev)
        loss = F.cross_entropy(logits, target, label_smoothing=0.1) + F.mse_loss(normed, xt)
        loss = loss + F.nll_loss(logits.log_softmax(1)[:5], target[:5])
        loss.backward()
        assert loss.device == mta.Device(dev)
        grads = [t.grad for t in leaves]
        assert all(g is not None and g.device == mta.Device(dev) for g in grads)
        return [to_host(loss), to_host(mean), to_host(var)] + [np.asarray(g) for g in grads]

    for ours, ref in zip(run(device), run("cpu"), strict=True):
        np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_dropout_on_each_device_uses_one_mask_forward_and_backward(device: str) -> None:
    x = mta.tensor(RNG.uniform(1.0, 2.0, (64, 64)), device=device, requires_grad=True)
    out = F.dropout(x, 0.25)
    out.sum().backward()
    assert out.device == mta.Device(device) and x.grad is not None
    grad, values = to_host(x.grad), to_host(out)
    np.testing.assert_allclose(np.unique(grad), [0.0, 1 / 0.75])
    np.testing.assert_allclose(values, to_host(x) * grad)
    assert abs((grad == 0).mean() - 0.25) < 0.03


def test_equal_dtypes_that_are_different_objects_mix() -> None:
    """An array that went through pickle (as mpi4py sends arrays) has an equal dtype that is
    another object: linear, matmul and where must take it as the same dtype."""
    import pickle

    x_np = pickle.loads(pickle.dumps(np.ones((2, 3), dtype=np.float64)))
    x = mta.tensor(x_np)
    weight = mta.ones(4, 3, dtype="float64")
    assert x.dtype == weight.dtype
    np.testing.assert_array_equal(F.linear(x, weight).numpy(), np.full((2, 4), 3.0))
    np.testing.assert_array_equal((x @ weight.T).numpy(), np.full((2, 4), 3.0))
    np.testing.assert_array_equal(mta.where(x > 0, x, weight[:2, :3]).numpy(), x_np)
