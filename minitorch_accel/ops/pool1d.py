"""1-d pooling over (N, C, L) or (C, L), as ``torch.nn.functional``'s ``*_pool1d``.

Max and average pooling run the general path of
:mod:`~minitorch_accel.ops.pool_general` over the last dim; the adaptive pools are the
2-d ones on a unit height, ``(N, C, 1, L)``, which is how PyTorch computes them (same bins,
same maxima, indices ``0 * L + l = l``).
"""

from __future__ import annotations

from typing import Literal, overload

from ..core.tensor import Tensor
from .adaptive_max import adaptive_max_pool2d_with_indices
from .pool import adaptive_avg_pool2d
from .pool_general import Ints, as_tuple, avg_pool, max_pool_with_indices


@overload
def max_pool1d(
    input: Tensor,
    kernel_size: Ints,
    stride: Ints | None = None,
    padding: Ints = 0,
    dilation: Ints = 1,
    ceil_mode: bool = False,
    return_indices: Literal[False] = False,
) -> Tensor: ...


@overload
def max_pool1d(
    input: Tensor,
    kernel_size: Ints,
    stride: Ints | None,
    padding: Ints,
    dilation: Ints,
    ceil_mode: bool,
    return_indices: Literal[True],
) -> tuple[Tensor, Tensor]: ...


@overload
def max_pool1d(
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
def max_pool1d(
    input: Tensor,
    kernel_size: Ints,
    stride: Ints | None = None,
    padding: Ints = 0,
    dilation: Ints = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor | tuple[Tensor, Tensor]: ...


def max_pool1d(
    input: Tensor,
    kernel_size: Ints,
    stride: Ints | None = None,
    padding: Ints = 0,
    dilation: Ints = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """Max pooling over the last dim, as ``torch.nn.functional.max_pool1d``.

    ``y[..., i] = max over t < kernel_size of x[..., i*stride + t*dilation - padding]``
    (padding never wins); options, gradient and NaN rules as
    :func:`~minitorch_accel.ops.pool.max_pool2d`, indices ``l`` along the signal.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0]]])
    >>> max_pool1d(x, 2).tolist(), max_pool1d(x, 2, ceil_mode=True, return_indices=True)[1].tolist()
    ([[[3.0, 5.0]]], [[[1, 3, 4]]])
    """
    values, indices = max_pool1d_with_indices(
        input, kernel_size, stride, padding, dilation, ceil_mode
    )
    return (values, indices) if return_indices else values


def max_pool1d_with_indices(
    input: Tensor,
    kernel_size: Ints,
    stride: Ints | None = None,
    padding: Ints = 0,
    dilation: Ints = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """:func:`max_pool1d` returning ``(values, indices)``, as PyTorch's function of that
    name (``return_indices`` is ignored).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> max_pool1d_with_indices(mta.tensor([[2.0, 1.0, 0.0, 3.0]]), 2)[1].tolist()
    [[0, 3]]
    """
    return max_pool_with_indices(
        "max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode
    )


def avg_pool1d(
    input: Tensor,
    kernel_size: Ints,
    stride: Ints | None = None,
    padding: Ints = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """Average pooling over the last dim, as ``torch.nn.functional.avg_pool1d``: each
    window's sum over ``kernel_size`` (``count_include_pad``) or over its count of
    elements inside the input; a ``ceil_mode`` window past the padding counts only its
    taps inside the input and the padding, as PyTorch's.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> avg_pool1d(mta.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0]]]), 2, ceil_mode=True).tolist()
    [[[2.0, 3.5, 4.0]]]
    """
    return avg_pool(
        "avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode, count_include_pad
    )


def _signal(name: str, input: Tensor, output_size: Ints) -> int:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (2, 3):
        raise ValueError(
            f"{name}: expected a 2-D (C, L) or 3-D (N, C, L) input, got shape {input.shape}"
        )
    return as_tuple(output_size, 1, "output_size")[0]


def adaptive_avg_pool1d(input: Tensor, output_size: Ints) -> Tensor:
    """Average-pool (N, C, L) or (C, L) to length ``output_size``, as PyTorch's function:
    output ``i`` averages ``floor(i*L/out)`` to ``ceil((i+1)*L/out) - 1``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> adaptive_avg_pool1d(mta.tensor([[[1.0, 3.0, 2.0, 6.0]]]), 2).tolist()
    [[[2.0, 4.0]]]
    """
    out = _signal("adaptive_avg_pool1d", input, output_size)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, out)).squeeze(-2)


def adaptive_max_pool1d_with_indices(
    input: Tensor, output_size: Ints, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """Adaptive max pooling over the last dim with the int64 index of each maximum, as
    PyTorch's function of that name (``return_indices`` is ignored).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> adaptive_max_pool1d_with_indices(mta.tensor([[1.0, 3.0, 2.0, 6.0]]), 2)[1].tolist()
    [[1, 3]]
    """
    out = _signal("adaptive_max_pool1d", input, output_size)
    values, indices = adaptive_max_pool2d_with_indices(input.unsqueeze(-2), (1, out))
    return values.squeeze(-2), indices.squeeze(-2)


@overload
def adaptive_max_pool1d(
    input: Tensor, output_size: Ints, return_indices: Literal[False] = False
) -> Tensor: ...


@overload
def adaptive_max_pool1d(
    input: Tensor, output_size: Ints, return_indices: Literal[True]
) -> tuple[Tensor, Tensor]: ...


@overload
def adaptive_max_pool1d(
    input: Tensor, output_size: Ints, return_indices: bool
) -> Tensor | tuple[Tensor, Tensor]: ...


def adaptive_max_pool1d(
    input: Tensor, output_size: Ints, return_indices: bool = False
) -> Tensor | tuple[Tensor, Tensor]:
    """Max-pool (N, C, L) or (C, L) to length ``output_size``, as PyTorch's function:
    output ``i`` is the maximum of ``floor(i*L/out)`` to ``ceil((i+1)*L/out) - 1`` (its
    first maximum, or its last NaN, takes the gradient).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> adaptive_max_pool1d(mta.tensor([[[1.0, 3.0, 2.0, 6.0]]]), 2).tolist()
    [[[3.0, 6.0]]]
    """
    values, indices = adaptive_max_pool1d_with_indices(input, output_size)
    return (values, indices) if return_indices else values


__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "avg_pool1d",
    "max_pool1d",
    "max_pool1d_with_indices",
]
