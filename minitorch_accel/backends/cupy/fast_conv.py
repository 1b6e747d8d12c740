"""The CuPy backend's fast paths for convolution and pooling.

Registered under the names of the Functions of :mod:`minitorch_accel.ops.conv` and
:mod:`minitorch_accel.ops.pool`, they replace the reference forwards with one-kernel
image operations (:class:`~minitorch_accel.backends.cupy.image_ops.ImageFastPaths`:
im2col with K in the weight's own order, col2im gathering without atomics, max pooling
each way) around cuBLAS GEMMs, and the layout-keeping kernels of
:mod:`~minitorch_accel.backends.conv_kernels` and
:mod:`~minitorch_accel.backends.pool_kernels` for the rest.

Each fast forward sets on the Function the attributes its (shared) backward reads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import conv_kernels as ck
from .. import pool_kernels as pk
from ..fast_paths import register_fast
from ..image_geometry import PoolGeometry, conv_geometry
from ..layout import NHWC, Array, physical_order
from .image_ops import ImageFastPaths


def image_kernels(fn: Any) -> ImageFastPaths | None:
    """The image kernels of the backend ``fn`` runs on (built once per process), whose
    cuBLAS call the convolution kernels' GEMMs then use; None on a backend without
    them (a stand-in for CuPy in the tests), where the array-module code runs instead.
    """
    kernels: ImageFastPaths | None = getattr(fn.device.backend, "_fast", None)
    if kernels is not None and kernels.cp is fn.xp:
        ck.FAST_GEMM.setdefault(id(fn.xp), kernels.gemm)
    return kernels


def conv2d(
    fn: Any, x: Array, w: Array, b: Array | None, *, keep_cols: bool = False, **conv: Any
) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.conv.Conv2d`: the im2col kernel, one
    GEMM per group; keeps the columns (``fn.cols``) for the weight gradient.
    """
    kernels = image_kernels(fn)
    im2col = None if kernels is None else kernels.im2col
    y, cols = ck.conv2d_forward(fn.xp, x, w, b, **conv, fast_im2col=im2col)
    fn.conv, fn.cols = conv, cols if keep_cols else None
    return y


def conv2d_grad_input(
    fn: Any, grad_y: Array, w: Array, *, x_shape: tuple[int, ...], **conv: Any
) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.conv.Conv2dGradInput`: one GEMM per
    group into columns, then the col2im kernel.
    """
    fn.conv = conv
    kernels = image_kernels(fn)
    if kernels is not None and grad_y.dtype == w.dtype:
        geometry = conv_geometry(x_shape, w.shape, **conv, channel_major_k=True)
        return kernels.conv2d_grad_input(grad_y, w, geometry)
    return ck.conv2d_grad_input(fn.xp, grad_y, w, x_shape, **conv)


def conv2d_grad_weight(
    fn: Any, grad_y: Array, x: Array, *, w_shape: tuple[int, ...], cols: Any = None, **conv: Any
) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.conv.Conv2dGradWeight`: reuses the
    forward's columns when the fast forward kept them.
    """
    fn.conv = conv
    image_kernels(fn)
    source = cols if isinstance(cols, ck.Cols) else x
    return ck.conv2d_grad_weight(fn.xp, grad_y, source, w_shape, **conv)


def conv2d_grad_bias(fn: Any, grad_y: Array, *, cols: Any = None) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.conv.Conv2dGradBias` (a GEMM with a
    row of ones, far faster than CuPy's column sum).
    """
    fn.grad_y_shape = grad_y.shape
    image_kernels(fn)
    return ck.conv2d_grad_bias(fn.xp, grad_y)


def _args(geo: PoolGeometry) -> tuple[Any, Any, Any]:
    """The pooling kernels' (kernel_size, stride, padding) arguments."""
    return geo.kernel, geo.stride, geo.padding


def max_pool2d(fn: Any, x: Array, *, geo: PoolGeometry) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.pool.MaxPool2d`: one kernel, in the
    memory layout of ``x``.
    """
    fn.geo, kernels = geo, image_kernels(fn)
    if kernels is None:
        fn.y = pk.max_pool2d_forward(fn.xp, x, *_args(geo))
    else:
        fn.y = kernels.max_pool2d_forward(x, geo, physical_order(x) == NHWC)
    return fn.y


def max_pool2d_backward(fn: Any, grad_y: Array, x: Array, *, y: Array, geo: PoolGeometry) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.pool.MaxPool2dBackward`: one kernel,
    one thread per input pixel.
    """
    fn.geo, fn.y, kernels = geo, y, image_kernels(fn)
    if kernels is not None and grad_y.dtype == x.dtype == y.dtype:
        channels_last = physical_order(x) == NHWC
        return kernels.max_pool2d_backward(grad_y, x, y, geo, channels_last)
    return pk.max_pool2d_backward(fn.xp, grad_y, x, y, *_args(geo))


def max_pool2d_pick(fn: Any, v: Array, x: Array, *, y: Array, geo: PoolGeometry) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.pool.MaxPool2dPick`."""
    fn.geo, fn.y = geo, y
    return pk.max_pool2d_pick(fn.xp, v, x, y, *_args(geo))


def avg_pool2d(fn: Any, x: Array, *, geo: PoolGeometry, count_include_pad: bool) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.pool.AvgPool2d`."""
    fn.geo, fn.count_include_pad = geo, count_include_pad
    return pk.avg_pool2d_forward(fn.xp, x, *_args(geo), count_include_pad)


def avg_pool2d_backward(
    fn: Any, grad_y: Array, *, geo: PoolGeometry, count_include_pad: bool
) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.pool.AvgPool2dBackward`."""
    fn.geo, fn.count_include_pad = geo, count_include_pad
    return pk.avg_pool2d_backward(fn.xp, grad_y, geo.x_shape, *_args(geo), count_include_pad)


#: Function name -> fast forward, as registered for ``"cuda"``.
FAST_FORWARDS: dict[str, Callable[..., Any]] = {
    "Conv2d": conv2d,
    "Conv2dGradInput": conv2d_grad_input,
    "Conv2dGradWeight": conv2d_grad_weight,
    "Conv2dGradBias": conv2d_grad_bias,
    "MaxPool2d": max_pool2d,
    "MaxPool2dBackward": max_pool2d_backward,
    "MaxPool2dPick": max_pool2d_pick,
    "AvgPool2d": avg_pool2d,
    "AvgPool2dBackward": avg_pool2d_backward,
}


def register_fast_conv(backend: str = "cuda") -> None:
    """Register the convolution and pooling fast paths for ``backend``."""
    for name, fast in FAST_FORWARDS.items():
        register_fast(backend, name, fast)
