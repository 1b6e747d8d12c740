"""Adaptive max pooling, as ``torch.nn.functional.adaptive_max_pool2d``.

Output row ``i`` of ``OH`` covers input rows ``floor(i*H/OH)`` to ``ceil((i+1)*H/OH) - 1``
(PyTorch's bins, the same as :func:`~minitorch_accel.ops.pool.adaptive_avg_pool2d`'s;
columns alike), so neighbouring bins may overlap and differ in size by one. Each bin is
read through a fixed number of taps, the largest bin's size, a smaller bin repeating its
last row or column (which changes neither its maximum nor which element is first).

The output is the input read at each bin's maximum, through
:class:`~minitorch_accel.ops.index.Gather` on the flattened image, whose gradient adds
each output's gradient onto that element (as PyTorch's backward does) and whose own
gradient reads it back, so derivatives of every order work. As in PyTorch, the maximum
of a bin is its first largest element in row-major order, and in a bin holding NaN its
last NaN (the output is NaN).
"""

from __future__ import annotations

from typing import Any, Literal, overload

import numpy as np

from ..core.tensor import Tensor
from .index import Gather
from .pool import adaptive_bins

OptionalPair = int | None | tuple[int | None, int | None]
"""An output size: an int for both dims, or a pair whose None entries keep the input's."""


def bin_taps(size: int, out: int) -> np.ndarray:
    """(out, taps) input positions of PyTorch's adaptive bins
    (:func:`~minitorch_accel.ops.pool.adaptive_bins`), each bin's last position repeated
    up to the largest bin's length.

    Examples
    --------
    >>> bin_taps(5, 3).tolist()  # bins [0, 1], [1, 2, 3] and [3, 4]
    [[0, 1, 1], [1, 2, 3], [3, 4, 4]]
    """
    bins = np.array(adaptive_bins(size, out), dtype=np.int64).reshape(out, 2)
    start, stop = bins[:, :1], bins[:, 1:]
    longest = int((stop - start).max(initial=1))
    return np.minimum(start + np.arange(longest), stop - 1)  # type: ignore[no-any-return]


def max_positions(xp: Any, x: Any, rows: Any, cols: Any) -> Any:
    """The flat index ``h * W + w`` of each bin's maximum: the first largest element, or in
    a bin holding NaN its last NaN (PyTorch's rule: ``val > best or isnan(val)``).
    """
    height, width = x.shape[-2:]
    flat = rows[:, None, :, None] * width + cols[None, :, None, :]  # (OH, OW, taps_h, taps_w)
    flat = flat.reshape(rows.shape[0], cols.shape[0], -1)  # each bin's taps in row-major order
    values = x.reshape(*x.shape[:-2], height * width)[..., flat]  # (..., OH, OW, taps)
    best = values.max(axis=-1, keepdims=True)  # NaN where the bin holds one
    first = xp.argmax(values == best, axis=-1)
    nans = values != values
    last_nan = nans.shape[-1] - 1 - xp.argmax(nans[..., ::-1], axis=-1)
    tap = xp.where(nans.any(axis=-1), last_nan, first)
    return flat[xp.arange(rows.shape[0])[:, None], xp.arange(cols.shape[0]), tap]


def _output_size(input: Tensor, output_size: OptionalPair) -> tuple[int, int]:
    if isinstance(output_size, (int, np.integer)) or output_size is None:
        output_size = (output_size, output_size)
    if len(output_size) != 2:
        raise ValueError(
            f"adaptive_max_pool2d: output_size must be an int or a pair, got {output_size!r}"
        )
    oh, ow = (input.shape[-2 + k] if s is None else int(s) for k, s in enumerate(output_size))
    if min(oh, ow) < 0:
        raise ValueError(f"adaptive_max_pool2d: output_size {(oh, ow)} must not be negative")
    return oh, ow


def adaptive_max_pool2d_with_indices(
    input: Tensor, output_size: OptionalPair, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """Adaptive max pooling that also returns where each maximum was, as
    ``torch.nn.functional.adaptive_max_pool2d_with_indices``.

    Returns
    -------
    (Tensor, Tensor)
        The pooled values (N, C, OH, OW) and the int64 flat index ``h * W + w`` of each
        value in its input image (as ``max_unpool2d`` takes them).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> values, indices = adaptive_max_pool2d_with_indices(mta.arange(6.0).reshape(1, 2, 3), 1)
    >>> values.tolist(), indices.tolist()
    ([[[5.0]]], [[[5]]])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"adaptive_max_pool2d: input must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (3, 4):
        raise ValueError(
            f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {list(input.shape)}"
        )
    for d in range(1, input.ndim):
        if input.shape[d] == 0:
            raise ValueError(
                "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {list(input.shape)} with dimension {d} "
                "being empty"
            )
    if input.dtype.kind != "f":
        raise TypeError(f"adaptive_max_pool2d: input must be floating point, got {input.dtype}")
    (h, w), (oh, ow) = input.shape[-2:], _output_size(input, output_size)
    xp, lead = input.xp, input.shape[:-2]
    with input.device.guard():
        if oh == 0 or ow == 0:
            where = xp.zeros((*lead, oh, ow), np.int64)
        else:
            rows, cols = xp.asarray(bin_taps(h, oh)), xp.asarray(bin_taps(w, ow))
            where = max_positions(xp, input.array, rows, cols).astype(np.int64)
        indices = Tensor._make(where, input.device, False, None)
    flat_index = indices.reshape(*lead, oh * ow)
    values = Gather.apply(input.reshape(*lead, h * w), flat_index, dim=input.ndim - 2)
    return values.reshape(*lead, oh, ow), indices


@overload
def adaptive_max_pool2d(
    input: Tensor, output_size: OptionalPair, return_indices: Literal[False] = False
) -> Tensor: ...


@overload
def adaptive_max_pool2d(
    input: Tensor, output_size: OptionalPair, return_indices: Literal[True]
) -> tuple[Tensor, Tensor]: ...


@overload
def adaptive_max_pool2d(
    input: Tensor, output_size: OptionalPair, return_indices: bool
) -> Tensor | tuple[Tensor, Tensor]: ...


def adaptive_max_pool2d(
    input: Tensor, output_size: OptionalPair, return_indices: bool = False
) -> Tensor | tuple[Tensor, Tensor]:
    """Max-pool (N, C, H, W) or (C, H, W) to ``output_size``, as PyTorch's function.

    Output row ``i`` takes the maximum over input rows ``floor(i*H/OH)`` to
    ``ceil((i+1)*H/OH) - 1`` (columns alike). The gradient of each output goes to its
    maximum: the first largest element of its bin, or its last NaN.

    Parameters
    ----------
    input : Tensor
        (N, C, H, W) or (C, H, W), floating point.
    output_size : int or (int or None, int or None)
        (OH, OW); None keeps the input's size along that dim.
    return_indices : bool
        Also return the flat index ``h * W + w`` of each maximum.

    Returns
    -------
    Tensor or (Tensor, Tensor)

    Raises
    ------
    ValueError
        Input neither 3-D nor 4-D or with an empty non-batch dim, an output size that is
        negative or not a pair (PyTorch raises RuntimeError).
    TypeError
        Input not floating point.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> adaptive_max_pool2d(mta.arange(16.0).reshape(1, 1, 4, 4), 2).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    values, indices = adaptive_max_pool2d_with_indices(input, output_size)
    return (values, indices) if return_indices else values


__all__ = [
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "bin_taps",
    "max_positions",
]
