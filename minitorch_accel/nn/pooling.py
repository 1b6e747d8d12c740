"""Pooling layers beyond the 2-d ones of :mod:`~minitorch_accel.nn.conv_layers`, as
PyTorch's: 1-d and 3-d max and average pooling, 1-d and 3-d adaptive pooling, max
unpooling and power-average (LP) pooling. Each holds its settings and calls its
function; ``repr`` prints them as PyTorch does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.tensor import Tensor
from ..ops.lp_pool import lp_pool1d, lp_pool2d, lp_pool3d
from ..ops.pool1d import adaptive_avg_pool1d, adaptive_max_pool1d, avg_pool1d, max_pool1d
from ..ops.pool3d import adaptive_avg_pool3d, avg_pool3d, max_pool3d
from ..ops.pool_general import Ints, as_tuple
from ..ops.unpool import max_unpool1d, max_unpool2d, max_unpool3d
from .module import Module


class _MaxPoolNd(Module):
    """Max pooling's settings, stored and printed as PyTorch's ``_MaxPoolNd``."""

    def __init__(
        self,
        kernel_size: Ints,
        stride: Ints | None = None,
        padding: Ints = 0,
        dilation: Ints = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        """The settings, as PyTorch prints them."""
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """The maximum over each window of the last dim; see
    :func:`~minitorch_accel.ops.pool1d.max_pool1d`.

    Parameters
    ----------
    kernel_size, stride, padding, dilation : int
        ``stride`` defaults to ``kernel_size``.
    return_indices : bool
        Also return the index of each maximum (for :class:`MaxUnpool1d`).
    ceil_mode : bool
        Round the output length up.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.MaxPool1d(2)(mta.tensor([[[1.0, 3.0, 2.0, 5.0]]])).tolist()
    [[[3.0, 5.0]]]
    """

    def forward(self, input: Tensor) -> Any:
        """Pool ``input`` (N, C, L) or (C, L)."""
        return max_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.ceil_mode,
            self.return_indices,
        )


class MaxPool3d(_MaxPoolNd):
    """The maximum over each window of the last three dims; see
    :func:`~minitorch_accel.ops.pool3d.max_pool3d`. Parameters as :class:`MaxPool1d`,
    each an int or three ints.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.MaxPool3d(2)(mta.arange(8.0).reshape(1, 1, 2, 2, 2)).tolist()
    [[[[[7.0]]]]]
    """

    def forward(self, input: Tensor) -> Any:
        """Pool ``input`` (N, C, D, H, W) or (C, D, H, W)."""
        return max_pool3d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.ceil_mode,
            self.return_indices,
        )


class AvgPool1d(Module):
    """The mean over each window of the last dim; see
    :func:`~minitorch_accel.ops.pool1d.avg_pool1d`. Its settings are stored as 1-tuples,
    as PyTorch's.

    Parameters
    ----------
    kernel_size, stride, padding : int
    ceil_mode, count_include_pad : bool

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.AvgPool1d(2)
    >>> layer, layer(mta.tensor([[[1.0, 3.0, 2.0, 6.0]]])).tolist()
    (AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,)), [[[2.0, 4.0]]])
    """

    def __init__(
        self,
        kernel_size: Ints,
        stride: Ints | None = None,
        padding: Ints = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = as_tuple(kernel_size, 1, "kernel_size")
        self.stride = self.kernel_size if stride is None else as_tuple(stride, 1, "stride")
        self.padding = as_tuple(padding, 1, "padding")
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input`` (N, C, L) or (C, L)."""
        return avg_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )

    def extra_repr(self) -> str:
        """The settings, as PyTorch prints them."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(Module):
    """The mean over each window of the last three dims; see
    :func:`~minitorch_accel.ops.pool3d.avg_pool3d`.

    Parameters
    ----------
    kernel_size, stride, padding : int or (int, int, int)
    ceil_mode, count_include_pad : bool
    divisor_override : int, optional

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.AvgPool3d(2)(mta.arange(8.0).reshape(1, 1, 2, 2, 2)).tolist()
    [[[[[3.5]]]]]
    """

    def __init__(
        self,
        kernel_size: Ints,
        stride: Ints | None = None,
        padding: Ints = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input`` (N, C, D, H, W) or (C, D, H, W)."""
        return avg_pool3d(
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


class AdaptiveAvgPool1d(Module):
    """Average-pool the last dim to ``output_size`` whatever its length; see
    :func:`~minitorch_accel.ops.pool1d.adaptive_avg_pool1d`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.AdaptiveAvgPool1d(1)(mta.tensor([[[1.0, 3.0, 2.0, 6.0]]])).tolist()
    [[[3.0]]]
    """

    def __init__(self, output_size: Ints) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input`` (N, C, L) or (C, L)."""
        return adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self) -> str:
        """The output size, as PyTorch prints it."""
        return f"output_size={self.output_size}"


class AdaptiveAvgPool3d(AdaptiveAvgPool1d):
    """Average-pool the last three dims to ``output_size``; see
    :func:`~minitorch_accel.ops.pool3d.adaptive_avg_pool3d`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.AdaptiveAvgPool3d(1)(mta.arange(8.0).reshape(1, 1, 2, 2, 2)).tolist()
    [[[[[3.5]]]]]
    """

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input`` (N, C, D, H, W) or (C, D, H, W)."""
        return adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool1d(Module):
    """Max-pool the last dim to ``output_size`` whatever its length; see
    :func:`~minitorch_accel.ops.pool1d.adaptive_max_pool1d`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.AdaptiveMaxPool1d(1, return_indices=True)(mta.tensor([[[1.0, 3.0, 2.0]]]))[1].tolist()
    [[[1]]]
    """

    def __init__(self, output_size: Ints, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        """``input`` (N, C, L) or (C, L) pooled (and the indices, with ``return_indices``)."""
        return adaptive_max_pool1d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        """The output size, as PyTorch prints it."""
        return f"output_size={self.output_size}"


class _MaxUnpoolNd(Module):
    """Max unpooling's settings, as tuples of ``dims`` ints (as PyTorch stores them)."""

    dims = 1

    def __init__(self, kernel_size: Ints, stride: Ints | None = None, padding: Ints = 0) -> None:
        super().__init__()
        self.kernel_size = as_tuple(kernel_size, self.dims, "kernel_size")
        steps = kernel_size if stride is None else stride
        self.stride = as_tuple(steps, self.dims, "stride")
        self.padding = as_tuple(padding, self.dims, "padding")

    def extra_repr(self) -> str:
        """The settings, as PyTorch prints them."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of :class:`MaxPool1d`; see
    :func:`~minitorch_accel.ops.unpool.max_unpool1d`. ``forward(input, indices,
    output_size=None)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> values, indices = nn.MaxPool1d(2, return_indices=True)(mta.tensor([[[1.0, 3.0]]]))
    >>> nn.MaxUnpool1d(2)(values, indices).tolist()
    [[[0.0, 3.0]]]
    """

    def forward(
        self, input: Tensor, indices: Tensor, output_size: Sequence[int] | None = None
    ) -> Tensor:
        """Unpool ``input`` (N, C, L) or (C, L) at ``indices``."""
        return max_unpool1d(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of :class:`~minitorch_accel.nn.MaxPool2d`; see
    :func:`~minitorch_accel.ops.unpool.max_unpool2d`. ``forward(input, indices,
    output_size=None)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> x = mta.arange(4.0).reshape(1, 1, 2, 2)
    >>> nn.MaxUnpool2d(2)(*nn.MaxPool2d(2, return_indices=True)(x)).tolist()
    [[[[0.0, 0.0], [0.0, 3.0]]]]
    """

    dims = 2

    def forward(
        self, input: Tensor, indices: Tensor, output_size: Sequence[int] | None = None
    ) -> Tensor:
        """Unpool ``input`` (N, C, H, W) or (C, H, W) at ``indices``."""
        return max_unpool2d(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of :class:`MaxPool3d`; see
    :func:`~minitorch_accel.ops.unpool.max_unpool3d`.

    Examples
    --------
    >>> from minitorch_accel import nn
    >>> nn.MaxUnpool3d(2)
    MaxUnpool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0))
    """

    dims = 3

    def forward(
        self, input: Tensor, indices: Tensor, output_size: Sequence[int] | None = None
    ) -> Tensor:
        """Unpool ``input`` (N, C, D, H, W) or (C, D, H, W) at ``indices``."""
        return max_unpool3d(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )


class _LPPoolNd(Module):
    """Power-average pooling's settings, stored and printed as PyTorch's."""

    def __init__(
        self,
        norm_type: float,
        kernel_size: Ints,
        stride: Ints | None = None,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        """The settings, as PyTorch prints them."""
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    """``(sum over each window of x ** p) ** (1 / p)`` along the last dim; see
    :func:`~minitorch_accel.ops.lp_pool.lp_pool1d`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.LPPool1d(2, 2)(mta.tensor([[[3.0, 4.0]]])).tolist()
    [[[5.0]]]
    """

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input`` (N, C, L) or (C, L)."""
        return lp_pool1d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """``(sum over each window of x ** p) ** (1 / p)`` over the last two dims; see
    :func:`~minitorch_accel.ops.lp_pool.lp_pool2d`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.LPPool2d(1, 2)(mta.ones(1, 1, 2, 2)).tolist()
    [[[[4.0]]]]
    """

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input`` (N, C, H, W) or (C, H, W)."""
        return lp_pool2d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class LPPool3d(_LPPoolNd):
    """``(sum over each window of x ** p) ** (1 / p)`` over the last three dims; see
    :func:`~minitorch_accel.ops.lp_pool.lp_pool3d`.

    Examples
    --------
    >>> from minitorch_accel import nn
    >>> nn.LPPool3d(2, 3)
    LPPool3d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        """Pool ``input`` (N, C, D, H, W) or (C, D, H, W)."""
        return lp_pool3d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AvgPool1d",
    "AvgPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "MaxPool1d",
    "MaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
]
