"""The op suite on the ``strict`` stand-in backend, against the CPU.

``strict`` (see ``support/strict_xp.py``) runs NumPy behind CuPy's rules: implicit host
conversion, NumPy functions on device arrays and NumPy/device mixing all raise. Every
op here runs forward and backward (and, where differentiable twice, double backward)
on ``"cpu"`` and on ``"strict"``; the values must agree and nothing may raise. A
failure is a call that would fail on a real GPU.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest
from support.strict_backend import registered
from support.strict_xp import STRICT, StrictArray

import minitorch_accel as mta
from minitorch_accel import optim
from minitorch_accel.core.tensor import Tensor

STRICT_DEVICE = "strict"


@pytest.fixture(autouse=True, params=["strict", "strict:1"])
def strict_device(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every test twice: on the stand-in's device 0, and on its device 1, where work
    that does not enter the device's context meets arrays of another device and fails
    (as a kernel would run on the wrong GPU of a multi-GPU machine)."""
    global STRICT_DEVICE
    STRICT_DEVICE = request.param
    yield
    STRICT_DEVICE = "strict"


@pytest.fixture(scope="module", autouse=True)
def strict_backend() -> Iterator[None]:
    """Register the ``strict`` backend for this module, and remove it afterwards."""
    with registered():
        yield


# ------------------------------------------------------------------ input factories
def F(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    """Uniform floats in [-2, 2), kept 0.05 away from 0 (kinks of relu, abs...)."""

    def make(rng: np.random.Generator) -> np.ndarray:
        v = rng.uniform(-2, 2, shape)
        return np.where(v >= 0, v + 0.05, v - 0.05)

    return make


def POS(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:  # noqa: N802
    """Uniform floats in [0.5, 2)."""
    return lambda rng: rng.uniform(0.5, 2, shape)


def INT(high: int, *shape: int) -> Callable[[np.random.Generator], np.ndarray]:  # noqa: N802
    """int64 values in [0, high)."""
    return lambda rng: rng.integers(0, high, shape)


def BOOL(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:  # noqa: N802
    """Random booleans."""
    return lambda rng: rng.random(shape) > 0.5


def host(t: Tensor) -> np.ndarray:
    """``t``'s values on the host, through the explicit path only."""
    return t.detach().to("cpu").numpy()


def evaluate(
    fn: Callable[..., Tensor], arrays: Sequence[np.ndarray], device: str, order: int
) -> list[np.ndarray]:
    """Forward values, then the gradients (order 1, and order 2 when ``order == 2``)."""
    inputs = [
        mta.tensor(a, device=device, requires_grad=a.dtype.kind == "f" and order > 0)
        for a in arrays
    ]
    out = fn(*inputs)
    if device == STRICT_DEVICE:
        assert isinstance(out.array, StrictArray), f"the output is a {type(out.array)}"
    results = [host(out)]
    leaves = [t for t in inputs if t.requires_grad]
    if order == 0 or not out.requires_grad:
        return results
    rng = np.random.default_rng(7)
    v = mta.tensor(rng.standard_normal(out.shape), dtype=out.dtype, device=device)
    grads = mta.grad((out * v).sum(), leaves, create_graph=order == 2, materialize_grads=True)
    results += [host(g) for g in grads]
    if order == 2:
        total = sum(
            (
                (g * mta.tensor(rng.standard_normal(g.shape), dtype=g.dtype, device=device)).sum()
                for g in grads
                if g.requires_grad
            ),
            mta.zeros((), dtype=out.dtype, device=device),
        )
        if total.requires_grad:
            results += [host(g) for g in mta.grad(total, leaves, materialize_grads=True)]
    return results


def check(fn: Callable[..., Tensor], makers: Sequence[Any], order: int = 2) -> None:
    """Run ``fn`` on the CPU and on ``strict`` and compare every result."""
    rng = np.random.default_rng(0)
    arrays = [make(rng) for make in makers]
    expected = evaluate(fn, arrays, "cpu", order)
    found = evaluate(fn, arrays, STRICT_DEVICE, order)
    assert len(found) == len(expected)
    for e, f in zip(expected, found, strict=True):
        assert f.shape == e.shape and f.dtype == e.dtype
        np.testing.assert_allclose(f, e, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------ the op table
CASES = [
    # elementwise
    ("add_broadcast", lambda a, b: a + b, [F(3, 4), F(4)], 2),
    ("rsub_scalar", lambda a: 2.0 - a, [F(3, 4)], 2),
    ("mul_broadcast", lambda a, b: a * b, [F(2, 3, 4), F(3, 1)], 2),
    ("div", lambda a, b: a / b, [F(3, 4), POS(3, 4)], 2),
    ("rdiv_scalar", lambda a: 1.5 / a, [POS(5)], 2),
    ("neg", lambda a: -a, [F(5)], 2),
    ("pow_scalar", lambda a: a**3, [F(4)], 2),
    ("pow_tensor", lambda a, b: a**b, [POS(4), F(4)], 2),
    ("rpow_scalar", lambda a: 2.0**a, [F(4)], 2),
    ("exp", mta.exp, [F(3, 2)], 2),
    ("log", mta.log, [POS(3, 2)], 2),
    ("sqrt", mta.sqrt, [POS(3, 2)], 2),
    ("abs", mta.abs, [F(3, 2)], 2),
    ("relu", mta.relu, [F(3, 2)], 2),
    ("sigmoid", mta.sigmoid, [F(3, 2)], 2),
    ("tanh", mta.tanh, [F(3, 2)], 2),
    ("maximum", mta.maximum, [F(3, 4), F(4)], 2),
    ("minimum", mta.minimum, [F(3, 4), F(3, 4)], 2),
    ("clamp", lambda a: a.clamp(-0.5, 0.7), [F(10)], 2),
    ("clamp_min", lambda a: mta.clamp(a, min=0.1), [F(10)], 2),
    ("where", mta.where, [BOOL(3, 4), F(3, 4), F(4)], 2),
    ("where_scalar", lambda c, a: mta.where(c, a, 0.0), [BOOL(3, 4), F(3, 4)], 2),
    (
        "comparisons",
        lambda a, b: mta.where((a >= b) == ~(a < b), a, b) + (a != b) * 1.0,
        [F(3, 4), F(3, 4)],
        2,
    ),
    ("cast_roundtrip", lambda a: a.float().double() * 2.0, [F(5)], 2),
    ("clone", lambda a: a.clone() * a, [F(5)], 2),
    ("int_arith", lambda i, j: i * 3 + j - 1, [INT(5, 4), INT(5, 4)], 0),
    ("int_div", lambda i: i / 2, [INT(5, 4)], 0),
    # reductions
    ("sum_all", lambda a: a.sum(), [F(3, 4)], 2),
    ("sum_dims_keepdim", lambda a: a.sum((0, 2), keepdim=True), [F(2, 3, 4)], 2),
    ("sum_int", lambda i: i.sum(1), [INT(9, 3, 4)], 0),
    ("sum_bool", lambda b: mta.sum(b), [BOOL(3, 4)], 0),
    ("mean", lambda a: a.mean(1), [F(3, 4)], 2),
    ("var", lambda a: a.var(0), [F(5, 3)], 2),
    ("max_dim", lambda a: a.max(1).values, [F(3, 4)], 2),
    ("max_all", lambda a: a.max(), [F(3, 4)], 2),
    ("min_keepdim", lambda a: a.min(0, keepdim=True).values, [F(3, 4)], 2),
    ("argmax", lambda a: a.argmax(1), [F(3, 4)], 0),
    ("argmin_all", lambda a: a.argmin(), [F(3, 4)], 0),
    ("logsumexp", lambda a: a.logsumexp(1), [F(3, 4)], 2),
    ("softmax", lambda a: a.softmax(-1), [F(3, 4)], 2),
    ("log_softmax", lambda a: a.log_softmax(0), [F(3, 4)], 2),
    # shape ops and indexing
    ("reshape", lambda a: a.reshape(4, 3) * 1.0, [F(3, 4)], 2),
    ("view_infer", lambda a: a.view(-1), [F(3, 4)], 2),
    ("permute", lambda a: a.permute(2, 0, 1), [F(2, 3, 4)], 2),
    ("transpose", lambda a: a.transpose(0, 1), [F(3, 4)], 2),
    ("T", lambda a: a.T, [F(2, 3, 4)], 2),
    ("expand", lambda a: a.expand(3, 4) * 2.0, [F(3, 1)], 2),
    ("flatten", lambda a: a.flatten(1), [F(2, 3, 4)], 2),
    ("squeeze_unsqueeze", lambda a: a.squeeze().unsqueeze(0), [F(3, 1, 4)], 2),
    ("cat", lambda a, b: mta.cat([a, b], 1), [F(2, 3), F(2, 2)], 2),
    ("stack", lambda a, b: mta.stack([a, b], 0), [F(2, 3), F(2, 3)], 2),
    ("pad", lambda a: mta.pad(a, (1, 2, 0, 1), value=0.5), [F(2, 3)], 2),
    ("getitem_slices", lambda a: a[1:, ::2], [F(3, 5)], 2),
    ("getitem_int_none_ellipsis", lambda a: a[1, None, ..., 2], [F(3, 4, 5)], 2),
    ("getitem_tensor_repeats", lambda a, i: a[i], [F(4, 3), INT(4, 6)], 2),
    ("getitem_list", lambda a: a[[0, 2, 2]], [F(4, 3)], 2),
    ("getitem_bool_mask", lambda a, m: a[m], [F(4, 3), BOOL(4, 3)], 2),
    ("getitem_tuple_tensor_slice", lambda a, i: a[i, 1:], [F(4, 3), INT(4, 5)], 2),
    # matmul
    ("matmul_2d", mta.matmul, [F(3, 4), F(4, 2)], 2),
    ("matmul_batched_broadcast", mta.matmul, [F(2, 3, 4), F(4, 5)], 2),
    ("matmul_vec_mat", mta.matmul, [F(4), F(4, 3)], 2),
    ("matmul_mat_vec", mta.matmul, [F(3, 4), F(4)], 2),
    ("matmul_dot", mta.matmul, [F(4), F(4)], 2),
]


@pytest.mark.parametrize(
    "fn, makers, order", [pytest.param(*case[1:], id=case[0]) for case in CASES]
)
def test_op_matches_cpu(fn: Callable[..., Tensor], makers: list[Any], order: int) -> None:
    check(fn, makers, order)


# ------------------------------------------------------------------ nn.functional
def functional(name: str) -> Callable[..., Tensor]:
    """``minitorch_accel.nn.functional.<name>``."""
    from minitorch_accel.nn import functional as F_

    return getattr(F_, name)  # type: ignore[no-any-return]


def test_linear() -> None:
    check(lambda x, w, b: functional("linear")(x, w, b), [F(5, 4), F(3, 4), F(3)])


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"reduction": "sum"}, {"reduction": "none", "label_smoothing": 0.1}],
    ids=["mean", "sum", "none_smoothing"],
)
def test_cross_entropy(kwargs: dict[str, Any]) -> None:
    check(lambda x, y: functional("cross_entropy")(x, y, **kwargs), [F(6, 5), INT(5, 6)], 1)


def test_cross_entropy_ignore_index_and_spatial() -> None:
    def fn(x: Tensor, y: Tensor) -> Tensor:
        y = mta.where(y == 0, -100, y)
        return functional("cross_entropy")(x, y, ignore_index=-100)

    check(fn, [F(2, 4, 3, 3), INT(4, 2, 3, 3)], 1)


def test_nll_and_mse() -> None:
    check(lambda x, y: functional("nll_loss")(x.log_softmax(1), y), [F(6, 5), INT(5, 6)], 1)
    check(lambda a, b: functional("mse_loss")(a, b), [F(3, 4), F(3, 4)])


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batch_norm(training: bool) -> None:
    def fn(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
        mean = mta.zeros(3, dtype=x.dtype, device=x.device)
        var = mta.ones(3, dtype=x.dtype, device=x.device)
        out = functional("batch_norm")(x, mean, var, w, b, training=training)
        return out + (mean + var).reshape(1, 3, 1, 1)  # the updated running statistics

    check(fn, [F(4, 3, 2, 2), F(3), F(3)], 1)


def test_dropout_uses_the_device_generator() -> None:
    mta.manual_seed(3)
    x = mta.ones(200, dtype=mta.float64, device=STRICT_DEVICE, requires_grad=True)
    y = functional("dropout")(x, p=0.25)
    y.sum().backward()
    assert isinstance(y.array, StrictArray)
    values = host(y)
    assert set(np.unique(values)) <= {0.0, 1.0 / 0.75}
    assert 0 < (values == 0).sum() < 200
    assert x.grad is not None
    np.testing.assert_array_equal(host(x.grad), values)  # d(x * mask * s)/dx = mask * s


@pytest.mark.parametrize(
    "kwargs, channels",
    [({}, 1), ({"stride": 2, "padding": 1}, 8), ({"dilation": 2}, 8), ({"groups": 2}, 8)],
    ids=["plain_kernel_major", "stride_pad_channels_last", "dilation", "groups"],
)
def test_conv2d(kwargs: dict[str, Any], channels: int) -> None:
    out_channels, groups = 4, kwargs.get("groups", 1)
    check(
        lambda x, w, b: functional("conv2d")(x, w, b, **kwargs),
        [F(2, channels, 6, 6), F(out_channels, channels // groups, 3, 3), F(out_channels)],
        1,
    )


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("max_pool2d", {"kernel_size": 2}),
        ("max_pool2d", {"kernel_size": 3, "stride": 1, "padding": 1}),
        ("avg_pool2d", {"kernel_size": 2}),
        ("adaptive_avg_pool2d", {"output_size": 3}),
    ],
    ids=["max2", "max3_pad", "avg2", "adaptive"],
)
def test_pooling(name: str, kwargs: dict[str, Any]) -> None:
    check(lambda x: functional(name)(x, **kwargs), [F(2, 3, 6, 6)], 1)


# ------------------------------------------------------------------ raw kernels
@pytest.mark.parametrize(
    "channels, kwargs",
    [(1, {}), (8, {"stride": 2, "padding": 1}), (8, {"groups": 2, "dilation": 2})],
    ids=["kernel_major", "channels_last_stride_pad", "groups_dilation"],
)
def test_conv_kernels(channels: int, kwargs: dict[str, Any]) -> None:
    from minitorch_accel.backends import conv_kernels as ck

    rng = np.random.default_rng(1)
    groups = kwargs.get("groups", 1)
    x = rng.standard_normal((2, channels, 7, 7))
    w = rng.standard_normal((4, channels // groups, 3, 3))
    b = rng.standard_normal(4)
    y, cols = ck.conv2d_forward(np, x, w, b, **kwargs)
    ys, cols_s = ck.conv2d_forward(
        STRICT, STRICT.asarray(x), STRICT.asarray(w), STRICT.asarray(b), **kwargs
    )
    gy = rng.standard_normal(y.shape)
    gy_s = STRICT.asarray(gy)
    pairs = [
        (ys, y),
        (cols_s.matrix, cols.matrix),
        (
            ck.conv2d_grad_input(STRICT, gy_s, STRICT.asarray(w), x.shape, **kwargs),
            ck.conv2d_grad_input(np, gy, w, x.shape, **kwargs),
        ),
        (
            ck.conv2d_grad_weight(STRICT, gy_s, cols_s, w.shape, **kwargs),
            ck.conv2d_grad_weight(np, gy, cols, w.shape, **kwargs),
        ),
        (ck.conv2d_grad_bias(STRICT, gy_s), ck.conv2d_grad_bias(np, gy)),
    ]
    for found, expected in pairs:
        assert isinstance(found, StrictArray)
        np.testing.assert_allclose(STRICT.asnumpy(found), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("max", {"kernel_size": 2}),
        ("max", {"kernel_size": 3, "stride": 1, "padding": 1}),
        ("avg", {"kernel_size": 2}),
        ("avg", {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False}),
    ],
    ids=["max2", "max3_pad", "avg2", "avg3_no_pad_count"],
)
def test_pool_kernels(name: str, kwargs: dict[str, Any]) -> None:
    from minitorch_accel.backends import pool_kernels as pk

    rng = np.random.default_rng(2)
    x = np.round(rng.standard_normal((2, 3, 6, 6)), 1)  # ties, as after ReLU
    forward = getattr(pk, f"{name}_pool2d_forward")
    backward = getattr(pk, f"{name}_pool2d_backward")
    y, ys = forward(np, x, **kwargs), forward(STRICT, STRICT.asarray(x), **kwargs)
    gy = rng.standard_normal(y.shape)
    if name == "max":
        g = backward(np, gy, x, y, **kwargs)
        gs = backward(STRICT, STRICT.asarray(gy), STRICT.asarray(x), ys, **kwargs)
    else:
        g = backward(np, gy, x.shape, **kwargs)
        gs = backward(STRICT, STRICT.asarray(gy), x.shape, **kwargs)
    np.testing.assert_allclose(STRICT.asnumpy(ys), y)
    np.testing.assert_allclose(STRICT.asnumpy(gs), g)
    from minitorch_accel.ops.pool import adaptive_avg_pool2d_forward

    y2 = adaptive_avg_pool2d_forward(STRICT, STRICT.asarray(x), 4)
    np.testing.assert_allclose(STRICT.asnumpy(y2), adaptive_avg_pool2d_forward(np, x, 4))


# ------------------------------------------------------------------ tensors, factories
def test_tensor_methods() -> None:
    x = mta.tensor(np.arange(6.0).reshape(2, 3), device=STRICT_DEVICE)
    assert x[0, 1].item() == 1.0 and x.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert float(x.sum()) == 15.0 and bool(x[1, 0] == 3) and x.any() and (x >= 0).all()
    assert [row.shape for row in x] == [(3,), (3,)]
    assert f"device='{mta.Device(STRICT_DEVICE)}'" in repr(x)
    np.testing.assert_array_equal(np.asarray(x), np.arange(6.0).reshape(2, 3))
    y = x.clone()
    y[0] = mta.ones(3, dtype=mta.float64, device=STRICT_DEVICE)
    y[1, [0, 2]] = -1.0
    y.add_(x, alpha=2.0).mul_(0.5)
    np.testing.assert_array_equal(host(y), [[0.5, 1.5, 2.5], [2.5, 6.0, 4.5]])
    y.copy_(mta.full((2, 3), 7.0, dtype=mta.float64))  # from another device
    assert host(y).tolist() == [[7.0] * 3] * 2 and host(y.zero_()).sum() == 0


@pytest.mark.parametrize("how", ["setitem", "copy_"])
def test_numpy_values_into_device_tensors(how: str) -> None:
    x = mta.zeros(2, 3, dtype=mta.float64, device=STRICT_DEVICE)
    if how == "setitem":
        x[0] = np.ones(3)
    else:
        x.copy_(np.ones((2, 3)))
    assert host(x)[0].tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize(
    "make",
    [
        lambda d: mta.zeros(2, 3, device=d),
        lambda d: mta.full((2,), 3.0, device=d),
        lambda d: mta.arange(0, 1, 0.25, device=d),
        lambda d: mta.eye(3, device=d),
        lambda d: mta.ones_like(mta.empty(2, device=d)),
        lambda d: mta.tensor([[1, 2]], device=d) * 2.5,
    ],
    ids=["zeros", "full", "arange", "eye", "ones_like_empty", "int_times_float"],
)
def test_factories(make: Callable[[str], Tensor]) -> None:
    found, expected = make(STRICT_DEVICE), make("cpu")
    assert isinstance(found.array, StrictArray) and found.dtype == expected.dtype
    np.testing.assert_array_equal(host(found), host(expected))


def test_random_factories_and_transfers(transfers: Any) -> None:
    mta.manual_seed(5)
    samples = [
        mta.rand(50, device=STRICT_DEVICE),
        mta.randn(50, device=STRICT_DEVICE),
        mta.randint(0, 4, (50,), device=STRICT_DEVICE),
    ]
    assert all(isinstance(t.array, StrictArray) for t in samples)
    mta.manual_seed(5)
    np.testing.assert_array_equal(host(mta.rand(50, device=STRICT_DEVICE)), host(samples[0]))
    transfers.reset()
    x = mta.ones(4, requires_grad=True)
    moved = x.to("strict:2")
    (moved.to(STRICT_DEVICE) * 3.0).sum().backward()
    assert x.grad is not None and host(x.grad).tolist() == [3.0] * 4
    # forward: cpu -> strict:2 -> STRICT_DEVICE; the gradient comes back the same way
    assert transfers.as_dict() == {
        "host_to_device": 16,
        "device_to_device": 32,
        "device_to_host": 16,
        "copies": 4,
    }


# ------------------------------------------------------------------ optimizers, modules
@pytest.mark.parametrize(
    "make",
    [
        lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
        lambda p: optim.SGD(p, lr=0.1, momentum=0.5, dampening=0.3, maximize=True),
        lambda p: optim.Adam(p, lr=0.1, amsgrad=True, weight_decay=0.1),
        lambda p: optim.AdamW(p, lr=0.1),
    ],
    ids=["sgd_nesterov", "sgd_dampening_maximize", "adam_amsgrad", "adamw"],
)
def test_optimizers(make: Callable[[list[Tensor]], Any]) -> None:
    final = []
    for device in ("cpu", STRICT_DEVICE):
        w = mta.tensor(np.linspace(-1, 1, 6).reshape(2, 3), device=device, requires_grad=True)
        opt = make([w])
        for _ in range(3):
            opt.zero_grad()
            (w * w * w).sum().backward()
            opt.step()
        final.append(host(w))
    np.testing.assert_allclose(final[1], final[0], rtol=1e-12)


def test_module_training_step() -> None:
    from minitorch_accel import nn

    states = []
    for device in ("cpu", STRICT_DEVICE):
        mta.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
        model.to(device)
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x = mta.tensor(np.linspace(-1, 1, 20).reshape(5, 4), dtype=mta.float32, device=device)
        y = mta.tensor([0, 1, 2, 1, 0], device=device)
        nn.CrossEntropyLoss()(model(x), y).backward()
        opt.step()
        model.eval()
        states.append([host(model(x))] + [host(p) for p in model.parameters()])
    for found, expected in zip(states[1], states[0], strict=True):
        np.testing.assert_allclose(found, expected, rtol=1e-5, atol=1e-6)
