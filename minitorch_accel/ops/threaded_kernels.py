"""The CPU's threaded fast paths: the reference kernels, run on slices of the batch.

Each function here cuts its work into contiguous chunks (images of a batch, or runs of
elements) with :func:`~minitorch_accel.backends.numpy.threads.parallel_for` and calls the
reference kernel of :mod:`~.conv_kernels` or :mod:`~.pool_kernels` on each chunk,
writing into that chunk's part of one output buffer. Every output element is computed
by the same operations in the same order as the reference does, so results are equal
bit for bit, except inside a GEMM: each chunk multiplies its own rows, and BLAS may
pick another kernel for a smaller matrix.

The NumPy backend hands these out through ``Backend.kernel(name)`` when more than one
thread is in use (:func:`minitorch_accel.set_num_threads`); at one thread the ops run
their reference code.
"""

from __future__ import annotations

import numpy as np

from ..backends.numpy.threads import parallel_for, register_kernel
from . import conv_kernels as ck
from . import pool_kernels as pk
from .gemm import gemm
from .layout import NHWC, Array, buffer_cache, empty_with_layout, physical_order


def max_pool2d_forward(x: Array, geometry: pk.PoolGeometry, channels_last: bool) -> Array:
    """Max pooling, the batch split over threads."""
    pool = {"kernel_size": geometry.kernel, "stride": geometry.stride, "padding": geometry.padding}
    y = empty_with_layout(np, geometry.y_shape, x.dtype, physical_order(x))
    parallel_for(x.shape[0], lambda s, e: pk.max_pool2d_forward(np, x[s:e], **pool, out=y[s:e]))
    return y


def max_pool2d_backward(
    grad_y: Array, x: Array, y: Array, geometry: pk.PoolGeometry, channels_last: bool
) -> Array:
    """Gradient of max pooling, the batch split over threads (padding 0; else the
    reference runs).
    """
    pool = {"kernel_size": geometry.kernel, "stride": geometry.stride, "padding": geometry.padding}
    if geometry.padding != (0, 0) or tuple(grad_y.shape) != geometry.y_shape:
        return pk.max_pool2d_backward(np, grad_y, x, y, **pool)
    grad_x = empty_with_layout(np, x.shape, grad_y.dtype, physical_order(x))

    def chunk(s: int, e: int) -> None:
        pk.max_pool2d_backward(np, grad_y[s:e], x[s:e], y[s:e], **pool, out=grad_x[s:e])

    parallel_for(x.shape[0], chunk)
    return grad_x


def _part(geo: ck.ConvGeometry, images: int) -> ck.ConvGeometry:
    """The geometry of the same convolution over ``images`` images."""
    return ck.conv_geometry(
        (images, *geo.x_shape[1:]), geo.w_shape, geo.stride, geo.padding, geo.dilation, geo.groups
    )


def conv2d_forward(
    x: Array,
    w: Array,
    b: Array | None,
    stride: ck.IntPair = 1,
    padding: ck.IntPair = 0,
    dilation: ck.IntPair = 1,
    groups: int = 1,
) -> tuple[Array, ck.Cols]:
    """:func:`~.conv_kernels.conv2d_forward`, each thread doing im2col and the GEMM
    (and bias) for its own images: their cols rows are still in cache for the GEMM.
    """
    geo = ck.conv_geometry(x.shape, w.shape, stride, padding, dilation, groups)
    bad_bias = b is not None and (b.dtype != x.dtype or tuple(b.shape) != (w.shape[0],))
    if x.dtype != w.dtype or bad_bias or x.shape[0] < 2:  # the reference raises or runs
        return ck.conv2d_forward(np, x, w, b, stride, padding, dilation, groups)
    o, og, (oh, ow) = w.shape[0], w.shape[0] // groups, geo.out_hw
    w_mat = ck.weight_matrix(np, w, groups)
    bias_in_gemm = b is not None and not geo.channels_last
    if b is not None and bias_in_gemm:
        w_mat = np.concatenate([w_mat, b.reshape(groups, og, 1)], axis=2)
    k = w_mat.shape[2]
    shape = (groups, geo.rows, k) if geo.channels_last else (groups, k, geo.rows)
    cols = buffer_cache.empty(np, shape, x.dtype)
    y_rows = buffer_cache.empty(np, (geo.rows, o), x.dtype)

    def chunk(s: int, e: int) -> None:
        rows = slice(s * oh * ow, e * oh * ow)
        part = cols[:, rows] if geo.channels_last else cols[:, :, rows]
        ck.im2col(np, x[s:e], _part(geo, e - s), ones_row=bias_in_gemm, out=part)
        for gi in range(groups):
            a = part[gi] if geo.channels_last else part[gi].T
            gemm(np, a, w_mat[gi].T, out=y_rows[rows, gi * og : (gi + 1) * og])
        if b is not None and not bias_in_gemm:
            y_rows[rows] += b

    parallel_for(x.shape[0], chunk)
    return y_rows.reshape(x.shape[0], oh, ow, o).transpose(0, 3, 1, 2), ck.Cols(cols, geo)


def conv2d_grad_input(grad_y: Array, w: Array, geometry: ck.ConvGeometry) -> Array:
    """:func:`~.conv_kernels.conv2d_grad_input` with col2im split over the batch."""
    geo = _part(geometry, geometry.x_shape[0])  # cols order as the CPU's (kh, kw, c)
    n, c, h, wd = geo.x_shape
    o, cg, kh, kw = geo.w_shape
    (ph, pw), og = geo.padding, o // geo.groups
    if tuple(grad_y.shape) != geo.y_shape or n < 2:  # the reference raises or runs
        conv = {"stride": geo.stride, "padding": geo.padding, "dilation": geo.dilation}
        return ck.conv2d_grad_input(np, grad_y, w, geo.x_shape, **conv, groups=geo.groups)
    w5 = ck.weight_matrix(np, w, geo.groups).reshape(geo.groups, og, kh, kw, cg)
    order = NHWC if geo.channels_last else (1, 0, 2, 3)
    gx = empty_with_layout(np, (n, c, h + 2 * ph, wd + 2 * pw), grad_y.dtype, order)

    def chunk(s: int, e: int) -> None:
        part = _part(geo, e - s)
        ck.col2im(np, ck.grad_rows(np, grad_y[s:e], part), w5, part, gx[s:e])

    parallel_for(n, chunk)
    return gx[:, :, ph : ph + h, pw : pw + wd]


register_kernel("max_pool2d_forward", max_pool2d_forward)
register_kernel("max_pool2d_backward", max_pool2d_backward)
register_kernel("conv2d_forward", conv2d_forward)
register_kernel("conv2d_grad_input", conv2d_grad_input)

__all__ = [
    "conv2d_forward",
    "conv2d_grad_input",
    "max_pool2d_backward",
    "max_pool2d_forward",
]
