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
``cross_entropy_forward(logits, labels, valid) -> (loss, lse)``
    Per-row loss of (N, C) logits against int labels (N,); rows where the bool
    ``valid`` is False give 0. ``lse`` (the row log-sum-exp) is kept for backward.
``cross_entropy_backward(logits, labels, valid, lse, grad_rows) -> grad_logits``
    ``(softmax(logits) - one_hot(labels)) * grad_rows[:, None]``, 0 on invalid rows.
``im2col(x, geometry) -> cols``
    The matrix ``minitorch_accel.ops.conv_kernels.im2col`` builds (``Cols.matrix``),
    element for element: (groups, M, K) or (groups, K, M), K ordered (kh, kw, c).
``col2im(cols, geometry) -> grad_x``
    The adjoint of ``im2col``: (N, C, H, W), NHWC in memory for channels-last cols.
``conv2d_grad_input(grad_y, w, geometry) -> grad_x``
    One cuBLAS GEMM per group into columns, then ``col2im``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from . import cupy_kernels as K

#: The names :meth:`CupyFastPaths.get` answers.
FAST_PATHS = (
    "relu_forward",
    "relu_backward",
    "sgd_update",
    "adam_update",
    "cross_entropy_forward",
    "cross_entropy_backward",
    "im2col",
    "col2im",
    "conv2d_grad_input",
)


class CupyFastPaths:
    """CuPy kernels built on first use, and the functions that launch them.

    Parameters
    ----------
    cupy : module
        The imported ``cupy`` module.
    """

    def __init__(self, cupy: Any) -> None:
        self.cp = cupy
        self._kernels: dict[str, Any] = {}
        self._sum_exp: Any = None

    def get(self, name: str) -> Callable[..., Any] | None:
        """The fast path called ``name``, or None if there is none."""
        if name not in FAST_PATHS:
            return None
        fn: Callable[..., Any] = getattr(self, name)
        return fn

    def on(self, array: Any) -> Any:
        """The context that makes ``array``'s GPU the current one (``array.device``)."""
        return array.device

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
        """``max(x, 0)`` (NaN stays NaN)."""
        with self.on(x):
            return self._kernel(K.RELU_FORWARD)(x)

    def relu_backward(self, y: Any, grad_y: Any) -> Any:
        """``grad_y`` where the ReLU output ``y`` is positive, else 0."""
        with self.on(y):
            return self._kernel(K.RELU_BACKWARD)(y, grad_y)

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
    def cross_entropy_forward(self, logits: Any, labels: Any, valid: Any) -> tuple[Any, Any]:
        """Per-row cross-entropy of (N, C) ``logits``; returns ``(loss, lse)``, both (N,)."""
        cp = self.cp
        with self.on(logits):
            logits = cp.ascontiguousarray(logits)
            row_max = logits.max(axis=1)
            if self._sum_exp is None:
                self._sum_exp = cp.ReductionKernel(
                    "T x, T shift", "T y", "exp(x - shift)", "a + b", "y = a", "0",
                    "mta_sum_exp",
                )
            sum_exp = self._sum_exp(logits, row_max[:, None], axis=1)
            loss, lse = self._kernel(K.CROSS_ENTROPY_FORWARD)(
                logits, labels, valid, row_max, sum_exp, logits.shape[1]
            )
        return loss, lse

    def cross_entropy_backward(
        self, logits: Any, labels: Any, valid: Any, lse: Any, grad_rows: Any
    ) -> Any:
        """Gradient of the per-row losses with respect to the logits, (N, C)."""
        cp = self.cp
        with self.on(logits):
            rows = cp.ascontiguousarray(
                cp.broadcast_to(cp.asarray(grad_rows, dtype=lse.dtype), lse.shape)
            )
            return self._kernel(K.CROSS_ENTROPY_BACKWARD)(
                logits, labels, valid, lse, rows, logits.shape[1]
            )

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
            cols = self.cp.empty(shape, x.dtype)
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
            img = self.cp.empty((n, h, w, c) if channels_last else (n, c, h, w), cols.dtype)
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
            if geometry.channels_last:
                cols = cp.empty((groups, m, k), grad_y.dtype)
                for g in range(groups):
                    cp.matmul(gy[:, g * og:(g + 1) * og], w_mat[g], out=cols[g])
            else:
                cols = cp.empty((groups, k, m), grad_y.dtype)
                for g in range(groups):
                    cp.matmul(w_mat[g].T, gy[:, g * og:(g + 1) * og].T, out=cols[g])
            return self.col2im(cols, geometry)


def _check_shape(what: str, found: tuple[int, ...], expected: tuple[int, ...]) -> None:
    if tuple(found) != tuple(expected):
        raise ValueError(f"{what} has shape {tuple(found)}, expected {tuple(expected)}")
