"""The NumPy backend's fast paths for convolution and pooling.

Registered under the names of the Functions of :mod:`minitorch_accel.ops.conv` and
:mod:`minitorch_accel.ops.pool`, they replace the reference forwards with the kernels of
:mod:`~minitorch_accel.backends.conv_kernels` and
:mod:`~minitorch_accel.backends.pool_kernels`: channels-last im2col matrices and outputs,
large buffers reused from step to step, the bias added inside the GEMM. Every kernel
works on blocks of images small enough to stay in the core's cache (*cache blocking*);
when more than one thread is in use (:func:`minitorch_accel.set_num_threads`) the
blocks are shared out over the CPU's thread pool, each thread writing into its part of
one output buffer. The blocks depend on the shapes only, never on the thread count, so
every output element is computed by the same operations in the same order at any
thread count (the weight gradient sums one product per block, in block order). The
exception is a batch that fits in one block: its GEMMs are split over the threads
instead, and a split of a long inner dimension sums in another order.

Each fast forward sets on the Function the attributes its (shared) backward reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from math import prod
from typing import Any

import numpy as np

from .. import conv_kernels as ck
from .. import pool_kernels as pk
from ..fast_paths import GradsAhead, register_fast
from ..image_geometry import ConvGeometry, IntPair, PoolGeometry, conv_geometry
from ..layout import Array, buffer_cache, empty_with_layout, padded, physical_order, with_layout
from .fast_nn import read_only_zeros
from .threads import block_bounds, for_blocks

# ------------------------------------------------------------------ threaded kernels

#: Input bytes per block of images in the pooling kernels: their chain of passes then
#: runs on data in the core's cache (measured on LeNet's first pooling at batch 256,
#: one thread: the backward 22% faster than over the whole batch at once).
POOL_BLOCK_BYTES = 1 << 20


def _pool_block(x: Array) -> int:
    """Images per cache block of the pooling kernels."""
    return max(1, POOL_BLOCK_BYTES // max(1, int(x[:1].nbytes)))


def threaded_max_pool2d_forward(x: Array, geometry: PoolGeometry) -> Array:
    """Max pooling, the batch cut into cache-sized blocks shared out over the threads."""
    pool = {"kernel_size": geometry.kernel, "stride": geometry.stride, "padding": geometry.padding}
    y = empty_with_layout(np, geometry.y_shape, x.dtype, physical_order(x))
    for_blocks(
        x.shape[0],
        lambda s, e: pk.max_pool2d_forward(np, x[s:e], **pool, out=y[s:e]),
        _pool_block(x),
    )
    return y


def threaded_max_pool2d_backward(
    grad_y: Array, x: Array, y: Array, geometry: PoolGeometry
) -> Array:
    """Gradient of max pooling, the batch cut into cache-sized blocks shared out over
    the threads (padding 0; else the one-call kernel runs).
    """
    pool = {"kernel_size": geometry.kernel, "stride": geometry.stride, "padding": geometry.padding}
    if geometry.padding != (0, 0) or tuple(grad_y.shape) != geometry.y_shape:
        return pk.max_pool2d_backward(np, grad_y, x, y, **pool)
    grad_x = empty_with_layout(np, x.shape, grad_y.dtype, physical_order(x))

    def chunk(s: int, e: int) -> None:
        pk.max_pool2d_backward(np, grad_y[s:e], x[s:e], y[s:e], **pool, out=grad_x[s:e])

    for_blocks(x.shape[0], chunk, _pool_block(x))
    return grad_x


def _part(geo: ConvGeometry, images: int) -> ConvGeometry:
    """The geometry of the same convolution over ``images`` images."""
    return conv_geometry(
        (images, *geo.x_shape[1:]), geo.w_shape, geo.stride, geo.padding, geo.dilation, geo.groups
    )


#: Bytes per block of images in the convolution's forward and weight gradient (an
#: image's im2col rows, its output rows and its input): each block's GEMM then runs on
#: operands in the core's cache. Measured on LeNet's second convolution (one core,
#: AVX-512): 99 GFLOP/s on a block against 72 on the whole batch at batch 256.
CONV_BLOCK_BYTES = 1 << 21


def _conv_block(geo: ConvGeometry, itemsize: int) -> int:
    """Images per cache block of the forward and weight-gradient GEMMs."""
    oh, ow = geo.out_hw
    k = geo.w_shape[1] * geo.w_shape[2] * geo.w_shape[3]
    per_image = itemsize * (oh * ow * (k + geo.w_shape[0]) + prod(geo.x_shape[1:]))
    return max(1, CONV_BLOCK_BYTES // per_image)


@dataclass(frozen=True)
class BlockCols:
    """What the weight gradient needs to make a convolution's im2col matrix again, one
    cache block of images at a time: the forward's input, its geometry, and whether
    kernel-major cols carry the bias's row of ones.

    Kept instead of the whole matrix, which is KH*KW times the size of the input (9x for
    a 3x3 kernel): written once in the forward and read back from main memory in the
    backward, it costs more than copying each block's rows again into a buffer that is
    still in cache for the block's GEMM (measured on the LeNet step: 2-4% faster at 1 and
    2 threads, and the matrix's memory saved). The blocks and their rows are those of
    the forward, so the gradient is the one the kept matrix gave, bit for bit.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.ones((4, 1, 5, 5), np.float32)
    >>> w = np.ones((2, 1, 3, 3), np.float32)
    >>> y, cols = threaded_conv2d_forward(x, w, None)
    >>> cols.block(0, 2).shape  # kernel-major: (groups, K, rows of 2 images)
    (1, 9, 18)
    >>> float(threaded_conv2d_grad_weight(np.ones_like(y), cols)[0][0, 0, 0, 0])
    36.0
    """

    x: Array
    geometry: ConvGeometry
    ones_row: bool
    bias: bool = False  #: the forward added a bias
    #: Gradients computed ahead of their Function (see :func:`max_pool2d_route`).
    ahead: GradsAhead = field(default_factory=GradsAhead, compare=False, repr=False)

    def block(self, start: int, stop: int) -> Array:
        """The cols of images ``start`` to ``stop - 1``: (groups, rows, K) channels-last,
        (groups, K [+1], rows) kernel-major; a buffer reused from block to block.
        """
        geo = _part(self.geometry, stop - start)
        k = prod(geo.w_shape[1:])
        g = geo.groups
        shape = (g, geo.rows, k) if geo.channels_last else (g, k + self.ones_row, geo.rows)
        cols = buffer_cache.empty(np, shape, self.x.dtype)
        return ck.im2col(np, self.x[start:stop], geo, ones_row=self.ones_row, out=cols).matrix


def threaded_conv2d_forward(
    x: Array,
    w: Array,
    b: Array | None,
    stride: IntPair = 1,
    padding: IntPair = 0,
    dilation: IntPair = 1,
    groups: int = 1,
) -> tuple[Array, BlockCols]:
    """:func:`~minitorch_accel.backends.conv_kernels.conv2d_forward` over blocks of
    images small enough to stay in the core's cache, shared out over the threads: each
    block's cols rows are made in a buffer that is still in cache for its GEMM.

    Returns
    -------
    y : array
        An NCHW view of a channels-last buffer.
    cols : BlockCols
        For :func:`threaded_conv2d_grad_weight`.
    """
    geo = conv_geometry(x.shape, w.shape, stride, padding, dilation, groups)
    source, block_rows = _block_convolution(x, w, b, geo)
    if block_rows is None or x.shape[0] < 2:  # the one-thread kernel raises or runs
        return ck.conv2d_forward(np, x, w, b, stride, padding, dilation, groups)[0], source
    (oh, ow), o = geo.out_hw, w.shape[0]
    y_rows = buffer_cache.empty(np, (geo.rows, o), x.dtype)
    for_blocks(
        x.shape[0],
        lambda s, e: block_rows(s, e, y_rows[s * oh * ow : e * oh * ow]),
        _conv_block(geo, x.itemsize),
    )
    return y_rows.reshape(x.shape[0], oh, ow, o).transpose(0, 3, 1, 2), source


def _block_convolution(
    x: Array, w: Array, b: Array | None, geo: ConvGeometry
) -> tuple[BlockCols, Callable[[int, int, Array], None] | None]:
    """The :class:`BlockCols` of a convolution, and ``block_rows(s, e, out)``, which
    writes the output rows of images ``s`` to ``e - 1`` (channels-last, (rows, O)) into
    ``out``; None for it where dtypes or the bias do not fit (the one-call kernel
    raises the error).
    """
    bias_in_gemm = b is not None and not geo.channels_last
    source = BlockCols(x, geo, bias_in_gemm, bias=b is not None)
    bad_bias = b is not None and (b.dtype != x.dtype or tuple(b.shape) != (w.shape[0],))
    if x.dtype != w.dtype or bad_bias:
        return source, None
    og = w.shape[0] // geo.groups
    w_mat = ck.weight_matrix(np, w, geo.groups)
    if b is not None and bias_in_gemm:
        w_mat = np.concatenate([w_mat, b.reshape(geo.groups, og, 1)], axis=2)

    def block_rows(s: int, e: int, out: Array) -> None:
        part = source.block(s, e)
        for gi in range(geo.groups):
            a = part[gi] if geo.channels_last else part[gi].T
            ck.gemm(np, a, w_mat[gi].T, out=out[:, gi * og : (gi + 1) * og])
        if b is not None and not bias_in_gemm:
            out += b

    return source, block_rows


#: The fused convolution and pooling work on blocks this many times the convolution's
#: own: the pooling's extra passes are short NumPy calls, and fewer, longer ones cost
#: less than the cache they give up (measured on LeNet's first convolution: its
#: forward 4-13% faster at 1 and 2 threads than with the convolution's blocks).
FUSED_BLOCKS = 2


def threaded_conv2d_max_pool2d(
    x: Array,
    w: Array,
    b: Array | None,
    pool: PoolGeometry,
    stride: IntPair = 1,
    padding: IntPair = 0,
    dilation: IntPair = 1,
    groups: int = 1,
    relu: bool = False,
) -> tuple[Array, Array, BlockCols] | None:
    """Convolution then max pooling (windows that tile the image), one cache block of
    images at a time: each block's output rows are made in a buffer still in cache when
    they are pooled, and never written to memory. With ``relu``, the pooled block's
    ReLU too, its gradient mask kept in the taps
    (:func:`~minitorch_accel.ops.conv_pool.relu_taps`). None where the unfused ops
    must run.

    Returns
    -------
    p : array
        The pooled output, an NCHW view of a channels-last buffer.
    tap : array of uint8
        Shaped as ``p``: :func:`~minitorch_accel.backends.pool_kernels.max_pool2d_first_tap`.
    cols : BlockCols
        For the weight gradient.

    Examples
    --------
    >>> import numpy as np
    >>> from minitorch_accel.backends.image_geometry import pool_geometry
    >>> x, w = np.ones((2, 1, 6, 6), np.float32), np.ones((3, 1, 3, 3), np.float32)
    >>> geo = conv_geometry(x.shape, w.shape, 1, 0, 1, 1)
    >>> pool = pool_geometry("max_pool2d", geo.y_shape, 2, 2, 0)
    >>> p, tap, cols = threaded_conv2d_max_pool2d(x, w, None, pool)
    >>> p.shape, float(p[0, 0, 0, 0]), int(tap.max())
    ((2, 3, 2, 2), 9.0, 0)
    """
    geo = conv_geometry(x.shape, w.shape, stride, padding, dilation, groups)
    source, block_rows = _block_convolution(x, w, b, geo)
    taps = pool.kernel[0] * pool.kernel[1]
    if block_rows is None or not pool.tiles or taps > 255 or pool.x_shape != geo.y_shape:
        return None
    (oh, ow), o = geo.out_hw, w.shape[0]
    p = empty_with_layout(np, pool.y_shape, x.dtype, ck.NHWC)
    tap = empty_with_layout(np, pool.y_shape, np.uint8, ck.NHWC)
    # 2x2 windows: the blocks keep three comparisons per window; the taps are made
    # from them in four passes over all the windows at the end (few short calls per
    # block: each one hands the interpreter lock between the threads)
    two = pool.kernel == (2, 2)
    wins = empty_with_layout(np, (3, *pool.y_shape), bool, (0, *(1 + i for i in ck.NHWC)))
    dead = empty_with_layout(np, pool.y_shape, bool, ck.NHWC) if relu else None
    p_rows, window_rows = p.transpose(0, 2, 3, 1), prod(pool.y_shape[1:])
    zeros = read_only_zeros(x.dtype, FUSED_BLOCKS * _conv_block(geo, x.itemsize) * window_rows)
    nan_blocks = []  # blocks whose pooled maxima hold NaN (a maximum is NaN where any is)

    def block(s: int, e: int) -> None:
        rows = buffer_cache.empty(np, ((e - s) * oh * ow, o), x.dtype)
        block_rows(s, e, rows)
        y = rows.reshape(e - s, oh, ow, o).transpose(0, 3, 1, 2)
        if two:
            pk.max_pool2d_2x2_wins(np, y, p[s:e], wins[:, s:e])
        else:
            pk.max_pool2d_forward_with_tap(np, y, pool.kernel, out=p[s:e], tap=tap[s:e])
        if np.isnan(p[s:e].max()):
            nan_blocks.append(s)
        if dead is not None:  # the ReLU (on zeros, not 0: NumPy's vector loop)
            flat = p_rows[s:e].reshape(-1)
            np.maximum(flat, zeros[: flat.size], out=flat)
            np.less_equal(p[s:e], 0, out=dead[s:e])

    for_blocks(x.shape[0], block, FUSED_BLOCKS * _conv_block(geo, x.itemsize))
    if two:
        pk.taps_from_wins(np, wins, tap)
    if nan_blocks:  # rare: windows holding NaN take their last NaN, from the output
        y = ck.conv2d_forward(np, x, w, b, stride, padding, dilation, groups)[0]
        pk.max_pool2d_first_tap(np, y, p, pool.kernel, out=tap)
    if dead is not None:  # NO_TAP is all ones: OR 255 in, not copyto(where=), 80x slower
        np.bitwise_or(tap, np.multiply(dead.view(np.uint8), np.uint8(pk.NO_TAP)), out=tap)
    return p, tap, source


def threaded_conv2d_grad_weight(
    grad_y: Array, cols: BlockCols, bias: bool = False
) -> tuple[Array, Array | None]:
    """:func:`~minitorch_accel.backends.conv_kernels.conv2d_grad_weight` over the same
    cache blocks of images as the forward, their cols made again from ``cols``
    (:class:`WeightGradSlots`).

    Returns
    -------
    grad_w : array
        Shaped like the weight.
    grad_b : array or None
        With ``bias``: ``grad_y`` summed over N, H and W, block by block while the
        block's rows are in cache.
    """
    slots = WeightGradSlots(ck.grad_rows(np, grad_y, cols.geometry), cols, bias)
    for_blocks(cols.geometry.x_shape[0], slots.block, slots.images)
    return slots.total()


class WeightGradSlots:
    """A convolution's weight gradient (and bias gradient), one block of images at a
    time: each block's product goes to its own slot and the slots are summed in block
    order, so the result does not depend on the thread count or on which thread took
    which block.

    Parameters
    ----------
    gy : array or None
        ``grad_y`` as (M, O) rows (:func:`~minitorch_accel.backends.conv_kernels.grad_rows`);
        a block's rows may be written just before its :meth:`block` runs. None where the
        caller makes each block's rows and cols itself (:meth:`add`).
    cols : BlockCols
        What makes each block's im2col rows again.
    bias : bool
        Also sum the rows (the bias gradient).

    Examples
    --------
    >>> import numpy as np
    >>> x, w = np.ones((4, 1, 5, 5), np.float32), np.ones((2, 1, 3, 3), np.float32)
    >>> y, cols = threaded_conv2d_forward(x, w, None)
    >>> slots = WeightGradSlots(np.ones((4 * 3 * 3, 2), np.float32), cols, bias=True)
    >>> slots.block(0, 4)  # one block holds all four images here
    >>> gw, gb = slots.total()
    >>> float(gw[0, 0, 0, 0]), gb.tolist()
    (36.0, [36.0, 36.0])
    """

    def __init__(self, gy: Array | None, cols: BlockCols, bias: bool) -> None:
        geo, dtype = cols.geometry, cols.x.dtype  # the gradient's dtype too
        o, cg, kh, kw = geo.w_shape
        self.gy, self.cols, self.k = gy, cols, kh * kw * cg
        self.images = _conv_block(geo, dtype.itemsize)  #: images per block: the forward's
        bounds = block_bounds(geo.x_shape[0], self.images)
        self.slot = {start: i for i, (start, _) in enumerate(bounds)}
        self.slots = np.empty((len(bounds), geo.groups, self.k, o // geo.groups), dtype)
        self.bias_slots = np.empty((len(bounds), 1, o), dtype) if bias else None

    def block(self, s: int, e: int) -> None:
        """Images ``s`` to ``e - 1`` (one of the blocks): their products into their slot."""
        assert self.gy is not None, "WeightGradSlots.block needs the gradient's rows"
        oh, ow = self.cols.geometry.out_hw
        self.add(s, self.cols.block(s, e), self.gy[s * oh * ow : e * oh * ow])

    def add(self, s: int, part: Array, rows: Array) -> None:
        """Into the slot of the block starting at image ``s``: the cols ``part`` (laid out
        as :meth:`BlockCols.block`'s) times the gradient ``rows`` (M, O), and with a bias
        the rows' sums.
        """
        geo, i = self.cols.geometry, self.slot[s]
        og = geo.w_shape[0] // geo.groups
        for gi in range(geo.groups):
            a = part[gi] if geo.channels_last else part[gi, : self.k].T
            ck.gemm(np, a.T, rows[:, gi * og : (gi + 1) * og], out=self.slots[i, gi])
        if self.bias_slots is not None:
            ck.column_sums(np, rows, out=self.bias_slots[i])

    def total(self) -> tuple[Array, Array | None]:
        """The weight gradient (shaped like the weight) and the bias gradient (or None)."""
        gw = self.slots.sum(axis=0) if len(self.slots) > 1 else self.slots[0]
        gb = None
        if self.bias_slots is not None:
            sums = self.bias_slots.sum(axis=0) if len(self.bias_slots) > 1 else self.bias_slots[0]
            gb = sums.reshape(-1)
        return ck.weight_from_matrix(np, gw.transpose(0, 2, 1), self.cols.geometry), gb


#: Bytes per block of images in the input gradient of a convolution (an image's
#: ``grad_y`` rows, one kernel offset's GEMM output and its input gradient): the
#: per-offset GEMM then reads rows in cache and its output is added while still there
#: (measured on LeNet's second convolution at batch 256, one thread: 16 ms instead of 24
#: over the whole batch at once).
CONV_GRAD_INPUT_BLOCK_BYTES = 1 << 20


def _grad_input_block(geo: ConvGeometry, itemsize: int) -> int:
    """Images per cache block of the input gradient."""
    (oh, ow), (ph, pw) = geo.out_hw, geo.padding
    _, c, h, wd = geo.x_shape
    o, cg = geo.w_shape[:2]
    per_image = itemsize * (oh * ow * (o + cg) + c * (h + 2 * ph) * (wd + 2 * pw))
    return max(1, CONV_GRAD_INPUT_BLOCK_BYTES // per_image)


def threaded_conv2d_grad_input(grad_y: Array, w: Array, geo: ConvGeometry) -> Array:
    """:func:`~minitorch_accel.backends.conv_kernels.conv2d_grad_input` over blocks of
    images small enough to stay in the core's cache, shared out over the threads.
    """
    geo = _part(geo, geo.x_shape[0])  # cols in the CPU's (kh, kw, c) order
    n, c, h, wd = geo.x_shape
    o, cg, kh, kw = geo.w_shape
    (ph, pw), og = geo.padding, o // geo.groups
    if tuple(grad_y.shape) != geo.y_shape or n < 2:  # the one-thread kernel raises or runs
        conv = {"stride": geo.stride, "padding": geo.padding, "dilation": geo.dilation}
        return ck.conv2d_grad_input(np, grad_y, w, geo.x_shape, **conv, groups=geo.groups)
    w5 = ck.weight_matrix(np, w, geo.groups).reshape(geo.groups, og, kh, kw, cg)
    order = ck.NHWC if geo.channels_last else (1, 0, 2, 3)
    gx = empty_with_layout(np, (n, c, h + 2 * ph, wd + 2 * pw), grad_y.dtype, order)

    def chunk(s: int, e: int) -> None:
        part = _part(geo, e - s)
        ck.col2im(np, ck.grad_rows(np, grad_y[s:e], part), w5, part, gx[s:e])

    for_blocks(n, chunk, _grad_input_block(geo, grad_y.itemsize))
    return gx[:, :, ph : ph + h, pw : pw + wd]


# ------------------------------------------------------------------ fast forwards


def conv2d(
    fn: Any, x: Array, w: Array, b: Array | None, *, keep_cols: bool = False, **conv: Any
) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.conv.Conv2d`; keeps what the weight
    gradient needs to make the im2col matrix again (``fn.cols``, a :class:`BlockCols`).
    """
    y, cols = threaded_conv2d_forward(x, w, b, **conv)
    fn.conv, fn.cols = conv, cols if keep_cols else None
    return y


def _backward_source(
    cols: Any, grad_y: Array, w_shape: Any, conv: dict[str, Any]
) -> BlockCols | None:
    """``cols`` if it is a :class:`BlockCols` the blocked gradients can use with this
    ``grad_y`` (same dtype, same convolution), else None.
    """
    if not isinstance(cols, BlockCols) or grad_y.dtype != cols.x.dtype:
        return None
    return cols if conv_geometry(cols.geometry.x_shape, w_shape, **conv) == cols.geometry else None


def conv2d_grad_input(
    fn: Any, grad_y: Array, w: Array, *, x_shape: tuple[int, ...], **conv: Any
) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.conv.Conv2dGradInput` (col2im by
    strided slices, channels-last, over cache-sized blocks of images).
    """
    fn.conv = conv
    if grad_y.dtype == w.dtype:
        return threaded_conv2d_grad_input(grad_y, w, conv_geometry(x_shape, w.shape, **conv))
    return ck.conv2d_grad_input(np, grad_y, w, x_shape, **conv)


def conv2d_grad_weight(
    fn: Any, grad_y: Array, x: Array, *, w_shape: tuple[int, ...], cols: Any = None, **conv: Any
) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.conv.Conv2dGradWeight`: the gradient
    the input gradient's region computed ahead from this ``grad_y``, else block by block
    over the forward's blocks (with the bias gradient, kept for its Function), when the
    fast forward kept what makes its cols again (a :class:`BlockCols`).
    """
    fn.conv = conv
    source = _backward_source(cols, grad_y, w_shape, conv)
    if source is None:
        return ck.conv2d_grad_weight(np, grad_y, x, w_shape, **conv)
    ahead = source.ahead.take("weight", grad_y)
    if ahead is not None:
        return ahead
    gw, gb = threaded_conv2d_grad_weight(grad_y, source, source.bias)  # checks grad_y's shape
    if gb is not None:
        source.ahead.keep("bias", grad_y, gb)
    return gw


def conv2d_grad_bias(fn: Any, grad_y: Array, *, cols: Any = None) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.conv.Conv2dGradBias`: the gradient
    the weight gradient's blocks computed ahead from this ``grad_y``, else one product
    with a row of ones.
    """
    fn.grad_y_shape = grad_y.shape
    ahead = cols.ahead.take("bias", grad_y) if isinstance(cols, BlockCols) else None
    return ck.conv2d_grad_bias(np, grad_y) if ahead is None else ahead


def conv2d_max_pool2d(
    fn: Any,
    x: Array,
    w: Array,
    b: Array | None,
    *,
    pool: PoolGeometry,
    relu: bool = False,
    keep_cols: bool = False,
    **conv: Any,
) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.conv_pool.Conv2dMaxPool2d`
    (:func:`threaded_conv2d_max_pool2d`); the reference forward where it does not apply.
    """
    fused = threaded_conv2d_max_pool2d(x, w, b, pool, **conv, relu=relu)
    if fused is None:
        return fn.forward(x, w, b, pool=pool, relu=relu, keep_cols=keep_cols, **conv)
    p, fn.tap, cols = fused
    fn.conv, fn.pool, fn.cols = conv, pool, cols if keep_cols else None
    return p


def max_pool2d_route(
    fn: Any, grad_y: Array, *, tap: Array, geo: PoolGeometry, cols: Any = None
) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.conv_pool.MaxPool2dRoute`: the
    routed gradient, block by block; given the fused forward's :class:`BlockCols`, each
    block's weight and bias gradients too, while the block's rows are in cache (kept for
    their Functions, which run next).
    """
    fn.tap, fn.geo = tap, geo
    if not geo.tiles or grad_y.dtype.kind != "f" or tap.dtype != np.uint8:
        return fn.forward(grad_y, tap=tap, geo=geo, cols=cols)
    out = empty_with_layout(np, geo.x_shape, grad_y.dtype, ck.NHWC)
    grad_y = with_layout(np, grad_y, ck.NHWC)  # tap's: each window's taps read in one pass
    source = cols if isinstance(cols, BlockCols) and cols.x.dtype == grad_y.dtype else None
    if source is not None and source.geometry.y_shape != geo.x_shape:
        source = None
    slots = None
    if source is not None:
        slots = WeightGradSlots(ck.grad_rows(np, out, source.geometry), source, source.bias)

    def block(s: int, e: int) -> None:
        pk.max_pool2d_route(np, grad_y[s:e], tap[s:e], geo.kernel, out=out[s:e])
        if slots is not None:
            slots.block(s, e)

    images = _pool_block(out) if slots is None else slots.images
    for_blocks(geo.x_shape[0], block, images)
    if slots is not None and source is not None:
        gw, gb = slots.total()
        source.ahead.keep("weight", out, gw)
        if gb is not None:
            source.ahead.keep("bias", out, gb)
    return out


def tap_cols(x: Array, conv: ConvGeometry, pool: PoolGeometry) -> Array:
    """The im2col rows of a convolution's outputs at the taps of max-pooling windows that
    tile them, tap by tap (row-major): (groups, K, taps * N*OH*OW) kernel-major or
    (groups, taps * N*OH*OW, K) channels-last, as ``conv``'s cols, with ``(OH, OW)`` the
    pooling's output; a buffer reused from call to call. One strided copy: the rows at
    tap ``(i, j)`` of window ``(a, b)`` read the input where output ``(a*PH + i, b*PW +
    j)`` does.

    Examples
    --------
    >>> import numpy as np
    >>> from minitorch_accel.backends.image_geometry import pool_geometry
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> conv = conv_geometry(x.shape, (1, 1, 1, 1), 1, 0, 1, 1)
    >>> pool = pool_geometry("max_pool2d", conv.y_shape, 2, 2, 0)
    >>> tap_cols(x, conv, pool)[0, 0].tolist()  # taps (0, 0), (0, 1), (1, 0), (1, 1)
    [0.0, 2.0, 8.0, 10.0, 1.0, 3.0, 9.0, 11.0, 4.0, 6.0, 12.0, 14.0, 5.0, 7.0, 13.0, 15.0]
    """
    src = padded(np, x, conv.padding, 0.0, physical_order(x))
    n, _, cg, kh, kw = src.shape[0], *conv.w_shape
    (sh, sw), (dh, dw), (ph, pw), (oh, ow) = (
        conv.stride,
        conv.dilation,
        pool.kernel,
        pool.y_shape[2:],
    )
    g, k, rows = conv.groups, cg * kh * kw, ph * pw * n * oh * ow
    shape = (g, rows, k) if conv.channels_last else (g, k, rows)
    cols = buffer_cache.empty(np, shape, x.dtype)
    for gi in range(g):
        part = src[:, gi * cg : (gi + 1) * cg]
        s_n, s_c, s_h, s_w = part.strides
        taps = ((ph, pw, n, oh, ow), (s_h * sh, s_w * sw, s_n, s_h * sh * ph, s_w * sw * pw))
        kernel = ((kh, kw, cg), (s_h * dh, s_w * dw, s_c))
        if conv.channels_last:
            dims, strides = taps[0] + kernel[0], taps[1] + kernel[1]
        else:
            dims, strides = kernel[0] + taps[0], kernel[1] + taps[1]
        view = np.lib.stride_tricks.as_strided(part, dims, strides)
        cols[gi].reshape(dims)[...] = view
    return cols


def routed_weight_grads(
    gp: Array, tap: Array, pool: PoolGeometry, cols: BlockCols
) -> tuple[Array, Array | None]:
    """The weight gradient (and, where the forward added a bias, the bias gradient) of
    a convolution whose output was max-pooled, from the pooled gradient ``gp`` and the
    windows' taps, without the routed gradient: the routed gradient at tap ``t`` of
    every window is ``gp * (tap == t)``, so the weight gradient is those values times
    the im2col rows of the outputs at the taps (:func:`tap_cols`). One cache block of
    images at a time, each block into its own slot, summed in block order (the same at
    any thread count (:class:`WeightGradSlots`).
    """
    conv = cols.geometry
    o, (oh, ow), taps = conv.w_shape[0], pool.y_shape[2:], pool.kernel[0] * pool.kernel[1]
    slots = WeightGradSlots(None, cols, cols.bias)
    gp_rows = with_layout(np, gp, ck.NHWC).transpose(0, 2, 3, 1)  # (N, OH, OW, O)
    tap_rows = with_layout(np, tap, ck.NHWC).transpose(0, 2, 3, 1)
    ids = np.arange(taps, dtype=np.uint8).reshape(taps, 1, 1, 1, 1)
    finite = pk.all_finite(np, gp)

    def block(s: int, e: int) -> None:
        rows = buffer_cache.empty(np, (taps, e - s, oh, ow, o), gp.dtype)
        mask = buffer_cache.empty(np, rows.shape, np.bool_)
        np.equal(tap_rows[s:e], ids, out=mask)
        pk.masked_into(np, np.broadcast_to(gp_rows[s:e], rows.shape), mask, rows, finite)
        part = tap_cols(cols.x[s:e], _part(conv, e - s), pool)
        slots.add(s, part, rows.reshape(-1, o))  # (tap, image, a, b) rows, as tap_cols's

    for_blocks(conv.x_shape[0], block, slots.images)  # the forward's blocks
    return slots.total()


def routed_conv2d_grad_weight(
    fn: Any,
    gp: Array,
    x: Array,
    *,
    tap: Array,
    geo: PoolGeometry,
    w_shape: Any,
    cols: Any = None,
    **conv: Any,
) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.conv_pool.RoutedConv2dGradWeight`
    (:func:`routed_weight_grads`); the bias gradient is kept for
    :class:`~minitorch_accel.ops.conv_pool.RoutedConv2dGradBias`, which runs next.
    """
    fn.tap, fn.geo, fn.conv = tap, geo, conv
    usable = (
        isinstance(cols, BlockCols)
        and cols.x is x
        and x.dtype == gp.dtype
        and geo.tiles
        and tap.dtype == np.uint8
        and cols.geometry.y_shape == geo.x_shape
        and tuple(gp.shape) == geo.y_shape
    )
    if not usable:
        return fn.forward(gp, x, tap=tap, geo=geo, w_shape=w_shape, cols=cols, **conv)
    gw, gb = routed_weight_grads(gp, tap, geo, cols)
    if gb is not None:
        cols.ahead.keep("bias", gp, gb)
    return gw


def routed_conv2d_grad_bias(
    fn: Any, gp: Array, *, tap: Array, geo: PoolGeometry, cols: Any = None
) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.conv_pool.RoutedConv2dGradBias`:
    the gradient :func:`routed_conv2d_grad_weight` kept, if it came from this ``gp``.
    """
    ahead = cols.ahead.take("bias", gp) if isinstance(cols, BlockCols) else None
    if ahead is None:
        return fn.forward(gp, tap=tap, geo=geo, cols=cols)
    fn.tap, fn.geo, fn.grad_y_shape = tap, geo, geo.x_shape
    return ahead


def _args(geo: PoolGeometry) -> tuple[Any, Any, Any]:
    """The pooling kernels' (kernel_size, stride, padding) arguments."""
    return geo.kernel, geo.stride, geo.padding


def max_pool2d(fn: Any, x: Array, *, geo: PoolGeometry) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.pool.MaxPool2d` (in ``x``'s layout)."""
    fn.geo = geo
    fn.y = threaded_max_pool2d_forward(x, geo)
    return fn.y


def max_pool2d_backward(fn: Any, grad_y: Array, x: Array, *, y: Array, geo: PoolGeometry) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.pool.MaxPool2dBackward`."""
    fn.geo, fn.y = geo, y
    if grad_y.dtype == x.dtype == y.dtype:
        return threaded_max_pool2d_backward(grad_y, x, y, geo)
    return pk.max_pool2d_backward(np, grad_y, x, y, *_args(geo))


def max_pool2d_pick(fn: Any, v: Array, x: Array, *, y: Array, geo: PoolGeometry) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.pool.MaxPool2dPick`."""
    fn.geo, fn.y = geo, y
    return pk.max_pool2d_pick(np, v, x, y, *_args(geo))


def avg_pool2d(fn: Any, x: Array, *, geo: PoolGeometry, count_include_pad: bool) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.pool.AvgPool2d`."""
    fn.geo, fn.count_include_pad = geo, count_include_pad
    return pk.avg_pool2d_forward(np, x, *_args(geo), count_include_pad)


def avg_pool2d_backward(
    fn: Any, grad_y: Array, *, geo: PoolGeometry, count_include_pad: bool
) -> Array:
    """Fast forward of :class:`~minitorch_accel.ops.pool.AvgPool2dBackward`."""
    fn.geo, fn.count_include_pad = geo, count_include_pad
    return pk.avg_pool2d_backward(np, grad_y, geo.x_shape, *_args(geo), count_include_pad)


#: Function name -> fast forward, as registered for ``"cpu"``.
FAST_FORWARDS: dict[str, Callable[..., Any]] = {
    "Conv2d": conv2d,
    "Conv2dGradInput": conv2d_grad_input,
    "Conv2dGradWeight": conv2d_grad_weight,
    "Conv2dGradBias": conv2d_grad_bias,
    "MaxPool2d": max_pool2d,
    "MaxPool2dBackward": max_pool2d_backward,
    "MaxPool2dPick": max_pool2d_pick,
    "AvgPool2d": avg_pool2d,
    "AvgPool2dBackward": avg_pool2d_backward,
    "Conv2dMaxPool2d": conv2d_max_pool2d,
    "MaxPool2dRoute": max_pool2d_route,
    "RoutedConv2dGradWeight": routed_conv2d_grad_weight,
    "RoutedConv2dGradBias": routed_conv2d_grad_bias,
}


def register_fast_conv(backend: str = "cpu") -> None:
    """Register the convolution and pooling fast paths for ``backend``."""
    for name, fast in FAST_FORWARDS.items():
        register_fast(backend, name, fast)
