"""Convolution and pooling layers over (N, C, H, W) inputs."""

from __future__ import annotations

import math
from typing import Any

from ..backends import DeviceLike
from ..core import factories
from ..core.convert import DTypeLike
from ..core.tensor import Tensor
from ..ops.conv_pool import conv2d_max_pool2d
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter
from .pooling import _MaxPoolNd

IntPair = int | tuple[int, int]


def _pair(value: IntPair, name: str) -> tuple[int, int]:
    if isinstance(value, int):
        return (value, value)
    if len(value) != 2 or not all(isinstance(v, int) for v in value):
        raise ValueError(f"{name} must be an int or a pair of ints, got {value!r}")
    return (value[0], value[1])


def conv_parameters(
    layer: str,
    in_channels: int,
    out_channels: int,
    kernel_size: tuple[int, ...],
    groups: int,
    bias: bool,
    device: DeviceLike | None,
    dtype: DTypeLike,
) -> tuple[Parameter, Parameter | None]:
    """The checked, uninitialized ``(weight, bias)`` of a convolution layer ``layer``
    (``"Conv1d"``, ``"Conv2d"``): weight (out, in // groups, *kernel_size).
    """
    if groups < 1 or in_channels % groups or out_channels % groups:
        raise ValueError(
            f"{layer}: in_channels ({in_channels}) and out_channels ({out_channels}) "
            f"must both be divisible by groups ({groups})"
        )
    if in_channels < 1 or out_channels < 0 or min(kernel_size) < 1:
        kernel = kernel_size[0] if len(kernel_size) == 1 else kernel_size
        raise ValueError(
            f"{layer}: in_channels must be >= 1, out_channels >= 0 and every kernel size "
            f">= 1, got {layer}({in_channels}, {out_channels}, kernel_size={kernel})"
        )
    shape = (out_channels, in_channels // groups, *kernel_size)
    weight = Parameter(factories.empty(*shape, device=device, dtype=dtype))
    bias_ = Parameter(factories.empty(out_channels, device=device, dtype=dtype)) if bias else None
    return weight, bias_


def reset_conv_parameters(weight: Parameter, bias: Parameter | None) -> None:
    """PyTorch's initialization of a convolution: U(-k, k), ``k = 1 / sqrt(fan_in)``."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        init.uniform_(bias, -bound, bound)


class Conv2d(Module):
    """2-D convolution (cross-correlation, as every framework computes it).

    ``y[n, o] = bias[o] + sum_c weight[o, c] * x[n, c]`` slid over the image: see
    :func:`~minitorch_accel.nn.functional.conv2d`.

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size : int or (int, int)
    stride, padding, dilation : int or (int, int)
    groups : int
        Split the channels into ``groups`` independent convolutions; both channel
        counts must divide by it.
    bias : bool
    device, dtype : optional

    Attributes
    ----------
    weight : Parameter
        (out_channels, in_channels // groups, kh, kw), initialized as PyTorch does:
        U(-k, k) with ``k = 1 / sqrt(fan_in)``, ``fan_in = in_channels // groups * kh * kw``.
    bias : Parameter or None
        (out_channels,), from the same U(-k, k).
    """

    weight: Parameter
    bias: Parameter | None

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: IntPair,
        stride: IntPair = 1,
        padding: IntPair = 0,
        dilation: IntPair = 1,
        groups: int = 1,
        bias: bool = True,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.stride = _pair(stride, "stride")
        self.padding = _pair(padding, "padding")
        self.dilation = _pair(dilation, "dilation")
        self.weight, self.bias = conv_parameters(
            "Conv2d", in_channels, out_channels, self.kernel_size, groups, bias, device, dtype
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw new initial weights (and bias) as the constructor does."""
        reset_conv_parameters(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        """Convolve ``input`` (N, in_channels, H, W), or one (in_channels, H, W) image."""
        self._check_input(input)
        return F.conv2d(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )

    def forward_max_pooled(self, input: Tensor, pool: MaxPool2d, relu: bool = False) -> Tensor:
        """``pool(self(input))`` (with ``relu``, its ReLU) as one op where the backend
        can fuse them and fusing pays
        (:func:`~minitorch_accel.ops.conv_pool.conv2d_max_pool2d`): the same values.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> from minitorch_accel import nn
        >>> conv, pool, x = nn.Conv2d(1, 4, 3), nn.MaxPool2d(2), mta.randn(2, 1, 8, 8)
        >>> bool((conv.forward_max_pooled(x, pool) == pool(conv(x))).all())
        True
        """
        self._check_input(input)
        if not pool.is_plain():  # the fused op knows kernel, stride and padding only
            output = self(input)
            return pool(F.relu(output) if relu else output)  # type: ignore[no-any-return]
        return conv2d_max_pool2d(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            self.dilation,
            self.groups,
            kernel_size=pool.kernel_size,
            pool_stride=pool.stride,
            pool_padding=pool.padding,
            relu=relu,
        )

    def _check_input(self, input: Tensor) -> None:
        shape = getattr(input, "shape", None)
        if shape is not None and (len(shape) not in (3, 4) or shape[-3] != self.in_channels):
            raise ValueError(
                f"Conv2d({self.in_channels}, {self.out_channels}) expects input of shape "
                f"(N, {self.in_channels}, H, W) or one image ({self.in_channels}, H, W), "
                f"got {tuple(shape)}"
            )

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        text = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0, 0):
            text += f", padding={self.padding}"
        if self.dilation != (1, 1):
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text


class MaxPool2d(_MaxPoolNd):
    """The maximum over each ``kernel_size`` window; see
    :func:`~minitorch_accel.nn.functional.max_pool2d`.

    Parameters
    ----------
    kernel_size : int or (int, int)
    stride : int or (int, int), optional
        Default: ``kernel_size`` (non-overlapping windows).
    padding : int or (int, int)
    dilation : int or (int, int)
    return_indices : bool
        Also return the flat index ``h * W + w`` of each maximum (for
        :class:`~minitorch_accel.nn.MaxUnpool2d`).
    ceil_mode : bool
        Round the output size up.

    Notes
    -----
    A :class:`~minitorch_accel.nn.Sequential` fuses or reorders a MaxPool2d with its
    neighbours (:meth:`~minitorch_accel.nn.Sequential.forward`) only with the default
    ``dilation``, ``return_indices`` and ``ceil_mode`` (:meth:`is_plain`).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> pool = nn.MaxPool2d(2, ceil_mode=True)
    >>> pool, pool(mta.ones(1, 1, 5, 5)).shape
    (MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=True), (1, 1, 3, 3))
    """

    # the settings and their repr are _MaxPoolNd's; here each is an int or a pair
    kernel_size: IntPair
    stride: IntPair
    padding: IntPair
    dilation: IntPair

    def is_plain(self) -> bool:
        """Whether every option but the kernel, stride and padding is PyTorch's default:
        the pooling that :class:`~minitorch_accel.nn.Sequential` may fuse or reorder.

        Examples
        --------
        >>> from minitorch_accel import nn
        >>> nn.MaxPool2d(2).is_plain(), nn.MaxPool2d(2, dilation=2).is_plain()
        (True, False)
        """
        return (
            _pair(self.dilation, "dilation") == (1, 1)
            and not self.return_indices
            and not self.ceil_mode
        )

    def forward(self, input: Tensor) -> Any:
        """Pool ``input`` (N, C, H, W) or (C, H, W); with ``return_indices``, return
        ``(values, indices)``.
        """
        return F.max_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.ceil_mode,
            self.return_indices,
        )


class AvgPool2d(MaxPool2d):
    """The mean over each ``kernel_size`` window; see
    :func:`~minitorch_accel.nn.functional.avg_pool2d`.

    Parameters
    ----------
    kernel_size, stride, padding
        As :class:`MaxPool2d`.
    ceil_mode : bool
        Round the output size up.
    count_include_pad : bool
        Divide by the whole window size, padding included (default, as PyTorch), or
        only by the number of input values in the window.
    divisor_override : int, optional
        Divide every window's sum by this instead.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.AvgPool2d(2, divisor_override=1)(mta.ones(1, 1, 2, 2)).tolist()
    [[[[4.0]]]]
    """

    def __init__(
        self,
        kernel_size: IntPair,
        stride: IntPair | None = None,
        padding: IntPair = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__(kernel_size, stride, padding, ceil_mode=ceil_mode)
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def is_plain(self) -> bool:
        """Whether ``ceil_mode`` and ``divisor_override`` keep PyTorch's defaults."""
        return not self.ceil_mode and self.divisor_override is None

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input`` (N, C, H, W) or (C, H, W)."""
        return F.avg_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )

    def extra_repr(self) -> str:
        """The settings, as PyTorch prints them."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Average-pool to a fixed output size whatever the input size; see
    :func:`~minitorch_accel.nn.functional.adaptive_avg_pool2d`.

    Parameters
    ----------
    output_size : int or (int, int)
        ``1`` gives global average pooling: (N, C, H, W) -> (N, C, 1, 1).
    """

    def __init__(self, output_size: IntPair) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input`` (N, C, H, W) to ``(N, C, *output_size)``."""
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"output_size={self.output_size}"
