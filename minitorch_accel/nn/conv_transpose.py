"""``ConvTranspose1d`` and ``ConvTranspose2d``: learned transposed convolutions, the
layers that grow an image (a decoder's, a GAN generator's upsampling).

The weight is (in_channels, out_channels // groups, *kernel_size): the weight of the
convolution from out_channels to in_channels whose input gradient this layer computes
(see :mod:`~minitorch_accel.ops.conv_transpose`), so it is made, and initialized, as
that convolution's (``fan_in`` from its dim 1 and the kernel, as in PyTorch).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..backends import DeviceLike
from ..core import factories
from ..core.convert import DTypeLike
from ..core.tensor import Tensor
from ..ops.conv_transpose import (
    _ints,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose_output_size,
)
from .conv_layers import conv_parameters, reset_conv_parameters
from .module import Module
from .parameter import Parameter

IntTuple = int | tuple[int, ...]


class _ConvTransposeNd(Module):
    """What the 1-D and 2-D layers share: parameters, ``output_size``, repr."""

    dims: int = 0  # number of spatial dims, set by each subclass
    weight: Parameter
    bias: Parameter | None

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: IntTuple,
        stride: IntTuple = 1,
        padding: IntTuple = 0,
        output_padding: IntTuple = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: IntTuple = 1,
        padding_mode: str = "zeros",
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        if padding_mode != "zeros":
            raise ValueError(
                f'{name}: only "zeros" padding mode is supported, got '
                f"padding_mode={padding_mode!r} (as in PyTorch, whose transposed "
                "convolutions refuse the others too)"
            )
        if not isinstance(groups, int) or groups < 1:
            raise ValueError(f"{name}: groups must be a positive integer, got {groups!r}")
        for what, channels in (("in_channels", in_channels), ("out_channels", out_channels)):
            if channels % groups:
                raise ValueError(
                    f"{name}: {what} ({channels}) must be divisible by groups ({groups})"
                )
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = self._ints(kernel_size, "kernel_size")
        if min(in_channels, out_channels, *self.kernel_size) < 1:
            raise ValueError(
                f"{name}: in_channels, out_channels and every kernel size must be >= 1, got "
                f"{name}({in_channels}, {out_channels}, kernel_size={kernel_size})"
            )
        self.stride = self._ints(stride, "stride")
        self.padding = self._ints(padding, "padding")
        self.output_padding = self._ints(output_padding, "output_padding")
        self.dilation = self._ints(dilation, "dilation")
        self.padding_mode = padding_mode
        # The convolution from out_channels to in_channels: its weight is ours.
        self.weight, _ = conv_parameters(
            name, out_channels, in_channels, self.kernel_size, groups, False, device, dtype
        )
        self.bias = (
            Parameter(factories.empty(out_channels, device=device, dtype=dtype)) if bias else None
        )
        self.reset_parameters()

    def _ints(self, value: IntTuple, what: str) -> tuple[int, ...]:
        return _ints(type(self).__name__, what, value, self.dims)

    def reset_parameters(self) -> None:
        """Draw new initial weights (and bias) as the constructor does: PyTorch's
        U(-k, k), ``k = 1 / sqrt(out_channels // groups * prod(kernel_size))``.
        """
        reset_conv_parameters(self.weight, self.bias)

    def _check_input(self, input: Tensor) -> None:
        shape = tuple(getattr(input, "shape", ()))
        spatial = "L" if self.dims == 1 else "H, W"
        if len(shape) not in (self.dims + 1, self.dims + 2) or shape[-self.dims - 1] != (
            self.in_channels
        ):
            raise ValueError(
                f"{type(self).__name__}({self.in_channels}, {self.out_channels}) expects "
                f"input of shape (N, {self.in_channels}, {spatial}) or "
                f"({self.in_channels}, {spatial}), got {shape}"
            )

    def _output_padding(self, input: Tensor, output_size: Sequence[int] | None) -> tuple[int, ...]:
        """``output_padding``, or the one that gives ``output_size`` (PyTorch's rule:
        the spatial sizes, optionally after the batch and channel sizes, each at most
        ``stride - 1`` above the smallest output size).
        """
        if output_size is None:
            return self.output_padding
        name, dims = type(self).__name__, self.dims
        leading = input.ndim - dims  # 1 unbatched, 2 batched
        sizes = [int(s) for s in output_size]
        if len(sizes) == leading + dims:
            sizes = sizes[leading:]
        if len(sizes) != dims:
            raise ValueError(
                f"{name}: for {input.ndim}-D input, output_size must have {dims} or "
                f"{leading + dims} elements (got {len(sizes)})"
            )
        no_padding = (0,) * dims
        smallest = conv_transpose_output_size(
            input.shape[leading:],
            self.kernel_size,
            self.stride,
            self.padding,
            no_padding,
            self.dilation,
        )
        largest = [size + s - 1 for size, s in zip(smallest, self.stride, strict=True)]
        if any(not lo <= s <= hi for s, lo, hi in zip(sizes, smallest, largest, strict=True)):
            raise ValueError(
                f"{name}: requested an output size of {sizes}, but valid sizes range from "
                f"{list(smallest)} to {largest} (for an input of {list(input.shape[leading:])})"
            )
        return tuple(s - lo for s, lo in zip(sizes, smallest, strict=True))

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``, as PyTorch's."""
        text = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        for what, default in (("padding", 0), ("dilation", 1), ("output_padding", 0)):
            value = getattr(self, what)
            if value != (default,) * self.dims:
                text += f", {what}={value}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text

    def _settings(self, input: Tensor, output_size: Sequence[int] | None) -> dict[str, Any]:
        """The functional form's keyword arguments for this call."""
        self._check_input(input)
        return {
            "stride": self.stride,
            "padding": self.padding,
            "output_padding": self._output_padding(input, output_size),
            "groups": self.groups,
            "dilation": self.dilation,
        }


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution ("deconvolution"):
    :func:`~minitorch_accel.nn.functional.conv_transpose2d` with a learned weight and
    bias, as ``torch.nn.ConvTranspose2d``.

    Each input pixel adds a copy of the kernel, scaled by its value, into the output,
    ``stride`` pixels apart: (N, C_in, H, W) -> (N, C_out, H_out, W_out) with
    ``H_out = (H - 1)*stride - 2*padding + dilation*(KH - 1) + output_padding + 1``.

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size : int or (int, int)
    stride, padding, output_padding, dilation : int or (int, int)
        As :func:`~minitorch_accel.nn.functional.conv_transpose2d`.
    groups : int
        Both channel counts must divide by it.
    bias : bool
    padding_mode : {"zeros"}
        The only mode, as in PyTorch's transposed convolutions; others raise.
    device, dtype : optional

    Attributes
    ----------
    weight : Parameter
        (in_channels, out_channels // groups, kh, kw), from U(-k, k) with
        ``k = 1 / sqrt(out_channels // groups * kh * kw)``.
    bias : Parameter or None
        (out_channels,), from the same U(-k, k).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> up = mta.nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)
    >>> up
    ConvTranspose2d(8, 4, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), output_padding=(1, 1))
    >>> up(mta.zeros(5, 8, 7, 7)).shape  # twice the size
    (5, 4, 14, 14)
    >>> up = mta.nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1)
    >>> up(mta.zeros(5, 8, 7, 7), output_size=(14, 14)).shape
    (5, 4, 14, 14)
    """

    dims = 2

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        """Transpose-convolve ``input`` (N, in_channels, H, W) or (in_channels, H, W);
        ``output_size`` ((H_out, W_out), optionally after N and C) picks the
        ``output_padding`` that gives it.
        """
        return conv_transpose2d(input, self.weight, self.bias, **self._settings(input, output_size))


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over (N, C_in, L) sequences:
    :func:`~minitorch_accel.nn.functional.conv_transpose1d` with a learned weight
    (in_channels, out_channels // groups, kernel_size) and bias, as
    ``torch.nn.ConvTranspose1d`` (same arguments and initialization as
    :class:`ConvTranspose2d`, with one int per setting).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> up = mta.nn.ConvTranspose1d(2, 4, 4, stride=2, padding=1)
    >>> up
    ConvTranspose1d(2, 4, kernel_size=(4,), stride=(2,), padding=(1,))
    >>> up(mta.zeros(3, 2, 10)).shape
    (3, 4, 20)
    """

    dims = 1

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        """Transpose-convolve ``input`` (N, in_channels, L) or (in_channels, L);
        ``output_size`` ((L_out,), optionally after N and C) picks the
        ``output_padding`` that gives it.
        """
        return conv_transpose1d(input, self.weight, self.bias, **self._settings(input, output_size))


__all__ = ["ConvTranspose1d", "ConvTranspose2d"]
