"""The CPU's threaded ReLU: the reference computation, run on runs of elements.

Each function here cuts its work into contiguous chunks with
:func:`~minitorch_accel.backends.numpy.threads.parallel_for`, writing into that chunk's
part of one output buffer: results are equal bit for bit. (Convolution and pooling's
threaded variants are fast paths of the NumPy backend,
:mod:`minitorch_accel.backends.numpy.fast_conv`.)

The NumPy backend hands these out through ``Backend.kernel(name)`` when more than one
thread is in use (:func:`minitorch_accel.set_num_threads`); at one thread the ops run
their reference code.
"""

from __future__ import annotations

import numpy as np

from ..backends.layout import Array, _has_layout, empty_with_layout, physical_order
from ..backends.numpy.threads import parallel_for, register_kernel

#: Fewest elements per chunk of an elementwise pass (256 KiB of float32).
ELEMENT_GRAIN = 1 << 16


def _flat(a: Array) -> Array | None:
    """``a`` as a 1-D view in memory order, or None if its memory has gaps."""
    order = physical_order(a)
    if not _has_layout(a, order):
        return None
    return a.transpose(order).reshape(-1)


def _empty_like_layout(a: Array) -> tuple[Array, Array]:
    """A new array shaped and laid out as ``a``, and its 1-D view in memory order."""
    order = physical_order(a)
    out = empty_with_layout(np, a.shape, a.dtype, order)
    return out, out.transpose(order).reshape(-1)


def relu_forward(x: Array) -> Array:
    """``max(x, 0)`` in chunks of elements, in the memory layout of ``x``."""
    src = _flat(x) if x.dtype.kind == "f" else None
    if src is None:
        return np.maximum(x, 0)
    y, dst = _empty_like_layout(x)
    parallel_for(src.size, lambda s, e: np.maximum(src[s:e], 0, out=dst[s:e]), grain=ELEMENT_GRAIN)
    return y


def relu_backward(y: Array, grad_y: Array) -> Array:
    """``grad_y * (y > 0)`` in chunks, each with its own small mask (kept in cache)."""
    out_src, grad_src = _flat(y), _flat(grad_y)
    same_layout = physical_order(y) == physical_order(grad_y) and y.shape == grad_y.shape
    if out_src is None or grad_src is None or not same_layout or grad_y.dtype.kind != "f":
        return grad_y * np.greater(y, 0)
    grad_x, dst = _empty_like_layout(grad_y)

    def chunk(s: int, e: int) -> None:
        np.multiply(grad_src[s:e], np.greater(out_src[s:e], 0), out=dst[s:e])

    parallel_for(grad_src.size, chunk, grain=ELEMENT_GRAIN)
    return grad_x


register_kernel("relu_forward", relu_forward)
register_kernel("relu_backward", relu_backward)

__all__ = [
    "relu_backward",
    "relu_forward",
]
