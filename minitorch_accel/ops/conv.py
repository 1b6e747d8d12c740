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
    (ph, pw), (dh, dw), (kh, kw) = geo.padding, geo.dilation, geo.w_shape[2:]
    x = xp.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    taps = [window(x, i * dh, j * dw, geo.stride, geo.out_hw) for i in range(kh) for j in range(kw)]
    k = geo.w_shape[1] * kh * kw  # explicit sizes: a batch of 0 images has no -1 to infer
    return xp.stack(taps, axis=2).reshape(len(x), geo.groups, k, geo.out_hw[0] * geo.out_hw[1])


def col2im(xp: Any, cols: Any, geo: ConvGeometry) -> Any:
    """The adjoint of :func:`im2col`: add every column entry onto the input pixel it
    was read from, giving an (N, C, H, W) array.
    """
    (n, c, h, w), (ph, pw), (dh, dw) = geo.x_shape, geo.padding, geo.dilation
    kh, kw = geo.w_shape[2:]
    cols = cols.reshape(n, c, kh * kw, *geo.out_hw)  # tap t = (t // kw, t % kw)
    x = xp.zeros((n, c, h + 2 * ph, w + 2 * pw), cols.dtype)
    for t in range(cols.shape[2]):
        window(x, t // kw * dh, t % kw * dw, geo.stride, geo.out_hw)[...] += cols[:, :, t]
    return x[:, :, ph : ph + h, pw : pw + w]


def weight_matrix(w: Any, groups: int) -> Any:
    """The weight (O, C/groups, KH, KW) as (groups, O/groups, C/groups*KH*KW)."""
    return w.reshape(groups, w.shape[0] // groups, w.shape[1] * w.shape[2] * w.shape[3])


class Conv2d(Function):
    """``y = conv2d(x, w) + b``: im2col, then one matrix product per group.

    ``keep_cols`` lets a fast forward keep its im2col matrix for the weight gradient
    (``self.cols``); this code recomputes it there instead. The backward hands ``cols``
    to the weight and bias gradients: a fast path may compute both in one pass and
    give the second its own.
    """

    fresh_grads = True  # each gradient is the new output of one of the Functions below

    def forward(self, x: Any, w: Any, b: Any, *, keep_cols: bool = False, **conv: Any) -> Any:
        self.conv, self.cols = conv, None  # a fast forward may keep its im2col matrix in cols
        geo = conv_geometry(x.shape, w.shape, **conv)
        y = (weight_matrix(w, geo.groups) @ im2col(self.xp, x, geo)).reshape(geo.y_shape)
        return y if b is None else y + b.reshape(1, len(b), 1, 1)

    def backward(self, gy: Tensor) -> tuple[Tensor | None, ...]:
        return conv2d_grads(self, gy)


def conv2d_grads(fn: Function, gy: Tensor) -> tuple[Tensor | None, ...]:
    """The gradients of a convolution's input, weight and bias (None where not needed)
    from that of its output, by the three Functions below; ``fn`` is the node that ran
    the convolution (its ``inputs``, ``needs_input_grad``, ``conv`` and ``cols``).
    """
    (x, w, _), (need_x, need_w, need_b) = fn.inputs, fn.needs_input_grad
    conv, cols = fn.conv, fn.cols  # type: ignore[attr-defined]
    gx = Conv2dGradInput.apply(gy, w, x_shape=x.shape, **conv) if need_x else None
    gw = Conv2dGradWeight.apply(gy, x, w_shape=w.shape, cols=cols, **conv) if need_w else None
    return gx, gw, Conv2dGradBias.apply(gy, cols=cols) if need_b else None


class Conv2dGradInput(Function):
    """``grad_x`` from ``grad_y`` and ``w``: a transposed convolution (col2im)."""

    def forward(self, gy: Any, w: Any, *, x_shape: tuple[int, ...], **conv: Any) -> Any:
        self.conv, geo = conv, conv_geometry(x_shape, w.shape, **conv)
        og = geo.w_shape[0] // geo.groups
        gy = gy.reshape(x_shape[0], geo.groups, og, geo.out_hw[0] * geo.out_hw[1])
        return col2im(self.xp, weight_matrix(w, geo.groups).transpose(0, 2, 1) @ gy, geo)

    def backward(self, gg: Tensor) -> tuple[Tensor | None, Tensor | None]:
        (gy, w), (need_gy, need_w), conv = self.inputs, self.needs_input_grad, self.conv
        gg_y = Conv2d.apply(gg, w, None, **conv) if need_gy else None
        return gg_y, Conv2dGradWeight.apply(gy, gg, w_shape=w.shape, **conv) if need_w else None


class Conv2dGradWeight(Function):
    """``grad_w`` from ``grad_y`` and ``x``: ``grad_y`` times the columns, summed over the
    images (``cols`` is a fast forward's saved im2col matrix, unused here).
    """

    def forward(self, gy: Any, x: Any, *, w_shape: Any, cols: Any = None, **conv: Any) -> Any:
        self.conv, geo = conv, conv_geometry(x.shape, w_shape, **conv)
        og = geo.w_shape[0] // geo.groups
        gy = gy.reshape(len(x), geo.groups, og, geo.out_hw[0] * geo.out_hw[1])
        return (gy @ im2col(self.xp, x, geo).transpose(0, 1, 3, 2)).sum(0).reshape(w_shape)

    def backward(self, gg: Tensor) -> tuple[Tensor | None, Tensor | None]:
        (gy, x), (need_gy, need_x), conv = self.inputs, self.needs_input_grad, self.conv
        gg_y = Conv2d.apply(x, gg, None, **conv) if need_gy else None
        return gg_y, Conv2dGradInput.apply(gy, gg, x_shape=x.shape, **conv) if need_x else None


class Conv2dGradBias(Function):
    """``grad_b = grad_y.sum((0, 2, 3))`` (``cols`` is a fast forward's state, unused here)."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, gy: Any, *, cols: Any = None) -> Any:
        self.grad_y_shape = gy.shape
        return gy.sum(axis=(0, 2, 3))

    def backward(self, gg: Tensor) -> Tensor:
        return gg.reshape(1, self.grad_y_shape[1], 1, 1).expand(self.grad_y_shape)


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
        (N, C, H, W), or one unbatched (C, H, W) image.
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
    if input.ndim == 3:  # one unbatched (C, H, W) image, as PyTorch accepts: a batch of one
        return conv2d(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups)[0]
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
    "weight_matrix",
]
