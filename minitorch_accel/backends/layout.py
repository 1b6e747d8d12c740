"""Memory layout of raw image arrays, and the cache of large buffers they are made in.

An NCHW-shaped array may be channels-last (NHWC) in memory: :func:`physical_order` reads
the layout from the strides, :func:`empty_with_layout` and :func:`padded` make arrays
with a chosen one. Convolution writes channels-last outputs and NumPy ufuncs keep that
layout, so the fast kernels of :mod:`~minitorch_accel.backends.conv_kernels`,
:mod:`~minitorch_accel.backends.pool_kernels` and :mod:`~minitorch_accel.ops.norm`
follow the layout of their input instead of copying it.

Big temporaries come from :data:`buffer_cache`: fresh pages cost page faults.
"""

from __future__ import annotations

import sys
import threading
from math import prod
from typing import Any

import numpy

Array = Any
"""A NumPy or CuPy ndarray (the backends share no common static type)."""

NHWC = (0, 2, 3, 1)
NCHW = (0, 1, 2, 3)


class BufferCache:
    """Reuse large NumPy buffers between training steps instead of allocating fresh ones.

    A buffer is handed out again once nothing outside the cache refers to it (every view
    holds a reference to its buffer: ``sys.getrefcount`` tells), so outputs and saved
    activations stay valid while alive. NumPy-only fast path: other array modules (CuPy
    has its own memory pool) and small arrays get ``xp.empty``.

    Parameters
    ----------
    max_bytes : int
        Most bytes the cache keeps; past it, free buffers are dropped first and then
        new arrays are allocated without being kept.
    min_bytes : int
        Smaller requests bypass the cache.
    """

    def __init__(self, max_bytes: int = 1 << 30, min_bytes: int = 1 << 18) -> None:
        self.max_bytes = max_bytes
        self.min_bytes = min_bytes
        self._buckets: dict[tuple[int, str], list[Array]] = {}
        self._held = 0
        self._lock = threading.Lock()

    @property
    def held_bytes(self) -> int:
        """Bytes of all buffers the cache keeps, in use or free."""
        return self._held

    def empty(self, xp: Any, shape: tuple[int, ...], dtype: Any) -> Array:
        """Return an uninitialised C-contiguous array, reusing a free buffer if one fits."""
        dt = numpy.dtype(dtype)
        count = prod(shape)
        if xp is not numpy or count * dt.itemsize < self.min_bytes:
            return xp.empty(shape, dt)
        with self._lock:
            bucket = self._buckets.setdefault((count, dt.str), [])
            for i in range(len(bucket)):
                if sys.getrefcount(bucket[i]) == 2:  # only the bucket (and this call)
                    return bucket[i].reshape(shape)
            nbytes = count * dt.itemsize
            if self._held + nbytes > self.max_bytes:
                self._drop_free()
            buffer = numpy.empty(count, dt)
            if self._held + nbytes <= self.max_bytes:
                bucket.append(buffer)
                self._held += nbytes
            return buffer.reshape(shape)

    def clear(self) -> None:
        """Forget every free buffer (buffers still in use are simply no longer tracked)."""
        with self._lock:
            self._buckets.clear()
            self._held = 0

    def _drop_free(self) -> None:
        for bucket in self._buckets.values():
            i = 0
            while i < len(bucket):
                if sys.getrefcount(bucket[i]) == 2:
                    self._held -= bucket.pop(i).nbytes
                else:
                    i += 1


buffer_cache = BufferCache()
"""The process-wide cache used by the convolution and pooling kernels."""


def physical_order(x: Array) -> tuple[int, ...]:
    """Axes of ``x`` from the largest memory stride to the smallest (its memory layout)."""
    return tuple(sorted(range(x.ndim), key=lambda a: (-abs(x.strides[a]), a)))


def empty_with_layout(xp: Any, shape: tuple[int, ...], dtype: Any, order: tuple[int, ...]) -> Array:
    """Uninitialised array of logical ``shape`` stored with axes ``order`` outermost first.

    ``order=(0, 2, 3, 1)`` gives an NCHW-shaped array that is NHWC in memory.
    """
    buffer = buffer_cache.empty(xp, tuple(shape[a] for a in order), dtype)
    inverse = [0] * len(order)
    for position, axis in enumerate(order):
        inverse[axis] = position
    return buffer.transpose(inverse)


def with_layout(xp: Any, a: Array, order: tuple[int, ...]) -> Array:
    """``a`` itself if stored with axes ``order``, else a copy that is.

    An elementwise pass over two arrays of different layouts walks one of them against
    its memory order, in short runs: a ReLU gradient of LeNet's flattened activations
    (NCHW gradient, channels-last output) took 11x as long as the copy and a pass over
    one layout together.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.zeros((1, 3, 2, 2), np.float32)
    >>> physical_order(with_layout(np, a, (0, 2, 3, 1)))
    (0, 2, 3, 1)
    >>> with_layout(np, a, (0, 1, 2, 3)) is a
    True
    """
    if physical_order(a) == order:
        return a
    out = empty_with_layout(xp, a.shape, a.dtype, order)
    out[...] = a
    return out


def padded(
    xp: Any, x: Array, padding: tuple[int, int], fill: float, order: tuple[int, ...] | None = None
) -> Array:
    """Return NCHW ``x`` padded by ``fill`` on H and W, stored with layout ``order``.

    Returns ``x`` itself when there is no padding and its layout already is ``order``
    (default: keep the layout of ``x``).
    """
    order = physical_order(x) if order is None else order
    ph, pw = padding
    n, c, h, w = x.shape
    if ph == pw == 0 and _has_layout(x, order):
        return x
    out = empty_with_layout(xp, (n, c, h + 2 * ph, w + 2 * pw), x.dtype, order)
    if ph or pw:
        out[:, :, :ph] = fill
        out[:, :, ph + h :] = fill
        out[:, :, ph : ph + h, :pw] = fill
        out[:, :, ph : ph + h, pw + w :] = fill
    out[:, :, ph : ph + h, pw : pw + w] = x
    return out


def _has_layout(x: Array, order: tuple[int, ...]) -> bool:
    """True if walking ``x`` in axis order ``order`` is C-contiguous (size-1 axes ignored)."""
    expected = x.itemsize
    for axis in reversed(order):
        if x.shape[axis] != 1:
            if x.strides[axis] != expected:
                return False
            expected *= x.shape[axis]
    return True
