"""The CuPy backend's fast paths for ReLU, cross-entropy and batch normalization.

Each is a fast forward (see :mod:`minitorch_accel.backends.fast_paths`) that calls the
fused kernels of :class:`~minitorch_accel.backends.cupy.ops.CupyFastPaths` through
``fn.device.backend.kernel(name)``:

- ``Relu``, ``ReluBackward``: one elementwise kernel each, in the memory layout of the
  input.
- ``CrossEntropy``: the loss per row, or its mean or sum, in one launch for up to 4,096
  rows and 1,024 classes; the labels are counted on the device and the verdict read
  back later (``Backend.defer_check``), so the step does not wait for the GPU.
- ``CrossEntropyBackward``: the gradient in one kernel from the rows' log-sum-exp.
- ``BatchNorm``, ``BatchNormGrad``: the NumPy backend's array-module generic code
  (:func:`~minitorch_accel.backends.numpy.fast_nn.batch_norm_forward` and
  :func:`~minitorch_accel.backends.numpy.fast_nn.batch_norm_grad`).

Label smoothing runs the reference code.
"""

from __future__ import annotations

from typing import Any

from ..fast_paths import register_fast
from ..numpy.fast_nn import batch_norm_forward, batch_norm_grad


def relu(fn: Any, a: Any) -> Any:
    """Fast forward of ``Relu``."""
    return fn.device.backend.kernel("relu_forward")(a)


def relu_grad(fn: Any, grad: Any, y: Any) -> Any:
    """Fast forward of ``ReluBackward`` (same dtypes; else the reference)."""
    if grad.dtype != y.dtype:
        return fn.forward(grad, y)
    return fn.device.backend.kernel("relu_backward")(y, grad)


def cross_entropy(
    fn: Any,
    x: Any,
    y: Any,
    *,
    smoothing: float,
    ignore_index: int,
    reduction: str,
    check: Any,
) -> Any:
    """Fast forward of ``CrossEntropy``: the fused kernels, the label check deferred."""
    if smoothing:
        return fn.forward(
            x,
            y,
            smoothing=smoothing,
            ignore_index=ignore_index,
            reduction=reduction,
            check=check,
        )
    if x.dtype.itemsize < 4:  # float16 logits: softmax in float32
        x = x.astype("float32")
    backend = fn.device.backend
    fused = backend.kernel("cross_entropy_forward")
    loss, fn.lse, fn.scale, check.counts = fused(x, y, ignore_index, reduction)
    fn.smoothing, fn.ignore_index, fn.check = smoothing, ignore_index, check
    backend.defer_check(check)
    return loss


def cross_entropy_grad(fn: Any, logits: Any, labels: Any, grad: Any, *, forward: Any) -> Any:
    """Fast forward of ``CrossEntropyBackward``: one kernel (no smoothing)."""
    if forward.smoothing:
        return fn.forward(logits, labels, grad, forward=forward)
    forward.check()  # raise for bad labels before any gradient flows
    fn.forward_node = forward  # for the node's backward (second derivatives)
    fused = fn.device.backend.kernel("cross_entropy_backward")
    logits, scale = logits.astype(forward.lse.dtype, copy=False), forward.scale
    if isinstance(scale, float):  # the reference forward ran: its scale is a number
        scale = fn.xp.asarray(scale, dtype=forward.lse.dtype)
    return fused(logits, labels, forward.ignore_index, forward.lse, grad, scale)


def register_fast_nn(backend: str = "cuda") -> None:
    """Register this module's fast forwards for ``backend`` (CUDA's by default; a test
    double with the same kernels may register them under its own name).
    """
    register_fast(backend, "Relu", relu)
    register_fast(backend, "ReluBackward", relu_grad)
    register_fast(backend, "CrossEntropy", cross_entropy)
    register_fast(backend, "CrossEntropyBackward", cross_entropy_grad)
    register_fast(backend, "BatchNorm", batch_norm_forward)
    register_fast(backend, "BatchNormGrad", batch_norm_grad)


__all__ = ["cross_entropy", "cross_entropy_grad", "register_fast_nn", "relu", "relu_grad"]
