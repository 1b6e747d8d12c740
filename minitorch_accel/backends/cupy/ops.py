"""The CuPy backend's fast paths: the kernels of :mod:`.cupy_kernels`, built once and
called on CuPy arrays.

:meth:`CupyBackend.kernel(name) <minitorch_accel.backends.cupy.backend.CupyBackend.kernel>`
returns one of the methods of :class:`CupyFastPaths`; ops use it when it is not None
and their generic ``xp`` code otherwise. Every method runs on the GPU that holds its
first array argument.

The names (raw CuPy arrays in, raw arrays out; each method below gives its signature):

- ``relu_forward``, ``relu_backward``: ReLU and its gradient (the mask fused
  into one kernel), in the memory layout of the input.
- ``sgd_update``, ``adam_update``: as :func:`minitorch_accel.optim.sgd.sgd_update` and
  :func:`minitorch_accel.optim.adam.adam_update`, in one kernel.
- ``sgd_update_many``, ``adam_update_many``: the same for lists of tensors, in one
  launch of a multi-tensor kernel
  (:func:`~minitorch_accel.backends.cupy.kernel_spec.multi_tensor_source`); False where
  they do not apply (mixed dtypes, strided arrays), and then nothing has changed.
- ``label_count``: one reduction over int64 labels that nothing waits for; its count is
  read back later, only when asked.
- ``cross_entropy_forward``, ``cross_entropy_backward``: the loss per row or its mean or
  sum, with the label counts; up to 4,096 rows and 1,024 classes, one launch
  (:func:`~minitorch_accel.backends.cupy.kernels.cross_entropy_block_source`).
- ``gemm``: ``a @ b`` in one cuBLAS call, or None where that does not apply.

The image kernels of :class:`~.image_ops.ImageFastPaths` (im2col, col2im, conv2d's input
gradient, max pooling) are methods too, called by the convolution and pooling fast
paths of :mod:`minitorch_accel.backends.cupy.fast_conv` rather than looked up by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy

from . import kernels as K
from .image_ops import ImageFastPaths
from .optim_ops import OptimizerFastPaths

#: The names :meth:`CupyFastPaths.get` answers.
FAST_PATHS = (
    "relu_forward",
    "relu_backward",
    "sgd_update",
    "adam_update",
    "sgd_update_many",
    "adam_update_many",
    "label_count",
    "cross_entropy_forward",
    "cross_entropy_backward",
    "gemm",
)


def _nothing_read() -> int:
    return 0


class CupyFastPaths(ImageFastPaths, OptimizerFastPaths):
    """Every fast path of the CuPy backend: the activation and loss kernels here, the
    image and optimizer ones from the two base classes, the GEMM from
    :class:`~minitorch_accel.backends.cupy.fast_base.FastPathBase` (whose parameters
    it takes).
    """

    def get(self, name: str) -> Callable[..., Any] | None:
        """The fast path called ``name``, or None if there is none."""
        if name not in FAST_PATHS:
            return None
        fn: Callable[..., Any] = getattr(self, name)
        return fn

    # ------------------------------------------------------------------ activations
    def relu_forward(self, x: Any) -> Any:
        """``max(x, 0)`` (NaN stays NaN), in the memory layout of ``x``."""
        order = _contiguous_order(x)
        with self.on(x):
            y = self._kernel(K.RELU_FORWARD)(x.transpose(order))
        return y.transpose(_inverse(order))

    def relu_backward(self, y: Any, grad_y: Any) -> Any:
        """0 where the ReLU output ``y`` is ``<= 0``, else ``grad_y`` (a NaN ``y`` passes
        it), in the layout of ``y``: :class:`~minitorch_accel.ops.elementwise.ReluBackward`'s
        rule.
        """
        order = _contiguous_order(y)
        with self.on(y):
            grad_x = self._kernel(K.RELU_BACKWARD)(y.transpose(order), grad_y.transpose(order))
        return grad_x.transpose(_inverse(order))

    # ------------------------------------------------------------------ loss
    def label_count(
        self, labels: Any, classes: int, ignore_index: int
    ) -> tuple[Any, Callable[[], tuple[int, int]]]:
        """Count the labels on the device; read the count back only when asked."""
        with self.on(labels):
            total = self._reduction(K.LABEL_COUNT)(labels, classes, ignore_index)
            return total, self._counts_later(total)

    def _counts_later(self, total: Any) -> Callable[[], tuple[int, int]]:
        read = self._read_later(total)

        def result() -> tuple[int, int]:
            value = read()
            return value & 0xFFFFFFFF, value >> 32

        return result

    def _read_later(self, scalar: Any) -> Callable[[], int]:
        """Queue the copy of a 0-d int64 device array into pinned host memory; the
        returned function waits for that copy (an event), not for later work.

        While a CUDA graph is captured nothing can be read back: the copy would be
        replayed into host memory long freed, and waiting for its event is refused. The
        returned function then gives 0 (for the label check: no label out of range), so
        a captured step checks its labels only in the eager warm-up.
        """
        if self._capturing():
            return _nothing_read
        memory = self.cp.cuda.alloc_pinned_memory(8)
        host = numpy.frombuffer(memory, numpy.int64, 1).reshape(())
        scalar.get(out=host, blocking=False)
        done = self.cp.cuda.Event(disable_timing=True)
        done.record()

        def read() -> int:
            done.synchronize()
            return int(host)

        return read

    def cross_entropy_forward(
        self, logits: Any, labels: Any, ignore_index: int, reduction: str = "none"
    ) -> tuple[Any, Any, Any, Callable[[], tuple[int, int]]]:
        """Cross-entropy of (N, C) ``logits``: ``(loss, lse, scale, counts)``."""
        cp = self.cp
        with self.on(logits):
            logits, labels = cp.ascontiguousarray(logits), cp.ascontiguousarray(labels)
            rows, classes = logits.shape
            if (
                0 < rows <= K.BLOCK_KERNEL_MAX_ROWS
                and classes <= K.ROW_KERNEL_MAX_CLASSES
                and logits.dtype.char in "fd"
                and labels.dtype == numpy.int64
            ):
                return self._cross_entropy_block(logits, labels, ignore_index, reduction)
            total, counts = self.label_count(labels, classes, ignore_index)
            if classes <= K.ROW_KERNEL_MAX_CLASSES:
                loss, lse = self._kernel(K.CROSS_ENTROPY_ROWS)(
                    logits, labels, ignore_index, classes
                )
            else:  # many classes: parallel reductions over each row first
                row_max = logits.max(axis=1)
                sum_exp = self._reduction(K.SUM_EXP)(logits, row_max[:, None], axis=1)
                loss, lse = self._kernel(K.CROSS_ENTROPY_FORWARD)(
                    logits, labels, ignore_index, row_max, sum_exp, classes
                )
            if reduction == "none":
                return loss, lse, None, counts
            if reduction == "mean":
                mean, scale = self._kernel(K.MEAN_OF_COUNTED)(loss.sum(), total)
                return mean, lse, scale, counts
            return loss.sum(), lse, cp.ones((), logits.dtype), counts

    def _cross_entropy_block(
        self, logits: Any, labels: Any, ignore_index: int, reduction: str
    ) -> tuple[Any, Any, Any, Callable[[], tuple[int, int]]]:
        """The whole forward in one launch (``cross_entropy_block_source``)."""
        cp, (rows, classes), dtype = self.cp, logits.shape, logits.dtype
        loss, lse = cp.ndarray((rows,), dtype), cp.ndarray((rows,), dtype)
        out, total = cp.ndarray((2,), dtype), cp.ndarray((), numpy.int64)
        kernel = self._raw_kernel(
            dtype.char, "mta_cross_entropy_block", K.cross_entropy_block_source
        )
        kernel(
            (1,),
            (K.BLOCK_KERNEL_THREADS,),
            (
                logits,
                labels,
                numpy.int64(ignore_index),
                numpy.int32(rows),
                numpy.int32(classes),
                numpy.int32(reduction == "mean"),
                loss,
                lse,
                out,
                total,
            ),
        )
        counts = self._counts_later(total)
        if reduction == "none":
            return loss, lse, None, counts
        return out[0], lse, out[1], counts

    def cross_entropy_backward(
        self, logits: Any, labels: Any, ignore_index: int, lse: Any, grad: Any, scale: Any = None
    ) -> Any:
        """Gradient with respect to the logits, (N, C), of the per-row losses (``grad``
        is (N,), ``scale`` None) or of their scaled sum (``grad`` 0-d).
        """
        cp = self.cp
        with self.on(logits):
            grad = cp.ascontiguousarray(cp.asarray(grad, dtype=lse.dtype).reshape(-1))
            summed = scale is not None
            if grad.size != (1 if summed else lse.size):
                raise ValueError(
                    f"cross_entropy backward: gradient of {grad.size} values "
                    f"for {lse.size} rows" + (" summed" if summed else "")
                )
            if not summed:
                scale = cp.ones(1, lse.dtype)
            return self._kernel(K.CROSS_ENTROPY_BACKWARD)(
                logits,
                labels,
                ignore_index,
                lse,
                grad,
                0 if summed else 1,
                scale.reshape(1),
                logits.shape[1],
            )


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
