"""A convolution followed by max pooling runs as one fused op where the backend can:
the same outputs and gradients as the two ops, by the reference Function as by the fast
path, at any thread count; and without keeping the convolution's output."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from support.helpers import DEVICES, to_host

import minitorch_accel as mta
from minitorch_accel import nn
from minitorch_accel.backends import conv_kernels as ck
from minitorch_accel.backends import pool_kernels as pk
from minitorch_accel.backends.fast_paths import GradsAhead
from minitorch_accel.backends.image_geometry import conv_geometry, pool_geometry
from minitorch_accel.backends.numpy import fast_conv as fc
from minitorch_accel.ops import conv_pool
from minitorch_accel.ops.conv_pool import Conv2dMaxPool2d, conv2d_max_pool2d, first_max_tap
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

F = nn.functional

# (x shape, w shape, conv kwargs, pooling kernel): a first layer (C = 1: kernel-major
# cols, the bias inside the GEMM), channels-last cols, stride and padding with a 3x3
# pooling, groups and dilation with a 2x3 pooling that leaves a border uncovered.
CASES = [
    ((5, 1, 12, 12), (6, 1, 3, 3), {}, 2),
    ((4, 8, 11, 11), (16, 8, 3, 3), {}, 2),
    ((3, 4, 13, 13), (6, 4, 3, 3), {"stride": 2, "padding": 2}, 3),
    ((3, 4, 12, 13), (6, 2, 2, 3), {"dilation": 2, "groups": 2}, (2, 3)),
]


@pytest.fixture(autouse=True)
def fuse_every_convolution(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fuse the convolutions of every case, whatever their K (the default fuses only
    convolutions with few multiply-adds per output value)."""
    monkeypatch.setattr(conv_pool, "FUSE_MAX_K", 1 << 30)


def _levels(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """float64 values from a few levels: many pooling windows hold tied maxima."""
    return rng.integers(-2, 3, size=shape).astype(np.float64)


def _grads(
    run: Any,
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray,
    device: str,
    x_grad: bool = True,
    nonfinite: bool = False,
) -> list[Any]:
    """The output of ``run(x, w, b)`` and the gradients of x (if ``x_grad``), w and b
    for a fixed projection of the output (with ``nonfinite``, inf, -inf and NaN in
    three of its channels' first windows)."""
    tx = mta.tensor(x, device=device, requires_grad=x_grad)
    tw, tb = (mta.tensor(a, device=device, requires_grad=True) for a in (w, b))
    y = run(tx, tw, tb)
    g = np.random.default_rng(7).standard_normal(tuple(y.shape))
    if nonfinite:
        g[0, 0, 0, 0], g[-1, 1, 0, 0], g[0, 2, -1, -1] = np.inf, -np.inf, np.nan
    y.backward(mta.tensor(g, device=device))
    return [to_host(t) for t in (y, *([tx.grad] if x_grad else []), tw.grad, tb.grad)]


def _case_arrays(case: tuple[Any, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    x_shape, w_shape, _, _ = case
    return _levels(x_shape, rng), _levels(w_shape, rng) * 0.5, _levels(w_shape[:1], rng)


# the input's gradient needed (the routed gradient is made), or not (a first layer:
# the weight's and bias's gradients straight from the pooled one)
X_GRAD = pytest.mark.parametrize("x_grad", [True, False], ids=["x-grad", "first-layer"])


@X_GRAD
@pytest.mark.parametrize("relu", [False, True], ids=["pool", "pool+relu"])
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_fused_equals_the_two_ops(
    case: tuple[Any, ...], device: str, relu: bool, x_grad: bool
) -> None:
    x, w, b = _case_arrays(case)
    _, _, conv, kernel = case

    def fused(tx: mta.Tensor, tw: mta.Tensor, tb: mta.Tensor) -> mta.Tensor:
        y = conv2d_max_pool2d(tx, tw, tb, **conv, kernel_size=kernel, relu=relu)
        if device == "cpu":  # the CPU's backend fuses them
            assert isinstance(y.grad_fn, Conv2dMaxPool2d)
        return y

    def unfused(tx: mta.Tensor, tw: mta.Tensor, tb: mta.Tensor) -> mta.Tensor:
        y = F.max_pool2d(F.conv2d(tx, tw, tb, **conv), kernel)
        return F.relu(y) if relu else y

    got = _grads(fused, x, w, b, device, x_grad)
    want = _grads(unfused, x, w, b, device, x_grad)
    for a, e in zip(got, want, strict=True):
        assert a.shape == e.shape
        np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-12)
    if x_grad:
        assert np.count_nonzero(got[1] == 0) > 0 and np.count_nonzero(got[1]) > 0


@X_GRAD
@pytest.mark.parametrize("relu", [False, True], ids=["pool", "pool+relu"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_the_reference_function_equals_the_fast_path(
    case: tuple[Any, ...], relu: bool, x_grad: bool
) -> None:
    x, w, b = _case_arrays(case)
    _, _, conv, kernel = case
    full = {"stride": 1, "padding": 0, "dilation": 1, "groups": 1, **conv}

    def direct(tx: mta.Tensor, tw: mta.Tensor, tb: mta.Tensor) -> mta.Tensor:
        shape = F.conv2d(tx, tw, tb, **conv).shape
        pool = pool_geometry("max_pool2d", tuple(shape), kernel, kernel, 0)
        return Conv2dMaxPool2d.apply(tx, tw, tb, pool=pool, relu=relu, **full)

    fast = _grads(direct, x, w, b, "cpu", x_grad)
    with mta.fast_paths(False):
        reference = _grads(direct, x, w, b, "cpu", x_grad)
    for a, e in zip(fast, reference, strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-12)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@X_GRAD
@pytest.mark.parametrize("relu", [False, True], ids=["pool", "pool+relu"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_nonfinite_pooled_gradient_reaches_the_maxima_only(
    case: tuple[Any, ...], relu: bool, x_grad: bool
) -> None:
    """An inf or NaN pooled gradient is routed to its window's maximum and 0 elsewhere
    (not ``inf * 0 = NaN``), so the fused op's gradients equal the two ops' in the
    reference tier, NaN and inf positions included, and PyTorch's where installed."""
    x, w, b = _case_arrays(case)
    _, _, conv, kernel = case

    def fused(tx: mta.Tensor, tw: mta.Tensor, tb: mta.Tensor) -> mta.Tensor:
        y = conv2d_max_pool2d(tx, tw, tb, **conv, kernel_size=kernel, relu=relu)
        assert isinstance(y.grad_fn, Conv2dMaxPool2d)
        return y

    def unfused(tx: Any, tw: Any, tb: Any, f: Any = F) -> Any:
        y = f.max_pool2d(f.conv2d(tx, tw, tb, **conv), kernel)
        return f.relu(y) if relu else y

    got = _grads(fused, x, w, b, "cpu", x_grad, nonfinite=True)
    with mta.fast_paths(False):
        want = _grads(unfused, x, w, b, "cpu", x_grad, nonfinite=True)
    assert not np.isfinite(got[-1]).all()  # the bias's gradient sums every window's
    for a, e in zip(got, want, strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-12)
    torch = pytest.importorskip("torch")
    tx = torch.tensor(x, requires_grad=x_grad)
    tw, tb = (torch.tensor(a, requires_grad=True) for a in (w, b))
    y = unfused(tx, tw, tb, torch.nn.functional)
    g = np.random.default_rng(7).standard_normal(tuple(y.shape))
    g[0, 0, 0, 0], g[-1, 1, 0, 0], g[0, 2, -1, -1] = np.inf, -np.inf, np.nan
    y.backward(torch.tensor(g))
    ref = [y.detach(), *([tx.grad] if x_grad else []), tw.grad, tb.grad]
    for a, e in zip(got, ref, strict=True):
        np.testing.assert_allclose(a, e.numpy(), rtol=1e-12, atol=1e-12)


def test_first_max_tap_routes_ties_to_the_first_and_nan_to_the_last_nan() -> None:
    rng = np.random.default_rng(0)
    y = _levels((3, 5, 6, 8), rng)
    y[0, 0, :2, :2] = [[1.0, np.nan], [np.nan, 2.0]]  # the last NaN: tap 2
    y[0, 1, :2, :2] = [[np.nan, 3.0], [3.0, np.nan]]  # tap 3
    y[0, 2, :2, :2] = [[1.0, 4.0], [4.0, 0.0]]  # a tie: the first, tap 1
    x = np.ascontiguousarray(y.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)  # channels-last
    geo = pool_geometry("max_pool2d", x.shape, 2, 2, 0)
    p = pk.max_pool2d_forward(np, x, 2, 2, 0)
    reference = first_max_tap(np, x, p, geo)
    fast = pk.max_pool2d_first_tap(np, x, p, 2, out=np.empty(p.shape, np.uint8))
    np.testing.assert_array_equal(fast, reference)
    # The 2x2 shortcut (row maxima first) gives the same taps and maxima.
    pooled, taps = np.empty_like(p), np.empty(p.shape, np.uint8)
    pk.max_pool2d_forward_with_tap(np, x, 2, out=pooled, tap=taps)
    np.testing.assert_array_equal(taps, reference)
    np.testing.assert_array_equal(pooled, p)
    assert [int(reference[0, c, 0, 0]) for c in range(3)] == [2, 3, 1]
    # Every tap is the first one equal to the window's maximum (or a NaN).
    views = [x[:, :, i::2, j::2] for i in range(2) for j in range(2)]
    for t in range(4):
        chosen = reference == t
        assert np.all((views[t] == p) | np.isnan(p) | ~chosen)
        for earlier in views[:t]:
            assert not np.any(chosen & (earlier == p))


@pytest.mark.parametrize("kernel", [(2, 2), (3, 3), (2, 3), (1, 2)])
def test_pooling_with_taps_equals_the_reference_for_any_kernel(kernel: tuple[int, int]) -> None:
    rng = np.random.default_rng(4)
    x = _levels((2, 3, 12, 12), rng)
    x[0, 0, 0, 1] = x[1, 2, 5, 5] = np.nan
    geo = pool_geometry("max_pool2d", x.shape, kernel, kernel, 0)
    pooled, taps = np.empty(geo.y_shape), np.empty(geo.y_shape, np.uint8)
    pk.max_pool2d_forward_with_tap(np, x, kernel, out=pooled, tap=taps)
    np.testing.assert_array_equal(pooled, pk.max_pool2d_forward(np, x, kernel))
    np.testing.assert_array_equal(taps, first_max_tap(np, x, pooled, geo))
    assert np.isnan(pooled).sum() == 2


@pytest.mark.parametrize("relu", [False, True], ids=["pool", "pool+relu"])
def test_nan_routing_matches_pytorch(relu: bool) -> None:
    torch = pytest.importorskip("torch")
    x = np.array([[1.0, np.nan], [np.nan, 2.0], [np.nan, 3.0], [3.0, np.nan]]).reshape(1, 1, 4, 2)
    x = np.concatenate([x, -x, x - 5, np.nan_to_num(x - 2)], axis=3)  # maxima > 0, < 0, = 0
    w = np.ones((1, 1, 1, 1))
    tx = mta.tensor(x, requires_grad=True)
    y = conv2d_max_pool2d(tx, mta.tensor(w), None, kernel_size=2, relu=relu)
    y.sum().backward()
    ref = torch.tensor(x, requires_grad=True)
    ref_y = torch.nn.functional.max_pool2d(ref, 2)
    ref_y = torch.relu(ref_y) if relu else ref_y
    ref_y.sum().backward()
    np.testing.assert_array_equal(to_host(y), ref_y.detach().numpy())
    np.testing.assert_array_equal(to_host(tx.grad), ref.grad.numpy())


def test_relu_taps_mark_the_windows_the_relu_closes() -> None:
    # relu(max(window)) passes no gradient where the maximum is <= 0; a NaN passes it
    # (PyTorch's ReLU masks where its output <= 0)
    p = np.array([2.0, -1.0, 0.0, np.nan, 0.5])
    tap = np.array([3, 1, 2, 0, 0], np.uint8)
    y, masked = conv_pool.relu_taps(np, p, tap)
    np.testing.assert_array_equal(y, [2.0, 0.0, 0.0, np.nan, 0.5])
    assert masked.tolist() == [3, pk.NO_TAP, pk.NO_TAP, 0, 0]
    assert masked.dtype == np.uint8
    grad = pk.max_pool2d_route(
        np, np.ones((1, 1, 1, 5)), masked.reshape(1, 1, 1, 5), 2, out=np.empty((1, 1, 2, 10))
    )
    assert grad.reshape(2, 5, 2).transpose(1, 0, 2).reshape(5, 4).tolist() == [
        [0, 0, 0, 1],
        [0, 0, 0, 0],
        [0, 0, 0, 0],
        [1, 0, 0, 0],
        [1, 0, 0, 0],
    ]


def test_double_backward_by_finite_differences() -> None:
    rng = np.random.default_rng(5)
    x = mta.tensor(rng.standard_normal((2, 2, 7, 7)), requires_grad=True)
    w = mta.tensor(rng.standard_normal((3, 2, 2, 2)), requires_grad=True)
    b = mta.tensor(rng.standard_normal(3), requires_grad=True)

    def op(x: mta.Tensor, w: mta.Tensor, b: mta.Tensor) -> mta.Tensor:
        return conv2d_max_pool2d(x, w, b, padding=1, kernel_size=2)

    def op_relu(x: mta.Tensor, w: mta.Tensor, b: mta.Tensor) -> mta.Tensor:
        return conv2d_max_pool2d(x, w, b, padding=1, kernel_size=2, relu=True)

    assert gradcheck(op, (x, w, b))
    assert gradgradcheck(op, (x, w, b))
    assert 0 < np.count_nonzero(to_host(op_relu(x, w, b))) < op_relu(x, w, b).numel()
    assert gradcheck(op_relu, (x, w, b))
    assert gradgradcheck(op_relu, (x, w, b))


def test_a_first_layer_never_routes_the_gradient_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    x, w, b = _case_arrays(CASES[0])

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the routed gradient made for an input without a gradient")

    def fused(tx: mta.Tensor, tw: mta.Tensor, tb: mta.Tensor) -> mta.Tensor:
        return conv2d_max_pool2d(tx, tw, tb, kernel_size=2, relu=True)

    kept = []
    take = GradsAhead.take

    def spy(self: GradsAhead, name: str, grad_y: np.ndarray) -> np.ndarray | None:
        kept.append(take(self, name, grad_y))
        return kept[-1]

    monkeypatch.setattr(GradsAhead, "take", spy)
    with monkeypatch.context() as patch:
        patch.setattr(conv_pool.MaxPool2dRoute, "apply", refuse)
        got = _grads(fused, x, w, b, "cpu", x_grad=False)
    assert len(kept) == 1 and kept[0] is not None  # the bias's, from the weight's pass
    want = _grads(fused, x, w, b, "cpu", x_grad=True)
    for a, e in zip(got, want[:1] + want[2:], strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-12)


def test_tap_cols_are_the_im2col_rows_at_the_taps() -> None:
    rng = np.random.default_rng(6)
    for x_shape, w_shape, conv, kernel in CASES:
        x = rng.standard_normal(x_shape)
        full = {"stride": 1, "padding": 0, "dilation": 1, "groups": 1, **conv}
        geo = conv_geometry(x_shape, w_shape, *full.values())
        pool = pool_geometry("max_pool2d", geo.y_shape, kernel, kernel, 0)
        cols = fc.tap_cols(x, geo, pool)
        every = ck.im2col(np, x, geo).matrix  # each output position's rows
        (kh, kw), (oh, ow) = pool.kernel, pool.y_shape[2:]
        n, (yh, yw) = x_shape[0], geo.out_hw
        for gi in range(geo.groups):
            rows = every[gi] if geo.channels_last else every[gi].T  # (N*YH*YW, K)
            rows = rows.reshape(n, yh, yw, -1)
            want = np.stack(
                [
                    rows[:, i : i + kh * oh : kh, j : j + kw * ow : kw]
                    for i in range(kh)
                    for j in range(kw)
                ]
            ).reshape(-1, rows.shape[-1])
            got = cols[gi] if geo.channels_last else cols[gi].T
            np.testing.assert_array_equal(got, want)


def test_the_routed_gradients_second_derivatives_by_finite_differences() -> None:
    rng = np.random.default_rng(8)
    x = mta.tensor(rng.standard_normal((2, 2, 6, 6)), requires_grad=True)
    gp = mta.tensor(rng.standard_normal((2, 3, 2, 2)), requires_grad=True)
    geo = pool_geometry("max_pool2d", (2, 3, 5, 5), 2, 2, 0)  # a border left out
    tap = rng.integers(0, 4, (2, 3, 2, 2)).astype(np.uint8)
    tap[0, 0, 0, 0] = pk.NO_TAP
    conv = {"stride": 1, "padding": 0, "dilation": 1, "groups": 1}

    def weight(gp: mta.Tensor, x: mta.Tensor) -> mta.Tensor:
        return conv_pool.RoutedConv2dGradWeight.apply(
            gp, x, tap=tap, geo=geo, w_shape=(3, 2, 2, 2), **conv
        )

    def bias(gp: mta.Tensor) -> mta.Tensor:
        return conv_pool.RoutedConv2dGradBias.apply(gp, tap=tap, geo=geo)

    assert gradcheck(weight, (gp, x)) and gradgradcheck(weight, (gp, x))
    assert gradcheck(bias, (gp,)) and gradgradcheck(bias, (gp,))


def test_results_do_not_depend_on_the_thread_count() -> None:
    before = mta.get_num_threads()
    rng = np.random.default_rng(2)
    x = rng.standard_normal((9, 3, 14, 14)).astype(np.float32)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    results = {}
    try:
        for threads in (1, 2, 4):
            mta.set_num_threads(threads)
            results[threads] = [
                array
                for x_grad in (True, False)
                for array in _grads(
                    lambda tx, tw, tb: conv2d_max_pool2d(tx, tw, tb, kernel_size=2, relu=True),
                    x,
                    w,
                    b,
                    "cpu",
                    x_grad,
                )
            ]
    finally:
        mta.set_num_threads(before)
    for threads in (2, 4):
        for a, e in zip(results[threads], results[1], strict=True):
            np.testing.assert_array_equal(a, e)


def _lenet_like() -> nn.Sequential:
    mta.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 6, 3), nn.MaxPool2d(2)
    ).to(dtype=mta.float64)


def test_sequential_fuses_and_gives_the_modules_results() -> None:
    net = _lenet_like()
    assert [net.fused_conv_pool(i) for i in range(5)] == [3, 0, 0, 2, 0]
    x = np.random.default_rng(1).random((4, 1, 16, 16))

    def run() -> list[np.ndarray]:
        tx = mta.tensor(x, requires_grad=True)
        for p in net.parameters():
            p.grad = None
        y = net(tx)
        y.sum().backward()
        return [to_host(y), to_host(tx.grad)] + [to_host(p.grad) for p in net.parameters()]

    fused = run()
    net.fuse_conv_pool = False
    assert net.fused_conv_pool(0) == 0
    apart = run()
    for a, e in zip(fused, apart, strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-12)


def test_what_runs_unfused() -> None:
    x = mta.randn(2, 1, 10, 10, requires_grad=True)
    net = _lenet_like().to(dtype=mta.float32)
    node = net[:3](x).grad_fn  # the ReLU between them is part of the fused op
    assert node is not None and node.name() == "Conv2dMaxPool2dBackward"

    class MyConv(nn.Conv2d):
        pass

    conv_pool.FUSE_MAX_K = 8  # the first convolution (K = 9) is then left unfused
    assert not conv_pool.fuses(tuple(net[0].weight.shape))
    assert net[:3](x).grad_fn.next_functions[0][0].name() == "MaxPool2dBackward"
    conv_pool.FUSE_MAX_K = 1 << 30

    custom = nn.Sequential(MyConv(1, 2, 3), nn.MaxPool2d(2))
    assert custom.fused_conv_pool(0) == 0
    overlapping = conv2d_max_pool2d(x, net[0].weight, None, kernel_size=3, pool_stride=2)
    assert overlapping.grad_fn.name() == "MaxPool2dBackward"
    with mta.fast_paths(False):
        assert net[:3](x).grad_fn.next_functions[0][0].name() == "MaxPool2dBackward"


def test_without_a_gradient_the_ops_run_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    net = _lenet_like()
    x = mta.randn(2, 1, 10, 10, dtype=mta.float64)
    with_grad = to_host(net(x))  # the parameters require grad: fused
    assert net[:3](x).grad_fn.name() == "Conv2dMaxPool2dBackward"

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("fused without a gradient to record")

    monkeypatch.setattr(Conv2dMaxPool2d, "apply", refuse)
    with mta.no_grad():
        np.testing.assert_array_equal(to_host(net(x)), with_grad)
    for p in net.parameters():
        p.requires_grad_(False)
    np.testing.assert_array_equal(to_host(net(x)), with_grad)


def test_the_fused_node_keeps_a_byte_per_window_not_the_convolution_output() -> None:
    x = mta.randn(4, 1, 28, 28)
    conv, pool = nn.Conv2d(1, 8, 3), nn.MaxPool2d(2)
    y = conv.forward_max_pooled(x, pool)
    node = y.grad_fn
    assert isinstance(node, Conv2dMaxPool2d)
    assert node.tap.dtype == np.uint8 and node.tap.shape == tuple(y.shape)
    assert not any(
        isinstance(v, np.ndarray) and v.shape == (4, 8, 26, 26) for v in vars(node).values()
    )
    cols: Any = node.cols  # what the weight gradient makes each block's im2col rows from
    assert isinstance(cols, fc.BlockCols) and cols.x is x.array


def test_a_kept_gradient_goes_only_to_its_own_grad_output() -> None:
    x = np.ones((2, 1, 5, 5), np.float32)
    w = np.ones((2, 1, 3, 3), np.float32)
    _, cols = fc.threaded_conv2d_forward(x, w, np.zeros(2, np.float32))
    grad_y, other = np.ones((2, 2, 3, 3), np.float32), np.ones((2, 2, 3, 3), np.float32)
    kept = np.full(2, 5.0, np.float32)
    cols.ahead.keep("bias", grad_y, kept)
    assert cols.ahead.take("bias", other) is None  # another array: computed afresh
    cols.ahead.keep("bias", grad_y, kept)
    assert cols.ahead.take("bias", grad_y) is kept
    assert cols.ahead.take("bias", grad_y) is None  # taken once
