"""The NumPy backend's fast paths for elementwise arithmetic, ReLU and batch
normalization.

``+``, ``-``, ``*`` and ``/`` of two equal-shaped arrays, and ReLU and its gradient, run
in chunks of elements on the CPU's thread pool
(:func:`~minitorch_accel.backends.numpy.threads.parallel_for`) when more than one
thread is in use, in the memory layout of their input (channels-last stays
channels-last); each element gets the same operation as in the reference code, so the
results are equal bit for bit. At one thread they run the reference code, except ReLU's
forward, which is faster in blocks at any thread count (:func:`relu_forward`), and its
gradient, a bit mask rather than the reference's ``where`` (:func:`relu_grad_into`),
as is any gradient masked off (``MaskedGrad``: :func:`masked_grad`).

Batch normalization reduces each channel with ``einsum`` (one pass whatever the memory
layout, several times faster than ``a.sum(axis=(0, 2, 3))``), makes its temporaries in
the layout of its input from the buffer cache, and fuses the steps into in-place
updates. :func:`batch_norm_forward` is array-module generic: the CuPy backend
registers it too.

:func:`register_fast_nn` puts them in the backend's fast-path table under the names of
the ops' :class:`~minitorch_accel.core.function.Function` classes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fast_paths import register_fast
from ..layout import Array, _has_layout, empty_with_layout, physical_order, with_layout
from ..pool_kernels import masked_into
from .threads import for_blocks, parallel_for, splits

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


#: Elements per block of :func:`relu_forward` (512 KiB of float32).
RELU_BLOCK = 1 << 17
#: Read-only blocks of zeros for :func:`relu_forward`, by dtype.
_ZEROS: dict[np.dtype[Any], Array] = {}


def read_only_zeros(dtype: Any, size: int) -> Array:
    """A read-only 1-D array of at least ``size`` zeros of ``dtype``, made once and
    shared (the second operand of :func:`relu_forward`'s ``maximum``).

    Examples
    --------
    >>> import numpy as np
    >>> zeros = read_only_zeros(np.float32, 3)
    >>> zeros.size >= 3, float(zeros.max()), zeros.flags.writeable
    (True, 0.0, False)
    """
    dtype = np.dtype(dtype)
    zeros = _ZEROS.get(dtype)
    if zeros is None or zeros.size < size:
        zeros = _ZEROS[dtype] = np.zeros(max(size, RELU_BLOCK), dtype)
        zeros.flags.writeable = False
    return zeros


#: Per float dtype, the operand order of ``np.maximum`` that keeps ``-0.0``: see
#: :func:`zeros_first`.
_ZEROS_FIRST: dict[np.dtype[Any], bool | None] = {}


def zeros_first(dtype: Any) -> bool | None:
    """True where ``np.maximum(zeros, x)`` gives ``x``'s ``-0.0`` for ``dtype``, False
    where ``np.maximum(x, zeros)`` does, None where neither order does.

    PyTorch's ReLU (and the reference :class:`~minitorch_accel.ops.elementwise.Relu`)
    keeps ``relu(-0.0) = -0.0``; NumPy does not specify which zero ``maximum`` returns at
    a tie, and it differs by dtype and CPU (x86's vector ``max`` returns its second
    operand, NumPy's float16 loop its first). So each dtype is probed once, on lengths
    and offsets that run the vector loop and its scalar tail.

    Examples
    --------
    >>> import numpy as np
    >>> order = zeros_first(np.float32)
    >>> x = np.full(5, -0.0, np.float32); zeros = np.zeros(5, np.float32)
    >>> order is None or bool(np.signbit(np.maximum(*((zeros, x) if order else (x, zeros)))).all())
    True
    """
    dtype = np.dtype(dtype)
    if dtype not in _ZEROS_FIRST:
        lengths = (*range(1, 70), 1023, RELU_BLOCK)
        longest = max(lengths)
        x, zeros = np.full(longest + 1, -0.0, dtype), read_only_zeros(dtype, longest)
        spans = [(o, n) for o in (0, 1) for n in lengths]
        _ZEROS_FIRST[dtype] = next(
            (
                first
                for first in (True, False)
                if all(
                    np.signbit(
                        np.maximum(zeros[:n], x[o : o + n])
                        if first
                        else np.maximum(x[o : o + n], zeros[:n])
                    ).all()
                    for o, n in spans
                )
            ),
            None,
        )
    return _ZEROS_FIRST[dtype]


def relu_forward(x: Array) -> Array:
    """``max(x, 0)`` in blocks of elements, in the memory layout of ``x``; ``-0.0``
    stays ``-0.0``, as in PyTorch.

    Each block is compared with a block of zeros rather than with the scalar 0: NumPy
    runs ``maximum`` of two arrays in its vector loop and ``maximum`` of an array and a
    scalar in a slower one (measured 2.5x on 1.4 million float32). The zeros go first or
    second as :func:`zeros_first` found keeps ``-0.0``; where neither does, and where
    the memory of ``x`` has gaps, the reference rule ``where(x < 0, 0, x)`` runs. The
    results are the reference's bits.

    Examples
    --------
    >>> import numpy as np
    >>> relu_forward(np.array([-1.5, -0.0, 0.0, 2.0])).tolist()
    [0.0, -0.0, 0.0, 2.0]
    """
    if x.dtype.kind != "f":
        return np.maximum(x, 0)
    first = zeros_first(x.dtype)
    if first is None:
        return np.where(x < 0, x.dtype.type(0), x)
    zeros = read_only_zeros(x.dtype, RELU_BLOCK)
    if x.size <= RELU_BLOCK and x.flags.c_contiguous:  # one block, C order: no set-up
        block = zeros[: x.size].reshape(x.shape)
        return np.maximum(block, x) if first else np.maximum(x, block)
    src = _flat(x)
    if src is None:
        return np.where(x < 0, x.dtype.type(0), x)
    y, dst = _empty_like_layout(x)

    def relu_block(s: int, e: int) -> None:
        if first:
            np.maximum(zeros[: e - s], src[s:e], out=dst[s:e])
        else:
            np.maximum(src[s:e], zeros[: e - s], out=dst[s:e])

    for_blocks(src.size, relu_block, RELU_BLOCK)
    return y


#: The unsigned integer of each float size: :func:`relu_grad_into` masks a float's bits.
_BITS = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def relu_grad_into(grad: Array, y: Array, out: Array) -> None:
    """ReLU's gradient (:class:`~minitorch_accel.ops.elementwise.ReluBackward`'s rule:
    exactly 0 where ``y <= 0``, else ``grad``, a NaN ``y`` passing it) written into
    ``out``, all three 1-D float arrays of one dtype.

    ``np.where`` spends a branch on each element (about 12x slower on a random mask);
    ``grad * mask`` leaves NaN where an infinite ``grad`` meets a 0. So the mask is made
    a word of all-zero or all-one bits (``(y <= 0) - 1`` in unsigned arithmetic) and
    ANDed with the bits of ``grad``: exact zeros, each other value passed bit for bit,
    at the speed of the multiply.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([0.0, 2.0, np.nan, 0.0])
    >>> out = np.empty(4)
    >>> relu_grad_into(np.array([5.0, 6.0, 7.0, np.inf]), y, out)
    >>> out.tolist()
    [0.0, 6.0, 7.0, 0.0]
    """
    bits = _BITS[grad.itemsize]
    keep = np.subtract(np.less_equal(y, 0).view(np.uint8), bits(1), dtype=bits)
    np.bitwise_and(grad.view(bits), keep, out=out.view(bits))


def masked_grad_into(grad: Array, keep: Array, out: Array) -> None:
    """:class:`~minitorch_accel.ops.elementwise.MaskedGrad`'s rule (``grad`` where
    ``keep``, exactly 0 elsewhere) written into ``out``: 1-D arrays, ``keep`` bool,
    ``grad`` and ``out`` floats of one dtype. As :func:`relu_grad_into`, a word of all-one
    or all-zero bits (``0 - keep`` in unsigned arithmetic) ANDed with the bits of
    ``grad``, at the speed of a multiply where ``np.where`` would branch: the kernel
    :func:`~minitorch_accel.backends.pool_kernels.masked_into`, which max pooling's
    gradient uses too.

    Examples
    --------
    >>> import numpy as np
    >>> out = np.empty(3)
    >>> masked_grad_into(np.array([np.inf, 2.0, np.nan]), np.array([False, True, False]), out)
    >>> out.tolist()
    [0.0, 2.0, 0.0]
    """
    masked_into(np, grad, keep, out)


def masked_grad(fn: Any, grad: Array, *, keep: Array) -> Array:
    """Fast forward of ``MaskedGrad``: :func:`masked_grad_into` in chunks shared out over
    the threads, where ``keep`` is a bool array of ``grad``'s shape and memory layout
    (else the reference ``where``, which also broadcasts).
    """
    fn.keep = keep
    usable = (
        isinstance(grad, np.ndarray)
        and isinstance(keep, np.ndarray)
        and grad.dtype.kind == "f"
        and grad.itemsize in _BITS
        and keep.dtype == np.bool_
        and keep.shape == grad.shape
    )
    src_g = _flat(grad) if usable else None
    src_k = _flat(keep) if usable else None
    if src_g is None or src_k is None or physical_order(grad) != physical_order(keep):
        return fn.forward(grad, keep=keep)
    out, dst = _empty_like_layout(grad)
    parallel_for(
        dst.size,
        lambda s, e: masked_grad_into(src_g[s:e], src_k[s:e], dst[s:e]),
        grain=ELEMENT_GRAIN,
    )
    return out


def relu_backward(y: Array, grad_y: Array) -> Array:
    """ReLU's gradient (:func:`relu_grad_into`) in chunks, each with its own small mask
    (kept in cache), shared out over the threads; in the memory layout of ``y``.

    ``grad_y`` is first copied into the memory layout of ``y`` where the two differ
    (the gradient of a flattened channels-last activation arrives in NCHW order): see
    :func:`~minitorch_accel.backends.layout.with_layout`. The values are the same.
    """
    usable = y.shape == grad_y.shape and y.dtype == grad_y.dtype and y.dtype.kind == "f"
    if not usable or y.itemsize not in _BITS:
        return np.where(y <= 0, grad_y.dtype.type(0), grad_y)
    if y.flags.c_contiguous and grad_y.flags.c_contiguous and not splits(y.size, ELEMENT_GRAIN):
        grad_x = np.empty_like(grad_y)  # one chunk, C order: no set-up
        relu_grad_into(grad_y.reshape(-1), y.reshape(-1), grad_x.reshape(-1))
        return grad_x
    grad_y = with_layout(np, grad_y, physical_order(y))
    out_src, grad_src = _flat(y), _flat(grad_y)
    if out_src is None or grad_src is None:
        return np.where(y <= 0, grad_y.dtype.type(0), grad_y)
    grad_x, dst = _empty_like_layout(grad_y)

    def chunk(s: int, e: int) -> None:
        relu_grad_into(grad_src[s:e], out_src[s:e], dst[s:e])

    parallel_for(grad_src.size, chunk, grain=ELEMENT_GRAIN)
    return grad_x


def _threaded_binary(ufunc: Any) -> Any:
    """A fast forward running ``ufunc(a, b)`` in chunks of elements when
    :func:`~minitorch_accel.backends.numpy.threads.parallel_for` would split them and
    ``a`` and ``b`` are float arrays of one shape, dtype and memory layout (no
    broadcasting); else the reference forward.
    """

    def fast(fn: Any, a: Any, b: Any) -> Any:
        if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray):
            return fn.forward(a, b)
        if not splits(a.size, ELEMENT_GRAIN):  # one chunk: no set-up
            return fn.forward(a, b)
        if a.shape != b.shape or a.dtype != b.dtype or a.dtype.kind != "f":
            return fn.forward(a, b)
        src_a, src_b = _flat(a), _flat(b)
        if src_a is None or src_b is None or physical_order(a) != physical_order(b):
            return fn.forward(a, b)
        out, dst = _empty_like_layout(a)
        parallel_for(
            dst.size, lambda s, e: ufunc(src_a[s:e], src_b[s:e], out=dst[s:e]), grain=ELEMENT_GRAIN
        )
        return out

    fast.__name__ = fast.__qualname__ = f"threaded_{ufunc.__name__}"
    return fast


#: Elementwise Functions with a threaded fast forward, by name.
BINARY_UFUNCS = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}


def relu(fn: Any, a: Array) -> Array:
    """Fast forward of ``Relu``: :func:`relu_forward`, threaded when several threads are
    in use.
    """
    return relu_forward(a) if isinstance(a, np.ndarray) else fn.forward(a)


def relu_grad(fn: Any, grad: Array, y: Array) -> Array:
    """Fast forward of ``ReluBackward``: :func:`relu_backward`, threaded when the split
    pays (same dtypes; else the reference).
    """
    return relu_backward(y, grad) if grad.dtype == y.dtype else fn.forward(grad, y)


def _channel_sum(xp: Any, a: Array, b: Array = None) -> Array:
    """Per-channel (dim 1) ``sum(a)``, or ``sum(a * b)`` without the product in memory
    (NumPy's einsum); on a GPU a product and a reduction kernel, since CuPy's einsum
    calls cuBLAS, which a CUDA graph capture refuses through CuPy.
    """
    dims = "nc" + "hwdefgijk"[: a.ndim - 2]
    if xp is not np:
        axes = (0, *range(2, a.ndim))
        return (a if b is None else a * b).sum(axis=axes)
    if b is None:
        return xp.einsum(f"{dims}->c", a)
    return xp.einsum(f"{dims},{dims}->c", a, b)


def _like(xp: Any, a: Array, dtype: Any) -> Array:
    """An uninitialised array shaped and laid out in memory like ``a``, from the buffer
    cache (fresh pages cost page faults at every step).
    """
    return empty_with_layout(xp, a.shape, dtype, physical_order(a))


def batch_norm_forward(
    fn: Any,
    x: Array,
    w: Array,
    b: Array,
    *,
    running: Any,
    batch: bool,
    momentum: float,
    eps: float,
) -> Array:
    """Fast forward of ``BatchNorm``: per-channel sums by ``einsum``, in-place steps in
    the layout of ``x``; sets the attributes the reference forward sets.
    """
    xp, dtype = fn.xp, x.dtype
    count = x.size // x.shape[1]
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    compute = np.float32 if x.dtype.itemsize < 4 else x.dtype  # float16: stats in float32
    x = x.astype(compute, copy=False)
    x_hat = _like(xp, x, compute)
    if batch:
        mean = _channel_sum(xp, x) / count
        xp.subtract(x, mean.reshape(shape), out=x_hat)
        var = _channel_sum(xp, x_hat, x_hat) / count
        if running is not None:
            running_mean, running_var = running
            running_mean *= 1.0 - momentum
            running_mean += momentum * mean
            running_var *= 1.0 - momentum
            running_var += (momentum * count / max(count - 1, 1)) * var
    else:
        mean, var = running[0].astype(compute), running[1].astype(compute)
        xp.subtract(x, mean.reshape(shape), out=x_hat)
    invstd = 1.0 / xp.sqrt(var + eps)
    x_hat *= invstd.reshape(shape)
    fn.mean, fn.invstd, fn.batch, fn.eps = mean, invstd, batch, eps
    fn.x_hat, fn.grad_sums = x_hat, None  # for batch_norm_grad
    if w is None and b is None:
        return x_hat.astype(dtype)
    out = _like(xp, x, compute)
    if w is not None:
        xp.multiply(x_hat, w.reshape(shape), out=out)
    else:
        out[...] = x_hat
    if b is not None:
        out += b.reshape(shape)
    return out.astype(dtype, copy=False)


def batch_norm_grad(fn: Any, g: Array, x: Array, w: Array, *, forward: Any, wrt: int) -> Array:
    """Fast forward of ``BatchNormGrad``: the gradient in ``x`` (``wrt=0``), ``w`` (1) or
    ``b`` (2) from two per-channel sums, ``sum(g)`` and ``sum(g * x_hat)``, made once
    for the gradients of one backward (kept on the forward node until each of them has
    used them), and in-place passes.
    """
    xp, shape = fn.xp, (1, x.shape[1]) + (1,) * (x.ndim - 2)
    fn.forward_node, fn.wrt = forward, wrt  # for the node's backward (second derivatives)
    x_hat = getattr(forward, "x_hat", None)
    if x_hat is None:  # the reference forward ran
        compute = np.float32 if x.dtype.itemsize < 4 else x.dtype
        x_hat = x.astype(compute) - forward.mean.reshape(shape)
        x_hat *= forward.invstd.reshape(shape)
    given, g = g, g.astype(x_hat.dtype, copy=False)  # float16 gradients: sums in float32
    scale = forward.invstd if w is None else forward.invstd * w
    grad_x = _like(xp, g, g.dtype) if wrt == 0 else None
    if grad_x is not None and not forward.batch:
        return xp.multiply(g, scale.reshape(shape), out=grad_x)
    sums = getattr(forward, "grad_sums", None)
    if sums is None or sums[0] is not given:
        need_x, need_w, need_b = forward.needs_input_grad
        uses = need_w + need_b + (need_x and forward.batch)  # the gradients that read them
        sums = [given, _channel_sum(xp, g), _channel_sum(xp, g, x_hat), uses]
    sums[3] -= 1
    forward.grad_sums = sums if sums[3] > 0 else None
    grad_b, grad_w = sums[1], sums[2]
    if grad_x is None:
        return (grad_w if wrt == 1 else grad_b).copy()
    count = g.size // g.shape[1]  # (g - mean(g) - x_hat * mean(g * x_hat)) * scale
    xp.multiply(x_hat, (-grad_w / count).reshape(shape), out=grad_x)
    grad_x += g
    grad_x -= (grad_b / count).reshape(shape)
    grad_x *= scale.reshape(shape)
    return grad_x


def register_fast_nn(backend: str = "cpu") -> None:
    """Register this module's fast forwards for ``backend`` (the CPU's by default)."""
    for name, ufunc in BINARY_UFUNCS.items():
        register_fast(backend, name, _threaded_binary(ufunc))
    register_fast(backend, "Relu", relu)
    register_fast(backend, "ReluBackward", relu_grad)
    register_fast(backend, "MaskedGrad", masked_grad)
    register_fast(backend, "BatchNorm", batch_norm_forward)
    register_fast(backend, "BatchNormGrad", batch_norm_grad)


__all__ = [
    "batch_norm_forward",
    "batch_norm_grad",
    "masked_grad",
    "masked_grad_into",
    "read_only_zeros",
    "register_fast_nn",
    "relu",
    "relu_backward",
    "relu_forward",
    "relu_grad",
    "zeros_first",
]
