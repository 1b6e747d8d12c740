"""Max unpooling, the partial inverse of max pooling, as ``torch.nn.functional``'s
``max_unpool1d``/``2d``/``3d``.

Each value of ``input`` is written into a zero output at the flat index (within its
plane: ``l``, ``h * W + w``, ``d * H * W + h * W + w``) that the max pooling returned
with ``return_indices=True``; the rest stays zero. The output is
:class:`~minitorch_accel.ops.index.Scatter` of a zero tensor, whose gradient reads each
value's gradient back from its index (as PyTorch's), so derivatives of every order work.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..core.tensor import Tensor
from .index import Scatter
from .pool_general import Ints, as_tuple


def unpool_output_size(
    in_size: tuple[int, ...],
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    output_size: Sequence[int] | None,
) -> tuple[int, ...]:
    """The output size of max unpooling, as PyTorch's ``_unpool_output_size``: by default
    ``(n - 1) * stride - 2 * padding + kernel`` per dim; a given ``output_size`` (the
    pooled dims, or with N and C in front) must lie strictly within ``stride`` of it.

    Examples
    --------
    >>> unpool_output_size((2, 2), (2, 2), (2, 2), (0, 0), None)
    (4, 4)
    >>> unpool_output_size((2, 2), (2, 2), (2, 2), (0, 0), (1, 1, 5, 5))
    (5, 5)
    """
    default = tuple(
        (n - 1) * s + k - 2 * p for n, k, s, p in zip(in_size, kernel, stride, padding, strict=True)
    )
    if output_size is None:
        return default
    size = tuple(int(n) for n in output_size)
    if len(size) == len(kernel) + 2:
        size = size[2:]
    if len(size) != len(kernel):
        raise ValueError(
            f"output_size should be a sequence containing {len(kernel)} or {len(kernel) + 2} "
            f"elements, but it has a length of '{len(size)}'"
        )
    for d, (n, m, s) in enumerate(zip(size, default, stride, strict=True)):
        if not m - s < n < m + s:
            raise ValueError(
                f'invalid output_size "{tuple(output_size)}" (dim {d} must be between '
                f"{m - s} and {m + s})"
            )
    return size


def max_unpool(
    name: str,
    dims: int,
    input: Tensor,
    indices: Tensor,
    kernel_size: Ints,
    stride: Ints | None = None,
    padding: Ints = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """Max unpooling over the last ``dims`` dims (see the module's docstring).

    Raises
    ------
    TypeError
        ``input`` not a floating-point tensor, ``indices`` not an int64 tensor.
    ValueError
        Shapes that differ or have the wrong number of dims, a bad ``output_size``, an
        index outside the output plane (checking it reads one bool back from the device).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> max_unpool("max_unpool1d", 1, mta.tensor([[[5.0, 7.0]]]), mta.tensor([[[1, 2]]]), 2)
    tensor([[[0., 5., 7., 0.]]])
    """
    if not isinstance(input, Tensor) or input.dtype.kind != "f":
        raise TypeError(f"{name}: input must be a floating-point Tensor, got {input!r:.60}")
    if not isinstance(indices, Tensor) or str(indices.dtype) != "int64":
        raise TypeError(
            f"{name}: indices must be an int64 Tensor (as max pooling returns them), "
            f"got {getattr(indices, 'dtype', type(indices).__name__)}"
        )
    if input.ndim not in (dims + 1, dims + 2) or indices.shape != input.shape:
        raise ValueError(
            f"{name}: expected a {dims + 1}-D or {dims + 2}-D input and indices of its shape, "
            f"got input {input.shape} and indices {indices.shape}"
        )
    kernel = as_tuple(kernel_size, dims, "kernel_size")
    steps = kernel if stride is None else as_tuple(stride, dims, "stride")
    pads = as_tuple(padding, dims, "padding")
    if output_size is not None and isinstance(output_size, int):
        output_size = (output_size,) * dims
    size = unpool_output_size(input.shape[-dims:], kernel, steps, pads, output_size)
    lead, plane = input.shape[: input.ndim - dims], math.prod(size)
    flat_index = indices.reshape(*lead, -1)
    with input.device.guard():
        outside = (flat_index.array < 0) | (flat_index.array >= plane)
        if bool(outside.any()):
            raise ValueError(
                f"{name}: found an invalid max index {int(flat_index.array[outside][0])} "
                f"(output planes are of size {'x'.join(map(str, size))}); pass the "
                "output_size the pooled input had"
            )
    with input.device.guard():
        zeros = Tensor._make(input.xp.zeros((*lead, plane), input.dtype), input.device, False, None)
    out = Scatter.apply(zeros, flat_index, input.reshape(*lead, -1), dim=len(lead))
    return out.reshape(*lead, *size)


def max_unpool1d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Ints,
    stride: Ints | None = None,
    padding: Ints = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """The partial inverse of ``max_pool1d``, as ``torch.nn.functional.max_unpool1d``:
    zeros with ``input[..., l]`` at ``indices[..., l]``. Where ``indices`` repeats a
    position, which value wins is not specified (as in PyTorch).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.pool1d import max_pool1d
    >>> values, indices = max_pool1d(mta.tensor([[[1.0, 3.0, 2.0, 5.0]]]), 2, return_indices=True)
    >>> max_unpool1d(values, indices, 2).tolist()
    [[[0.0, 3.0, 0.0, 5.0]]]
    """
    return max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Ints,
    stride: Ints | None = None,
    padding: Ints = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """The partial inverse of ``max_pool2d``, as ``torch.nn.functional.max_unpool2d``:
    zeros with each value at its index ``h * W + w``; ``output_size`` (``(H, W)`` or
    ``(N, C, H, W)``) resolves the sizes that pool to the same shape.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.pool import max_pool2d
    >>> x = mta.arange(16.0).reshape(1, 1, 4, 4)
    >>> values, indices = max_pool2d(x, 2, return_indices=True)
    >>> max_unpool2d(values, indices, 2)[0, 0].tolist()[:2]
    [[0.0, 0.0, 0.0, 0.0], [0.0, 5.0, 0.0, 7.0]]
    """
    return max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Ints,
    stride: Ints | None = None,
    padding: Ints = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """The partial inverse of ``max_pool3d``, as ``torch.nn.functional.max_unpool3d``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> max_unpool3d(mta.ones(1, 1, 1, 1), mta.tensor([[[[7]]]]), 2).sum().item()
    1.0
    """
    return max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)


__all__ = ["max_unpool", "max_unpool1d", "max_unpool2d", "max_unpool3d", "unpool_output_size"]
