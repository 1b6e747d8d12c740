"""Power-average pooling, as ``torch.nn.functional``'s ``lp_pool1d``/``2d``/``3d``.

``y = (sum over each window of x ** p) ** (1 / p)``, written as PyTorch writes it (so that
values and gradients are PyTorch's, zeros and NaN included): average pooling of
``x ** p`` (no padding, ``count_include_pad``), its negative values cut to zero through
``sign(out) * relu(abs(out))``, times the kernel size, to the power ``1 / p``. With
``ceil_mode`` a last, partial window is averaged over its own size and then multiplied
by the whole kernel size, as PyTorch does. ``p = inf`` is max pooling of ``abs(x)``,
``p = -inf`` minus max pooling of ``-abs(x)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..core.tensor import Tensor
from .elementwise import relu
from .pool import avg_pool2d, max_pool2d
from .pool1d import avg_pool1d, max_pool1d
from .pool3d import avg_pool3d, max_pool3d
from .pool_general import Ints, as_tuple
from .unary import sign


def lp_pool(
    name: str,
    dims: int,
    input: Tensor,
    norm_type: float,
    kernel_size: Ints,
    stride: Ints | None,
    ceil_mode: bool,
) -> Tensor:
    """Power-average pooling over the last ``dims`` dims (see the module's docstring).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> lp_pool("lp_pool1d", 1, mta.tensor([[[3.0, 4.0]]]), 2, 2, None, False).tolist()
    [[[5.0]]]
    """
    if not isinstance(norm_type, (int, float)) or norm_type == 0 or norm_type != norm_type:
        raise ValueError(f"{name}: norm_type must be a non-zero number, got {norm_type!r}")
    pools: dict[int, tuple[Callable[..., Any], Callable[..., Any]]] = {
        1: (max_pool1d, avg_pool1d),
        2: (max_pool2d, avg_pool2d),
        3: (max_pool3d, avg_pool3d),
    }
    max_pool, avg_pool = pools[dims]
    if norm_type == math.inf:
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)  # type: ignore[no-any-return]
    if norm_type == -math.inf:
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)  # type: ignore[no-any-return]
    out: Tensor = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    window = math.prod(as_tuple(kernel_size, dims, "kernel_size"))
    return (sign(out) * relu(out.abs())).mul(window).pow(1.0 / norm_type)


def lp_pool1d(
    input: Tensor,
    norm_type: float,
    kernel_size: Ints,
    stride: Ints | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """Power-average pooling over the last dim, as ``torch.nn.functional.lp_pool1d``:
    ``(sum over each window of x ** p) ** (1 / p)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> lp_pool1d(mta.tensor([[[3.0, 4.0, 6.0, 8.0]]]), 2, 2).tolist()
    [[[5.0, 10.0]]]
    """
    return lp_pool("lp_pool1d", 1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(
    input: Tensor,
    norm_type: float,
    kernel_size: Ints,
    stride: Ints | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """Power-average pooling over the last two dims, as
    ``torch.nn.functional.lp_pool2d``: ``(sum over each window of x ** p) ** (1 / p)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> lp_pool2d(mta.full((1, 1, 2, 2), 2.0), 1, 2).tolist()
    [[[[8.0]]]]
    """
    return lp_pool("lp_pool2d", 2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(
    input: Tensor,
    norm_type: float,
    kernel_size: Ints,
    stride: Ints | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """Power-average pooling over the last three dims, as
    ``torch.nn.functional.lp_pool3d``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> lp_pool3d(mta.full((1, 1, 2, 2, 2), 0.5), 2, 2).tolist()
    [[[[[1.4142135381698608]]]]]
    """
    return lp_pool("lp_pool3d", 3, input, norm_type, kernel_size, stride, ceil_mode)


__all__ = ["lp_pool", "lp_pool1d", "lp_pool2d", "lp_pool3d"]
