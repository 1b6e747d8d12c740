"""``layer_norm``, ``group_norm`` and ``embedding``, written with Tensor ops (so their
gradients of every order come from those ops).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.tensor import Tensor
from .elementwise import where


def _normalize(x: Tensor, dims: tuple[int, ...], eps: float) -> Tensor:
    """``(x - mean) / sqrt(var + eps)`` over ``dims`` (biased variance, as PyTorch)."""
    mean = x.mean(dims, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(dims, keepdim=True)
    return centered * (var + eps).rsqrt()


def layer_norm(
    input: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over the last dims (those of ``normalized_shape``), then scale by
    ``weight`` and shift by ``bias`` (both of ``normalized_shape``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> y = mta.nn.functional.layer_norm(mta.tensor([[1.0, 3.0]]), 2)
    >>> [round(v, 3) for v in y[0].tolist()]
    [-1.0, 1.0]
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape) :]) != shape:
        raise ValueError(
            f"layer_norm: input of shape {input.shape} does not end with normalized_shape "
            f"{shape}; expected input (*, {', '.join(map(str, shape))})"
        )
    out = _normalize(input, tuple(range(input.ndim - len(shape), input.ndim)), eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Split the channels of ``input`` (N, C, ...) into ``num_groups`` groups, normalize
    each group of each sample, then apply a per-channel ``weight`` and ``bias``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.functional.group_norm(mta.randn(2, 4, 3), 2).shape
    (2, 4, 3)
    """
    if input.ndim < 2 or input.shape[1] % num_groups:
        raise ValueError(
            f"group_norm: input of shape {input.shape} needs (N, C, ...) with C divisible "
            f"by num_groups={num_groups}"
        )
    n, c = input.shape[0], input.shape[1]
    grouped = input.reshape(n, num_groups, -1)
    out = _normalize(grouped, (2,), eps).reshape(input.shape)
    channel_shape = (1, c) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(channel_shape)
    if bias is not None:
        out = out + bias.reshape(channel_shape)
    return out


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None) -> Tensor:
    """Rows of ``weight`` (num_embeddings, dim) picked by the integer ``input``: output
    ``input.shape + (dim,)``. Rows picked several times add up their gradients; the row
    ``padding_idx`` gets none.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.tensor([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]])
    >>> mta.nn.functional.embedding(mta.tensor([[2, 1]]), w).tolist()
    [[[3.0, 4.0], [1.0, 2.0]]]
    """
    if not isinstance(input, Tensor) or input.dtype.kind not in "iu":
        raise TypeError(
            "embedding: input must be an integer tensor of indices, got "
            + (f"{input.dtype}" if isinstance(input, Tensor) else type(input).__name__)
        )
    if input.numel() and (int(input.min()) < 0 or int(input.max()) >= weight.shape[0]):
        raise IndexError(
            f"embedding: indices must be in [0, {weight.shape[0] - 1}], got values from "
            f"{int(input.min())} to {int(input.max())}"
        )
    rows = weight[input]
    if padding_idx is None:
        return rows
    keep = (input != padding_idx).unsqueeze(-1)
    return where(keep, rows, rows.detach())
