"""The CuPy backend's fast paths: the kernels of :mod:`.cupy_kernels`, built once and
called on CuPy arrays.

:meth:`CupyBackend.kernel(name) <minitorch_accel.backends.cupy_backend.CupyBackend.kernel>`
returns one of the methods of :class:`CupyFastPaths`; ops use it when it is not None
and their generic ``xp`` code otherwise. Every method runs on the GPU that holds its
first array argument.

Names and signatures (raw CuPy arrays in, raw arrays out):

``relu_forward(x) -> y``
``relu_backward(y, grad_y) -> grad_x``
    ``y`` is the forward output; the mask multiply is fused into one kernel.
``sgd_update(xp, param, grad, momentum_buffer, lr, momentum, dampening, nesterov,
weight_decay, maximize, first_step) -> None``
    As :func:`minitorch_accel.optim.sgd.sgd_update`, in one kernel.
``adam_update(xp, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, lr, beta1,
beta2, eps, weight_decay, decoupled_weight_decay, amsgrad, maximize) -> None``
    As :func:`minitorch_accel.optim.adam.adam_update`, in one kernel.
``label_count(labels, classes, ignore_index) -> (total, result)``
    One reduction over int64 labels, and nothing waits for it: ``total`` is the 0-d
    device count (counted labels + ``2**32`` x labels out of range and not
    ``ignore_index``), and ``result()`` waits for that kernel only (not for the work
    queued after it) and returns ``(counted, out_of_range)`` as Python ints.
``cross_entropy_forward(logits, labels, ignore_index, reduction, total) -> (loss, lse, scale)``
    Cross-entropy of (N, C) logits against int labels (N,); rows labelled
    ``ignore_index`` (or out of range) give 0. ``reduction`` "none" gives the loss per
    row, "sum" and "mean" a 0-d scaled sum: ``scale`` is a 0-d device array, 1 or
    ``1 / counted rows`` (from ``total``), None for "none". ``lse`` (the row
    log-sum-exp) and ``scale`` are kept for backward.
``cross_entropy_backward(logits, labels, ignore_index, lse, grad, scale) -> grad_logits``
    ``(softmax(logits) - one_hot(labels)) * grad[:, None]``, 0 on ignored rows; with a
    ``scale``, ``grad`` is the 0-d gradient of the scaled sum.
``im2col(x, geometry) -> cols``
    The matrix ``minitorch_accel.ops.conv_kernels.im2col`` builds (``Cols.matrix``),
    element for element: (groups, M, K) or (groups, K, M), K ordered (kh, kw, c).
``col2im(cols, geometry) -> grad_x``
    The adjoint of ``im2col``: (N, C, H, W), NHWC in memory for channels-last cols.
``conv2d_grad_input(grad_y, w, geometry) -> grad_x``
    One cuBLAS GEMM per group into columns, then ``col2im``.
``gemm(a, b, out=None) -> out or None``
    ``a @ b`` for 2-D float32/float64 operands that are C- or F-contiguous (a transposed
    view is F-contiguous), in one cuBLAS call with no copies; None where that does not
    apply (then ``cupy.matmul`` runs). ``out``, if given, must be C-contiguous.
``max_pool2d_forward(x, geometry, channels_last) -> y``
``max_pool2d_backward(grad_y, x, y, geometry, channels_last) -> grad_x``
    Max pooling for a ``PoolGeometry`` in one kernel each way; the gradient of each
    window goes to its first maximum (as the CPU code). Outputs are NHWC in memory when
    ``channels_last``, NCHW otherwise; inputs may have any strides.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any

import numpy

from . import cupy_kernels as K

#: The names :meth:`CupyFastPaths.get` answers.
FAST_PATHS = (
    "relu_forward",
    "relu_backward",
    "sgd_update",
    "adam_update",
    "label_count",
    "cross_entropy_forward",
    "cross_entropy_backward",
    "im2col",
    "col2im",
    "conv2d_grad_input",
    "gemm",
    "max_pool2d_forward",
    "max_pool2d_backward",
)


class CupyFastPaths:
    """CuPy kernels built on first use, and the functions that launch them.

    Parameters
    ----------
    cupy : module
        The imported ``cupy`` module.
    switch_devices : bool
        Whether to make each call's GPU the current one (needed with several GPUs).
    """

    def __init__(self, cupy: Any, switch_devices: bool = True) -> None:
        self.cp = cupy
        self.switch_devices = switch_devices
        self._kernels: dict[str, Any] = {}
        self._reductions: dict[str, Any] = {}
        # alpha = 1 and beta = 0 for cuBLAS, read from host memory during the call
        self._gemm_scalars = {c: (numpy.ones(1, c), numpy.zeros(1, c)) for c in "fd"}
        self._gemm_pointers = {c: (one.ctypes.data, zero.ctypes.data)
                               for c, (one, zero) in self._gemm_scalars.items()}

    def get(self, name: str) -> Callable[..., Any] | None:
        """The fast path called ``name``, or None if there is none."""
        if name not in FAST_PATHS:
            return None
        fn: Callable[..., Any] = getattr(self, name)
        return fn

    def on(self, array: Any) -> Any:
        """The context that makes ``array``'s GPU the current one (``array.device``); a
        no-op context on a single-GPU machine."""
        return array.device if self.switch_devices else _NO_SWITCH

    def _reduction(self, spec: K.ReductionSpec) -> Any:
        kernel = self._reductions.get(spec.name)
        if kernel is None:
            kernel = self._reductions[spec.name] = self.cp.ReductionKernel(*spec.args())
        return kernel

    def _kernel(self, spec: K.KernelSpec) -> Any:
        kernel = self._kernels.get(spec.name)
        if kernel is None:
            kernel = self.cp.ElementwiseKernel(
                spec.in_params, spec.out_params, spec.operation, spec.name
            )
            self._kernels[spec.name] = kernel
        return kernel

    # ------------------------------------------------------------------ activations
    def relu_forward(self, x: Any) -> Any:
        """``max(x, 0)`` (NaN stays NaN), in the memory layout of ``x``."""
        order = _contiguous_order(x)
        with self.on(x):
            y = self._kernel(K.RELU_FORWARD)(x.transpose(order))
        return y.transpose(_inverse(order))

    def relu_backward(self, y: Any, grad_y: Any) -> Any:
        """``grad_y`` where the ReLU output ``y`` is positive, else 0 (layout of ``y``)."""
        order = _contiguous_order(y)
        with self.on(y):
            grad_x = self._kernel(K.RELU_BACKWARD)(y.transpose(order), grad_y.transpose(order))
        return grad_x.transpose(_inverse(order))

    # ------------------------------------------------------------------ optimizers
    def sgd_update(
        self,
        xp: Any,
        param: Any,
        grad: Any,
        momentum_buffer: Any,
        lr: float,
        momentum: float,
        dampening: float,
        nesterov: bool,
        weight_decay: float,
        maximize: bool,
        first_step: bool,
    ) -> None:
        """One SGD step in one kernel; ``param`` and ``momentum_buffer`` change in place."""
        args = (grad, lr, momentum, dampening, weight_decay, int(nesterov), int(maximize),
                int(first_step))
        with self.on(param):
            if momentum != 0:
                self._kernel(K.SGD_MOMENTUM)(*args, param, momentum_buffer)
            else:
                self._kernel(K.SGD)(*args, param)

    def adam_update(
        self,
        xp: Any,
        param: Any,
        grad: Any,
        exp_avg: Any,
        exp_avg_sq: Any,
        max_exp_avg_sq: Any,
        step: int,
        lr: float,
        beta1: float,
        beta2: float,
        eps: float,
        weight_decay: float,
        decoupled_weight_decay: bool,
        amsgrad: bool,
        maximize: bool,
    ) -> None:
        """One Adam/AdamW step in one kernel; the parameter and moments change in place."""
        step_size = lr / (1.0 - beta1**step)
        bias2_sqrt = math.sqrt(1.0 - beta2**step)
        args = (grad, lr, beta1, beta2, eps, weight_decay, step_size, bias2_sqrt,
                int(decoupled_weight_decay), int(maximize))
        with self.on(param):
            if amsgrad:
                self._kernel(K.ADAM_AMSGRAD)(*args, param, exp_avg, exp_avg_sq, max_exp_avg_sq)
            else:
                self._kernel(K.ADAM)(*args, param, exp_avg, exp_avg_sq)

    # ------------------------------------------------------------------ loss
    def label_count(self, labels: Any, classes: int, ignore_index: int
                    ) -> tuple[Any, Callable[[], tuple[int, int]]]:
        """Count the labels on the device; read the count back only when asked."""
        with self.on(labels):
            total = self._reduction(K.LABEL_COUNT)(labels, classes, ignore_index)
            read = self._read_later(total)

        def result() -> tuple[int, int]:
            value = read()
            return value & 0xFFFFFFFF, value >> 32

        return total, result

    def _read_later(self, scalar: Any) -> Callable[[], int]:
        """Queue the copy of a 0-d int64 device array into pinned host memory; the
        returned function waits for that copy (an event), not for later work."""
        memory = self.cp.cuda.alloc_pinned_memory(8)
        host = numpy.frombuffer(memory, numpy.int64, 1).reshape(())
        scalar.get(out=host, blocking=False)
        done = self.cp.cuda.Event(disable_timing=True)
        done.record()

        def read() -> int:
            done.synchronize()
            return int(host)

        return read

    def cross_entropy_forward(self, logits: Any, labels: Any, ignore_index: int,
                              reduction: str = "none", total: Any = None
                              ) -> tuple[Any, Any, Any]:
        """Cross-entropy of (N, C) ``logits``: ``(loss, lse, scale)``."""
        cp = self.cp
        with self.on(logits):
            logits = cp.ascontiguousarray(logits)
            row_max = logits.max(axis=1)
            sum_exp = self._reduction(K.SUM_EXP)(logits, row_max[:, None], axis=1)
            loss, lse = self._kernel(K.CROSS_ENTROPY_FORWARD)(
                logits, labels, ignore_index, row_max, sum_exp, logits.shape[1]
            )
            if reduction == "none":
                return loss, lse, None
            if reduction == "mean":
                scale = self._kernel(K.INVERSE_COUNT)(total, cp.empty((), logits.dtype))
            else:
                scale = cp.ones((), logits.dtype)
            return loss.sum() * scale, lse, scale

    def cross_entropy_backward(self, logits: Any, labels: Any, ignore_index: int, lse: Any,
                               grad: Any, scale: Any = None) -> Any:
        """Gradient with respect to the logits, (N, C), of the per-row losses (``grad``
        is (N,), ``scale`` None) or of their scaled sum (``grad`` 0-d)."""
        cp = self.cp
        with self.on(logits):
            grad = cp.ascontiguousarray(cp.asarray(grad, dtype=lse.dtype).reshape(-1))
            summed = scale is not None
            if grad.size != (1 if summed else lse.size):
                raise ValueError(f"cross_entropy backward: gradient of {grad.size} values "
                                 f"for {lse.size} rows" + (" summed" if summed else ""))
            if not summed:
                scale = cp.ones(1, lse.dtype)
            return self._kernel(K.CROSS_ENTROPY_BACKWARD)(
                logits, labels, ignore_index, lse, grad, 0 if summed else 1,
                scale.reshape(1), logits.shape[1],
            )

    # ------------------------------------------------------------------ matrix multiply
    def gemm(self, a: Any, b: Any, out: Any = None) -> Any:
        """``a @ b`` through one cuBLAS call, or None where it does not apply.

        cuBLAS is column-major: a C-contiguous (r, c) matrix is, to it, the (c, r)
        transpose with leading dimension c. So ``out = a @ b`` (row-major) is computed as
        ``out.T = b.T @ a.T`` (column-major), each operand taken as is or transposed
        according to its layout. ``cupy.matmul`` does the same, but costs about three
        times the host time per call, and a small model makes a dozen calls per step.
        """
        if (a.ndim != 2 or b.ndim != 2 or a.dtype != b.dtype or a.dtype.char not in "fd"
                or a.shape[1] != b.shape[0] or 0 in (*a.shape, b.shape[1])):
            return None
        (m, k), n = a.shape, b.shape[1]
        layout_a, layout_b = _blas_layout(a), _blas_layout(b)
        if layout_a is None or layout_b is None:
            return None
        if out is None:
            out = self.cp.ndarray((m, n), a.dtype)
        elif not (out.shape == (m, n) and out.dtype == a.dtype and _blas_layout(out) == (0, n)):
            return None
        cublas = self.cp.cuda.cublas
        call = cublas.sgemm if a.dtype.char == "f" else cublas.dgemm
        one, zero = self._gemm_pointers[a.dtype.char]
        with self.on(a):
            handle = self.cp.cuda.device.get_cublas_handle()
            # host pointer mode is cuBLAS's default, and CuPy restores it after changes
            if cublas.getPointerMode(handle) != cublas.CUBLAS_POINTER_MODE_HOST:
                cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
            call(handle, layout_b[0], layout_a[0], n, m, k, one, b.data.ptr, layout_b[1],
                 a.data.ptr, layout_a[1], zero, out.data.ptr, n)
        return out

    # ------------------------------------------------------------------ pooling
    def _pool_args(self, geometry: Any, channels_last: bool, dtype: Any) -> tuple[Any, ...]:
        _, c, h, w = geometry.x_shape
        return (c, h, w, *geometry.out_hw, *geometry.kernel, *geometry.stride,
                *geometry.padding, int(channels_last), self.cp.dtype(dtype).type("-inf"))

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
                x, *self._pool_args(geometry, channels_last, x.dtype), y)
        return y.transpose(0, 3, 1, 2) if channels_last else y

    def max_pool2d_backward(self, grad_y: Any, x: Any, y: Any, geometry: Any,
                            channels_last: bool) -> Any:
        """Each window's gradient to its first maximum, one thread per input pixel."""
        _check_shape("max_pool2d backward: grad_output", grad_y.shape, geometry.y_shape)
        _check_shape("max_pool2d backward: output", y.shape, geometry.y_shape)
        with self.on(x):
            gx = self._empty_nchw(geometry.x_shape, grad_y.dtype, channels_last)
            self._kernel(K.MAX_POOL_BACKWARD)(
                x, y, grad_y, *self._pool_args(geometry, channels_last, x.dtype), gx)
        return gx.transpose(0, 3, 1, 2) if channels_last else gx

    # ------------------------------------------------------------------ convolution
    def im2col(self, x: Any, geometry: Any) -> Any:
        """The im2col matrix of NCHW ``x`` (any strides) for a ``ConvGeometry``."""
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
                x, n, cg, h, w, oh, ow, kh, kw, *geometry.stride, *geometry.padding,
                *geometry.dilation, int(channels_last), cols,
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
                cols, n, c, cg, h, w, oh, ow, kh, kw, *geometry.stride, *geometry.padding,
                *geometry.dilation, int(channels_last), img,
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
            w_mat = cp.ascontiguousarray(
                w.reshape(groups, og, cg, kh, kw).transpose(0, 1, 3, 4, 2)
            ).reshape(groups, og, k)
            shape = (groups, m, k) if geometry.channels_last else (groups, k, m)
            cols = cp.ndarray(shape, grad_y.dtype)
            for g in range(groups):
                gy_g = gy[:, g * og:(g + 1) * og]
                a, b = (gy_g, w_mat[g]) if geometry.channels_last else (w_mat[g].T, gy_g.T)
                if self.gemm(a, b, cols[g]) is None:
                    cp.matmul(a, b, out=cols[g])
            return self.col2im(cols, geometry)


_NO_SWITCH = contextlib.nullcontext()


def _blas_layout(x: Any) -> tuple[int, int] | None:
    """``(operation, leading dimension)`` under which cuBLAS reads the 2-D ``x`` as the
    transpose of itself (C-contiguous: 0 = CUBLAS_OP_N) or as itself (F-contiguous:
    1 = CUBLAS_OP_T, so that the product sees ``x.T``); None for other strides.

    Read from the strides (cheaper than ``x.flags``, which builds an object per call).
    """
    (rows, cols), (row_step, col_step), size = x.shape, x.strides, x.itemsize
    if (cols == 1 or col_step == size) and (rows == 1 or row_step == cols * size):
        return 0, max(1, cols)
    if (rows == 1 or row_step == size) and (cols == 1 or col_step == rows * size):
        return 1, max(1, rows)
    return None


def _contiguous_order(x: Any) -> tuple[int, ...]:
    """The axis order in which ``x`` is C-contiguous (NHWC for a channels-last NCHW
    view), or the identity if there is none.

    CuPy allocates the outputs of an elementwise kernel C-contiguous; running the kernel
    on ``x.transpose(order)`` and transposing back keeps ``x``'s layout instead, so the
    ops after it (conv backward, pooling) need no copies.
    """
    order = tuple(sorted(range(x.ndim), key=lambda axis: -x.strides[axis]))
    return order if x.transpose(order).flags.c_contiguous else tuple(range(x.ndim))


def _inverse(order: tuple[int, ...]) -> tuple[int, ...]:
    inverse = [0] * len(order)
    for position, axis in enumerate(order):
        inverse[axis] = position
    return tuple(inverse)


def _check_shape(what: str, found: tuple[int, ...], expected: tuple[int, ...]) -> None:
    if tuple(found) != tuple(expected):
        raise ValueError(f"{what} has shape {tuple(found)}, expected {tuple(expected)}")
