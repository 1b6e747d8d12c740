"""The NumPy backend's matrix product over the CPU's thread pool.

A GEMM ``C = A @ B`` (M x K times K x N) splits the way OpenMP's *parallel for* splits
a loop: each thread computes a block of C's rows (or, when C has few rows, of its
columns) with a one-thread BLAS call on its part of A (or B). Every element of C is
still one BLAS dot product over the whole of K, so splitting changes which kernel BLAS
picks for a block, not the order of the sum. When C is too small to share out (a
convolution's weight gradient: a few hundred values summed over every pixel of the
batch), each thread multiplies its own range of K into a private C and the partial
products are added in a fixed order: the result then depends on the thread count, by
rounding only.

The framework does this itself, rather than let BLAS start its own threads, because
the two pools would fight over the cores: after a multi-threaded call, OpenBLAS's
threads spin, waiting for the next one, for a while, and on a machine with few cores
they take the time the framework's own threads need for the elementwise work that
follows. Holding BLAS at one thread and running every parallel loop on one pool, as
PyTorch does with OpenMP, leaves one thread per core.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..conv_kernels import blas_into
from ..fast_paths import register_fast
from .threads import chunk_bounds, get_num_threads, in_parallel_region, parallel_for

#: Fewest multiply-adds worth splitting: below it, handing blocks to the pool costs
#: more than it saves (about 40 microseconds of one core's work).
GEMM_GRAIN = 1 << 21

#: Fewest rows (or columns) of C per block: thinner blocks run BLAS's kernels badly.
MIN_BLOCK = 16

#: Fewest terms of the sum (K) per thread when K is split.
MIN_K_BLOCK = 256


def threaded_gemm(a: Any, b: Any, out: Any = None) -> Any:
    """``a @ b`` for 2-D float arrays, split over the thread pool; None where it does
    not apply (one thread, a small product, other shapes or dtypes), for the caller's
    one-call path.

    Examples
    --------
    >>> import numpy as np
    >>> import minitorch_accel as mta
    >>> before = mta.get_num_threads()
    >>> mta.set_num_threads(2)
    >>> a, b = np.ones((256, 128), np.float32), np.ones((128, 96), np.float32)
    >>> c = threaded_gemm(a, b)
    >>> c.shape, float(c[0, 0])
    ((256, 96), 128.0)
    >>> mta.set_num_threads(before)
    """
    threads = get_num_threads()
    if (
        threads == 1
        or in_parallel_region()
        or not isinstance(a, np.ndarray)
        or not isinstance(b, np.ndarray)
    ):
        return None
    if a.ndim != 2 or b.ndim != 2 or a.dtype != b.dtype or a.dtype.kind != "f":
        return None
    (m, k), n = a.shape, b.shape[1]
    if a.dtype.itemsize < 4 or b.shape[0] != k or m * n * k < GEMM_GRAIN:
        return None
    if out is None:
        out = np.empty((m, n), a.dtype)
    elif out.shape != (m, n) or out.dtype != a.dtype:
        return None
    if max(m, n) >= 2 * threads * MIN_BLOCK or k < threads * MIN_K_BLOCK:
        _split_output(a, b, out, threads)
    else:
        _split_sum(a, b, out, threads)
    return out


def _split_output(a: Any, b: Any, out: Any, threads: int) -> None:
    """Each thread a block of C's rows (reading all of ``b``), or of its columns."""
    (m, n) = out.shape
    if m >= n or n < 2 * MIN_BLOCK:
        grain = max(MIN_BLOCK, math.ceil(m / threads))
        parallel_for(m, lambda s, e: blas_into(a[s:e], b, out[s:e]), grain=grain)
    else:
        grain = max(MIN_BLOCK, math.ceil(n / threads))
        parallel_for(n, lambda s, e: np.matmul(a, b[:, s:e], out=out[:, s:e]), grain=grain)


def _split_sum(a: Any, b: Any, out: Any, threads: int) -> None:
    """Each thread ``a[:, K part] @ b[K part]`` into its own buffer; then their sum, in
    order.
    """
    bounds = chunk_bounds(a.shape[1], threads)
    parts = np.empty((len(bounds), *out.shape), out.dtype)

    def chunk(first: int, last: int) -> None:
        for i in range(first, last):
            s, e = bounds[i]
            blas_into(a[:, s:e], b[s:e], parts[i])

    parallel_for(len(bounds), chunk)
    np.sum(parts, axis=0, out=out)


def linear_grad_input(fn: Any, grad: Any, weight: Any, *, x: Any = None, pair: Any = None) -> Any:
    """Fast forward of :class:`~minitorch_accel.ops.linear.LinearGradInput`: with more
    than one thread and the input ``x`` given, the input's gradient ``dy @ weight`` and
    the weight's ``dy_rows.T @ x_rows`` side by side, each product whole on one thread
    (*inter-op parallelism*: one parallel region for two independent products, each as
    one thread computes it alone, where splitting each over the threads would take two
    regions of half-sized, less efficient products). The weight's is left in ``pair``
    (a :class:`~minitorch_accel.backends.fast_paths.GradsAhead`) for
    :func:`linear_grad_weight`. Else the reference forward.
    """
    if x is None or pair is None or get_num_threads() == 1 or in_parallel_region():
        return fn.forward(grad, weight, x=x, pair=pair)
    if not all(isinstance(a, np.ndarray) for a in (grad, weight, x)):
        return fn.forward(grad, weight, x=x, pair=pair)
    dtype = grad.dtype
    if dtype.kind != "f" or dtype.itemsize < 4 or weight.dtype != dtype or x.dtype != dtype:
        return fn.forward(grad, weight, x=x, pair=pair)
    rows, (o, i) = grad.reshape(-1, grad.shape[-1]), weight.shape
    x_rows = x.reshape(-1, i)
    if rows.shape[0] * o * i < GEMM_GRAIN or x_rows.shape[0] != rows.shape[0]:
        return fn.forward(grad, weight, x=x, pair=pair)
    grad_x, grad_w = np.empty((rows.shape[0], i), dtype), np.empty((o, i), dtype)
    products = ((rows, weight, grad_x), (rows.T, x_rows, grad_w))

    def chunk(first: int, last: int) -> None:
        for a, b, out in products[first:last]:
            blas_into(a, b, out)

    parallel_for(len(products), chunk)
    pair.keep("weight", grad, grad_w)
    return grad_x.reshape(*grad.shape[:-1], i)


def linear_grad_weight(fn: Any, grad: Any, x: Any, *, pair: Any = None) -> Any:
    """Fast forward of :class:`~minitorch_accel.ops.linear.LinearGradWeight`: the
    gradient :func:`linear_grad_input` left in ``pair``, if it came from this very
    ``grad``; else the reference forward.
    """
    grad_w = None if pair is None else pair.take("weight", grad)
    return fn.forward(grad, x, pair=pair) if grad_w is None else grad_w


def register_fast_gemm(backend: str = "cpu") -> None:
    """Register the Linear layer's gradient fast paths for ``backend``."""
    register_fast(backend, "LinearGradInput", linear_grad_input)
    register_fast(backend, "LinearGradWeight", linear_grad_weight)


__all__ = [
    "GEMM_GRAIN",
    "MIN_BLOCK",
    "linear_grad_input",
    "linear_grad_weight",
    "register_fast_gemm",
    "threaded_gemm",
]
