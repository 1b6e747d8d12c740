"""The CuPy backend's fast paths on a GPU, against the generic ``xp`` code and NumPy.

Skipped without CuPy and a CUDA GPU (``pytest -m gpu`` selects them). Without a GPU the
same kernel sources run on the host in ``test_kernel_sources.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
import minitorch_accel.cuda as mcuda
from minitorch_accel.backends import conv_kernels as ck
from minitorch_accel.optim.adam import adam_update
from minitorch_accel.optim.sgd import sgd_update

gpu = pytest.mark.gpu


def image_kernel(name: str) -> Callable[..., Any]:
    """One of the image kernels the convolution and pooling fast paths call."""
    kernels = mta.Device("cuda").backend._fast  # type: ignore[attr-defined]
    return getattr(kernels, name)  # type: ignore[no-any-return]


def fast_path(name: str) -> Callable[..., Any]:
    kernel = mta.Device("cuda").backend.kernel(name)
    assert kernel is not None, name
    return kernel  # type: ignore[no-any-return]


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_and_cross_entropy_kernels(dtype: Any) -> None:
    import cupy as cp

    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 10)).astype(dtype)
    y = fast_path("relu_forward")(cp.asarray(x))
    np.testing.assert_array_equal(cp.asnumpy(y), np.maximum(x, 0))
    gy = rng.standard_normal(x.shape).astype(dtype)
    np.testing.assert_array_equal(
        cp.asnumpy(fast_path("relu_backward")(y, cp.asarray(gy))), gy * (x > 0)
    )
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for rows in (64, 5000):  # one block; then the per-row kernel and reductions
        x = rng.standard_normal((rows, 10)).astype(dtype)
        valid = rng.random(rows) > 0.2
        labels = cp.asarray(np.where(valid, rng.integers(0, 10, rows), -100))
        loss, lse, scale, counts = fast_path("cross_entropy_forward")(cp.asarray(x), labels, -100)
        assert scale is None and counts() == (int(valid.sum()), 0)
        x64 = x.astype(np.float64)
        log_p = x64 - x64.max(1, keepdims=True)
        log_p -= np.log(np.exp(log_p).sum(1, keepdims=True))
        safe = np.where(valid, cp.asnumpy(labels), 0)
        picked = log_p[np.arange(rows), safe]
        np.testing.assert_allclose(cp.asnumpy(loss), -picked * valid, rtol=tol, atol=tol)
        g = fast_path("cross_entropy_backward")(
            cp.asarray(x), labels, -100, lse, cp.asarray(valid * 0.5, dtype)
        )
        expected = (np.exp(log_p) - np.eye(10)[safe]) * (valid * 0.5)[:, None]
        np.testing.assert_allclose(cp.asnumpy(g), expected, rtol=tol, atol=tol)
        mean, _, scale, _ = fast_path("cross_entropy_forward")(cp.asarray(x), labels, -100, "mean")
        np.testing.assert_allclose(float(mean), -(picked * valid).sum() / valid.sum(), rtol=tol)
        g = fast_path("cross_entropy_backward")(
            cp.asarray(x), labels, -100, lse, cp.asarray(3.0, dtype), scale
        )
        expected = (np.exp(log_p) - np.eye(10)[safe]) * (valid * 3.0 / valid.sum())[:, None]
        np.testing.assert_allclose(cp.asnumpy(g), expected, rtol=tol, atol=tol)
    _, result = fast_path("label_count")(cp.asarray([3, -100, 10, -1, 9, -100]), 10, -100)
    assert result() == (2, 2)


@gpu
def test_bad_label_raises_at_backward_or_read_back() -> None:
    x = mta.zeros(3, 5, device="cuda", requires_grad=True)
    bad = mta.tensor([0, 7, 1], device="cuda")
    loss = mta.nn.functional.cross_entropy(x, bad)  # queued: the GPU is not stalled
    with pytest.raises(IndexError, match=r"label 7 is out of range for 5 classes"):
        loss.backward()
    assert x.grad is None  # nothing flowed
    loss = mta.nn.functional.cross_entropy(x, bad, reduction="sum")
    with pytest.raises(IndexError, match=r"label 7 is out of range for 5 classes"):
        loss.item()
    mta.nn.functional.cross_entropy(x, mta.tensor([-1, 0, 0], device="cuda"))
    with pytest.raises(IndexError, match=r"label -1 is out of range for 5 classes"):
        mcuda.synchronize()
    mcuda.synchronize()  # each error is raised once
    good = mta.nn.functional.cross_entropy(x, mta.tensor([0, -100, 4], device="cuda"))
    good.backward()
    expected = mta.nn.functional.cross_entropy(
        x.detach().cpu().requires_grad_(), mta.tensor([0, -100, 4])
    )
    assert good.item() == pytest.approx(expected.item(), rel=1e-6)


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel_size, stride, padding", [(2, None, 0), (3, 2, 1), ((3, 2), 1, 0)])
def test_max_pool_kernels_match_the_xp_path(
    dtype: Any, kernel_size: Any, stride: Any, padding: Any
) -> None:
    import cupy as cp

    from minitorch_accel.backends import pool_kernels as pk

    rng = np.random.default_rng(5)
    # ties everywhere (a ReLU's zeros, repeated values), a -inf and a NaN
    x = np.maximum(rng.integers(-2, 3, (2, 3, 7, 6)), 0).astype(dtype)
    x[0, 0, 0, 0], x[1, 2, 3, 3] = -np.inf, np.nan
    pool = {"kernel_size": kernel_size, "stride": stride, "padding": padding}
    geo = pk.pool_geometry("max_pool2d", x.shape, **pool)
    for layout in ("nchw", "nhwc"):
        gx = cp.asarray(x)
        if layout == "nhwc":
            gx = cp.ascontiguousarray(gx.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
        y = image_kernel("max_pool2d_forward")(gx, geo, layout == "nhwc")
        expected_y = pk.max_pool2d_forward(np, x, **pool)
        np.testing.assert_array_equal(cp.asnumpy(y), expected_y)
        gy = rng.standard_normal(geo.y_shape).astype(dtype)
        grad = image_kernel("max_pool2d_backward")(cp.asarray(gy), gx, y, geo, layout == "nhwc")
        np.testing.assert_array_equal(
            cp.asnumpy(grad), pk.max_pool2d_backward(np, gy, x, expected_y, **pool)
        )


@gpu
@pytest.mark.parametrize("amsgrad", [False, True])
def test_optimizer_kernels(amsgrad: bool) -> None:
    import cupy as cp

    rng = np.random.default_rng(1)
    p, m, v, vmax = rng.standard_normal(1000), np.zeros(1000), np.zeros(1000), np.zeros(1000)
    gpu_state = [cp.asarray(a) for a in (p, m, v, vmax)]
    buf, gpu_buf = np.zeros(1000), cp.zeros(1000)
    p_sgd, gpu_p_sgd = p.copy(), cp.asarray(p)
    for step in range(1, 4):
        grad = rng.standard_normal(1000)
        adam_update(
            np,
            p,
            grad,
            m,
            v,
            vmax if amsgrad else None,
            step,
            0.01,
            0.9,
            0.999,
            1e-8,
            0.1,
            step % 2 == 0,
            amsgrad,
            False,
        )
        fast_path("adam_update")(
            cp,
            gpu_state[0],
            cp.asarray(grad),
            *gpu_state[1:3],
            gpu_state[3] if amsgrad else None,
            step,
            0.01,
            0.9,
            0.999,
            1e-8,
            0.1,
            step % 2 == 0,
            amsgrad,
            False,
        )
        sgd_update(np, p_sgd, grad, buf, 0.1, 0.9, 0.0, True, 0.01, False, step == 1)
        fast_path("sgd_update")(
            cp, gpu_p_sgd, cp.asarray(grad), gpu_buf, 0.1, 0.9, 0.0, True, 0.01, False, step == 1
        )
    for found, expected in zip(gpu_state, (p, m, v, vmax), strict=True):
        np.testing.assert_allclose(cp.asnumpy(found), expected, rtol=1e-12)
    np.testing.assert_allclose(cp.asnumpy(gpu_p_sgd), p_sgd, rtol=1e-12)


@gpu
@pytest.mark.parametrize(
    "x_shape, w_shape, stride, padding, dilation, groups",
    [
        ((4, 1, 28, 28), (6, 1, 5, 5), 1, 2, 1, 1),
        ((4, 16, 14, 14), (32, 16, 3, 3), 2, 1, 1, 1),
        ((2, 8, 9, 7), (4, 4, 2, 3), 1, (2, 1), (2, 1), 2),
    ],
    ids=["lenet_conv1", "channels_last", "groups_dilation"],
)
def test_conv_kernels_match_the_xp_path(
    x_shape: Any, w_shape: Any, stride: Any, padding: Any, dilation: Any, groups: int
) -> None:
    import cupy as cp

    geo = ck.conv_geometry(x_shape, w_shape, stride, padding, dilation, groups)
    rng = np.random.default_rng(2)
    x = cp.asarray(rng.standard_normal(x_shape))
    x_nhwc = cp.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    for source in (x, x_nhwc):
        cols = image_kernel("im2col")(source, geo)
        cp.testing.assert_array_equal(cols, ck.im2col(cp, source, geo).matrix)
    w = cp.asarray(rng.standard_normal(w_shape))
    gy = cp.asarray(rng.standard_normal(geo.y_shape))
    expected = ck.conv2d_grad_input(cp, gy, w, x_shape, stride, padding, dilation, groups)
    cp.testing.assert_allclose(
        image_kernel("conv2d_grad_input")(gy, w, geo), expected, rtol=1e-11, atol=1e-12
    )
    c = cp.asarray(rng.standard_normal(cols.shape))
    lhs = float((image_kernel("im2col")(x, geo) * c).sum())
    assert lhs == pytest.approx(float((x * image_kernel("col2im")(c, geo)).sum()), rel=1e-11)


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_fast_path_every_layout(dtype: Any) -> None:
    import cupy as cp

    gemm = fast_path("gemm")
    rng = np.random.default_rng(7)
    for m, k, n in [(5, 3, 4), (1, 7, 1), (64, 1, 9)]:
        a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
        expected = a @ b
        tol = 1e-5 if dtype == np.float32 else 1e-12
        for ga in (cp.asarray(a), cp.asfortranarray(cp.asarray(a))):
            for gb in (cp.asarray(b), cp.asarray(b.T.copy()).T):
                out = gemm(ga, gb)
                assert out.flags.c_contiguous and out.shape == (m, n)
                np.testing.assert_allclose(cp.asnumpy(out), expected, rtol=tol, atol=tol)
                given = cp.empty((m, n), dtype)
                assert gemm(ga, gb, given) is given
                np.testing.assert_allclose(cp.asnumpy(given), expected, rtol=tol, atol=tol)
    a, b = cp.ones((4, 6), dtype), cp.ones((3, 5), dtype)
    assert gemm(a[:, ::2], b) is None  # strided operand: the caller uses cupy.matmul
    assert gemm(a, cp.ones((6, 5), dtype), cp.empty((5, 4), dtype).T) is None  # F-order out
    assert gemm(a.astype(np.int32), cp.ones((6, 5), np.int32)) is None  # no integer GEMM
    half = gemm(a.astype(np.float16), cp.ones((6, 5), np.float16))  # tensor cores
    np.testing.assert_array_equal(cp.asnumpy(half), np.full((4, 5), 6, np.float16))


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_gemm_is_recorded_by_a_stream_capture_and_replays_on_new_values(dtype: Any) -> None:
    import cupy as cp

    gemm = fast_path("gemm")
    rng = np.random.default_rng(3)
    a = cp.asarray(rng.standard_normal((33, 17)).astype(dtype))
    b = cp.asarray(rng.standard_normal((17, 9)).astype(dtype))
    out = cp.zeros((33, 9), dtype)
    expected = cp.asnumpy(gemm(a, b))
    cp.cuda.Device().synchronize()
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        gemm(a, b, out)
        graph = stream.end_capture()
    stream.synchronize()
    assert not out.any()  # capturing queues nothing
    graph.launch(stream)
    stream.synchronize()
    np.testing.assert_array_equal(cp.asnumpy(out), expected)  # the same cuBLAS kernel
    a *= 2
    cp.cuda.Device().synchronize()
    graph.launch(stream)
    stream.synchronize()
    np.testing.assert_array_equal(cp.asnumpy(out), 2 * expected)


@gpu
def test_clone_is_an_independent_copy() -> None:
    import cupy as cp

    backend = mta.Device("cuda").backend
    x = cp.arange(12.0).reshape(3, 4)
    for source in (x, x.T, x[:, ::2], cp.empty((0, 3))):
        copy = backend.clone(source)
        assert copy.shape == source.shape and copy.flags.c_contiguous
        cp.testing.assert_array_equal(copy, source)
        if source.size:
            assert copy.data.ptr != source.data.ptr
    copy = backend.clone(x)
    x += 1  # the copy does not follow
    cp.testing.assert_array_equal(copy, cp.arange(12.0).reshape(3, 4))


@gpu
def test_multi_tensor_sgd_on_the_gpu_reuses_its_pointer_table() -> None:
    import cupy as cp

    rng = np.random.default_rng(12)
    host = [rng.standard_normal(n) for n in (5, 0, 300, 1)]
    params, bufs = [cp.asarray(p) for p in host], [cp.zeros(len(p)) for p in host]
    expected, expected_bufs = [p.copy() for p in host], [np.zeros(len(p)) for p in host]
    grads_host = [rng.standard_normal(len(p)) for p in host]
    grads = [cp.asarray(g) for g in grads_host]
    fast = mta.Device("cuda").backend._fast  # type: ignore[attr-defined]
    tables = []
    for step in range(3):
        assert fast_path("sgd_update_many")(
            params, grads, bufs, 0.1, 0.9, 0.0, True, 0.01, False, step == 0
        )
        tables.append(fast._last_table[1])
        for p, g, b in zip(expected, grads_host, expected_bufs, strict=True):
            sgd_update(np, p, g, b, 0.1, 0.9, 0.0, True, 0.01, False, step == 0)
    assert tables[0] is tables[1] is tables[2]  # same arrays: uploaded once
    for found, want in zip(params + bufs, expected + expected_bufs, strict=True):
        np.testing.assert_allclose(cp.asnumpy(found), want, rtol=1e-12)
