"""Max and average pooling over the last 1, 2 or 3 dims with every PyTorch option:
``dilation``, ``ceil_mode``, the indices of the maxima, ``divisor_override``.

The general reference path. :func:`~minitorch_accel.ops.pool.max_pool2d` and
:func:`~minitorch_accel.ops.pool.avg_pool2d` with their default options keep their own
(faster) code; any other option comes here, and so do the 1-d and 3-d pools.

The windows are read as in :mod:`~minitorch_accel.ops.pool`: tap ``t`` of every window
at once, as one strided view of the padded input (:func:`tap_views`). Two rules of
PyTorch decide the edges:

* ``ceil_mode`` rounds the output size up, ``out = ceil((size + 2p - d(k-1) - 1) / s) + 1``,
  but the last window must start inside the input or the left padding
  (``(out - 1) * s < size + p``), else it is dropped. Such a last window may reach past
  the right padding: those taps read nothing.
* average pooling divides each window's sum by ``divisor_override`` if given, else by
  its count of taps inside the input, plus (``count_include_pad=True``) those inside
  the padding, never those past it (:func:`window_counts`).

Max pooling picks, per window, the tap PyTorch's kernel keeps while scanning it in
row-major order: the first tap inside the input, then any greater than the best so far
or NaN (:func:`max_indices`). So ties go to the first maximum and a window holding NaN to
its last NaN. The values are the input gathered at those indices
(:class:`~minitorch_accel.ops.index.Gather`), whose gradient adds each window's gradient
onto its maximum (overlapping windows add up), as PyTorch's backward does, and whose own
gradient reads it back: derivatives of every order.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

import numpy as np

from ..core.function import Function
from ..core.tensor import Tensor
from .index import Gather

Ints = int | Sequence[int]
"""One int for every pooled dim, or one per dim."""


def as_tuple(value: Ints, dims: int, name: str) -> tuple[int, ...]:
    """``value`` as ``dims`` ints (an int repeated, or a sequence of ``dims`` ints, or of
    one int, as PyTorch accepts); ``name`` is used in errors.

    Examples
    --------
    >>> as_tuple(2, 3, "kernel_size"), as_tuple([1, 2], 2, "stride"), as_tuple((3,), 2, "padding")
    ((2, 2, 2), (1, 2), (3, 3))
    """
    if isinstance(value, (int, np.integer)):
        return (int(value),) * dims
    values = tuple(int(v) for v in value)
    if len(values) == 1:
        return values * dims
    if len(values) != dims:
        raise ValueError(f"{name} must be an int or {dims} ints, got {value!r}")
    return values


def output_length(size: int, kernel: int, stride: int, pad: int, dilation: int, ceil: bool) -> int:
    """PyTorch's pooled length of one dim (``pooling_output_shape``): floor or ceil of
    ``(size + 2*pad - dilation*(kernel-1) - 1) / stride`` plus one, in ceil mode less the
    last window if it would start in the right padding.

    Examples
    --------
    >>> output_length(5, 2, 2, 0, 1, False), output_length(5, 2, 2, 0, 1, True)
    (2, 3)
    >>> output_length(4, 2, 2, 1, 1, True)  # a 4th window would start in the right padding
    3
    """
    span = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil else 0)
    out = span // stride + 1
    if ceil and (out - 1) * stride >= size + pad:
        out -= 1
    return out


@dataclass(frozen=True)
class Windows:
    """The pooling windows over the last ``len(kernel)`` dims of an input, validated by
    :func:`windows`.
    """

    in_size: tuple[int, ...]
    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]
    ceil_mode: bool

    @functools.cached_property
    def out_size(self) -> tuple[int, ...]:
        """The output's size along the pooled dims."""
        return tuple(
            output_length(*dims, self.ceil_mode)
            for dims in zip(
                self.in_size, self.kernel, self.stride, self.padding, self.dilation, strict=True
            )
        )

    @functools.cached_property
    def beyond(self) -> tuple[int, ...]:
        """How far the last window reaches past the right padding, per dim (ceil mode)."""
        return tuple(
            max(0, (o - 1) * s + d * (k - 1) + 1 - n - 2 * p)
            for n, k, s, p, d, o in zip(
                self.in_size,
                self.kernel,
                self.stride,
                self.padding,
                self.dilation,
                self.out_size,
                strict=True,
            )
        )


def windows(
    name: str,
    shape: tuple[int, ...],
    dims: int,
    kernel_size: Ints,
    stride: Ints | None,
    padding: Ints,
    dilation: Ints,
    ceil_mode: bool,
) -> Windows:
    """Check one pooling call over the last ``dims`` dims of an input of ``shape`` as
    PyTorch does and return its :class:`Windows`; ``stride`` defaults to ``kernel_size``.

    Raises
    ------
    ValueError
        An input without ``dims + 1`` or ``dims + 2`` dims or with an empty non-batch dim,
        a kernel size, stride or dilation that is not positive, a padding that is negative
        or more than half the kernel size, an output size below 1 (PyTorch raises
        RuntimeError).

    Examples
    --------
    >>> windows("max_pool2d", (1, 1, 5, 5), 2, 2, None, 0, 1, True).out_size
    (3, 3)
    """
    k = as_tuple(kernel_size, dims, "kernel_size")
    s = k if stride is None or stride == [] else as_tuple(stride, dims, "stride")
    p, d = as_tuple(padding, dims, "padding"), as_tuple(dilation, dims, "dilation")
    where = f"{name}: input {tuple(shape)}, kernel_size {k}, stride {s}, padding {p}, dilation {d}"
    if len(shape) not in (dims + 1, dims + 2) or 0 in shape[1:]:
        raise ValueError(
            f"{where}: expected a non-empty {dims + 1}-D (unbatched) or {dims + 2}-D input"
        )
    if min(k) <= 0 or min(s) <= 0 or min(d) <= 0:
        raise ValueError(f"{where}: kernel_size, stride and dilation must be positive")
    if min(p) < 0 or any(pp > kk // 2 for pp, kk in zip(p, k, strict=True)):
        raise ValueError(
            f"{where}: padding must be >= 0 and at most half the kernel size; pad the input "
            "first (F.pad) for more"
        )
    win = Windows(tuple(shape[-dims:]), k, s, p, d, bool(ceil_mode))
    if min(win.out_size) < 1:
        raise ValueError(
            f"{where}: the output size {win.out_size} is too small (the dilated kernel is "
            "larger than the padded input)"
        )
    return win


def padded(xp: Any, x: Any, win: Windows, fill: float, fill_beyond: float) -> Any:
    """``x`` padded with ``fill`` on both sides of each pooled dim, then with
    ``fill_beyond`` where the last window reaches past that padding (ceil mode).
    """
    lead = [(0, 0)] * (x.ndim - len(win.kernel))
    x = xp.pad(x, lead + [(p, p) for p in win.padding], constant_values=fill)
    if any(win.beyond):
        x = xp.pad(x, lead + [(0, b) for b in win.beyond], constant_values=fill_beyond)
    return x


def tap_views(x: Any, win: Windows) -> list[Any]:
    """The strided views of a :func:`padded` ``x``, one per kernel tap in row-major order:
    view ``t`` holds tap ``t`` of every window.
    """
    views = []
    for tap in product(*map(range, win.kernel)):
        cut = (
            slice(i * d, i * d + s * (o - 1) + 1, s)
            for i, d, s, o in zip(tap, win.dilation, win.stride, win.out_size, strict=True)
        )
        views.append(x[(Ellipsis,) + tuple(cut)])
    return views


def add_taps(xp: Any, part: Any, win: Windows, lead: tuple[int, ...]) -> Any:
    """The adjoint of reading the taps: ``part`` (shaped as the output) added onto the
    input positions every tap reads, with padding and beyond cut off.
    """
    size = [n + 2 * p + b for n, p, b in zip(win.in_size, win.padding, win.beyond, strict=True)]
    grad = xp.zeros((*lead, *size), part.dtype)
    for view in tap_views(grad, win):
        view += part
    inside = (slice(p, p + n) for p, n in zip(win.padding, win.in_size, strict=True))
    return grad[(Ellipsis,) + tuple(inside)]


def window_counts(xp: Any, win: Windows, count_include_pad: bool, dtype: Any) -> Any:
    """Each window's count of taps inside the input (and inside the padding, with
    ``count_include_pad``), never those past it: PyTorch's divisor of average pooling.
    """
    ones = padded(xp, xp.ones(win.in_size, dtype), win, float(count_include_pad), 0.0)
    return sum(tap_views(ones, win))


def max_indices(xp: Any, x: Any, win: Windows) -> Any:
    """The flat index (``h * W + w`` for 2-d) of each window's maximum within its plane, as
    PyTorch's kernel finds it: scanning the taps in row-major order, it keeps the first
    tap inside the input, then any greater than the best so far or NaN.
    """
    positions = xp.arange(math.prod(win.in_size), dtype=np.int64).reshape(win.in_size)
    position_taps = tap_views(padded(xp, positions, win, -1, -1), win)
    value_taps = tap_views(padded(xp, x, win, -math.inf, -math.inf), win)
    shape = (*x.shape[: x.ndim - len(win.kernel)], *win.out_size)
    best = xp.full(shape, -math.inf, x.dtype)
    where = xp.full(shape, -1, np.int64)
    for position, value in zip(position_taps, value_taps, strict=True):
        take = (position >= 0) & ((where < 0) | (value > best) | (value != value))
        best = xp.where(take, value, best)
        where = xp.where(take, position, where)
    return where


class AvgPoolNd(Function):
    """``y = (sum over each window of x) / divisor`` (zero padding)."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, x: Any, *, win: Windows, divisor: Any) -> Any:
        self.win, self.divisor = win, divisor
        return sum(tap_views(padded(self.xp, x, win, 0.0, 0.0), win)) / divisor

    def backward(self, grad_output: Tensor) -> Tensor:
        return AvgPoolNdBackward.apply(grad_output, win=self.win, divisor=self.divisor)


class AvgPoolNdBackward(Function):
    """Each window's gradient over ``divisor`` added onto the window; adjoint of
    :class:`AvgPoolNd`.
    """

    saves_inputs = False  # backward needs no input's values

    def forward(self, grad_y: Any, *, win: Windows, divisor: Any) -> Any:
        self.win, self.divisor = win, divisor
        lead = grad_y.shape[: grad_y.ndim - len(win.kernel)]
        return add_taps(self.xp, grad_y / divisor, win, lead)

    def backward(self, grad_output: Tensor) -> Tensor:
        return AvgPoolNd.apply(grad_output, win=self.win, divisor=self.divisor)


def _check(name: str, input: Tensor) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
    if input.dtype.kind != "f":
        raise TypeError(f"{name}: input must be floating point, got {input.dtype}")


def max_pool_with_indices(
    name: str,
    dims: int,
    input: Tensor,
    kernel_size: Ints,
    stride: Ints | None = None,
    padding: Ints = 0,
    dilation: Ints = 1,
    ceil_mode: bool = False,
) -> tuple[Tensor, Tensor]:
    """Max pooling over the last ``dims`` dims of ``input``, every option of PyTorch's
    ``max_pool{dims}d``: the values and the int64 flat index of each within its plane.

    ``y[..., i] = max over taps t of x[..., i*s + t*d - p]`` (padding never wins); the
    gradient of each window goes to the element its index names.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0]]])
    >>> values, indices = max_pool_with_indices("max_pool1d", 1, x, 2, ceil_mode=True)
    >>> values.tolist(), indices.tolist()
    ([[[3.0, 5.0, 4.0]]], [[[1, 3, 4]]])
    """
    _check(name, input)
    win = windows(name, input.shape, dims, kernel_size, stride, padding, dilation, ceil_mode)
    lead = input.shape[: input.ndim - dims]
    with input.device.guard():
        where = max_indices(input.xp, input.array, win)
        indices = Tensor._make(where, input.device, False, None)
    flat = input.reshape(*lead, math.prod(win.in_size))
    values = Gather.apply(flat, indices.reshape(*lead, -1), dim=len(lead))
    return values.reshape(*lead, *win.out_size), indices


def avg_pool(
    name: str,
    dims: int,
    input: Tensor,
    kernel_size: Ints,
    stride: Ints | None = None,
    padding: Ints = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Average pooling over the last ``dims`` dims of ``input``, every option of PyTorch's
    ``avg_pool{dims}d``: each window's sum divided by ``divisor_override``, or by its
    count of taps inside the input (and, with ``count_include_pad``, the padding; never
    the taps past the padding that ``ceil_mode`` adds).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0]]])
    >>> avg_pool("avg_pool1d", 1, x, 2, ceil_mode=True).tolist()
    [[[2.0, 3.5, 4.0]]]
    """
    _check(name, input)
    win = windows(name, input.shape, dims, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None:
        if int(divisor_override) == 0:
            raise ValueError(f"{name}: divisor_override must not be zero")
        return AvgPoolNd.apply(input, win=win, divisor=float(divisor_override))
    with input.device.guard():
        counts = window_counts(input.xp, win, count_include_pad, input.dtype)
    return AvgPoolNd.apply(input, win=win, divisor=counts)


__all__ = [
    "AvgPoolNd",
    "AvgPoolNdBackward",
    "Windows",
    "add_taps",
    "as_tuple",
    "avg_pool",
    "max_indices",
    "max_pool_with_indices",
    "output_length",
    "padded",
    "tap_views",
    "window_counts",
    "windows",
]
