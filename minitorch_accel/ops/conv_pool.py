"""A convolution followed by max pooling, as one op (*operator fusion*).

Unfused, ``max_pool2d(conv2d(x, w, b))`` writes the convolution's whole output to
memory, reads it back to pool it, and keeps it for the backward, where the pooling's
gradient reads it once more to find each window's maximum. Those are the largest
arrays of a small CNN (LeNet's first convolution: 22 MB at batch 256) and passes over
them run at the speed of memory, not of the cores. Fused, a fast path convolves and
pools one cache-sized block of images at a time, so the convolution's output never
leaves the cache, and keeps for the backward only *which tap* of each window held its
first maximum, one byte per pooled value (:func:`first_max_tap`; for 2x2 windows a
sixteenth of the bytes of the float32 output it replaces). The backward routes the
gradient by that byte (:class:`MaxPool2dRoute`) and goes on with the convolution's own
gradients. A ReLU after the pooling joins the op too (``relu=True``): its output is
``max(p, 0)`` taken on the pooled block in cache, and its gradient mask becomes one more
value of the byte, :data:`NO_TAP` (the window's gradient goes nowhere), so neither a
pass over the ReLU's output in the forward nor one over its gradient in the backward
is left.

:class:`~minitorch_accel.nn.Sequential` runs a :class:`~minitorch_accel.nn.Conv2d`
followed by a :class:`~minitorch_accel.nn.MaxPool2d` through :func:`conv2d_max_pool2d`,
which fuses them when the device's backend has a fast path for it (the CPU's), the
convolution is one whose output costs more to move than to compute (a first layer,
:func:`fuses`) and the pooling windows tile the image; otherwise it runs the two ops as
written.
"""

from __future__ import annotations

from functools import reduce
from typing import Any

from ..backends.fast_paths import is_fast_paths_enabled
from ..backends.image_geometry import IntPair, PoolGeometry, conv_geometry, pool_geometry
from ..backends.pool_kernels import NO_TAP
from ..core import autocast_state
from ..core.function import Function
from ..core.grad_mode import is_grad_enabled
from ..core.tensor import Tensor
from .conv import (
    Conv2d,
    Conv2dGradBias,
    Conv2dGradInput,
    Conv2dGradWeight,
    _check_arrays,
    conv2d,
    conv2d_grads,
)
from .elementwise import relu as relu_op
from .pool import _check, first_max, max_pool2d, scatter, taps


def first_max_tap(xp: Any, y: Any, p: Any, geo: PoolGeometry) -> Any:
    """For each window of ``y``, the row-major index of the tap holding its first
    maximum (``p`` is the pooled ``y``): the first tap equal to the maximum, or in a
    window holding NaN, the last NaN (where PyTorch routes the gradient).

    Examples
    --------
    >>> import numpy as np
    >>> from minitorch_accel.backends.image_geometry import pool_geometry
    >>> y = np.array([[[[1.0, 3.0], [3.0, 0.0]]]])
    >>> geo = pool_geometry("max_pool2d", y.shape, 2, 2, 0)
    >>> first_max_tap(np, y, np.array([[[[3.0]]]]), geo).tolist()
    [[[[1]]]]
    """
    return xp.argmax(first_max(xp, y, p, geo), axis=0).astype(xp.uint8)  # one tap each


def relu_taps(xp: Any, p: Any, tap: Any) -> Any:
    """``p``'s ReLU, and ``tap`` with :data:`NO_TAP` where the ReLU's gradient is zero:
    where ``p <= 0`` (PyTorch's rule, so a NaN maximum passes its gradient on to the
    window's last NaN).

    Examples
    --------
    >>> import numpy as np
    >>> y, tap = relu_taps(np, np.array([-1.0, 2.0, 0.0]), np.array([3, 1, 0], np.uint8))
    >>> y.tolist(), tap.tolist()
    ([0.0, 2.0, 0.0], [255, 1, 255])
    """
    return xp.maximum(p, 0), xp.where(p <= 0, NO_TAP, tap).astype(xp.uint8)


class Conv2dMaxPool2d(Conv2d):
    """``p = max_pool2d(conv2d(x, w) + b)``, keeping each window's :func:`first_max_tap`
    (``self.tap``) instead of the convolution's output; with ``relu``, ``max(p, 0)``,
    the ReLU's gradient mask kept in the taps (:func:`relu_taps`).
    """

    def forward(  # type: ignore[override]
        self,
        x: Any,
        w: Any,
        b: Any,
        *,
        pool: PoolGeometry,
        relu: bool = False,
        keep_cols: bool = False,
        **conv: Any,
    ) -> Any:
        y = super().forward(x, w, b, **conv)
        p = reduce(self.xp.maximum, taps(self.xp, y, pool, float("-inf")))
        self.pool, self.tap = pool, first_max_tap(self.xp, y, p, pool)
        if relu:
            p, self.tap = relu_taps(self.xp, p, self.tap)
        return p

    def backward(self, gp: Tensor) -> tuple[Tensor | None, ...]:
        (x, w, _), (need_x, need_w, need_b) = self.inputs, self.needs_input_grad
        if need_x:  # the input's gradient needs the routed gradient itself
            gy = MaxPool2dRoute.apply(gp, tap=self.tap, geo=self.pool, cols=self.cols)
            return conv2d_grads(self, gy)
        # a first layer: the weight's and bias's gradients straight from the pooled one
        route = {"tap": self.tap, "geo": self.pool, "cols": self.cols}
        gw = None
        if need_w:
            gw = RoutedConv2dGradWeight.apply(gp, x, w_shape=w.shape, **route, **self.conv)
        return None, gw, RoutedConv2dGradBias.apply(gp, **route) if need_b else None


def routed(xp: Any, gp: Any, tap: Any, geo: PoolGeometry) -> Any:
    """Each window's gradient ``gp`` at the tap ``tap`` names, zeros elsewhere (shaped as
    the pooling's input, ``geo.x_shape``).

    Examples
    --------
    >>> import numpy as np
    >>> from minitorch_accel.backends.image_geometry import pool_geometry
    >>> geo = pool_geometry("max_pool2d", (1, 1, 2, 2), 2, 2, 0)
    >>> routed(np, np.array([[[[5.0]]]]), np.array([[[[2]]]], np.uint8), geo).tolist()
    [[[[0.0, 0.0], [5.0, 0.0]]]]
    """
    count = geo.kernel[0] * geo.kernel[1]
    return scatter(xp, [xp.where(tap == t, gp, 0) for t in range(count)], geo)


class MaxPool2dRoute(Function):
    """Route each window's gradient to the tap ``tap`` names (:func:`routed`; ``cols``
    is a fast forward's state, unused here).
    """

    saves_inputs = False  # the routing needs only tap

    def forward(self, gp: Any, *, tap: Any, geo: PoolGeometry, cols: Any = None) -> Any:
        self.tap, self.geo = tap, geo
        return routed(self.xp, gp, tap, geo)

    def backward(self, gg: Tensor) -> Tensor:
        return MaxPool2dRoutePick.apply(gg, tap=self.tap, geo=self.geo)


class MaxPool2dRoutePick(Function):
    """The adjoint of :class:`MaxPool2dRoute`: the value of ``v`` at the tap ``tap`` names."""

    saves_inputs = False

    def forward(self, v: Any, *, tap: Any, geo: PoolGeometry) -> Any:
        self.tap, self.geo = tap, geo
        parts = enumerate(taps(self.xp, v, geo, 0.0))
        return sum(self.xp.where(tap == t, part, 0) for t, part in parts)

    def backward(self, gg: Tensor) -> Tensor:
        return MaxPool2dRoute.apply(gg, tap=self.tap, geo=self.geo)


class RoutedConv2dGradWeight(Conv2dGradWeight):
    """The weight gradient of :class:`Conv2dMaxPool2d` from the pooled gradient ``gp``:
    :class:`~minitorch_accel.ops.conv.Conv2dGradWeight` of :func:`routed` ``gp``. Only
    the windows' own values are nonzero in the routed gradient, so a fast path sums
    ``gp`` times the columns of each tap's positions and never writes it out (a first
    layer, whose input needs no gradient).
    """

    def forward(  # type: ignore[override]
        self,
        gp: Any,
        x: Any,
        *,
        tap: Any,
        geo: PoolGeometry,
        w_shape: Any,
        cols: Any = None,
        **conv: Any,
    ) -> Any:
        self.tap, self.geo = tap, geo
        return super().forward(routed(self.xp, gp, tap, geo), x, w_shape=w_shape, **conv)

    def backward(self, gg: Tensor) -> tuple[Tensor | None, Tensor | None]:
        (gp, x), (need_gp, need_x), conv = self.inputs, self.needs_input_grad, self.conv
        route = {"tap": self.tap, "geo": self.geo}
        gg_p = MaxPool2dRoutePick.apply(Conv2d.apply(x, gg, None, **conv), **route)
        if not need_x:
            return gg_p if need_gp else None, None
        gy = MaxPool2dRoute.apply(gp, **route)
        return gg_p if need_gp else None, Conv2dGradInput.apply(gy, gg, x_shape=x.shape, **conv)


class RoutedConv2dGradBias(Conv2dGradBias):
    """The bias gradient of :class:`Conv2dMaxPool2d` from the pooled gradient ``gp``:
    the sum of :func:`routed` ``gp`` per channel (a fast path takes the one
    :class:`RoutedConv2dGradWeight` computed beside the weight's).
    """

    def forward(  # type: ignore[override]
        self, gp: Any, *, tap: Any, geo: PoolGeometry, cols: Any = None
    ) -> Any:
        self.tap, self.geo = tap, geo
        return super().forward(routed(self.xp, gp, tap, geo))

    def backward(self, gg: Tensor) -> Tensor:
        return MaxPool2dRoutePick.apply(super().backward(gg), tap=self.tap, geo=self.geo)


#: Most multiply-adds per output value (``K = C/groups * KH * KW``) of a convolution that
#: :func:`conv2d_max_pool2d` fuses with its pooling. Fusion pays where an output value
#: costs more to move through memory than to compute: a first layer (K = 9 for 3x3
#: over grey images, 27 over colour). Measured on LeNet's step on the CPU: fusing its
#: first convolution (K = 9) makes forward and backward together 20-30% faster; its
#: second (K = 288) runs 5-20% slower fused at 2 threads (keeping the taps costs more
#: passes than the pooling alone, and the GEMM dominates anyway).
FUSE_MAX_K = 32


def fuses(w_shape: tuple[int, ...]) -> bool:
    """Whether :func:`conv2d_max_pool2d` fuses a convolution of weight shape ``w_shape``
    (where the backend can): at most :data:`FUSE_MAX_K` multiply-adds per output value.

    Examples
    --------
    >>> fuses((32, 1, 3, 3)), fuses((64, 32, 3, 3))
    (True, False)
    """
    return w_shape[1] * w_shape[2] * w_shape[3] <= FUSE_MAX_K


def _records_grad(*tensors: Tensor | None) -> bool:
    """Whether an op on ``tensors`` records a node for backward."""
    return is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def conv2d_max_pool2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: IntPair = 1,
    padding: IntPair = 0,
    dilation: IntPair = 1,
    groups: int = 1,
    *,
    kernel_size: IntPair,
    pool_stride: IntPair | None = None,
    pool_padding: IntPair = 0,
    relu: bool = False,
) -> Tensor:
    """``max_pool2d(conv2d(input, weight, bias, stride, padding, dilation, groups),
    kernel_size, pool_stride, pool_padding)``, then its ``relu`` if asked, as one op
    where that pays.

    The two run fused (:class:`Conv2dMaxPool2d`) when fast paths are on, the device's
    backend has one for the fused op, a gradient is being recorded (without one,
    nothing is kept for a backward and the ops as written are faster: the fused one
    finds each window's maximum for the backward), the convolution does few
    multiply-adds per output value (:func:`fuses`) and the pooling windows tile the
    image (stride equal to the kernel, no padding); otherwise as written. The values are the same
    either way, and so are the gradients (a pooling window holding NaN sends its
    gradient to its last NaN, as PyTorch, fused or not).
    With ``relu``, the ReLU of the pooled values joins the op (:func:`relu_taps`).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x, w = mta.randn(2, 1, 6, 6), mta.randn(4, 1, 3, 3, requires_grad=True)
    >>> fused = conv2d_max_pool2d(x, w, None, kernel_size=2)
    >>> bool((fused == mta.nn.functional.max_pool2d(mta.nn.functional.conv2d(x, w), 2)).all())
    True
    >>> bool((conv2d_max_pool2d(x, w, None, kernel_size=2, relu=True) == fused.relu()).all())
    True
    """
    if isinstance(input, Tensor) and input.ndim == 3:  # unbatched (C, H, W): a batch of one
        return conv2d_max_pool2d(
            input.unsqueeze(0),
            weight,
            bias,
            stride,
            padding,
            dilation,
            groups,
            kernel_size=kernel_size,
            pool_stride=pool_stride,
            pool_padding=pool_padding,
            relu=relu,
        )[0]
    pool = None
    fast = isinstance(input, Tensor) and isinstance(weight, Tensor) and is_fast_paths_enabled()
    if (
        fast
        and _records_grad(input, weight, bias)
        and fuses(tuple(weight.shape))
        and Conv2dMaxPool2d.op_name in (input.device.backend.fast_forwards)
    ):
        geo = conv_geometry(input.shape, weight.shape, stride, padding, dilation, groups)
        pool = pool_geometry("max_pool2d", geo.y_shape, kernel_size, pool_stride, pool_padding)
    if pool is None or not pool.tiles:  # as written
        y = conv2d(input, weight, bias, stride, padding, dilation, groups)
        p = max_pool2d(y, kernel_size, pool_stride, pool_padding)
        return relu_op(p) if relu else p
    if autocast_state.state.dtype is not None:
        input, weight, bias = autocast_state.to_compute_dtype(  # type: ignore[assignment]
            input, weight, bias
        )
    _check_arrays(input, weight, bias, stride, padding, dilation, groups)
    _check("max_pool2d", input)
    keep_cols = is_grad_enabled() and weight.requires_grad
    conv = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    return Conv2dMaxPool2d.apply(
        input, weight, bias, pool=pool, relu=relu, keep_cols=keep_cols, **conv
    )


__all__ = [
    "FUSE_MAX_K",
    "Conv2dMaxPool2d",
    "MaxPool2dRoute",
    "MaxPool2dRoutePick",
    "NO_TAP",
    "RoutedConv2dGradBias",
    "RoutedConv2dGradWeight",
    "conv2d_max_pool2d",
    "first_max_tap",
    "fuses",
    "relu_taps",
    "routed",
]
