"""conv2d kernels against a plain-loop NumPy reference (float64) and against PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from minitorch_accel.backends import conv_kernels as ck
from minitorch_accel.backends import image_geometry as geometry

Case = tuple[tuple[int, int, int, int], tuple[int, int, int, int], Any, Any, Any, int]

# (x shape, w shape, stride, padding, dilation, groups)
CASES: list[Case] = [
    ((2, 1, 7, 8), (3, 1, 3, 3), 1, 0, 1, 1),  # first-layer shape: kernel-major cols
    ((1, 3, 6, 5), (4, 3, 2, 3), (2, 1), (1, 2), 1, 1),  # batch 1, non-square everything
    ((2, 3, 9, 7), (2, 3, 3, 2), 1, 1, (2, 1), 1),  # dilation
    ((2, 16, 9, 7), (8, 16, 3, 3), 2, 1, 1, 1),  # channels-last cols, stride 2
    ((1, 16, 9, 7), (8, 8, 2, 3), (1, 2), (2, 0), (2, 1), 2),  # groups, channels-last
    ((2, 4, 5, 6), (6, 2, 3, 3), 1, 1, 1, 2),  # groups, kernel-major
    ((2, 8, 5, 5), (8, 1, 3, 3), 1, 1, 1, 8),  # depthwise
    ((3, 8, 5, 5), (16, 8, 5, 5), 1, 0, 1, 1),  # kernel as large as the input
    ((2, 2, 4, 4), (3, 2, 1, 1), 3, 0, 1, 1),  # 1x1 kernel, stride > kernel
]


def reference_conv(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> np.ndarray:
    """y[n, o, i, j] = sum(patch * w[o]) + b[o], one output element at a time."""
    (sh, sw), (ph, pw), (dh, dw) = (geometry.pair(v, "") for v in (stride, padding, dilation))
    n_, _, h, wd = x.shape
    o_, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    y = np.zeros((n_, o_, oh, ow))
    for n in range(n_):
        for o in range(o_):
            g = o // (o_ // groups)
            for i in range(oh):
                for j in range(ow):
                    patch = xp[
                        n,
                        g * cg : (g + 1) * cg,
                        i * sh : i * sh + dh * (kh - 1) + 1 : dh,
                        j * sw : j * sw + dw * (kw - 1) + 1 : dw,
                    ]
                    y[n, o, i, j] = (patch * w[o]).sum() + (0.0 if b is None else b[o])
    return y


def reference_grads(
    x: np.ndarray,
    w: np.ndarray,
    gy: np.ndarray,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """grad_x, grad_w, grad_b by scattering every output element's gradient over its patch."""
    (sh, sw), (ph, pw), (dh, dw) = (geometry.pair(v, "") for v in (stride, padding, dilation))
    o_, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    gxp, gw = np.zeros_like(xp), np.zeros_like(w)
    for n, o, i, j in np.ndindex(*gy.shape):
        g = o // (o_ // groups)
        index = (
            n,
            slice(g * cg, (g + 1) * cg),
            slice(i * sh, i * sh + dh * (kh - 1) + 1, dh),
            slice(j * sw, j * sw + dw * (kw - 1) + 1, dw),
        )
        gxp[index] += gy[n, o, i, j] * w[o]
        gw[o] += gy[n, o, i, j] * xp[index]
    gx = gxp[:, :, ph : ph + x.shape[2], pw : pw + x.shape[3]]
    return gx, gw, gy.sum(axis=(0, 2, 3))


def random_case(case: Case, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x_shape, w_shape = case[0], case[1]
    return (
        rng.standard_normal(x_shape),
        rng.standard_normal(w_shape),
        rng.standard_normal(w_shape[0]),
    )


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("layout", ["nchw", "nhwc", "strided"])
def test_conv2d_matches_loops(case: Case, layout: str) -> None:
    x, w, b = random_case(case)
    _, _, stride, padding, dilation, groups = case
    if layout == "nhwc":  # same values, channels-last memory (as our conv outputs are)
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    elif layout == "strided":
        x = np.repeat(x, 2, axis=3)[..., ::2]
    y, cols = ck.conv2d_forward(np, x, w, b, stride, padding, dilation, groups)
    np.testing.assert_allclose(y, reference_conv(x, w, b, *case[2:]), rtol=1e-12, atol=1e-12)

    gy = np.random.default_rng(1).standard_normal(y.shape)
    gx_ref, gw_ref, gb_ref = reference_grads(x, w, gy, stride, padding, dilation, groups)
    gx = ck.conv2d_grad_input(np, gy, w, x.shape, stride, padding, dilation, groups)
    assert gx.shape == x.shape
    np.testing.assert_allclose(gx, gx_ref, rtol=1e-12, atol=1e-12)
    for source in (cols, x):
        gw = ck.conv2d_grad_weight(np, gy, source, w.shape, stride, padding, dilation, groups)
        np.testing.assert_allclose(gw, gw_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ck.conv2d_grad_bias(np, gy), gb_ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("channels_last_min", [1, 1000])
@pytest.mark.parametrize("case", CASES[:6])
def test_both_cols_layouts_agree(
    case: Case, channels_last_min: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(geometry, "_CHANNELS_LAST_MIN", channels_last_min)
    x, w, b = random_case(case, seed=3)
    y, cols = ck.conv2d_forward(np, x, w, b, *case[2:])
    assert cols.geometry.channels_last == (channels_last_min == 1)
    np.testing.assert_allclose(y, reference_conv(x, w, b, *case[2:]), rtol=1e-12, atol=1e-12)
    gy = np.random.default_rng(4).standard_normal(y.shape)
    gx_ref, gw_ref, _ = reference_grads(x, w, gy, *case[2:])
    np.testing.assert_allclose(
        ck.conv2d_grad_input(np, gy, w, x.shape, *case[2:]), gx_ref, rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(
        ck.conv2d_grad_weight(np, gy, cols, w.shape, *case[2:]), gw_ref, rtol=1e-12, atol=1e-12
    )


def test_output_is_channels_last_view_and_grad_layouts_accepted() -> None:
    x, w, b = random_case(CASES[3])
    y, _ = ck.conv2d_forward(np, x, w, b, 2, 1)
    assert ck.physical_order(y) == ck.NHWC  # NCHW logical, NHWC in memory: no copy made
    gy = np.random.default_rng(2).standard_normal(y.shape)
    gy_nchw, gy_nhwc = (
        np.ascontiguousarray(gy),
        gy.transpose(0, 2, 3, 1).copy().transpose(0, 3, 1, 2),
    )
    for grad in (gy_nchw, gy_nhwc, gy[:, :, ::-1, :][:, :, ::-1, :]):
        np.testing.assert_allclose(
            ck.conv2d_grad_input(np, grad, w, x.shape, 2, 1),
            reference_grads(x, w, gy, 2, 1, 1, 1)[0],
            atol=1e-12,
        )
        np.testing.assert_allclose(ck.conv2d_grad_bias(np, grad), gy.sum(axis=(0, 2, 3)))


def test_float32_without_bias() -> None:
    x, w, _ = (a.astype(np.float32) for a in random_case(CASES[3]))
    y, _ = ck.conv2d_forward(np, x, w, None, 2, 1)
    assert y.dtype == np.float32
    np.testing.assert_allclose(
        y, reference_conv(x.astype(float), w.astype(float), None, 2, 1, 1, 1), rtol=1e-4, atol=1e-4
    )


@pytest.mark.parametrize(
    "x_shape, w_shape, kwargs, message",
    [
        ((2, 3, 8), (4, 3, 3, 3), {}, "4-D"),
        ((2, 3, 8, 8), (4, 2, 3, 3), {}, "3 channels"),
        ((2, 4, 8, 8), (4, 2, 3, 3), {"groups": 3}, "groups=3 must divide"),
        ((2, 4, 8, 8), (3, 2, 3, 3), {"groups": 2}, "groups=2 must divide"),
        ((2, 3, 4, 4), (4, 3, 5, 5), {}, "larger than the padded input"),
        ((2, 3, 4, 4), (4, 3, 3, 3), {"dilation": 2}, "larger than the padded input"),
        ((2, 3, 8, 8), (4, 3, 3, 3), {"stride": 0}, "must be positive"),
        ((2, 3, 8, 8), (4, 3, 3, 3), {"dilation": (1, -1)}, "must be positive"),
        ((2, 3, 8, 8), (4, 3, 3, 3), {"padding": -1}, "must not be negative"),
    ],
)
def test_errors_name_the_shapes(
    x_shape: tuple[int, ...], w_shape: tuple[int, ...], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message) as info:
        ck.conv2d_forward(np, np.zeros(x_shape), np.zeros(w_shape), **kwargs)
    assert str(tuple(x_shape)) in str(info.value) and str(tuple(w_shape)) in str(info.value)


def test_bias_dtype_and_grad_shape_errors() -> None:
    x, w = np.zeros((1, 2, 4, 4)), np.zeros((3, 2, 3, 3))
    with pytest.raises(ValueError, match=r"bias \(2,\)"):
        ck.conv2d_forward(np, x, w, np.zeros(2))
    with pytest.raises(TypeError, match="dtypes differ"):
        ck.conv2d_forward(np, x.astype(np.float32), w)
    with pytest.raises(ValueError, match="grad_output"):
        ck.conv2d_grad_input(np, np.zeros((1, 3, 3, 3)), w, x.shape)
    _, cols = ck.conv2d_forward(np, x, w)
    with pytest.raises(ValueError, match="cols were made for"):
        ck.conv2d_grad_weight(np, np.zeros((1, 3, 1, 1)), cols, w.shape, stride=2)


def test_buffer_cache_reuses_only_released_buffers() -> None:
    cache = ck.BufferCache(max_bytes=1 << 24, min_bytes=0)
    a = cache.empty(np, (64, 64), np.float32)
    b = cache.empty(np, (64, 64), np.float32)
    assert not np.shares_memory(a, b)  # a is still alive
    a_view = a[1:]
    del a
    c = cache.empty(np, (4096,), np.float32)
    assert not np.shares_memory(c, a_view) and not np.shares_memory(c, b)
    del a_view, c
    d = cache.empty(np, (32, 128), np.float32)
    assert cache.held_bytes == 3 * 64 * 64 * 4
    del d
    cache.clear()
    assert cache.held_bytes == 0


def test_buffer_cache_respects_its_limit() -> None:
    cache = ck.BufferCache(max_bytes=1000, min_bytes=0)
    keep = [cache.empty(np, (100,), np.float64) for _ in range(2)]
    assert cache.held_bytes == 800 and all(k.shape == (100,) for k in keep)
    del keep
    cache.empty(np, (125,), np.float64)  # the free (100,) buffers are dropped to make room
    assert cache.held_bytes == 1000


@pytest.mark.parametrize("case", CASES)
def test_matches_torch_float32(case: Case) -> None:
    torch = pytest.importorskip("torch")
    x, w, b = (a.astype(np.float32) for a in random_case(case, seed=7))
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    ty = torch.nn.functional.conv2d(tx, tw, tb, *case[2:])
    gy = np.random.default_rng(8).standard_normal(tuple(ty.shape)).astype(np.float32)
    ty.backward(torch.from_numpy(gy))
    y, cols = ck.conv2d_forward(np, x, w, b, *case[2:])
    np.testing.assert_allclose(y, ty.detach().numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(
        ck.conv2d_grad_input(np, gy, w, x.shape, *case[2:]), tx.grad.numpy(), rtol=1e-4, atol=1e-4
    )
    np.testing.assert_allclose(
        ck.conv2d_grad_weight(np, gy, cols, w.shape, *case[2:]),
        tw.grad.numpy(),
        rtol=1e-4,
        atol=1e-4,
    )
    np.testing.assert_allclose(ck.conv2d_grad_bias(np, gy), tb.grad.numpy(), rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------- autograd Functions
mta = pytest.importorskip("minitorch_accel")
F = pytest.importorskip("minitorch_accel.nn.functional")
gradcheck_mod = pytest.importorskip("minitorch_accel.utils.gradcheck")

SMALL_CASES = [  # (x shape, w shape, conv kwargs)
    ((2, 3, 5, 6), (4, 3, 3, 2), {"stride": (2, 1), "padding": 1, "dilation": (1, 2)}),
    ((1, 4, 5, 5), (4, 2, 2, 2), {"groups": 2}),
    ((1, 16, 4, 4), (2, 16, 3, 3), {"padding": 1}),  # channels-last cols
]


def _tensors(
    x_shape: tuple[int, ...], w_shape: tuple[int, ...], bias: bool = True, seed: int = 0
) -> list[Any]:
    rng = np.random.default_rng(seed)
    made = [
        mta.tensor(rng.standard_normal(x_shape), requires_grad=True),
        mta.tensor(rng.standard_normal(w_shape), requires_grad=True),
    ]
    if bias:
        made.append(mta.tensor(rng.standard_normal(w_shape[0]), requires_grad=True))
    return made


@pytest.mark.parametrize("x_shape, w_shape, kwargs", SMALL_CASES)
def test_conv2d_gradcheck(
    x_shape: tuple[int, ...], w_shape: tuple[int, ...], kwargs: dict[str, Any]
) -> None:
    inputs = _tensors(x_shape, w_shape)
    assert gradcheck_mod.gradcheck(lambda x, w, b: F.conv2d(x, w, b, **kwargs), inputs)


@pytest.mark.parametrize("x_shape, w_shape, kwargs", SMALL_CASES[:2])
def test_conv2d_gradgradcheck(
    x_shape: tuple[int, ...], w_shape: tuple[int, ...], kwargs: dict[str, Any]
) -> None:
    inputs = _tensors(x_shape, w_shape)
    assert gradcheck_mod.gradgradcheck(lambda x, w, b: F.conv2d(x, w, b, **kwargs), inputs)


def test_conv2d_autograd_matches_torch_and_frees_cols() -> None:
    torch = pytest.importorskip("torch")
    x, w, b = _tensors((3, 8, 9, 9), (16, 8, 3, 3), seed=1)
    y = F.conv2d(x, w, b, stride=2, padding=1)
    node = y.grad_fn
    assert node is not None and node.cols is not None  # kept for grad_weight
    (y * y).sum().backward()
    tx, tw, tb = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (x, w, b))
    ty = torch.nn.functional.conv2d(tx, tw, tb, stride=2, padding=1)
    (ty * ty).sum().backward()
    for mine, theirs in ((x, tx), (w, tw), (b, tb)):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-10)
    assert not hasattr(node, "cols")  # the graph was freed, and the cols with it


def test_conv2d_keeps_no_cols_when_weight_is_frozen_or_no_grad() -> None:
    x, w, b = _tensors((1, 2, 5, 5), (3, 2, 3, 3))
    w.requires_grad_(False)
    y = F.conv2d(x, w, b)
    assert y.grad_fn is not None and y.grad_fn.cols is None
    with mta.no_grad():
        assert F.conv2d(x, w, b).grad_fn is None


def test_conv2d_functional_errors() -> None:
    x, w, b = _tensors((1, 2, 5, 5), (3, 2, 3, 3))
    with pytest.raises(TypeError, match="weight must be a Tensor"):
        F.conv2d(x, np.zeros((3, 2, 3, 3)))
    with pytest.raises(ValueError, match=r"input \(1, 2, 5, 5\), weight \(3, 3, 3, 3\)"):
        F.conv2d(x, mta.zeros(3, 3, 3, 3, dtype=mta.float64))
    with pytest.raises(TypeError, match="dtypes differ"):
        F.conv2d(x, w.detach().float())


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "reference"])
@pytest.mark.parametrize("groups", [1, 2])
def test_an_empty_batch_convolves_on_both_tiers_as_pytorch(fast: bool, groups: int) -> None:
    # PyTorch accepts N = 0: an empty output and all-zero weight and bias gradients
    x = mta.zeros(0, 4, 6, 6, requires_grad=True)
    w = mta.randn(6, 4 // groups, 3, 3, requires_grad=True)
    b = mta.randn(6, requires_grad=True)
    with mta.fast_paths(fast):
        y = mta.nn.functional.conv2d(x, w, b, padding=1, groups=groups)
        (y * 2.0).sum().backward()
    assert y.shape == (0, 6, 6, 6)
    assert x.grad is not None and x.grad.shape == (0, 4, 6, 6)
    assert w.grad is not None and b.grad is not None
    assert w.grad.shape == w.shape and not w.grad.array.any()
    assert b.grad.tolist() == [0.0] * 6


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "reference"])
def test_one_unbatched_image_runs_as_a_batch_of_one_as_pytorch(fast: bool) -> None:
    rng = np.random.default_rng(5)
    image = rng.standard_normal((2, 9, 9))
    w, b = rng.standard_normal((4, 2, 3, 3)), rng.standard_normal(4)
    F = mta.nn.functional

    def run(op: Any, x: np.ndarray) -> tuple[Any, Any, Any]:
        xt = mta.tensor(x, requires_grad=True)
        wt, bt = mta.tensor(w, requires_grad=True), mta.tensor(b, requires_grad=True)
        with mta.fast_paths(fast):
            y = op(xt, wt, bt)
            (y * y).sum().backward()
        assert xt.grad is not None and wt.grad is not None
        return y.array, xt.grad.array, wt.grad.array

    ops = [
        lambda x, w, b: F.conv2d(x, w, b, padding=1),
        lambda x, w, b: F.max_pool2d(F.conv2d(x, w, b), 2),
        lambda x, w, b: F.avg_pool2d(F.conv2d(x, w, b), 3, 2, 1),
        lambda x, w, b: F.adaptive_avg_pool2d(F.conv2d(x, w, b), 2),
        lambda x, w, b: mta.nn.Sequential(mta.nn.ReLU(), mta.nn.MaxPool2d(2))(F.conv2d(x, w, b)),
    ]
    for op in ops:
        unbatched, batched = run(op, image), run(op, image[None])
        assert unbatched[0].shape == batched[0].shape[1:]
        np.testing.assert_allclose(unbatched[0], batched[0][0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(unbatched[1], batched[1][0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(unbatched[2], batched[2], rtol=1e-12, atol=1e-12)
    conv = mta.nn.Conv2d(2, 4, 3)
    assert conv(mta.tensor(image, dtype=mta.float32)).shape == (4, 7, 7)
    signal = mta.nn.Conv1d(2, 3, 3)(mta.zeros(2, 10))
    assert signal.shape == (3, 8)


def test_one_unbatched_image_convolves_as_pytorchs() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    image = rng.standard_normal((2, 9, 9))
    w, b = rng.standard_normal((4, 2, 3, 3)), rng.standard_normal(4)
    F = mta.nn.functional
    got = F.conv2d(mta.tensor(image), mta.tensor(w), mta.tensor(b), padding=1)
    want = torch.nn.functional.conv2d(
        torch.tensor(image), torch.tensor(w), torch.tensor(b), padding=1
    )
    np.testing.assert_allclose(got.array, want.numpy(), rtol=1e-10, atol=1e-12)
