"""The fast pooling kernels on raw arrays: max and average, forward and backward.

Written once for every array module ``xp``; the backends' fast paths for the autograd
Functions of :mod:`minitorch_accel.ops.pool` call them, and the reference
implementation is in that module itself. A pooling window of size KH x KW is never
gathered: for each of the KH*KW offsets (i, j) the strided view
``x[:, :, i::sh, j::sw]`` holds that element of *every* window, so max-pooling is the
running maximum of KH*KW views (for 2x2/stride 2, the maximum of four sub-grids) and
the backward pass needs no argmax index array.

Outputs keep the memory layout of their input (channels-last stays channels-last; see
:mod:`minitorch_accel.backends.layout`), and large buffers come from its buffer cache.
"""

from __future__ import annotations

from typing import Any

from .image_geometry import IntPair, PoolGeometry, pool_geometry, window
from .layout import Array, empty_with_layout, padded, physical_order, with_layout

#: The tap byte of a window whose gradient goes nowhere (a ReLU after the pooling
#: zeroed its output): :func:`max_pool2d_route` sends a window's gradient to the tap
#: equal to its byte, and no tap of a window is numbered 255.
NO_TAP = 255


def all_finite(xp: Any, a: Array) -> bool:
    """Whether every value of ``a`` is finite, from its sum: one pass and no temporary
    (an inf or NaN anywhere makes the sum inf or NaN; a sum that overflows says False,
    which only costs the slower exact path of :func:`masked_into`).

    Examples
    --------
    >>> import numpy as np
    >>> all_finite(np, np.array([1.0, -2.0])), all_finite(np, np.array([1.0, np.inf]))
    (True, False)
    """
    return bool(xp.isfinite(a.sum()))


def masked_into(xp: Any, grad: Array, keep: Array, out: Array, finite: bool = False) -> Array:
    """``out[...] = grad`` where ``keep``, exactly 0 elsewhere, even where ``grad`` is
    infinite or NaN (``grad * keep`` would give NaN there: ``inf * 0``), as PyTorch's
    max-pooling gradient. ``grad`` and ``out`` are floats of one dtype and ``keep`` is
    bool, all of one shape. The float's bits are ANDed with a word of all-one or
    all-zero bits (``0 - keep`` in unsigned arithmetic); where the caller knows that
    ``grad`` is ``finite`` (:func:`all_finite`, the usual case), the plain multiply,
    which then gives the same and is faster.

    Examples
    --------
    >>> import numpy as np
    >>> out = np.empty(3, np.float32)
    >>> grad = np.array([np.inf, 2.0, np.nan], np.float32)
    >>> masked_into(np, grad, np.array([False, True, False]), out).tolist()
    [0.0, 2.0, 0.0]
    """
    if finite:
        return xp.multiply(grad, keep, out=out)
    bits = xp.dtype(f"u{grad.dtype.itemsize}")
    word = xp.subtract(bits.type(0), keep.view(xp.uint8), dtype=bits)
    xp.bitwise_and(grad.view(bits), word, out=out.view(bits))
    return out


def _offsets(geo: PoolGeometry) -> list[tuple[int, int]]:
    """Window offsets in row-major order (the order PyTorch scans a window)."""
    return [(i, j) for i in range(geo.kernel[0]) for j in range(geo.kernel[1])]


def _grad_canvas(
    xp: Any, geo: PoolGeometry, dtype: Any, order: tuple[int, ...], out: Array | None = None
) -> Array:
    """Padded input-gradient buffer (``out`` if given); zeroed except where tiling
    windows overwrite it.
    """
    n, c, h, w = geo.x_shape
    (ph, pw), (oh, ow), (kh, kw) = geo.padding, geo.out_hw, geo.kernel
    canvas = out
    if canvas is None:
        canvas = empty_with_layout(xp, (n, c, h + 2 * ph, w + 2 * pw), dtype, order)
    if geo.tiles:  # only the rows/columns no window covers need zeros
        canvas[:, :, oh * kh :] = 0
        canvas[:, :, :, ow * kw :] = 0
    else:
        canvas[...] = 0
    return canvas


def _interior(canvas: Array, geo: PoolGeometry) -> Array:
    (ph, pw), (h, w) = geo.padding, geo.x_shape[2:]
    return canvas[:, :, ph : ph + h, pw : pw + w]


def max_pool2d_forward(
    xp: Any,
    x: Array,
    kernel_size: IntPair,
    stride: IntPair | None = None,
    padding: IntPair = 0,
    out: Array | None = None,
) -> Array:
    """Max pooling of NCHW ``x`` (padding counts as -inf), into ``out`` if given.

    Returns
    -------
    array, shape (N, C, OH, OW)
        ``y[..., a, b] = max over (i, j) of x_padded[..., a*sh + i, b*sw + j]``, stored
        in the memory layout of ``x``.
    """
    geo = pool_geometry("max_pool2d", x.shape, kernel_size, stride, padding)
    (kh, kw), (sh, sw), (oh, ow) = geo.kernel, geo.stride, geo.out_hw
    order = physical_order(x)
    source = padded(xp, x, geo.padding, float("-inf"))
    # Separable: first the maximum over each window's rows for every column (whole rows
    # are long contiguous runs in NCHW and NHWC alike), then over its columns.
    row_views = [source[:, :, i : i + sh * (oh - 1) + 1 : sh, :] for i in range(kh)]
    rows = row_views[0]
    if kh > 1:
        rows = empty_with_layout(xp, (*x.shape[:2], oh, source.shape[3]), x.dtype, order)
        _running_max(xp, row_views, rows)
    y = empty_with_layout(xp, geo.y_shape, x.dtype, order) if out is None else out
    _running_max(xp, [rows[:, :, :, j : j + sw * (ow - 1) + 1 : sw] for j in range(kw)], y)
    return y


def _running_max(xp: Any, views: list[Array], out: Array) -> None:
    """``out[...] = max(views)`` elementwise, without temporaries."""
    if len(views) == 1:
        out[...] = views[0]
        return
    xp.maximum(views[0], views[1], out=out)
    for view in views[2:]:
        xp.maximum(out, view, out=out)


def max_pool2d_backward(
    xp: Any,
    grad_y: Array,
    x: Array,
    y: Array,
    kernel_size: IntPair,
    stride: IntPair | None = None,
    padding: IntPair = 0,
    out: Array | None = None,
) -> Array:
    """Gradient of max pooling: each window's gradient goes to its *first* maximum.

    Ties are common (ReLU zeros, flat image regions); like PyTorch, the gradient goes to
    exactly one element per window, the first maximum in row-major order. Offsets are
    visited in that order with two masks over the windows: ``found`` (the maximum was
    at an earlier offset) and ``hit`` (it is here and not earlier: ``(view == y) >
    found``, a one-byte pass); this offset gets ``grad_y * hit``. The last offset takes
    the windows still not found. No index arrays. A window holding NaN (its maximum is
    NaN, equal to nothing) sends its gradient to its *last* NaN, as PyTorch does
    (:func:`_nan_hits`).

    Parameters
    ----------
    grad_y : array, shape (N, C, OH, OW)
    x : array
        The forward input.
    y : array
        The forward output of :func:`max_pool2d_forward`.
    out : array, optional
        Shaped like ``x``: the gradient is written there (only without padding).
    """
    geo = pool_geometry("max_pool2d", x.shape, kernel_size, stride, padding)
    if out is not None and geo.padding != (0, 0):
        raise ValueError("max_pool2d backward: out= needs padding 0")
    if tuple(grad_y.shape) != geo.y_shape or tuple(y.shape) != geo.y_shape:
        raise ValueError(
            f"max_pool2d backward: grad_output {tuple(grad_y.shape)} and output "
            f"{tuple(y.shape)} must both have shape {geo.y_shape}"
        )
    order = physical_order(x)
    grad_y = with_layout(xp, grad_y, order)
    source = padded(xp, x, geo.padding, float("-inf"))
    canvas = _grad_canvas(xp, geo, grad_y.dtype, order, out)
    offsets = _offsets(geo)
    found = empty_with_layout(xp, geo.y_shape, bool, order)
    hit = empty_with_layout(xp, geo.y_shape, bool, order)
    part = None if geo.tiles else empty_with_layout(xp, geo.y_shape, grad_y.dtype, order)
    last = len(offsets) - 1
    nans = _nan_hits(xp, [window(source, i, j, geo.stride, geo.out_hw) for i, j in offsets], y)
    finite = all_finite(xp, grad_y)
    for index, (i, j) in enumerate(offsets):
        target = window(canvas, i, j, geo.stride, geo.out_hw)
        if index == last == 0:  # a 1 x 1 window: every gradient goes through
            target[...] = grad_y if part is None else target + grad_y
            break
        if index == last:
            mask = xp.logical_not(found, out=found)  # windows whose maximum is still to find
        elif index == 0:
            mask = xp.equal(window(source, i, j, geo.stride, geo.out_hw), y, out=found)
        else:
            xp.equal(window(source, i, j, geo.stride, geo.out_hw), y, out=hit)
            mask = xp.greater(hit, found, out=hit)  # equal here, not found before
            xp.logical_or(found, hit, out=found)
        if nans is not None:  # NaN windows: their last NaN instead (a new mask)
            mask = xp.where(nans[0], nans[1][index], mask)
        if part is None:  # windows tile the input: write each offset's share in place
            masked_into(xp, grad_y, mask, target, finite)
        else:
            target += masked_into(xp, grad_y, mask, part, finite)
    return _interior(canvas, geo)


def _nan_hits(xp: Any, views: list[Array], y: Array) -> tuple[Array, list[Array]] | None:
    """Where windows holding NaN send their gradient: ``(nan, hits)``, ``nan`` marking
    the windows whose maximum ``y`` is NaN and ``hits[t]`` those whose *last* NaN is at
    tap ``t`` (row-major ``views``). PyTorch scans a window keeping each value greater
    than the best so far *or NaN*, so its last NaN wins. None when no window holds NaN,
    the common case, which costs one comparison pass over ``y`` (and on CuPy a
    synchronization: the GPU's own kernel does not come here).
    """
    nan = y != y
    if not bool(nan.any()):
        return None
    later = xp.zeros(y.shape, bool)  # a later tap of the window holds NaN
    hits: list[Array] = [later] * len(views)
    for t in range(len(views) - 1, -1, -1):
        view = views[t]
        hits[t] = (view != view) & nan & ~later
        later = later | hits[t]
    return nan, hits


def max_pool2d_first_tap(xp: Any, x: Array, y: Array, kernel_size: IntPair, out: Array) -> Array:
    """Into ``out`` (uint8, shaped as ``y``): for each window of ``x`` (windows that tile
    it, ``y`` its max pooling), the row-major index of the tap holding the first
    maximum, or in a window holding NaN, of the last NaN (where PyTorch sends the
    gradient).

    Starting from the last tap, each earlier tap that equals the maximum takes the
    window over, in uint8 arithmetic on the comparison's bytes: ``out -= (out - t) *
    (tap_t == y)``; no index array is gathered.
    """
    geo = pool_geometry("max_pool2d", x.shape, kernel_size, kernel_size, 0)
    views = [window(x, i, j, geo.stride, geo.out_hw) for i, j in _offsets(geo)]
    last = len(views) - 1
    out[...] = last
    step = xp.empty_like(out)
    for t in range(last - 1, -1, -1):
        hit = xp.equal(views[t], y)
        xp.subtract(out, t, out=step)
        xp.multiply(step, hit.view(xp.uint8), out=step)
        xp.subtract(out, step, out=out)
    return _last_nan_taps(xp, views, y, out)


def _last_nan_taps(xp: Any, views: list[Array], y: Array, out: Array) -> Array:
    """Set ``out`` to the last NaN tap in the windows whose maximum ``y`` is NaN
    (:func:`_nan_hits`).
    """
    nans = _nan_hits(xp, views, y)
    if nans is not None:
        for t, hit in enumerate(nans[1]):
            out[hit] = t
    return out


def max_pool2d_forward_with_tap(
    xp: Any, x: Array, kernel_size: IntPair, out: Array, tap: Array
) -> Array:
    """Max pooling of ``x`` into ``out`` (windows that tile ``x``), and each window's
    :func:`max_pool2d_first_tap` into ``tap``.

    A 2x2 window ``[[a, b], [c, d]]`` takes a shortcut (:func:`max_pool2d_2x2_wins`,
    then :func:`taps_from_wins`): each row's maximum and which of its two values holds
    it, then which row holds the window's.
    """
    geo = pool_geometry("max_pool2d", x.shape, kernel_size, kernel_size, 0)
    if geo.kernel != (2, 2):
        max_pool2d_forward(xp, x, kernel_size, kernel_size, 0, out=out)
        return max_pool2d_first_tap(xp, x, out, kernel_size, tap)
    wins = xp.empty((3, *geo.y_shape), bool)
    max_pool2d_2x2_wins(xp, x, out, wins)
    taps_from_wins(xp, wins, tap)
    views = [window(x, i, j, geo.stride, geo.out_hw) for i, j in _offsets(geo)]
    return _last_nan_taps(xp, views, out, tap)


def max_pool2d_2x2_wins(xp: Any, x: Array, out: Array, wins: Array) -> Array:
    """2x2 max pooling of ``x`` (windows that tile it) into ``out``, and into ``wins``
    (bool, ``(3, *out.shape)``) for each window ``[[a, b], [c, d]]``: ``a < b``,
    ``c < d`` and (the rows' maxima) ``max(a, b) < max(c, d)``: where the first maximum
    is, ties going to the earlier value.
    """
    geo = pool_geometry("max_pool2d", x.shape, 2, 2, 0)
    a, b, c, d = (window(x, i, j, geo.stride, geo.out_hw) for i, j in _offsets(geo))
    row0, row1 = (empty_with_layout(xp, geo.y_shape, x.dtype, physical_order(x)) for _ in "01")
    xp.maximum(a, b, out=row0)
    xp.maximum(c, d, out=row1)
    xp.maximum(row0, row1, out=out)
    xp.less(a, b, out=wins[0])
    xp.less(c, d, out=wins[1])
    xp.less(row0, row1, out=wins[2])
    return out


def taps_from_wins(xp: Any, wins: Array, tap: Array) -> Array:
    """The 2x2 windows' first-maximum taps from :func:`max_pool2d_2x2_wins`:
    ``2 + [c < d]`` where the second row holds the maximum, else ``[a < b]``, in uint8
    arithmetic (``tap = right0 + second * (2 + right1 - right0)``). Windows holding NaN
    are left to the caller (:func:`max_pool2d_first_tap` gives them their last NaN).
    """
    right0, right1, second = wins.view(xp.uint8)
    xp.subtract(right1, right0, out=tap)
    xp.add(tap, 2, out=tap)
    xp.multiply(tap, second, out=tap)
    xp.add(tap, right0, out=tap)
    return tap


def max_pool2d_route(xp: Any, grad_y: Array, tap: Array, kernel_size: IntPair, out: Array) -> Array:
    """The gradient of max pooling routed by tap index: ``out`` (shaped as the input of
    windows that tile it) gets each window's gradient at the tap ``tap`` names
    (:func:`max_pool2d_first_tap`) and zeros elsewhere (everywhere in a window whose
    tap is :data:`NO_TAP`).
    """
    geo = pool_geometry("max_pool2d", out.shape, kernel_size, kernel_size, 0)
    canvas = _grad_canvas(xp, geo, grad_y.dtype, physical_order(out), out)
    finite = all_finite(xp, grad_y)
    for t, (i, j) in enumerate(_offsets(geo)):
        target = window(canvas, i, j, geo.stride, geo.out_hw)
        masked_into(xp, grad_y, xp.equal(tap, t), target, finite)
    return out


def max_pool2d_pick(
    xp: Any,
    v: Array,
    x: Array,
    y: Array,
    kernel_size: IntPair,
    stride: IntPair | None = None,
    padding: IntPair = 0,
) -> Array:
    """The value of ``v`` (shaped like ``x``) at each window's first maximum of ``x``
    (in a window holding NaN, its last NaN).

    The adjoint of :func:`max_pool2d_backward` (used for second derivatives).
    """
    geo = pool_geometry("max_pool2d", x.shape, kernel_size, stride, padding)
    order = physical_order(x)
    source = padded(xp, x, geo.padding, float("-inf"))
    values = padded(xp, v, geo.padding, 0.0, order)
    out = xp.zeros(geo.y_shape, v.dtype)
    found = xp.zeros(geo.y_shape, bool)
    views = [window(source, i, j, geo.stride, geo.out_hw) for i, j in _offsets(geo)]
    nans = _nan_hits(xp, views, y)
    for t, (i, j) in enumerate(_offsets(geo)):
        hit = (views[t] == y) & ~found
        found |= hit
        if nans is not None:
            hit = xp.where(nans[0], nans[1][t], hit)
        out += xp.where(hit, window(values, i, j, geo.stride, geo.out_hw), 0)
    return out


def _divisor(xp: Any, geo: PoolGeometry, count_include_pad: bool, dtype: Any) -> Any:
    """The number each window sum is divided by: a scalar, or (OH, OW) without padding."""
    kh, kw = geo.kernel
    if count_include_pad or geo.padding == (0, 0):
        return float(kh * kw)
    counts = []
    for size, k, s, p, out in zip(
        geo.x_shape[2:], geo.kernel, geo.stride, geo.padding, geo.out_hw, strict=True
    ):
        start = xp.arange(out) * s - p
        counts.append(xp.minimum(start + k, size) - xp.maximum(start, 0))
    return (counts[0][:, None] * counts[1][None, :]).astype(dtype)


def avg_pool2d_forward(
    xp: Any,
    x: Array,
    kernel_size: IntPair,
    stride: IntPair | None = None,
    padding: IntPair = 0,
    count_include_pad: bool = True,
) -> Array:
    """Average pooling of NCHW ``x`` (zero padding).

    ``count_include_pad=True`` (PyTorch's default) divides every window sum by KH*KW;
    ``False`` divides by the number of non-padding elements in the window.
    """
    geo = pool_geometry("avg_pool2d", x.shape, kernel_size, stride, padding)
    source = padded(xp, x, geo.padding, 0.0)
    views = [window(source, i, j, geo.stride, geo.out_hw) for i, j in _offsets(geo)]
    y = empty_with_layout(xp, geo.y_shape, x.dtype, physical_order(x))
    y[...] = views[0]
    for view in views[1:]:
        y += view
    y /= _divisor(xp, geo, count_include_pad, x.dtype)
    return y


def avg_pool2d_backward(
    xp: Any,
    grad_y: Array,
    x_shape: tuple[int, ...],
    kernel_size: IntPair,
    stride: IntPair | None = None,
    padding: IntPair = 0,
    count_include_pad: bool = True,
) -> Array:
    """Gradient of average pooling: each window's gradient, divided, added to every element."""
    geo = pool_geometry("avg_pool2d", x_shape, kernel_size, stride, padding)
    if tuple(grad_y.shape) != geo.y_shape:
        raise ValueError(
            f"avg_pool2d backward: grad_output {tuple(grad_y.shape)} must have shape {geo.y_shape}"
        )
    order = physical_order(grad_y)
    share = empty_with_layout(xp, geo.y_shape, grad_y.dtype, order)
    xp.divide(grad_y, _divisor(xp, geo, count_include_pad, grad_y.dtype), out=share)
    canvas = _grad_canvas(xp, geo, grad_y.dtype, order)
    for i, j in _offsets(geo):
        target = window(canvas, i, j, geo.stride, geo.out_hw)
        if geo.tiles:
            target[...] = share
        else:
            target += share
    return _interior(canvas, geo)


__all__ = [
    "avg_pool2d_backward",
    "avg_pool2d_forward",
    "max_pool2d_backward",
    "max_pool2d_2x2_wins",
    "max_pool2d_first_tap",
    "max_pool2d_forward",
    "max_pool2d_forward_with_tap",
    "max_pool2d_pick",
    "max_pool2d_route",
    "all_finite",
    "masked_into",
    "taps_from_wins",
]
