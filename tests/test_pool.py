"""Pooling kernels against plain-loop NumPy references (float64) and against PyTorch."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from minitorch_accel.backends import conv_kernels as ck
from minitorch_accel.backends import image_geometry as geometry
from minitorch_accel.backends import pool_kernels as pk
from minitorch_accel.ops.pool import adaptive_avg_pool2d_backward, adaptive_avg_pool2d_forward

# (x shape, kernel_size, stride, padding)
CASES: list[tuple[tuple[int, int, int, int], Any, Any, Any]] = [
    ((2, 3, 8, 8), 2, None, 0),  # the CNN's 2x2 / stride 2
    ((2, 3, 9, 7), 2, 2, 0),  # odd sizes: last row / column unused
    ((1, 2, 7, 9), 3, 2, 1),  # overlapping windows, padding
    ((2, 2, 7, 9), (3, 2), (1, 2), (1, 1)),  # non-square
    ((1, 2, 6, 6), 1, 2, 0),  # 1x1 windows with gaps
    ((2, 1, 8, 8), 3, 3, 0),  # tiles, C = 1
    ((1, 1, 5, 5), 5, 1, 2),  # single huge window, maximal padding
]


def _windows(x: np.ndarray, kernel: Any, stride: Any, padding: Any, fill: float):  # type: ignore[no-untyped-def]
    """Yield (n, c, i, j, padded window, padded-array slices) one output at a time."""
    (kh, kw), (ph, pw) = geometry.pair(kernel, ""), geometry.pair(padding, "")
    sh, sw = (kh, kw) if stride is None else geometry.pair(stride, "")
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=fill)
    oh, ow = (xp.shape[2] - kh) // sh + 1, (xp.shape[3] - kw) // sw + 1
    for n, c, i, j in np.ndindex(x.shape[0], x.shape[1], oh, ow):
        index = (n, c, slice(i * sh, i * sh + kh), slice(j * sw, j * sw + kw))
        yield (n, c, i, j), xp, index, (oh, ow)


def reference_max(
    x: np.ndarray, gy: np.ndarray, kernel: Any, stride: Any, padding: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Max and its gradient, which goes to the first maximum in row-major order
    (np.argmax), or in a window holding NaN to its last NaN (as PyTorch's loop, which
    keeps each value greater than the best so far or NaN).
    """
    ph, pw = geometry.pair(padding, "")
    y, gxp = np.zeros(gy.shape), None
    for out, xp, index, _ in _windows(x, kernel, stride, padding, fill=-np.inf):
        gxp = np.zeros_like(xp) if gxp is None else gxp
        win = xp[index]
        y[out] = win.max()
        flat = np.flatnonzero(np.isnan(win))
        at = int(flat[-1]) if flat.size else int(np.argmax(win))
        first = np.unravel_index(at, win.shape)
        gxp[index][first] += gy[out]
    assert gxp is not None
    return y, gxp[:, :, ph : ph + x.shape[2], pw : pw + x.shape[3]]


def reference_avg(
    x: np.ndarray, gy: np.ndarray, kernel: Any, stride: Any, padding: Any, count_include_pad: bool
) -> tuple[np.ndarray, np.ndarray]:
    ph, pw = geometry.pair(padding, "")
    ones = np.pad(np.ones_like(x), ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    y, gxp = np.zeros(gy.shape), None
    for out, xp, index, _ in _windows(x, kernel, stride, padding, fill=0.0):
        gxp = np.zeros_like(xp) if gxp is None else gxp
        count = xp[index].size if count_include_pad else ones[index].sum()
        y[out] = xp[index].sum() / count
        gxp[index] += gy[out] / count
    assert gxp is not None
    return y, gxp[:, :, ph : ph + x.shape[2], pw : pw + x.shape[3]]


def _grad(shape: tuple[int, ...], args: tuple[Any, Any, Any]) -> np.ndarray:
    kernel, stride, padding = args
    for _, _, _, (oh, ow) in _windows(
        np.zeros((1, 1, *shape[2:])), kernel, stride, padding, fill=0.0
    ):
        return np.random.default_rng(5).standard_normal((*shape[:2], oh, ow))
    raise AssertionError


def _layouts(x: np.ndarray) -> list[np.ndarray]:
    return [x, np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("ties", [False, True])
def test_max_pool_matches_loops(case: Any, ties: bool) -> None:
    shape, kernel, stride, padding = case
    args = (kernel, stride, padding)
    x = np.random.default_rng(0).standard_normal(shape)
    if ties:  # ReLU zeros and repeated values: many windows with tied maxima
        x = np.maximum(np.round(x), 0)
    gy = _grad(shape, args)
    y_ref, gx_ref = reference_max(x, gy, *args)
    for xl in _layouts(x):
        for gl in _layouts(gy):
            y = pk.max_pool2d_forward(np, xl, *args)
            assert ck.physical_order(y) == ck.physical_order(xl)
            np.testing.assert_array_equal(y, y_ref)
            gx = pk.max_pool2d_backward(np, gl, xl, y, *args)
            np.testing.assert_allclose(gx, gx_ref, rtol=1e-12, atol=1e-14)


def _with_nans(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """ReLU-like ties, with NaN in about one pixel of eight (some windows hold two)."""
    rng = np.random.default_rng(seed)
    x = np.maximum(np.round(rng.standard_normal(shape)), 0)
    x.flat[rng.choice(x.size, size=max(2, x.size // 8), replace=False)] = np.nan
    x[0, 0, 0, 0] = np.nan  # in a window whatever the stride
    return x


@pytest.mark.parametrize("case", CASES)
def test_max_pool_nan_windows_send_the_gradient_to_their_last_nan(case: Any) -> None:
    """Both tiers, both layouts, against the loops (and PyTorch where installed); the
    pick of second derivatives stays the routing's adjoint.
    """
    shape, kernel, stride, padding = case
    args = (kernel, stride, padding)
    x, gy = _with_nans(shape, 7), _grad(shape, args)
    y_ref, gx_ref = reference_max(x, gy, *args)
    assert np.isnan(y_ref).any()
    for fast in (True, False):
        with mta.fast_paths(fast):
            for xl in _layouts(x):
                t = mta.from_numpy(xl).requires_grad_(True)
                y = F.max_pool2d(t, kernel, stride, padding)
                y.backward(mta.tensor(gy))
                np.testing.assert_array_equal(y.detach().numpy(), y_ref)
                assert t.grad is not None
                np.testing.assert_allclose(t.grad.numpy(), gx_ref, rtol=1e-12, atol=1e-14)
    v = np.random.default_rng(8).standard_normal(shape)
    routed = pk.max_pool2d_backward(np, gy, x, y_ref, *args)
    picked = pk.max_pool2d_pick(np, v, x, y_ref, *args)
    assert float((routed * v).sum()) == pytest.approx(float((gy * picked).sum()), rel=1e-12)
    torch = pytest.importorskip("torch")
    tx = torch.tensor(x, requires_grad=True)
    torch.nn.functional.max_pool2d(tx, kernel, stride, padding).backward(torch.tensor(gy))
    np.testing.assert_allclose(gx_ref, tx.grad.numpy(), rtol=1e-12, atol=1e-14)


def _nonfinite_grad(shape: tuple[int, ...], args: tuple[Any, Any, Any]) -> np.ndarray:
    """:func:`_grad` with inf, -inf and NaN at a few windows."""
    gy = _grad(shape, args)
    flat = gy.reshape(-1)
    flat[0], flat[-1], flat[flat.size // 2] = np.inf, -np.inf, np.nan
    return gy


@pytest.mark.parametrize("case", CASES)
def test_max_pool_sends_an_infinite_gradient_to_the_maximum_only(case: Any) -> None:
    """An inf or NaN incoming gradient reaches the window's maximum alone: the other
    pixels' gradient is exactly 0, as PyTorch's (a multiply by a 0/1 mask would give
    ``inf * 0 = NaN`` there). Both tiers, both layouts, the kernel and the loops (and
    PyTorch where installed; overlapping windows add in another order: 1e-12); the
    second derivative's pick likewise for an infinite ``v``.
    """
    shape, kernel, stride, padding = case
    args = (kernel, stride, padding)
    x = np.maximum(np.round(np.random.default_rng(4).standard_normal(shape)), 0)  # ties
    gy = _nonfinite_grad(shape, args)
    y_ref, gx_ref = reference_max(x, gy, *args)
    assert (gx_ref == 0).any() and not np.isfinite(gx_ref).all()
    for xl in _layouts(x):
        for gl in _layouts(gy):
            gx = pk.max_pool2d_backward(np, gl, xl, y_ref, *args)
            np.testing.assert_allclose(gx, gx_ref, rtol=1e-12, atol=0)
    for fast in (True, False):
        with mta.fast_paths(fast):
            t = mta.from_numpy(x).requires_grad_(True)
            F.max_pool2d(t, kernel, stride, padding).backward(mta.tensor(gy))
            assert t.grad is not None
            np.testing.assert_allclose(t.grad.numpy(), gx_ref, rtol=1e-12, atol=0)
    v = np.random.default_rng(9).standard_normal(shape)
    v.reshape(-1)[::2] = np.inf  # at pixels the pick reads and at pixels it must not
    (ph, pw), picked_ref = geometry.pair(padding, ""), np.zeros(y_ref.shape)
    v_padded = np.pad(v, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    for out, xp, index, _ in _windows(x, kernel, stride, padding, fill=-np.inf):
        at = np.unravel_index(int(np.argmax(xp[index])), xp[index].shape)
        picked_ref[out] = v_padded[index][at]
    np.testing.assert_array_equal(pk.max_pool2d_pick(np, v, x, y_ref, *args), picked_ref)
    torch = pytest.importorskip("torch")
    tx = torch.tensor(x, requires_grad=True)
    torch.nn.functional.max_pool2d(tx, kernel, stride, padding).backward(torch.tensor(gy))
    np.testing.assert_allclose(gx_ref, tx.grad.numpy(), rtol=1e-12, atol=0)


def test_max_pool_ties_send_gradient_to_exactly_one_element() -> None:
    x = np.zeros((2, 3, 6, 6))  # every window is one big tie
    y = pk.max_pool2d_forward(np, x, 2)
    gx = pk.max_pool2d_backward(np, np.ones(y.shape), x, y, 2)
    assert gx.sum() == y.size
    np.testing.assert_array_equal(gx[:, :, ::2, ::2], 1.0)  # the first element of each window


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool_matches_loops(case: Any, count_include_pad: bool) -> None:
    shape, kernel, stride, padding = case
    x = np.random.default_rng(1).standard_normal(shape)
    gy = _grad(shape, (kernel, stride, padding))
    y_ref, gx_ref = reference_avg(x, gy, kernel, stride, padding, count_include_pad)
    for xl, gl in zip(_layouts(x), _layouts(gy)[::-1], strict=True):
        y = pk.avg_pool2d_forward(np, xl, kernel, stride, padding, count_include_pad)
        np.testing.assert_allclose(y, y_ref, rtol=1e-12, atol=1e-14)
        gx = pk.avg_pool2d_backward(np, gl, shape, kernel, stride, padding, count_include_pad)
        np.testing.assert_allclose(gx, gx_ref, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(
    "shape, size",
    [((2, 3, 8, 8), 1), ((2, 3, 9, 7), (4, 3)), ((1, 2, 5, 5), (7, 2)), ((1, 1, 6, 6), 3)],
)
def test_adaptive_avg_pool_matches_loops(shape: tuple[int, ...], size: Any) -> None:
    x = np.random.default_rng(2).standard_normal(shape)
    oh, ow = geometry.pair(size, "")
    gy = np.random.default_rng(3).standard_normal((*shape[:2], oh, ow))
    y_ref, gx_ref = np.zeros(gy.shape), np.zeros(shape)
    h, w = shape[2:]
    for i, j in np.ndindex(oh, ow):
        rows = slice(i * h // oh, math.ceil((i + 1) * h / oh))
        cols = slice(j * w // ow, math.ceil((j + 1) * w / ow))
        y_ref[:, :, i, j] = x[:, :, rows, cols].mean(axis=(2, 3))
        count = (rows.stop - rows.start) * (cols.stop - cols.start)
        gx_ref[:, :, rows, cols] += gy[:, :, i, j][:, :, None, None] / count
    np.testing.assert_allclose(adaptive_avg_pool2d_forward(np, x, size), y_ref, atol=1e-14)
    np.testing.assert_allclose(adaptive_avg_pool2d_backward(np, gy, shape), gx_ref, atol=1e-14)


@pytest.mark.parametrize(
    "shape, args, message",
    [
        ((2, 3, 8), (2, None, 0), "4-D"),
        ((2, 3, 8, 8), (0, None, 0), "must be positive"),
        ((2, 3, 8, 8), (2, (1, 0), 0), "must be positive"),
        ((2, 3, 8, 8), (2, None, 2), "at most half"),
        ((2, 3, 8, 8), (3, None, -1), "must be >= 0"),
        ((2, 3, 2, 8), (3, None, 0), "larger than the padded input"),
    ],
)
def test_pool_errors_name_the_shape(shape: tuple[int, ...], args: Any, message: str) -> None:
    for forward in (pk.max_pool2d_forward, pk.avg_pool2d_forward):
        with pytest.raises(ValueError, match=message) as info:
            forward(np, np.zeros(shape), *args)
        assert str(tuple(shape)) in str(info.value)
    with pytest.raises(ValueError, match="positive"):
        adaptive_avg_pool2d_forward(np, np.zeros((1, 1, 4, 4)), 0)


def test_backward_checks_grad_shape() -> None:
    x = np.zeros((1, 1, 4, 4))
    y = pk.max_pool2d_forward(np, x, 2)
    with pytest.raises(ValueError, match="grad_output"):
        pk.max_pool2d_backward(np, np.zeros((1, 1, 3, 3)), x, y, 2)
    with pytest.raises(ValueError, match="grad_output"):
        pk.avg_pool2d_backward(np, np.zeros((1, 1, 3, 3)), x.shape, 2)


@pytest.mark.parametrize("case", CASES)
def test_matches_torch_float32(case: Any) -> None:
    torch = pytest.importorskip("torch")
    functional = torch.nn.functional
    shape, kernel, stride, padding = case
    x = np.maximum(np.round(np.random.default_rng(4).standard_normal(shape) * 2), 0)
    x = x.astype(np.float32)
    for name, forward, backward in (
        ("max", pk.max_pool2d_forward, pk.max_pool2d_backward),
        ("avg", pk.avg_pool2d_forward, pk.avg_pool2d_backward),
    ):
        tx = torch.tensor(x, requires_grad=True)
        ty = getattr(functional, f"{name}_pool2d")(tx, kernel, stride, padding)
        gy = np.random.default_rng(6).standard_normal(tuple(ty.shape)).astype(np.float32)
        ty.backward(torch.from_numpy(gy))
        y = forward(np, x, kernel, stride, padding)
        gx = (
            backward(np, gy, x, y, kernel, stride, padding)
            if name == "max"
            else backward(np, gy, x.shape, kernel, stride, padding)
        )
        np.testing.assert_allclose(y, ty.detach().numpy(), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-6, atol=1e-6)
    tx = torch.tensor(x, requires_grad=True)
    ty = functional.adaptive_avg_pool2d(tx, (3, 2))
    ty.backward(torch.ones_like(ty))
    np.testing.assert_allclose(
        adaptive_avg_pool2d_forward(np, x, (3, 2)), ty.detach().numpy(), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(
        adaptive_avg_pool2d_backward(np, np.ones(ty.shape, np.float32), x.shape),
        tx.grad.numpy(),
        rtol=1e-5,
        atol=1e-6,
    )


# ----------------------------------------------------------------- autograd Functions
mta = pytest.importorskip("minitorch_accel")
F = pytest.importorskip("minitorch_accel.nn.functional")
gradcheck_mod = pytest.importorskip("minitorch_accel.utils.gradcheck")

POOLS = [
    ("max_pool2d", {"kernel_size": 2}),
    ("max_pool2d", {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("avg_pool2d", {"kernel_size": (3, 2), "stride": (1, 2), "padding": (1, 1)}),
    ("avg_pool2d", {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False}),
    ("adaptive_avg_pool2d", {"output_size": (3, 2)}),
]


@pytest.mark.parametrize("name, kwargs", POOLS)
def test_pool_gradcheck_and_gradgradcheck(name: str, kwargs: dict[str, Any]) -> None:
    # distinct values: finite differences must not cross a change of the maximum
    values = np.random.default_rng(0).permutation(2 * 3 * 7 * 6).reshape(2, 3, 7, 6) / 10.0
    x = mta.tensor(values, requires_grad=True)
    fn = getattr(F, name)
    assert gradcheck_mod.gradcheck(lambda t: fn(t, **kwargs), [x], eps=1e-4)
    assert gradcheck_mod.gradgradcheck(lambda t: fn(t, **kwargs), [x], eps=1e-4)


def test_max_pool_autograd_ties_and_channels_last_input() -> None:
    torch = pytest.importorskip("torch")
    x = np.maximum(np.round(np.random.default_rng(1).standard_normal((2, 4, 6, 6))), 0)
    nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    t = mta.tensor(nhwc, requires_grad=True)
    y = F.max_pool2d(t.relu(), 2)
    (y * mta.tensor(np.arange(y.numel(), dtype=float).reshape(y.shape))).sum().backward()
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.max_pool2d(tx.relu(), 2)
    (ty * torch.arange(ty.numel(), dtype=torch.float64).reshape(ty.shape)).sum().backward()
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    np.testing.assert_array_equal(t.grad.numpy(), tx.grad.numpy())


def test_pool_functional_errors() -> None:
    with pytest.raises(TypeError, match="floating point"):
        F.max_pool2d(mta.zeros(1, 1, 4, 4, dtype=mta.int64), 2)
    with pytest.raises(TypeError, match="must be a Tensor"):
        F.avg_pool2d(np.zeros((1, 1, 4, 4)), 2)
    with pytest.raises(ValueError, match=r"input \(4, 4\)"):
        F.max_pool2d(mta.zeros(4, 4), 2)
    assert F.max_pool2d(mta.zeros(1, 4, 4), 2).shape == (1, 2, 2)  # unbatched, as PyTorch


@pytest.mark.parametrize("size", [(1, 1), (2, 3), (3, 2)])
def test_adaptive_avg_pool_keeps_an_infinity_inside_its_bins(size: tuple[int, int]) -> None:
    # bins stay apart: an inf (or NaN) reaches only the bins that hold it, not the others
    # through a 0 * inf, as PyTorch's; the reference is the plain mean of each bin
    x = np.arange(2 * 3 * 5 * 7, dtype=np.float64).reshape(2, 3, 5, 7)
    x[0, 1, 0, 0], x[1, 2, 4, 6] = np.inf, np.nan
    t = mta.tensor(x, requires_grad=True)
    y = F.adaptive_avg_pool2d(t, size)
    oh, ow = size
    expected = np.empty((2, 3, oh, ow))
    for i in range(oh):
        for j in range(ow):
            r0, r1 = i * 5 // oh, -(-(i + 1) * 5 // oh)
            c0, c1 = j * 7 // ow, -(-(j + 1) * 7 // ow)
            expected[:, :, i, j] = x[:, :, r0:r1, c0:c1].mean(axis=(2, 3))
    np.testing.assert_array_equal(np.isnan(y.array), np.isnan(expected))
    np.testing.assert_allclose(y.array, expected, rtol=1e-12)
    g = np.ones((2, 3, oh, ow))
    g[0, 0, 0, 0] = np.inf
    y.backward(mta.tensor(g))
    assert t.grad is not None
    assert np.isinf(t.grad.array[0, 0]).any() and np.isfinite(t.grad.array[1]).all()
    assert not np.isnan(t.grad.array).any()


@pytest.mark.parametrize("size", [(1, 1), (2, 3), (3, 2)])
def test_adaptive_avg_pool_with_an_infinity_equals_pytorchs(size: tuple[int, int]) -> None:
    torch = pytest.importorskip("torch")
    x = np.arange(2 * 3 * 5 * 7, dtype=np.float64).reshape(2, 3, 5, 7)
    x[0, 1, 0, 0], x[1, 2, 4, 6] = np.inf, np.nan
    g = np.ones((2, 3, *size))
    g[0, 0, 0, 0] = np.inf
    t = mta.tensor(x, requires_grad=True)
    y = F.adaptive_avg_pool2d(t, size)
    y.backward(mta.tensor(g))
    assert t.grad is not None
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.adaptive_avg_pool2d(tx, size)
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(y.array, ty.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(t.grad.array, tx.grad.numpy(), rtol=1e-12)
