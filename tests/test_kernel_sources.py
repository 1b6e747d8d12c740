"""The CUDA kernel sources of the CuPy backend, checked without a GPU.

1. Each source is compiled by ``nvcc -arch=sm_90 --ptx`` for float and double
   (skipped where nvcc is absent): syntax and type errors show up here, not on the
   first GPU run.
2. Each loop body is also compiled for the *host* and run through the stand-ins of
   ``support/host_kernels.py`` (a test double), so the kernels' arithmetic and indexing *and*
   the Python code that launches them are compared with the NumPy code paths they
   replace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.host_kernels import (
    ALL_SPECS,
    CXX,
    HostFastPaths,
    host_fast_paths,
    needs_nvcc,
    nvcc_ptx,
)

from minitorch_accel.backends import conv_kernels as ck
from minitorch_accel.backends import pool_kernels as pk
from minitorch_accel.backends.cupy import kernels as K
from minitorch_accel.backends.cupy.ops import FAST_PATHS
from minitorch_accel.optim.adam import adam_update
from minitorch_accel.optim.sgd import sgd_update


@pytest.mark.slow
@needs_nvcc
@pytest.mark.parametrize("float_type", ["float", "double"])
@pytest.mark.parametrize("spec", ALL_SPECS, ids=[s.name for s in ALL_SPECS])
def test_kernel_compiles_with_nvcc(spec: K.KernelSpec, float_type: str, tmp_path: Path) -> None:
    ptx = nvcc_ptx(K.standalone_source(spec, float_type), tmp_path)
    assert f".entry {spec.name}" in ptx


@pytest.fixture(scope="module")
def fast(tmp_path_factory: pytest.TempPathFactory) -> HostFastPaths:
    if CXX is None:
        pytest.skip("needs a C++ compiler (g++)")
    return host_fast_paths(tmp_path_factory.mktemp("kernels"))


# ------------------------------------------------------------------ kernels vs NumPy
def test_every_fast_path_is_reachable(fast: HostFastPaths) -> None:
    assert all(callable(fast.get(name)) for name in FAST_PATHS)
    assert fast.get("no_such_kernel") is None


def test_relu(fast: HostFastPaths) -> None:
    x = np.array([-2.0, -0.0, 0.0, 0.5, np.nan, 3.0])
    y = fast.relu_forward(x)
    np.testing.assert_array_equal(y, [0.0, 0.0, 0.0, 0.5, np.nan, 3.0])
    gy = np.arange(6.0) + 1
    np.testing.assert_array_equal(fast.relu_backward(y, gy), [0.0, 0.0, 0.0, 4.0, 5.0, 6.0])
    gy = np.array([np.inf, np.nan, -np.inf, np.nan, np.inf, 1.0])  # 0 wherever y <= 0
    np.testing.assert_array_equal(fast.relu_backward(y, gy), [0.0, 0.0, 0.0, np.nan, np.inf, 1.0])
    # a channels-last NCHW view keeps its layout through both kernels
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).transpose(0, 3, 1, 2)
    y = fast.relu_forward(x)
    assert y.strides == x.strides
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    gy = np.random.default_rng(1).standard_normal(x.shape)  # C-contiguous
    grad = fast.relu_backward(y, gy)
    assert grad.strides == x.strides
    np.testing.assert_array_equal(grad, gy * (y > 0))


@pytest.mark.parametrize(
    "momentum, dampening, nesterov, weight_decay, maximize",
    [
        (0.0, 0.0, False, 0.0, False),
        (0.0, 0.0, False, 0.1, True),
        (0.9, 0.0, True, 0.01, False),
        (0.5, 0.3, False, 0.0, True),
    ],
    ids=["plain", "decay_maximize", "nesterov", "dampening"],
)
def test_sgd_update(
    fast: HostFastPaths,
    momentum: float,
    dampening: float,
    nesterov: bool,
    weight_decay: float,
    maximize: bool,
) -> None:
    rng = np.random.default_rng(0)
    states = [[rng.standard_normal((3, 4)), np.zeros((3, 4))] for _ in range(2)]
    states[1] = [a.copy() for a in states[0]]
    for step in range(3):
        grad = rng.standard_normal((3, 4))
        for update, (param, buf) in zip((sgd_update, fast.sgd_update), states, strict=True):
            update(
                np,
                param,
                grad,
                buf if momentum else None,
                0.1,
                momentum,
                dampening,
                nesterov,
                weight_decay,
                maximize,
                step == 0,
            )
    np.testing.assert_allclose(states[1][0], states[0][0], rtol=1e-13)
    np.testing.assert_allclose(states[1][1], states[0][1], rtol=1e-13)


@pytest.mark.parametrize(
    "weight_decay, decoupled, amsgrad, maximize",
    [(0.0, False, False, False), (0.1, False, True, False), (0.1, True, False, True)],
    ids=["adam", "adam_decay_amsgrad", "adamw_maximize"],
)
def test_adam_update(
    fast: HostFastPaths, weight_decay: float, decoupled: bool, amsgrad: bool, maximize: bool
) -> None:
    rng = np.random.default_rng(1)
    first = [rng.standard_normal(7), np.zeros(7), np.zeros(7), np.zeros(7)]
    states = [first, [a.copy() for a in first]]
    for step in range(1, 4):
        grad = rng.standard_normal(7)
        for update, (p, m, v, vmax) in zip((adam_update, fast.adam_update), states, strict=True):
            update(
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
                weight_decay,
                decoupled,
                amsgrad,
                maximize,
            )
    for found, expected in zip(states[1], states[0], strict=True):
        np.testing.assert_allclose(found, expected, rtol=1e-12)


#: (rows, classes) that take each forward path: one block, a thread per row, reductions.
CE_PATHS = {
    "block": (5, 4),
    "rows": (K.BLOCK_KERNEL_MAX_ROWS + 1, 4),
    "reductions": (5, K.ROW_KERNEL_MAX_CLASSES + 1),
}


@pytest.mark.parametrize("path", sorted(CE_PATHS))
def test_cross_entropy(fast: HostFastPaths, path: str) -> None:
    rng = np.random.default_rng(2)
    rows, classes = CE_PATHS[path]
    logits = rng.standard_normal((rows, classes)) * 3
    labels = rng.integers(0, classes, rows)
    labels[2] = -100
    valid, safe = labels != -100, np.maximum(labels, 0)
    loss, lse, scale, counts = fast.cross_entropy_forward(logits, labels, -100)
    assert scale is None and counts() == (rows - 1, 0)
    shift = logits.max(1, keepdims=True)
    log_probs = logits - shift - np.log(np.exp(logits - shift).sum(1, keepdims=True))
    np.testing.assert_allclose(lse, np.log(np.exp(logits - shift).sum(1)) + shift[:, 0], rtol=1e-12)
    np.testing.assert_allclose(
        loss, -log_probs[np.arange(rows), safe] * valid, rtol=1e-10, atol=1e-14
    )  # lse - x vs a log-softmax: rounding differs
    grad_rows = rng.standard_normal(rows)
    grad = fast.cross_entropy_backward(logits, labels, -100, lse, grad_rows)
    expected = np.exp(log_probs) * (grad_rows * valid)[:, None]
    expected[np.arange(rows), safe] -= grad_rows * valid
    np.testing.assert_allclose(grad, expected, rtol=1e-11, atol=1e-14)
    # the mean over the counted rows, and its gradient (a 0-d gradient of 2.5)
    mean, _, scale, _ = fast.cross_entropy_forward(logits, labels, -100, "mean")
    assert mean.shape == () and float(mean) == pytest.approx(loss.sum() / (rows - 1), rel=1e-12)
    grad = fast.cross_entropy_backward(logits, labels, -100, lse, np.array(2.5), scale)
    softmax_minus_target = np.exp(log_probs)
    softmax_minus_target[np.arange(rows), safe] -= 1
    np.testing.assert_allclose(
        grad,
        softmax_minus_target * np.where(valid, 2.5 / (rows - 1), 0)[:, None],
        rtol=1e-11,
        atol=1e-14,
    )
    summed, _, scale, _ = fast.cross_entropy_forward(logits, labels, -100, "sum")
    assert float(summed) == pytest.approx(float(loss.sum()), rel=1e-12) and float(scale) == 1
    with pytest.raises(ValueError, match=f"gradient of {rows} values for {rows} rows summed"):
        fast.cross_entropy_backward(logits, labels, -100, lse, grad_rows, scale)
    # labels out of range are never read: their rows give 0 and no gradient, and counted
    bad = labels.copy()
    bad[0], bad[1] = classes, -5
    loss_bad, lse, _, counts = fast.cross_entropy_forward(logits, bad, -100)
    assert loss_bad[0] == 0 and loss_bad[1] == 0 and loss_bad[3] == loss[3]
    assert counts() == (rows - 3, 2)
    grad = fast.cross_entropy_backward(logits, bad, -100, lse, grad_rows)
    assert not grad[0].any() and not grad[1].any()


def test_mean_of_nothing_counted_is_nan(fast: HostFastPaths) -> None:
    logits = np.zeros((3, 4))
    labels = np.full(3, -100)
    mean, _, scale, counts = fast.cross_entropy_forward(logits, labels, -100, "mean")
    assert np.isnan(float(mean)) and float(scale) == np.inf and counts() == (0, 0)


@pytest.mark.parametrize(
    "labels, counted, out_of_range",
    [([0, 3, -100, 1], 3, 0), ([4, -1, -100, 2, 7], 1, 3), ([-100, -100], 0, 0), ([], 0, 0)],
)
def test_label_count(
    fast: HostFastPaths, labels: list[int], counted: int, out_of_range: int
) -> None:
    total, result = fast.label_count(np.array(labels, np.int64), 4, -100)
    assert result() == (counted, out_of_range)
    assert int(total) == counted + (out_of_range << 32)
    mean, scale = fast._kernel(K.MEAN_OF_COUNTED)(np.array(2.0), total)
    assert float(scale) == (1 / counted if counted else np.inf)
    assert float(mean) == 2.0 * float(scale)


POOLS = [(2, None, 0), (3, 2, 1), ((3, 2), 1, 0), ((2, 3), (1, 2), (1, 1))]


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize(
    "kernel_size, stride, padding", POOLS, ids=["tiles", "overlap_pad", "rect_overlap", "rect_pad"]
)
def test_max_pool_matches_the_cpu_code(
    fast: HostFastPaths, layout: str, kernel_size: Any, stride: Any, padding: Any
) -> None:
    rng = np.random.default_rng(6)
    # ties everywhere (a ReLU's zeros, repeated values), plus a -inf and NaNs (two in
    # some windows: the gradient goes to the last, as in PyTorch)
    x = np.maximum(rng.integers(-2, 3, (2, 3, 7, 6)), 0).astype(np.float64)
    x[0, 0, 0, 0], x[1, 2, 3, 3] = -np.inf, np.nan
    x[0, 1, 2, 1] = x[0, 1, 2, 2] = x[0, 1, 3, 1] = x[1, 0, 0, 0] = np.nan
    if layout == "nhwc":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    pool = {"kernel_size": kernel_size, "stride": stride, "padding": padding}
    geo = pk.pool_geometry("max_pool2d", x.shape, **pool)
    y = fast.max_pool2d_forward(x, geo, layout == "nhwc")
    expected = pk.max_pool2d_forward(np, x, **pool)
    np.testing.assert_array_equal(y, expected)
    assert y.strides == expected.strides  # the input's memory layout is kept
    gy = rng.standard_normal(geo.y_shape)
    grad = fast.max_pool2d_backward(gy, x, y, geo, layout == "nhwc")
    np.testing.assert_array_equal(grad, pk.max_pool2d_backward(np, gy, x, expected, **pool))
    assert grad.shape == x.shape
    with pytest.raises(ValueError, match=r"grad_output has shape .*, expected"):
        fast.max_pool2d_backward(gy[..., :-1], x, y, geo, False)


GEOMETRIES = [
    ((2, 1, 7, 6), (4, 1, 3, 3), 1, 0, 1, 1),
    ((2, 3, 8, 8), (5, 3, 3, 2), (2, 1), (1, 0), 1, 1),
    ((1, 8, 9, 9), (6, 8, 3, 3), 2, 1, 1, 1),
    ((2, 8, 9, 7), (4, 4, 2, 3), 1, (2, 1), (2, 1), 2),
    ((1, 16, 5, 5), (16, 1, 3, 3), 1, 1, 1, 16),
]
GEOMETRY_IDS = ["c1", "stride_pad_mixed", "channels_last", "groups_dilation", "depthwise"]


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize(
    "x_shape, w_shape, stride, padding, dilation, groups", GEOMETRIES, ids=GEOMETRY_IDS
)
def test_im2col_matches_the_cpu_layout(
    fast: HostFastPaths,
    layout: str,
    x_shape: Any,
    w_shape: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> None:
    geo = ck.conv_geometry(x_shape, w_shape, stride, padding, dilation, groups)
    x = np.random.default_rng(3).standard_normal(x_shape)
    if layout == "nhwc":  # the layout convolution outputs have
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    expected = ck.im2col(np, x, geo).matrix
    found = fast.im2col(x, geo)
    assert found.shape == expected.shape and found.flags.c_contiguous
    np.testing.assert_array_equal(found, expected)
    # K ordered (c, kh, kw) instead: the same columns, K permuted
    chw = ck.conv_geometry(x_shape, w_shape, stride, padding, dilation, groups, True)
    _, cg, kh, kw = w_shape
    k_axis = 2 if geo.channels_last else 1
    shape = expected.shape[:k_axis] + (kh, kw, cg) + expected.shape[k_axis + 1 :]
    permuted = np.moveaxis(expected.reshape(shape), k_axis + 2, k_axis).reshape(expected.shape)
    np.testing.assert_array_equal(fast.im2col(x, chw), permuted)


@pytest.mark.parametrize(
    "x_shape, w_shape, stride, padding, dilation, groups", GEOMETRIES, ids=GEOMETRY_IDS
)
@pytest.mark.parametrize("channel_major_k", [False, True], ids=["hwc", "chw"])
def test_col2im_and_grad_input(
    fast: HostFastPaths,
    x_shape: Any,
    w_shape: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
    channel_major_k: bool,
) -> None:
    geo = ck.conv_geometry(x_shape, w_shape, stride, padding, dilation, groups, channel_major_k)
    rng = np.random.default_rng(4)
    x = rng.standard_normal(x_shape)
    cols = rng.standard_normal(ck.im2col(np, x, geo).matrix.shape)
    # col2im is the adjoint of im2col: <im2col(x), cols> == <x, col2im(cols)>
    lhs = float((fast.im2col(x, geo) * cols).sum())
    rhs = float((x * fast.col2im(cols, geo)).sum())
    assert lhs == pytest.approx(rhs, rel=1e-12)
    w = rng.standard_normal(w_shape)
    grad_y = rng.standard_normal(geo.y_shape)
    expected = ck.conv2d_grad_input(np, grad_y, w, x_shape, stride, padding, dilation, groups)
    found = fast.conv2d_grad_input(grad_y, w, geo)
    assert found.shape == x_shape
    np.testing.assert_allclose(found, expected, rtol=1e-11, atol=1e-12)
    with pytest.raises(ValueError, match=r"grad_output has shape .*, expected"):
        fast.conv2d_grad_input(grad_y[..., :-1], w, geo)


def test_standalone_source_declares_every_parameter() -> None:
    source = K.standalone_source(K.CROSS_ENTROPY_BACKWARD, "double")
    assert "typedef double T;" in source
    assert "RawArray<S> label" in source and "const T& x = _p_x[i];" in source
    assert "T& gx = _p_gx[i];" in source and "const T& gx" not in source


@pytest.mark.parametrize(
    "x_shape, w_shape, stride, padding, dilation, groups", GEOMETRIES, ids=GEOMETRY_IDS
)
def test_conv_forward_with_the_kernel_im2col(
    fast: HostFastPaths,
    x_shape: Any,
    w_shape: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> None:
    rng = np.random.default_rng(8)
    x, w, b = (rng.standard_normal(s) for s in (x_shape, w_shape, w_shape[:1]))
    conv = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    expected, _ = ck.conv2d_forward(np, x, w, b, **conv)
    found, cols = ck.conv2d_forward(np, x, w, b, **conv, fast_im2col=fast.im2col)
    np.testing.assert_allclose(found, expected, rtol=1e-12, atol=1e-12)
    # the weight gradient reuses those cols (no ones row for the bias)
    grad_y = rng.standard_normal(found.shape)
    np.testing.assert_allclose(
        ck.conv2d_grad_weight(np, grad_y, cols, w_shape, **conv),
        ck.conv2d_grad_weight(np, grad_y, x, w_shape, **conv),
        rtol=1e-12,
        atol=1e-12,
    )


@pytest.mark.slow
@needs_nvcc
@pytest.mark.parametrize("float_type", ["float", "double"])
def test_cross_entropy_block_kernel_compiles(float_type: str, tmp_path: Path) -> None:
    ptx = nvcc_ptx(K.cross_entropy_block_source(float_type), tmp_path)
    assert f".entry mta_cross_entropy_block_{float_type}" in ptx
