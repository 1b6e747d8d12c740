"""2-D pooling as autograd Functions, and the public functionals.

The arithmetic lives in :mod:`minitorch_accel.ops.pool_kernels`. Every backward is
itself a Function whose own backward is the matching forward-like map, so second
derivatives work: average pooling and its backward are linear maps adjoint to each
other; max pooling's backward routes each window's gradient to the window's first
maximum, and the adjoint of that routing picks the value there.
"""

from __future__ import annotations

from typing import Any

from ..core.function import Function
from ..core.tensor import Tensor
from .conv_kernels import IntPair
from .layout import NHWC, physical_order
from .pool_kernels import (
    adaptive_avg_pool2d_backward,
    adaptive_avg_pool2d_forward,
    avg_pool2d_backward,
    avg_pool2d_forward,
    max_pool2d_backward,
    max_pool2d_forward,
    max_pool2d_pick,
    pool_geometry,
)


def _fused_max_pool(fn: Function, name: str, pool: dict[str, Any], *arrays: Any) -> Any:
    """The backend's one-kernel max pooling ``name`` for these pooling arguments, with
    the geometry and layout filled in; None where there is none (the ``xp`` code runs).
    The last of ``arrays`` is the forward input; all must share one dtype.
    """
    kernel = fn.device.backend.kernel(name)
    if kernel is None or any(a.dtype != arrays[0].dtype for a in arrays):
        return None
    x = arrays[-1]
    geometry = pool_geometry("max_pool2d", x.shape, **pool)
    return lambda *args: kernel(*args, geometry, physical_order(x) == NHWC)


class MaxPool2d(Function):
    """``y = max over each window of x``."""

    saves_output = True  # backward reads self.y, the output's array

    def forward(self, x: Any, **pool: Any) -> Any:
        self.pool = pool
        fused = _fused_max_pool(self, "max_pool2d_forward", pool, x)
        self.y = fused(x) if fused else max_pool2d_forward(self.xp, x, **pool)
        return self.y

    def backward(self, grad_output: Tensor) -> Tensor:
        (x,) = self.inputs
        return MaxPool2dBackward.apply(grad_output, x.detach(), y=self.y, **self.pool)


class MaxPool2dBackward(Function):
    """Route ``grad_y`` to each window's first maximum of ``x`` (``x`` is a constant)."""

    def forward(self, grad_y: Any, x: Any, *, y: Any, **pool: Any) -> Any:
        self.pool, self.y = pool, y
        fused = _fused_max_pool(self, "max_pool2d_backward", pool, grad_y, y, x)
        if fused:
            return fused(grad_y, x, y)
        return max_pool2d_backward(self.xp, grad_y, x, y, **pool)

    def backward(self, grad_output: Tensor) -> tuple[Tensor | None, None]:
        _, x = self.inputs
        return MaxPool2dPick.apply(grad_output, x, y=self.y, **self.pool), None


class MaxPool2dPick(Function):
    """The adjoint of :class:`MaxPool2dBackward`: the value of ``v`` at each window's
    first maximum of ``x``.
    """

    def forward(self, v: Any, x: Any, *, y: Any, **pool: Any) -> Any:
        self.pool, self.y = pool, y
        return max_pool2d_pick(self.xp, v, x, y, **pool)

    def backward(self, grad_output: Tensor) -> tuple[Tensor | None, None]:
        _, x = self.inputs
        return MaxPool2dBackward.apply(grad_output, x, y=self.y, **self.pool), None


class AvgPool2d(Function):
    """``y = mean over each window of x`` (zero padding)."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, x: Any, **pool: Any) -> Any:
        self.pool, self.x_shape = pool, x.shape
        return avg_pool2d_forward(self.xp, x, **pool)

    def backward(self, grad_output: Tensor) -> Tensor:
        return AvgPool2dBackward.apply(grad_output, x_shape=self.x_shape, **self.pool)


class AvgPool2dBackward(Function):
    """Spread each window's gradient evenly over the window; adjoint of :class:`AvgPool2d`."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, grad_y: Any, *, x_shape: tuple[int, ...], **pool: Any) -> Any:
        self.pool = pool
        return avg_pool2d_backward(self.xp, grad_y, x_shape, **pool)

    def backward(self, grad_output: Tensor) -> Tensor:
        return AvgPool2d.apply(grad_output, **self.pool)


class AdaptiveAvgPool2d(Function):
    """``y = A_h @ x @ A_w.T`` with PyTorch's adaptive averaging bins."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, x: Any, *, output_size: IntPair) -> Any:
        self.x_shape = x.shape
        return adaptive_avg_pool2d_forward(self.xp, x, output_size)

    def backward(self, grad_output: Tensor) -> Tensor:
        return AdaptiveAvgPool2dBackward.apply(grad_output, x_shape=self.x_shape)


class AdaptiveAvgPool2dBackward(Function):
    """``grad_x = A_h.T @ grad_y @ A_w``; adjoint of :class:`AdaptiveAvgPool2d`."""

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


def max_pool2d(
    input: Tensor, kernel_size: IntPair, stride: IntPair | None = None, padding: IntPair = 0
) -> Tensor:
    """Max pooling over NCHW images, as ``torch.nn.functional.max_pool2d``.

    ``y[n, c, i, j] = max over (p, q) of x[n, c, i*sh + p - ph, j*sw + q - pw]``, with
    padding counted as -inf. The gradient of each window goes to exactly one element,
    its first maximum in row-major order (as PyTorch), even when several are tied.

    Parameters
    ----------
    input : Tensor
        (N, C, H, W), floating point.
    kernel_size : int or (int, int)
    stride : int or (int, int), optional
        Default: ``kernel_size``.
    padding : int or (int, int)
        At most half the kernel size.

    Returns
    -------
    Tensor
        (N, C, OH, OW), ``OH = (H + 2*ph - KH) // sh + 1``, in the memory layout of
        ``input``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.arange(16.0).reshape(1, 1, 4, 4)
    >>> max_pool2d(x, 2)[0, 0].tolist()
    [[5.0, 7.0], [13.0, 15.0]]
    """
    _check("max_pool2d", input)
    return MaxPool2d.apply(input, kernel_size=kernel_size, stride=stride, padding=padding)


def avg_pool2d(
    input: Tensor,
    kernel_size: IntPair,
    stride: IntPair | None = None,
    padding: IntPair = 0,
    count_include_pad: bool = True,
) -> Tensor:
    """Average pooling over NCHW images, as ``torch.nn.functional.avg_pool2d``.

    Each window's sum divided by ``KH * KW`` (``count_include_pad=True``, padding counts
    as zeros) or by the number of its elements inside the input (``False``).
    Parameters and output shape as :func:`max_pool2d`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> avg_pool2d(mta.arange(16.0).reshape(1, 1, 4, 4), 2)[0, 0].tolist()
    [[2.5, 4.5], [10.5, 12.5]]
    """
    _check("avg_pool2d", input)
    return AvgPool2d.apply(
        input,
        kernel_size=kernel_size,
        stride=stride,
        padding=padding,
        count_include_pad=count_include_pad,
    )


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
]
