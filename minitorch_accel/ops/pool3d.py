"""3-d pooling over (N, C, D, H, W) or (C, D, H, W), as ``torch.nn.functional``'s
``*_pool3d``.

Max and average pooling run the general path of :mod:`~minitorch_accel.ops.pool_general`
over the last three dims (indices ``d * H * W + h * W + w``). Adaptive average pooling is
separable: the mean of each of PyTorch's bins along depth, then height, then width
(:func:`~minitorch_accel.ops.pool.bin_means`, which the 2-d pooling uses too).
"""

from __future__ import annotations

from typing import Any, Literal, overload

from ..core.function import Function
from ..core.tensor import Tensor
from .pool import bin_means, bin_shares
from .pool_general import Ints, as_tuple, avg_pool, max_pool_with_indices


@overload
def max_pool3d(
    input: Tensor,
    kernel_size: Ints,
    stride: Ints | None = None,
    padding: Ints = 0,
    dilation: Ints = 1,
    ceil_mode: bool = False,
    return_indices: Literal[False] = False,
) -> Tensor: ...


@overload
def max_pool3d(
    input: Tensor,
    kernel_size: Ints,
    stride: Ints | None,
    padding: Ints,
    dilation: Ints,
    ceil_mode: bool,
    return_indices: Literal[True],
) -> tuple[Tensor, Tensor]: ...


@overload
def max_pool3d(
    input: Tensor,
    kernel_size: Ints,
    stride: Ints | None = None,
    padding: Ints = 0,
    dilation: Ints = 1,
    ceil_mode: bool = False,
    *,
    return_indices: Literal[True],
) -> tuple[Tensor, Tensor]: ...


@overload
def max_pool3d(
    input: Tensor,
    kernel_size: Ints,
    stride: Ints | None = None,
    padding: Ints = 0,
    dilation: Ints = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor | tuple[Tensor, Tensor]: ...


def max_pool3d(
    input: Tensor,
    kernel_size: Ints,
    stride: Ints | None = None,
    padding: Ints = 0,
    dilation: Ints = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """Max pooling over the last three dims, as ``torch.nn.functional.max_pool3d``;
    options, gradient and NaN rules as :func:`~minitorch_accel.ops.pool.max_pool2d`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> max_pool3d(mta.arange(8.0).reshape(1, 1, 2, 2, 2), 2, return_indices=True)[1].tolist()
    [[[[[7]]]]]
    """
    values, indices = max_pool3d_with_indices(
        input, kernel_size, stride, padding, dilation, ceil_mode
    )
    return (values, indices) if return_indices else values


def max_pool3d_with_indices(
    input: Tensor,
    kernel_size: Ints,
    stride: Ints | None = None,
    padding: Ints = 0,
    dilation: Ints = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """:func:`max_pool3d` returning ``(values, indices)``, as PyTorch's function of that
    name (``return_indices`` is ignored).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> max_pool3d_with_indices(mta.arange(8.0).reshape(1, 2, 2, 2), 2)[0].tolist()
    [[[[7.0]]]]
    """
    return max_pool_with_indices(
        "max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode
    )


def avg_pool3d(
    input: Tensor,
    kernel_size: Ints,
    stride: Ints | None = None,
    padding: Ints = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Average pooling over the last three dims, as ``torch.nn.functional.avg_pool3d``;
    options as :func:`~minitorch_accel.ops.pool.avg_pool2d`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> avg_pool3d(mta.arange(8.0).reshape(1, 1, 2, 2, 2), 2).tolist()
    [[[[[3.5]]]]]
    """
    return avg_pool(
        "avg_pool3d",
        3,
        input,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
    )


class AdaptiveAvgPoolNd(Function):
    """The mean of each of PyTorch's adaptive bins over the last ``len(output_size)`` dims."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, x: Any, *, output_size: tuple[int, ...]) -> Any:
        self.in_size = tuple(x.shape[-len(output_size) :])
        return bin_means(self.xp, x, output_size)

    def backward(self, grad_output: Tensor) -> Tensor:
        return AdaptiveAvgPoolNdBackward.apply(grad_output, in_size=self.in_size)


class AdaptiveAvgPoolNdBackward(Function):
    """Each bin's gradient shared by its elements; adjoint of :class:`AdaptiveAvgPoolNd`."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, grad_y: Any, *, in_size: tuple[int, ...]) -> Any:
        self.output_size = tuple(grad_y.shape[-len(in_size) :])
        return bin_shares(self.xp, grad_y, in_size)

    def backward(self, grad_output: Tensor) -> Tensor:
        return AdaptiveAvgPoolNd.apply(grad_output, output_size=self.output_size)


def adaptive_avg_pool3d(input: Tensor, output_size: Ints) -> Tensor:
    """Average-pool (N, C, D, H, W) or (C, D, H, W) to ``output_size``, as PyTorch's
    function: along each dim, output ``i`` of ``out`` averages input ``floor(i*n/out)``
    to ``ceil((i+1)*n/out) - 1``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> adaptive_avg_pool3d(mta.arange(8.0).reshape(1, 1, 2, 2, 2), 1).tolist()
    [[[[[3.5]]]]]
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"adaptive_avg_pool3d: input must be a Tensor, got {type(input).__name__}")
    out = as_tuple(output_size, 3, "output_size")
    if input.ndim not in (4, 5) or 0 in input.shape[1:] or min(out) < 1:
        raise ValueError(
            f"adaptive_avg_pool3d: expected a non-empty 4-D or 5-D input and a positive "
            f"output_size, got input {input.shape} and output_size {out}"
        )
    if input.dtype.kind != "f":
        raise TypeError(f"adaptive_avg_pool3d: input must be floating point, got {input.dtype}")
    return AdaptiveAvgPoolNd.apply(input, output_size=out)


__all__ = [
    "AdaptiveAvgPoolNd",
    "AdaptiveAvgPoolNdBackward",
    "adaptive_avg_pool3d",
    "avg_pool3d",
    "max_pool3d",
    "max_pool3d_with_indices",
]
