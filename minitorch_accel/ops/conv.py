"""2-D convolution as autograd Functions, and the public :func:`conv2d`: the reference
implementation, the way a textbook writes it.

Convolution is a matrix multiply. :func:`im2col` copies every receptive field of the
input into one column of a matrix, so the convolution becomes one matrix product with
the weight reshaped to (O, C*KH*KW) (one product per group, batched over the images);
:func:`col2im` is its adjoint, adding each column back onto the pixels it was read from.
Each of the four maps is a Function whose backward is written with the others, so
second derivatives work (as Chainer does):

* ``y = conv(x, w) + b``                    :class:`Conv2d`
* ``grad_x = conv_transpose(grad_y, w)``    :class:`Conv2dGradInput`
* ``grad_w = correlate(grad_y, x)``         :class:`Conv2dGradWeight`
* ``grad_b = grad_y.sum((0, 2, 3))``        :class:`Conv2dGradBias`

The two middle ones are bilinear: the gradient of each with respect to ``grad_y`` is a
convolution and with respect to its other input is the other one.

A backend may replace a forward with a faster one (channels-last layouts, cached
buffers, fused GPU kernels, threads): see :mod:`minitorch_accel.backends.fast_paths`.
``minitorch_accel.fast_paths(False)`` runs this code only.
"""

from __future__ import annotations

from typing import Any

from ..backends.image_geometry import ConvGeometry, IntPair, conv_geometry, window
from ..core import autocast_state
from ..core.function import Function
from ..core.grad_mode import is_grad_enabled
from ..core.tensor import Tensor


def im2col(xp: Any, x: Any, geo: ConvGeometry) -> Any:
    """(N, C, H, W) -> (N, groups, C/groups*KH*KW, OH*OW): column ``l`` of image ``n``
    holds the receptive field of output pixel ``l``, in the weight's (c, kh, kw) order.
    """
    (n, c, _, _), (_, _, kh, kw), (ph, pw) = geo.x_shape, geo.w_shape, geo.padding
    x = xp.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    cols = xp.empty((n, c, kh, kw, *geo.out_hw), x.dtype)
    for i in range(kh):
        for j in range(kw):
            tap = window(x, i * geo.dilation[0], j * geo.dilation[1], geo.stride, geo.out_hw)
            cols[:, :, i, j] = tap
    return cols.reshape(n, geo.groups, c // geo.groups * kh * kw, -1)


def col2im(xp: Any, cols: Any, geo: ConvGeometry) -> Any:
    """The adjoint of :func:`im2col`: add every column entry onto the input pixel it
    was read from, giving an (N, C, H, W) array.
    """
    (n, c, h, w), (_, _, kh, kw), (ph, pw) = geo.x_shape, geo.w_shape, geo.padding
    cols = cols.reshape(n, c, kh, kw, *geo.out_hw)
    image = xp.zeros((n, c, h + 2 * ph, w + 2 * pw), cols.dtype)
    for i in range(kh):
        for j in range(kw):
            tap = window(image, i * geo.dilation[0], j * geo.dilation[1], geo.stride, geo.out_hw)
            tap += cols[:, :, i, j]
    return image[:, :, ph : ph + h, pw : pw + w]


def _weight_matrix(w: Any, groups: int) -> Any:
    """The weight (O, C/groups, KH, KW) as (groups, O/groups, C/groups*KH*KW)."""
    return w.reshape(groups, w.shape[0] // groups, -1)


class Conv2d(Function):
    """``y = conv2d(x, w) + b``: im2col, then one matrix product per group."""

    fresh_grads = True  # each gradient is the new output of one of the Functions below

    def forward(self, x: Any, w: Any, b: Any, *, keep_cols: bool = False, **conv: Any) -> Any:
        self.conv, self.cols = conv, None  # cols: a fast forward may keep its im2col here
        geo = conv_geometry(x.shape, w.shape, **conv)
        y = _weight_matrix(w, geo.groups) @ im2col(self.xp, x, geo)  # (N, groups, O/g, L)
        y = y.reshape(geo.y_shape)
        return y if b is None else y + b.reshape(1, -1, 1, 1)

    def backward(self, grad_output: Tensor) -> tuple[Tensor | None, ...]:
        (x, w, _), (need_x, need_w, need_b), conv = self.inputs, self.needs_input_grad, self.conv
        gx = Conv2dGradInput.apply(grad_output, w, x_shape=x.shape, **conv) if need_x else None
        gw = (
            Conv2dGradWeight.apply(grad_output, x, w_shape=w.shape, cols=self.cols, **conv)
            if need_w
            else None
        )
        return gx, gw, Conv2dGradBias.apply(grad_output) if need_b else None


class Conv2dGradInput(Function):
    """``grad_x`` from ``grad_y`` and ``w``: a transposed convolution (col2im)."""

    def forward(self, grad_y: Any, w: Any, *, x_shape: tuple[int, ...], **conv: Any) -> Any:
        self.conv = conv
        geo = conv_geometry(x_shape, w.shape, **conv)
        gy = grad_y.reshape(geo.x_shape[0], geo.groups, -1, geo.out_hw[0] * geo.out_hw[1])
        return col2im(self.xp, _weight_matrix(w, geo.groups).transpose(0, 2, 1) @ gy, geo)

    def backward(self, grad_output: Tensor) -> tuple[Tensor | None, Tensor | None]:
        (grad_y, w), (need_grad_y, need_w) = self.inputs, self.needs_input_grad
        gg_y = Conv2d.apply(grad_output, w, None, **self.conv) if need_grad_y else None
        gg_w = (
            Conv2dGradWeight.apply(grad_y, grad_output, w_shape=w.shape, cols=None, **self.conv)
            if need_w
            else None
        )
        return gg_y, gg_w


class Conv2dGradWeight(Function):
    """``grad_w`` from ``grad_y`` and ``x``: the products of ``grad_y`` with the columns,
    summed over the images (``cols``, a fast forward's saved im2col matrix, is not used).
    """

    def forward(
        self, grad_y: Any, x: Any, *, w_shape: tuple[int, ...], cols: Any, **conv: Any
    ) -> Any:
        self.conv = conv
        geo = conv_geometry(x.shape, w_shape, **conv)
        gy = grad_y.reshape(geo.x_shape[0], geo.groups, -1, geo.out_hw[0] * geo.out_hw[1])
        return (gy @ im2col(self.xp, x, geo).transpose(0, 1, 3, 2)).sum(0).reshape(w_shape)

    def backward(self, grad_output: Tensor) -> tuple[Tensor | None, Tensor | None]:
        (grad_y, x), (need_grad_y, need_x) = self.inputs, self.needs_input_grad
        gg_y = Conv2d.apply(x, grad_output, None, **self.conv) if need_grad_y else None
        gg_x = (
            Conv2dGradInput.apply(grad_y, grad_output, x_shape=x.shape, **self.conv)
            if need_x
            else None
        )
        return gg_y, gg_x


class Conv2dGradBias(Function):
    """``grad_b = grad_y.sum((0, 2, 3))``."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, grad_y: Any) -> Any:
        self.grad_y_shape = grad_y.shape
        return grad_y.sum(axis=(0, 2, 3))

    def backward(self, grad_output: Tensor) -> Tensor:
        return grad_output.reshape(1, -1, 1, 1).expand(self.grad_y_shape)


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntPair = 1,
    padding: IntPair = 0,
    dilation: IntPair = 1,
    groups: int = 1,
) -> Tensor:
    """2-D convolution over NCHW images, as ``torch.nn.functional.conv2d``.

    ``y[n, o, i, j] = b[o] + sum over (c, p, q) of
    w[o, c, p, q] * x[n, g*C/groups + c, i*sh + p*dh - ph, j*sw + q*dw - pw]``
    (a cross-correlation; zero padding; ``g`` the group of ``o``), computed as im2col
    followed by one matrix multiply per group.

    Parameters
    ----------
    input : Tensor
        (N, C, H, W).
    weight : Tensor
        (O, C // groups, KH, KW).
    bias : Tensor, optional
        (O,).
    stride, padding, dilation : int or (int, int)
        Step between windows, zeros added on each side, spacing of the kernel taps.
    groups : int
        Split channels into ``groups`` independent convolutions (``groups == C``:
        depthwise).

    Returns
    -------
    Tensor
        (N, O, OH, OW) with ``OH = (H + 2*ph - dh*(KH - 1) - 1) // sh + 1`` (same for W).
        With the fast paths on, the CPU's is channels-last in memory (an NCHW view of
        an NHWC buffer).

    Raises
    ------
    ValueError
        Shapes that do not fit (the message names them), non-positive stride or
        dilation, negative padding, a kernel larger than the padded input.
    TypeError
        Inputs that are not tensors or whose dtypes differ.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x, w = mta.ones(1, 1, 4, 4), mta.ones(2, 1, 3, 3)
    >>> conv2d(x, w, padding=1)[0, 0].tolist()[0]
    [4.0, 6.0, 6.0, 4.0]
    """
    for name, t in (("input", input), ("weight", weight), ("bias", bias)):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"conv2d: {name} must be a Tensor, got {type(t).__name__}")
    if autocast_state.state.dtype is not None:
        input, weight, bias = autocast_state.to_compute_dtype(  # type: ignore[assignment]
            input, weight, bias
        )
    _check_arrays(input, weight, bias, stride, padding, dilation, groups)
    keep_cols = is_grad_enabled() and weight.requires_grad
    return Conv2d.apply(
        input,
        weight,
        bias,
        keep_cols=keep_cols,
        stride=stride,
        padding=padding,
        dilation=dilation,
        groups=groups,
    )


def _check_arrays(x: Tensor, w: Tensor, b: Tensor | None, *conv: Any) -> None:
    """Raise a clear error for shapes or dtypes that do not fit (before any work)."""
    conv_geometry(x.shape, w.shape, *conv)
    if x.dtype != w.dtype or (b is not None and b.dtype != x.dtype):
        raise TypeError(
            f"conv2d: dtypes differ: input {x.dtype}, weight {w.dtype}"
            + ("" if b is None else f", bias {b.dtype}")
        )
    if b is not None and tuple(b.shape) != (w.shape[0],):
        raise ValueError(f"conv2d: bias {tuple(b.shape)} must have shape ({w.shape[0]},)")


__all__ = [
    "Conv2d",
    "Conv2dGradBias",
    "Conv2dGradInput",
    "Conv2dGradWeight",
    "col2im",
    "conv2d",
    "im2col",
]
