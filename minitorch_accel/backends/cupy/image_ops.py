"""The CuPy backend's image fast paths: im2col, col2im, conv2d's input gradient and
max pooling, each one kernel (plus one cuBLAS GEMM for the gradient).
"""

from __future__ import annotations

from typing import Any

from . import kernels as K
from .fast_base import FastPathBase


class ImageFastPaths(FastPathBase):
    """Convolution and pooling kernels on CuPy arrays of any strides."""

    def _pool_args(self, geometry: Any, channels_last: bool, dtype: Any) -> tuple[Any, ...]:
        _, c, h, w = geometry.x_shape
        return (
            c,
            h,
            w,
            *geometry.out_hw,
            *geometry.kernel,
            *geometry.stride,
            *geometry.padding,
            int(channels_last),
            self.cp.dtype(dtype).type("-inf"),
        )

    def _empty_nchw(self, shape: tuple[int, ...], dtype: Any, channels_last: bool) -> Any:
        """An (N, C, H, W) array: a transposed view of an NHWC one when channels_last."""
        n, c, h, w = shape
        return self.cp.ndarray((n, h, w, c) if channels_last else shape, dtype)

    def max_pool2d_forward(self, x: Any, geometry: Any, channels_last: bool) -> Any:
        """Max pooling of (N, C, H, W) ``x`` (any strides) in one kernel."""
        _check_shape("max_pool2d: input", x.shape, geometry.x_shape)
        with self.on(x):
            y = self._empty_nchw(geometry.y_shape, x.dtype, channels_last)
            self._kernel(K.MAX_POOL_FORWARD)(
                x, *self._pool_args(geometry, channels_last, x.dtype), y
            )
        return y.transpose(0, 3, 1, 2) if channels_last else y

    def max_pool2d_backward(
        self, grad_y: Any, x: Any, y: Any, geometry: Any, channels_last: bool
    ) -> Any:
        """Each window's gradient to its first maximum, one thread per input pixel."""
        _check_shape("max_pool2d backward: grad_output", grad_y.shape, geometry.y_shape)
        _check_shape("max_pool2d backward: output", y.shape, geometry.y_shape)
        with self.on(x):
            gx = self._empty_nchw(geometry.x_shape, grad_y.dtype, channels_last)
            self._kernel(K.MAX_POOL_BACKWARD)(
                x, y, grad_y, *self._pool_args(geometry, channels_last, x.dtype), gx
            )
        return gx.transpose(0, 3, 1, 2) if channels_last else gx

    # ------------------------------------------------------------------ convolution
    def im2col(self, x: Any, geometry: Any) -> Any:
        """The im2col matrix of NCHW ``x`` (any strides) for a ``ConvGeometry``, K in the
        order the geometry names (``channel_major_k``).
        """
        _check_shape("im2col: input", x.shape, geometry.x_shape)
        n, _, h, w = geometry.x_shape
        _, cg, kh, kw = geometry.w_shape
        oh, ow = geometry.out_hw
        k, m = kh * kw * cg, geometry.rows
        channels_last = bool(geometry.channels_last)
        shape = (geometry.groups, m, k) if channels_last else (geometry.groups, k, m)
        with self.on(x):
            cols = self.cp.ndarray(shape, x.dtype)
            self._kernel(K.IM2COL)(
                x,
                n,
                cg,
                h,
                w,
                oh,
                ow,
                kh,
                kw,
                *geometry.stride,
                *geometry.padding,
                *geometry.dilation,
                int(channels_last),
                int(geometry.channel_major_k),
                cols,
            )
        return cols

    def col2im(self, cols: Any, geometry: Any) -> Any:
        """Sum every column entry back onto the input pixel it was read from."""
        n, c, h, w = geometry.x_shape
        _, cg, kh, kw = geometry.w_shape
        oh, ow = geometry.out_hw
        channels_last = bool(geometry.channels_last)
        with self.on(cols):
            cols = self.cp.ascontiguousarray(cols)
            img = self.cp.ndarray((n, h, w, c) if channels_last else (n, c, h, w), cols.dtype)
            self._kernel(K.COL2IM)(
                cols,
                n,
                c,
                cg,
                h,
                w,
                oh,
                ow,
                kh,
                kw,
                *geometry.stride,
                *geometry.padding,
                *geometry.dilation,
                int(channels_last),
                int(geometry.channel_major_k),
                img,
            )
        return img.transpose(0, 3, 1, 2) if channels_last else img

    def conv2d_grad_input(self, grad_y: Any, w: Any, geometry: Any) -> Any:
        """Gradient of conv2d with respect to its input: GEMMs into columns, col2im."""
        cp = self.cp
        _check_shape("conv2d backward: grad_output", grad_y.shape, geometry.y_shape)
        _check_shape("conv2d backward: weight", w.shape, geometry.w_shape)
        o, cg, kh, kw = geometry.w_shape
        groups, k, m = geometry.groups, kh * kw * cg, geometry.rows
        og = o // groups
        with self.on(grad_y):
            gy = cp.ascontiguousarray(grad_y.transpose(0, 2, 3, 1)).reshape(m, o)
            if geometry.channel_major_k:  # K in the weight's own order: no copy
                w_mat = w.reshape(groups, og, k)
            else:
                w_mat = cp.ascontiguousarray(
                    w.reshape(groups, og, cg, kh, kw).transpose(0, 1, 3, 4, 2)
                ).reshape(groups, og, k)
            shape = (groups, m, k) if geometry.channels_last else (groups, k, m)
            cols = cp.ndarray(shape, grad_y.dtype)
            for g in range(groups):
                gy_g = gy[:, g * og : (g + 1) * og]
                a, b = (gy_g, w_mat[g]) if geometry.channels_last else (w_mat[g].T, gy_g.T)
                if self.gemm(a, b, cols[g]) is None:
                    cp.matmul(a, b, out=cols[g])
            return self.col2im(cols, geometry)


def _check_shape(what: str, found: tuple[int, ...], expected: tuple[int, ...]) -> None:
    if tuple(found) != tuple(expected):
        raise ValueError(f"{what} has shape {tuple(found)}, expected {tuple(expected)}")
