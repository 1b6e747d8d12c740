"""``Conv1d``: convolution over sequences (N, C, L)."""

from __future__ import annotations

from ..backends import DeviceLike
from ..core.convert import DTypeLike
from ..core.tensor import Tensor
from . import functional as F
from .conv_layers import conv_parameters, reset_conv_parameters
from .module import Module
from .parameter import Parameter


class Conv1d(Module):
    """1-D convolution: :func:`~minitorch_accel.nn.functional.conv1d` with a learned
    ``weight`` (out_channels, in_channels // groups, kernel_size) and ``bias``,
    initialized as PyTorch's (U(-k, k), ``k = 1 / sqrt(in_channels // groups * kernel_size)``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.Conv1d(2, 4, 3, padding=1)(mta.zeros(5, 2, 10)).shape
    (5, 4, 10)
    """

    weight: Parameter
    bias: Parameter | None

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        dilation: int = 1,
        groups: int = 1,
        bias: bool = True,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        self.in_channels, self.out_channels, self.kernel_size = (
            in_channels,
            out_channels,
            kernel_size,
        )
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        self.weight, self.bias = conv_parameters(
            "Conv1d", in_channels, out_channels, (kernel_size,), groups, bias, device, dtype
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw new initial weights (and bias) as the constructor does."""
        reset_conv_parameters(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        """Convolve ``input`` (N, in_channels, L), or one (in_channels, L) signal."""
        if input.ndim not in (2, 3) or input.shape[-2] != self.in_channels:
            raise ValueError(
                f"Conv1d({self.in_channels}, {self.out_channels}) expects input of shape "
                f"(N, {self.in_channels}, L) or ({self.in_channels}, L), got {input.shape}"
            )
        return F.conv1d(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, padding={self.padding}"
        )
