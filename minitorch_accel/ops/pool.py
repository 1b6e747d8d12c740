"""2-D pooling as autograd Functions, and the public functionals: the reference
implementation, the way a textbook writes it.

A pooling window of size KH x KW is never gathered: for each of its KH*KW taps (i, j),
the strided view ``x[:, :, i::sh, j::sw]`` (:func:`taps`) holds that element of *every*
window, so max pooling is the running maximum of KH*KW views and average pooling their
sum. Every backward is itself a Function whose own backward is the matching forward-like
map, so second derivatives work: average pooling and its backward are linear maps
adjoint to each other; max pooling's backward routes each window's gradient to the
window's first maximum (in a window holding NaN, its last NaN), and the adjoint of that
routing picks the value there.

A backend may replace a forward with a faster one (layout-keeping buffers, threads, one
GPU kernel): see :mod:`minitorch_accel.backends.fast_paths`.
"""

from __future__ import annotations

from functools import reduce
from itertools import product
from typing import Any, Literal, overload

from ..backends.image_geometry import IntPair, PoolGeometry, pair, pool_geometry, window
from ..core.function import Function
from ..core.tensor import Tensor
from .pool_general import avg_pool, max_pool_with_indices, windows


def taps(xp: Any, x: Any, geo: PoolGeometry, fill: float) -> list[Any]:
    """The KH*KW strided views of ``x`` padded with ``fill``, in row-major tap order:
    view ``i * KW + j`` holds tap (i, j) of every window.
    """
    x = xp.pad(x, ((0, 0), (0, 0), *[(p, p) for p in geo.padding]), constant_values=fill)
    return [window(x, i, j, geo.stride, geo.out_hw) for i, j in product(*map(range, geo.kernel))]


def first_max(xp: Any, x: Any, y: Any, geo: PoolGeometry) -> Any:
    """Per tap, a mask of the windows whose gradient it takes, as in PyTorch (which scans
    a window row-major, keeping a value greater than the best so far or NaN): the
    *first* maximum, where the tap equals the window's maximum and the running count of
    such taps is 1; in a window holding NaN (its maximum is NaN, equal to nothing), its
    *last* NaN, counting the NaN taps from the end.
    """
    views = taps(xp, x, geo, float("-inf"))
    hits = xp.stack([tap == y for tap in views])
    first = hits & (xp.cumsum(hits, axis=0) == 1)
    nans = xp.stack([tap != tap for tap in views])
    last_nan = nans & (xp.cumsum(nans[::-1], axis=0)[::-1] == 1)
    return xp.where(y != y, last_nan, first)


def scatter(xp: Any, parts: Any, geo: PoolGeometry) -> Any:
    """Add ``parts[t]`` (shaped as the output) onto the input pixels tap ``t`` read."""
    (n, c, h, w), (ph, pw) = geo.x_shape, geo.padding
    grad = xp.zeros((n, c, h + 2 * ph, w + 2 * pw), parts[0].dtype)
    for t, part in enumerate(parts):
        window(grad, *divmod(t, geo.kernel[1]), geo.stride, geo.out_hw)[...] += part
    return grad[:, :, ph : ph + h, pw : pw + w]


def window_size(xp: Any, geo: PoolGeometry, count_include_pad: bool, dtype: Any) -> Any:
    """What each window's sum is divided by: its count of pixels, padding included or not
    (the pooled sum of an image of ones, padded with ones or with zeros).
    """
    return sum(taps(xp, xp.ones((1, 1, *geo.x_shape[2:]), dtype), geo, float(count_include_pad)))


class MaxPool2d(Function):
    """``y = max over each window of x``."""

    saves_output = True  # backward reads self.y, the output's array

    def forward(self, x: Any, *, geo: PoolGeometry) -> Any:
        self.geo, self.y = geo, reduce(self.xp.maximum, taps(self.xp, x, geo, float("-inf")))
        return self.y

    def backward(self, gy: Tensor) -> Tensor:
        return MaxPool2dBackward.apply(gy, self.inputs[0].detach(), y=self.y, geo=self.geo)


class MaxPool2dBackward(Function):
    """Route ``grad_y`` to each window's first maximum of ``x`` (``x`` is a constant)."""

    def forward(self, gy: Any, x: Any, *, y: Any, geo: PoolGeometry) -> Any:
        self.geo, self.y = geo, y
        hits = first_max(self.xp, x, y, geo)  # where(hit, gy, 0): 0, not inf * 0, elsewhere
        return scatter(self.xp, [self.xp.where(hit, gy, 0) for hit in hits], geo)

    def backward(self, gg: Tensor) -> tuple[Tensor | None, None]:
        return MaxPool2dPick.apply(gg, self.inputs[1], y=self.y, geo=self.geo), None


class MaxPool2dPick(Function):
    """The adjoint of :class:`MaxPool2dBackward`: the value of ``v`` at each window's
    first maximum of ``x``.
    """

    def forward(self, v: Any, x: Any, *, y: Any, geo: PoolGeometry) -> Any:
        self.geo, self.y = geo, y
        values = self.xp.stack(taps(self.xp, v, geo, 0))
        return self.xp.where(first_max(self.xp, x, y, geo), values, 0).sum(0)

    def backward(self, gg: Tensor) -> tuple[Tensor | None, None]:
        return MaxPool2dBackward.apply(gg, self.inputs[1], y=self.y, geo=self.geo), None


class AvgPool2d(Function):
    """``y = mean over each window of x`` (zero padding)."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, x: Any, *, geo: PoolGeometry, count_include_pad: bool) -> Any:
        self.geo, self.count_include_pad = geo, count_include_pad
        return sum(taps(self.xp, x, geo, 0)) / window_size(self.xp, geo, count_include_pad, x.dtype)

    def backward(self, gy: Tensor) -> Tensor:
        return AvgPool2dBackward.apply(gy, geo=self.geo, count_include_pad=self.count_include_pad)


class AvgPool2dBackward(Function):
    """Spread each window's gradient evenly over the window; adjoint of :class:`AvgPool2d`."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, gy: Any, *, geo: PoolGeometry, count_include_pad: bool) -> Any:
        self.geo, self.count_include_pad = geo, count_include_pad
        share = gy / window_size(self.xp, geo, count_include_pad, gy.dtype)
        return scatter(self.xp, [share] * (geo.kernel[0] * geo.kernel[1]), geo)

    def backward(self, gg: Tensor) -> Tensor:
        return AvgPool2d.apply(gg, geo=self.geo, count_include_pad=self.count_include_pad)


def adaptive_bins(size: int, out: int) -> list[tuple[int, int]]:
    """PyTorch's adaptive pooling bins: ``[floor(i*size/out), ceil((i+1)*size/out))`` for
    each output index ``i`` (neighbouring bins overlap when ``out`` does not divide
    ``size``).

    Examples
    --------
    >>> adaptive_bins(5, 3)
    [(0, 2), (1, 4), (3, 5)]
    """
    return [((i * size) // out, -((-(i + 1) * size) // out)) for i in range(out)]


def bin_means(xp: Any, x: Any, out: tuple[int, ...]) -> Any:
    """The mean of each adaptive bin (:func:`adaptive_bins`) along each of the last
    ``len(out)`` dims in turn: the adaptive average pooling of every dimension.

    Examples
    --------
    >>> import numpy as np
    >>> bin_means(np, np.array([[1.0, 3.0, 2.0, 6.0]]), (2,)).tolist()
    [[2.0, 4.0]]
    """
    for axis, size in zip(range(-len(out), 0), out, strict=True):
        bins = adaptive_bins(x.shape[axis], size)
        x = xp.stack([xp.take(x, xp.arange(a, b), axis=axis).mean(axis) for a, b in bins], axis)
    return x


def bin_shares(xp: Any, grad: Any, in_size: tuple[int, ...]) -> Any:
    """The adjoint of :func:`bin_means`: each bin's gradient shared evenly by its
    elements, the last dim first (overlapping bins add).
    """
    for axis, size in reversed(list(zip(range(-len(in_size), 0), in_size, strict=True))):
        shape = list(grad.shape)
        shape[axis] = size
        spread = xp.zeros(shape, grad.dtype)
        moved, part = xp.moveaxis(spread, axis, 0), xp.moveaxis(grad, axis, 0)
        for i, (a, b) in enumerate(adaptive_bins(size, grad.shape[axis])):
            moved[a:b] += part[i] / (b - a)
        grad = spread
    return grad


def adaptive_avg_pool2d_forward(xp: Any, x: Any, output_size: IntPair) -> Any:
    """Adaptive average pooling to ``output_size`` (any size; bins as PyTorch's).

    Separable: the mean of each bin of rows, then of each bin of columns. (As one
    averaging matrix per dim, ``A_h @ x @ A_w.T``, an infinite value would meet the
    zeros of the other bins and make NaN there; PyTorch's bins stay apart.)
    """
    oh, ow = pair(output_size, "output_size")
    if x.ndim != 4 or min(oh, ow) <= 0:
        raise ValueError(
            f"adaptive_avg_pool2d: input {tuple(x.shape)} must be 4-D and "
            f"output_size {(oh, ow)} positive"
        )
    return bin_means(xp, x, (oh, ow))


def adaptive_avg_pool2d_backward(xp: Any, grad_y: Any, x_shape: tuple[int, ...]) -> Any:
    """Gradient of :func:`adaptive_avg_pool2d_forward`: each bin's gradient shared
    evenly by its elements, column bins then row bins (overlapping bins add).
    """
    return bin_shares(xp, grad_y, tuple(x_shape[2:]))


class AdaptiveAvgPool2d(Function):
    """The mean of each of PyTorch's adaptive bins (:func:`adaptive_bins`)."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, x: Any, *, output_size: IntPair) -> Any:
        self.x_shape = x.shape
        return adaptive_avg_pool2d_forward(self.xp, x, output_size)

    def backward(self, grad_output: Tensor) -> Tensor:
        return AdaptiveAvgPool2dBackward.apply(grad_output, x_shape=self.x_shape)


class AdaptiveAvgPool2dBackward(Function):
    """Each bin's gradient shared by its elements; adjoint of :class:`AdaptiveAvgPool2d`."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, grad_y: Any, *, x_shape: tuple[int, ...]) -> Any:
        self.output_size = tuple(grad_y.shape[2:])
        return adaptive_avg_pool2d_backward(self.xp, grad_y, x_shape)

    def backward(self, grad_output: Tensor) -> Tensor:
        return AdaptiveAvgPool2d.apply(grad_output, output_size=self.output_size)


def _check(name: str, input: Tensor) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
    if input.dtype.kind != "f":
        raise TypeError(f"{name}: input must be floating point, got {input.dtype}")


@overload
def max_pool2d(
    input: Tensor,
    kernel_size: IntPair,
    stride: IntPair | None = None,
    padding: IntPair = 0,
    dilation: IntPair = 1,
    ceil_mode: bool = False,
    return_indices: Literal[False] = False,
) -> Tensor: ...


@overload
def max_pool2d(
    input: Tensor,
    kernel_size: IntPair,
    stride: IntPair | None,
    padding: IntPair,
    dilation: IntPair,
    ceil_mode: bool,
    return_indices: Literal[True],
) -> tuple[Tensor, Tensor]: ...


@overload
def max_pool2d(
    input: Tensor,
    kernel_size: IntPair,
    stride: IntPair | None = None,
    padding: IntPair = 0,
    dilation: IntPair = 1,
    ceil_mode: bool = False,
    *,
    return_indices: Literal[True],
) -> tuple[Tensor, Tensor]: ...


@overload
def max_pool2d(
    input: Tensor,
    kernel_size: IntPair,
    stride: IntPair | None = None,
    padding: IntPair = 0,
    dilation: IntPair = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor | tuple[Tensor, Tensor]: ...


def max_pool2d(
    input: Tensor,
    kernel_size: IntPair,
    stride: IntPair | None = None,
    padding: IntPair = 0,
    dilation: IntPair = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """Max pooling over NCHW images, as ``torch.nn.functional.max_pool2d``.

    ``y[n, c, i, j] = max over (p, q) of x[n, c, i*sh + p*dh - ph, j*sw + q*dw - pw]``,
    padding never winning. The gradient of each window goes to exactly one element,
    its first maximum in row-major order (as PyTorch), even when several are tied; a
    window holding NaN (its maximum is NaN) sends it to its last NaN, as PyTorch.

    With the default ``dilation``, ``ceil_mode`` and ``return_indices`` (or a
    ``ceil_mode`` that changes no size) this runs the code of this module and its fast
    paths; any other option runs the general path,
    :func:`~minitorch_accel.ops.pool_general.max_pool_with_indices`.

    Parameters
    ----------
    input : Tensor
        (N, C, H, W) or one (C, H, W) image, floating point.
    kernel_size : int or (int, int)
    stride : int or (int, int), optional
        Default: ``kernel_size``.
    padding : int or (int, int)
        At most half the kernel size.
    dilation : int or (int, int)
        The step between the taps of a window.
    ceil_mode : bool
        Round the output size up (a last, partial window), as long as that window
        starts inside the input or the left padding.
    return_indices : bool
        Also return the int64 flat index ``h * W + w`` of each maximum in its image (as
        :func:`~minitorch_accel.ops.unpool.max_unpool2d` takes them).

    Returns
    -------
    Tensor or (Tensor, Tensor)
        (N, C, OH, OW), ``OH = (H + 2*ph - dh*(KH-1) - 1) // sh + 1`` (rounded up with
        ``ceil_mode``); with ``return_indices``, also the indices.

    Raises
    ------
    ValueError
        A padding above half the kernel, a non-positive kernel, stride or dilation, an
        output smaller than 1 (PyTorch raises RuntimeError).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.arange(16.0).reshape(1, 1, 4, 4)
    >>> max_pool2d(x, 2)[0, 0].tolist()
    [[5.0, 7.0], [13.0, 15.0]]
    >>> max_pool2d(x, 3, 2, ceil_mode=True, return_indices=True)[1][0, 0].tolist()
    [[10, 11], [14, 15]]
    """
    _check("max_pool2d", input)
    if return_indices or _general(
        "max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode
    ):
        values, indices = max_pool_with_indices(
            "max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode
        )
        return (values, indices) if return_indices else values
    if input.ndim == 3:  # one unbatched (C, H, W) image, as PyTorch accepts
        return max_pool2d(input.unsqueeze(0), kernel_size, stride, padding)[0]
    geo = pool_geometry("max_pool2d", input.shape, kernel_size, stride, padding)
    return MaxPool2d.apply(input, geo=geo)


def max_pool2d_with_indices(
    input: Tensor,
    kernel_size: IntPair,
    stride: IntPair | None = None,
    padding: IntPair = 0,
    dilation: IntPair = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """:func:`max_pool2d` that always returns ``(values, indices)``, as
    ``torch.nn.functional.max_pool2d_with_indices`` (``return_indices`` is ignored).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> values, indices = max_pool2d_with_indices(mta.arange(16.0).reshape(1, 1, 4, 4), 2)
    >>> indices[0, 0].tolist()
    [[5, 7], [13, 15]]
    """
    return max_pool_with_indices(
        "max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode
    )


def _general(
    name: str,
    input: Tensor,
    kernel_size: IntPair,
    stride: IntPair | None,
    padding: IntPair,
    dilation: IntPair,
    ceil_mode: bool,
) -> bool:
    """Whether a 2-d pooling with these options needs the general path: a dilation, or a
    ``ceil_mode`` that adds a window (one that adds none changes nothing, not even the
    window sizes average pooling divides by).
    """
    if pair(dilation, "dilation") == (1, 1) and not ceil_mode:
        return False  # today's path, its checks and errors unchanged
    win = windows(name, input.shape, 2, kernel_size, stride, padding, dilation, ceil_mode)
    floor = windows(name, input.shape, 2, kernel_size, stride, padding, dilation, False)
    return win.dilation != (1, 1) or win.out_size != floor.out_size


def avg_pool2d(
    input: Tensor,
    kernel_size: IntPair,
    stride: IntPair | None = None,
    padding: IntPair = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Average pooling over NCHW images, as ``torch.nn.functional.avg_pool2d``.

    Each window's sum divided by ``divisor_override`` if given, else by ``KH * KW``
    (``count_include_pad=True``, padding counts as zeros) or by the number of its
    elements inside the input (``False``). With ``ceil_mode`` a last, partial window is
    divided by its taps inside the input and the padding only, as PyTorch's. Parameters
    and output shape as :func:`max_pool2d` (without ``dilation``); a ``ceil_mode`` that
    adds a window or a ``divisor_override`` runs the general path,
    :func:`~minitorch_accel.ops.pool_general.avg_pool`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> avg_pool2d(mta.arange(16.0).reshape(1, 1, 4, 4), 2)[0, 0].tolist()
    [[2.5, 4.5], [10.5, 12.5]]
    >>> avg_pool2d(mta.ones(1, 1, 3, 3), 2, ceil_mode=True, divisor_override=4)[0, 0].tolist()
    [[1.0, 0.5], [0.5, 0.25]]
    """
    _check("avg_pool2d", input)
    if divisor_override is not None or _general(
        "avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode
    ):
        return avg_pool(
            "avg_pool2d",
            2,
            input,
            kernel_size,
            stride,
            padding,
            ceil_mode,
            count_include_pad,
            divisor_override,
        )
    if input.ndim == 3:  # one unbatched (C, H, W) image, as PyTorch accepts
        return avg_pool2d(
            input.unsqueeze(0), kernel_size, stride, padding, count_include_pad=count_include_pad
        )[0]
    geo = pool_geometry("avg_pool2d", input.shape, kernel_size, stride, padding)
    return AvgPool2d.apply(input, geo=geo, count_include_pad=count_include_pad)


def adaptive_avg_pool2d(input: Tensor, output_size: IntPair) -> Tensor:
    """Average-pool (N, C, H, W) to ``(N, C, *output_size)``, as PyTorch's function.

    Output row ``i`` averages input rows ``floor(i*H/OH)`` to ``ceil((i+1)*H/OH) - 1``
    (columns alike); ``output_size=1`` is global average pooling.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> adaptive_avg_pool2d(mta.arange(16.0).reshape(1, 1, 4, 4), 1).tolist()
    [[[[7.5]]]]
    """
    _check("adaptive_avg_pool2d", input)
    if input.ndim == 3:  # one unbatched (C, H, W) image, as PyTorch accepts
        return adaptive_avg_pool2d(input.unsqueeze(0), output_size)[0]
    return AdaptiveAvgPool2d.apply(input, output_size=output_size)


__all__ = [
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool2dBackward",
    "AvgPool2d",
    "AvgPool2dBackward",
    "MaxPool2d",
    "MaxPool2dBackward",
    "MaxPool2dPick",
    "adaptive_avg_pool2d",
    "avg_pool2d",
    "max_pool2d",
    "max_pool2d_with_indices",
]
