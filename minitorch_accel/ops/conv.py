"""2-D convolution as autograd Functions, and the public :func:`conv2d`.

The arithmetic lives in :mod:`minitorch_accel.ops.conv_kernels` (im2col + one GEMM per
group). Here each of the four maps is a Function whose backward is written with the
others, so second derivatives work (as Chainer does):

* ``y = conv(x, w) + b``                    :class:`Conv2d`
* ``grad_x = conv_transpose(grad_y, w)``    :class:`Conv2dGradInput`
* ``grad_w = correlate(grad_y, x)``         :class:`Conv2dGradWeight`
* ``grad_b = grad_y.sum((0, 2, 3))``        :class:`Conv2dGradBias`

The two middle ones are bilinear: the gradient of each with respect to ``grad_y`` is a
convolution and with respect to its other input is the other one.
"""

from __future__ import annotations

from typing import Any

from ..core import autocast_state
from ..core.function import Function
from ..core.grad_mode import is_grad_enabled
from ..core.tensor import Tensor
from .conv_kernels import (
    Cols,
    IntPair,
    conv2d_forward,
    conv2d_grad_bias,
    conv2d_grad_input,
    conv2d_grad_weight,
    conv_geometry,
)


class Conv2d(Function):
    """``y = conv2d(x, w) + b``; keeps the im2col matrix for the weight gradient."""

    fresh_grads = True  # each gradient is the new output of one of the Functions below

    def forward(self, x: Any, w: Any, b: Any, *, keep_cols: bool, **conv: Any) -> Any:
        threaded = self.device.backend.kernel("conv2d_forward")  # the CPU's thread pool
        if threaded is not None:
            y, cols = threaded(x, w, b, **conv)
        else:
            y, cols = conv2d_forward(
                self.xp, x, w, b, **conv, fast_im2col=self.device.backend.kernel("im2col")
            )
        self.conv = conv
        self.cols = cols if keep_cols else None  # (M, K): reused by grad_weight
        return y

    def backward(self, grad_output: Tensor) -> tuple[Tensor | None, ...]:
        x, w, b = self.inputs
        need_x, need_w, need_b = self.needs_input_grad
        grad_x = grad_w = grad_b = None
        if need_x:
            grad_x = Conv2dGradInput.apply(grad_output, w, x_shape=x.shape, **self.conv)
        if need_w:
            grad_w = Conv2dGradWeight.apply(
                grad_output, x, w_shape=w.shape, cols=self.cols, **self.conv
            )
        if need_b:
            grad_b = Conv2dGradBias.apply(grad_output)
        return grad_x, grad_w, grad_b


class Conv2dGradInput(Function):
    """``grad_x`` from ``grad_y`` and ``w``: a transposed convolution (col2im)."""

    def forward(self, grad_y: Any, w: Any, *, x_shape: tuple[int, ...], **conv: Any) -> Any:
        self.conv = conv
        fused = self.device.backend.kernel("conv2d_grad_input")
        if fused is not None and grad_y.dtype == w.dtype:  # one GEMM, then col2im
            return fused(grad_y, w, conv_geometry(x_shape, w.shape, **conv, channel_major_k=True))
        return conv2d_grad_input(self.xp, grad_y, w, x_shape, **conv)

    def backward(self, grad_output: Tensor) -> tuple[Tensor | None, Tensor | None]:
        grad_y, w = self.inputs
        need_grad_y, need_w = self.needs_input_grad
        gg_y = (
            Conv2d.apply(grad_output, w, None, keep_cols=False, **self.conv)
            if need_grad_y
            else None
        )
        gg_w = (
            Conv2dGradWeight.apply(grad_y, grad_output, w_shape=w.shape, cols=None, **self.conv)
            if need_w
            else None
        )
        return gg_y, gg_w


class Conv2dGradWeight(Function):
    """``grad_w`` from ``grad_y`` and ``x`` (or the forward's im2col matrix of ``x``)."""

    def forward(
        self, grad_y: Any, x: Any, *, w_shape: tuple[int, ...], cols: Cols | None, **conv: Any
    ) -> Any:
        self.conv = conv
        return conv2d_grad_weight(self.xp, grad_y, x if cols is None else cols, w_shape, **conv)

    def backward(self, grad_output: Tensor) -> tuple[Tensor | None, Tensor | None]:
        grad_y, x = self.inputs
        need_grad_y, need_x = self.needs_input_grad
        gg_y = (
            Conv2d.apply(x, grad_output, None, keep_cols=False, **self.conv)
            if need_grad_y
            else None
        )
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
        return conv2d_grad_bias(self.xp, grad_y)

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
        On the CPU its memory is channels-last (an NCHW view of an NHWC buffer).

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


__all__ = ["Conv2d", "Conv2dGradBias", "Conv2dGradInput", "Conv2dGradWeight", "conv2d"]
