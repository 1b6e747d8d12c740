"""Smaller layers of ``torch.nn.functional``, composed of differentiable Tensor ops.

Composed so that every order of gradient works on every backend:

- ``local_response_norm``: divide each channel by the activity of its neighbours;
- ``rms_norm``: scale the last dims to a root mean square of 1;
- ``glu``: one half of a dim gated by the sigmoid of the other;
- ``bilinear``: ``y[k] = x1 @ weight[k] @ x2 + bias[k]``;
- ``channel_shuffle``: interleave the channels of ``groups`` groups;
- ``embedding_bag``: the sum, mean or max of bags of embedding rows;
- ``alpha_dropout`` and ``feature_alpha_dropout``: dropout that keeps a SELU network's
  mean 0 and variance 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.function import on_input_device
from ..core.tensor import Tensor
from .dropout import Dropout
from .elementwise import where
from .pad import pad
from .shape import normalize_dim
from .tensor_methods import write_in_place


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """Divide each value by the activity of the ``size`` channels around it.

    AlexNet's local response normalization, as PyTorch's::

        y[n, c] = x[n, c] / (k + alpha / size * sum(x[n, c'] ** 2)) ** beta

    where ``c'`` runs over ``c - size // 2 ... c + (size - 1) // 2`` (channels outside
    ``0 ... C - 1`` count as 0, and the sum is still divided by ``size``).

    Parameters
    ----------
    input : Tensor
        (N, C, d1, ...), at least 3 dims.
    size : int
        Number of neighbouring channels in the window.
    alpha, beta, k : float
        Scale, exponent and additive constant of the divisor.

    Raises
    ------
    ValueError
        For an input of fewer than 3 dims (PyTorch raises it too).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.misc_layers import local_response_norm
    >>> y = local_response_norm(mta.ones(1, 3, 1), size=2, alpha=1.0, beta=1.0, k=0.0)
    >>> y.reshape(-1).tolist()  # 1 / (1/2 * (0 + 1)) for channel 0, 1 / (1/2 * 2) after
    [2.0, 1.0, 1.0]
    """
    if input.ndim < 3:
        raise ValueError(
            f"local_response_norm: Expected 3D or higher dimensionality input (got "
            f"{input.ndim} dimensions, shape {input.shape})"
        )
    if input.numel() == 0:
        return input
    channels = input.shape[1]
    widths = (0, 0) * (input.ndim - 2) + (size // 2, (size - 1) // 2)  # F.pad: last dim first
    squares = pad(input * input, widths)
    window = squares[:, 0:channels]
    for shift in range(1, size):
        window = window + squares[:, shift : shift + channels]
    return input / ((window / size) * alpha + k) ** beta


def _normalized_dims(
    op: str, input: Tensor, normalized_shape: int | Sequence[int]
) -> tuple[int, ...]:
    """The trailing dims of ``input`` that ``normalized_shape`` names, or a ValueError."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if input.ndim < len(shape) or tuple(input.shape[input.ndim - len(shape) :]) != shape:
        raise ValueError(
            f"{op}: input of shape {input.shape} does not end with normalized_shape "
            f"{shape}; expected input (*, {', '.join(map(str, shape))})"
        )
    return tuple(range(input.ndim - len(shape), input.ndim))


def rms_norm(
    input: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """``input / sqrt(mean(input ** 2) + eps) * weight``, the mean over the last dims
    (those of ``normalized_shape``), as ``torch.nn.functional.rms_norm``.

    Parameters
    ----------
    input : Tensor
        ``(*, *normalized_shape)``.
    normalized_shape : int or sequence of int
    weight : Tensor, optional
        Of ``normalized_shape``.
    eps : float, optional
        Added to the mean square; ``None`` (the default) takes the machine epsilon of
        ``input``'s dtype, as PyTorch (``torch.finfo(dtype).eps``).

    Raises
    ------
    ValueError
        If ``input`` does not end with ``normalized_shape`` (both named).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.misc_layers import rms_norm
    >>> rms_norm(mta.tensor([[2.0, -2.0, 2.0, 2.0]]), 4, eps=0.0).tolist()
    [[1.0, -1.0, 1.0, 1.0]]
    """
    dims = _normalized_dims("rms_norm", input, normalized_shape)
    if eps is None:
        eps = float(np.finfo(input.dtype).eps)
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """The gated linear unit: ``input`` split in halves ``a`` and ``b`` along ``dim``,
    then ``a * sigmoid(b)``.

    Raises
    ------
    ValueError
        For a 0-d input, or a ``dim`` of odd size (named). PyTorch raises RuntimeError.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.misc_layers import glu
    >>> glu(mta.tensor([[2.0, 4.0, 0.0, 100.0]])).tolist()
    [[1.0, 4.0]]
    """
    if input.ndim == 0:
        raise ValueError("glu does not support scalars because halving size must be even")
    dim = normalize_dim(dim, input.ndim, "glu")
    if input.shape[dim] % 2:
        raise ValueError(
            f"glu: Halving dimension must be even, but dimension {dim} is size "
            f"{input.shape[dim]} (input of shape {input.shape})"
        )
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., k] = sum_ij input1[..., i] * weight[k, i, j] * input2[..., j] + bias[k]``.

    Computed as one matrix product, ``input1 @ weight`` laid out as (in1, out * in2),
    then a sum over ``j`` of its product with ``input2``.

    Parameters
    ----------
    input1 : Tensor
        ``(*, in1_features)``.
    input2 : Tensor
        ``(*, in2_features)``, the same leading dims as ``input1``.
    weight : Tensor
        (out_features, in1_features, in2_features).
    bias : Tensor, optional
        (out_features,).

    Raises
    ------
    ValueError
        If the shapes do not fit (all of them named). PyTorch raises RuntimeError.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.misc_layers import bilinear
    >>> w = mta.tensor([[[1.0, 0.0], [0.0, 1.0]]])  # one output: the dot product
    >>> bilinear(mta.tensor([[1.0, 2.0]]), mta.tensor([[3.0, 4.0]]), w).tolist()
    [[11.0]]
    """
    fits = (
        weight.ndim == 3
        and input1.ndim >= 1
        and input1.shape[:-1] == input2.shape[:-1]
        and input1.shape[-1] == weight.shape[1]
        and input2.ndim >= 1
        and input2.shape[-1] == weight.shape[2]
    )
    if not fits:
        raise ValueError(
            f"bilinear: inputs of shapes {input1.shape} and {input2.shape} do not fit a weight "
            f"of shape {weight.shape}; expected (*, in1), (*, in2) and (out, in1, in2)"
        )
    out_features, in1, in2 = weight.shape
    if bias is not None and bias.shape != (out_features,):
        raise ValueError(
            f"bilinear: bias of shape {bias.shape} does not fit weight {weight.shape}; "
            f"expected ({out_features},)"
        )
    left = input1 @ weight.permute(1, 0, 2).reshape(in1, out_features * in2)
    left = left.reshape(*input1.shape[:-1], out_features, in2)
    out = (left * input2.unsqueeze(-2)).sum(-1)
    return out if bias is None else out + bias


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Split the C channels of ``input`` ``(N, C, *)`` into ``groups`` groups and interleave
    them: output channel ``c`` is input channel ``(c % groups) * (C // groups) + c //
    groups`` (ShuffleNet's shuffle).

    Raises
    ------
    ValueError
        For an input of 2 dims or fewer, ``groups`` below 1, or C not divisible by
        ``groups``. PyTorch raises RuntimeError.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.misc_layers import channel_shuffle
    >>> x = mta.arange(6.0).reshape(1, 6, 1)
    >>> channel_shuffle(x, 2).reshape(-1).tolist()
    [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    """
    if input.ndim <= 2:
        raise ValueError(
            f"channel_shuffle expects input with > 2 dims, but got input with sizes {input.shape}"
        )
    if groups <= 0:
        raise ValueError(
            "channel_shuffle: Number of groups to divide channels in must be positive. "
            f"Value of groups:{groups}"
        )
    n, c = input.shape[:2]
    if c % groups:
        raise ValueError(
            f"channel_shuffle: Number of channels must be divisible by groups. Got {c} "
            f"channels and {groups} groups (input of shape {input.shape})."
        )
    rest = input.shape[2:]
    grouped = input.reshape(n, groups, c // groups, *rest)
    return grouped.transpose(1, 2).reshape(input.shape)


_EMBEDDING_BAG_MODES = ("sum", "mean", "max")


def _bag_slots(input: Tensor, offsets: Tensor | None, include_last_offset: bool) -> Any:
    """The flat indices and, as an int array (B, L), the position in them of the
    ``l``-th index of bag ``b``, or ``len(flat)`` past the end of a shorter bag.
    """
    xp = input.xp
    if input.ndim == 2:
        bags, length = input.shape
        return input.reshape(-1), xp.arange(bags * length).reshape(bags, length)
    assert offsets is not None
    count, starts = input.shape[0], offsets.array.astype(np.int64)
    if starts.size and int(starts[0]) != 0:
        raise ValueError(
            "embedding_bag: offsets[0] has to be 0, i.e., the first sequence in the "
            f"mini-batch has to start from position 0. However, got {int(starts[0])}"
        )
    if starts.size and int(starts[-1]) > count:
        raise ValueError(
            f"embedding_bag: offsets[-1] can not be greater than input's length ({count}), "
            f"but got offsets[-1] of {int(starts[-1])}"
        )
    ends = starts[1:] if include_last_offset else xp.concatenate([starts[1:], xp.asarray([count])])
    starts = starts[: len(ends)]
    lengths = ends - starts
    if lengths.size and int(lengths.min()) < 0:
        raise ValueError(f"embedding_bag: offsets must not decrease, got {offsets.tolist()}")
    longest = max(int(lengths.max()) if lengths.size else 0, 1)
    step = xp.arange(longest)
    slots = xp.where(step < lengths[:, None], starts[:, None] + step, count)
    return input, slots


@on_input_device  # its index arrays are made on the device of ``input``
def embedding_bag(  # noqa: C901  (PyTorch's argument checks, one after another)
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """The sum, mean or max of each bag of rows of ``weight`` (num_embeddings, dim),
    without building the (bags, length, dim) tensor of :func:`embedding` first in
    PyTorch (here it is built: this is the readable version).

    Bags are given either as a 2-D ``input`` (B, L), one bag of L indices per row, or
    as a 1-D ``input`` with ``offsets`` (B,), the start of each bag in it (the last bag
    runs to the end; with ``include_last_offset`` ``offsets`` has B + 1 entries and the
    last one ends the last bag: PyTorch expects ``len(input)`` there, and where it is
    smaller its CPU modes disagree about the indices after it, which are left out
    here). Indices equal to ``padding_idx`` are left out of their bag (not counted by
    ``mean``); an empty bag gives zeros.

    Parameters
    ----------
    input : Tensor
        Integer indices, (B, L) or (n,).
    weight : Tensor
        (num_embeddings, embedding_dim).
    offsets : Tensor, optional
        Integer starts of the bags of a 1-D ``input``; None for a 2-D one.
    mode : {"sum", "mean", "max"}
    per_sample_weights : Tensor, optional
        A weight per index, ``input``'s shape; ``mode="sum"`` only. Differentiable.
    include_last_offset : bool
    padding_idx : int, optional
        Negative values count from the end, as PyTorch.
    max_norm, norm_type, scale_grad_by_freq, sparse
        PyTorch's; only their defaults are supported here (NotImplementedError).

    Returns
    -------
    Tensor
        (B, embedding_dim). The gradient of ``mode="max"`` goes to the first maximal
        row of each bag and component, as PyTorch's.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.misc_layers import embedding_bag
    >>> w = mta.tensor([[1.0, 1.0], [2.0, 0.0], [0.0, 4.0]])
    >>> x, starts = mta.tensor([0, 1, 2, 2]), mta.tensor([0, 1])
    >>> embedding_bag(x, w, starts, mode="sum").tolist()
    [[1.0, 1.0], [2.0, 8.0]]
    >>> embedding_bag(x, w, starts, mode="max").tolist()
    [[1.0, 1.0], [2.0, 4.0]]
    """
    if not isinstance(input, Tensor) or input.dtype.kind not in "iu":
        raise TypeError(
            "embedding_bag: input must be an integer tensor of indices, got "
            + (f"{input.dtype}" if isinstance(input, Tensor) else type(input).__name__)
        )
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError(
            "embedding_bag: max_norm, scale_grad_by_freq and sparse are not supported; "
            "leave them at their defaults"
        )
    if mode not in _EMBEDDING_BAG_MODES:
        raise ValueError(f"embedding_bag: mode has to be one of sum, mean or max, got {mode!r}")
    if weight.ndim != 2:
        raise ValueError(f"embedding_bag: weight has to be a 2D Tensor, got shape {weight.shape}")
    if per_sample_weights is not None and per_sample_weights.shape != input.shape:
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}')."
        )
    if input.ndim == 2 and offsets is not None:
        raise ValueError(
            "embedding_bag: if input is 2D, then offsets has to be None, as input is "
            f"treated as a mini-batch of fixed length sequences; got offsets of shape "
            f"{offsets.shape}"
        )
    if input.ndim == 1 and (offsets is None or offsets.ndim != 1):
        got = "None" if offsets is None else f"shape {offsets.shape}"
        raise ValueError(f"embedding_bag: offsets has to be a 1D Tensor for a 1-D input, got {got}")
    if input.ndim not in (1, 2):
        raise ValueError(f"embedding_bag: input has to be 1D or 2D, got shape {input.shape}")
    num_embeddings = weight.shape[0]
    if input.numel() and (int(input.min()) < 0 or int(input.max()) >= num_embeddings):
        raise IndexError(
            f"embedding_bag: indices must be in [0, {num_embeddings - 1}], got values from "
            f"{int(input.min())} to {int(input.max())}"
        )
    if padding_idx is not None:
        if not -num_embeddings <= padding_idx < num_embeddings:
            raise ValueError(
                f"embedding_bag: padding_idx {padding_idx} must be within the number of "
                f"embeddings ({num_embeddings})"
            )
        padding_idx %= num_embeddings

    flat, slots = _bag_slots(input, offsets, include_last_offset)
    xp, count = input.xp, flat.shape[0]
    ids = xp.concatenate([flat.array, xp.zeros(1, flat.array.dtype)])[slots]  # (B, L)
    present = slots < count
    if padding_idx is not None:
        present &= ids != padding_idx
    members = Tensor._make(present, input.device, False, None).unsqueeze(-1)  # (B, L, 1)
    slot_index = Tensor._make(slots, input.device, False, None)
    rows = weight[Tensor._make(ids, input.device, False, None)]  # (B, L, dim)
    if mode == "max":
        largest = where(members, rows, -math.inf).max(1).values
        return where(members.any(1), largest, 0.0)
    if per_sample_weights is not None:
        scales = _pad_one(per_sample_weights.reshape(-1))[slot_index]  # (B, L)
        rows = rows * scales.unsqueeze(-1)
    total = where(members, rows, 0.0).sum(1)
    if mode == "sum":
        return total
    sizes = Tensor._make(present.sum(1, keepdims=True), input.device, False, None)
    return total / sizes.clamp(min=1).to(dtype=total.dtype)


def _pad_one(values: Tensor) -> Tensor:
    """``values`` (n,) with one 0 appended: what the past-the-end slots read."""
    return pad(values, (0, 1))


_SELU_ALPHA_TIMES_SCALE = 1.7580993408473766  # the value alpha dropout sets: -selu(-inf)


def _alpha_drop(input: Tensor, p: float, training: bool, mask_shape: tuple[int, ...]) -> Tensor:
    """Alpha dropout, one keep-or-drop decision per element of ``mask_shape``.

    The mask broadcasts over ``input``; PyTorch's formula::

        a = 1 / sqrt((alpha ** 2 * p + 1) * (1 - p))
        y = a * x + alpha * a * p             where kept
        y = -alpha * a + alpha * a * p        where dropped
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0.0 or not training or input.numel() == 0:
        return input
    if input.dtype.kind != "f":
        raise TypeError(f"alpha_dropout: input must be floating point, got {input.dtype}")
    if p == 1.0:
        return input * 0.0
    alpha = _SELU_ALPHA_TIMES_SCALE
    a = 1.0 / math.sqrt((alpha * alpha * p + 1.0) * (1.0 - p))
    device = input.device
    generator = device.backend.generator(device)
    with device.backend.device_context(device):
        keep = generator.random(mask_shape, dtype=np.float32) >= np.float32(p)
        dtype = input.dtype.type
        shift = (keep.astype(input.dtype) - dtype(1)) * dtype(alpha * a) + dtype(alpha * a * p)
    return Dropout.apply(input, keep=keep, scale=a) + Tensor._make(shift, device, False, None)


def _in_place(input: Tensor, compute: Any, inplace: bool, name: str) -> Tensor:
    return (
        write_in_place(input, compute, f"{name}(inplace=True)", False)
        if inplace
        else compute(input)
    )


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Dropout for self-normalizing (SELU) networks.

    Each element is set, with probability ``p``, to SELU's saturation value ``-alpha``
    (``alpha = 1.7580993408473766``) instead of 0, then all are mapped by the affine
    ``a * v + b`` that keeps a mean of 0 and a variance of 1::

        a = 1 / sqrt((alpha ** 2 * p + 1) * (1 - p)),    b = alpha * a * p

    As PyTorch, ``training`` defaults to False (the identity) and ``p == 1`` gives
    zeros. The mask comes from the generator of ``input``'s device
    (:func:`minitorch_accel.manual_seed`).

    Parameters
    ----------
    input : Tensor
    p : float
        Probability of dropping an element, in ``[0, 1]``.
    training : bool
    inplace : bool
        Write the result into ``input`` (computed out of place first).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.misc_layers import alpha_dropout
    >>> y = alpha_dropout(mta.zeros(1000), p=0.5, training=True)
    >>> sorted({round(v, 4) for v in y.tolist()})  # dropped, kept (a * 0 + b)
    [-0.7792, 0.7792]
    """
    return _in_place(
        input, lambda x: _alpha_drop(x, p, training, x.shape), inplace, "alpha_dropout"
    )


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """:func:`alpha_dropout` with one decision per channel: each ``input[n, c]`` (all its
    trailing dims) is dropped or kept whole.

    Raises
    ------
    ValueError
        If ``p`` is outside ``[0, 1]``, or (when it applies) ``input`` has fewer than 2
        dims (PyTorch raises RuntimeError).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.misc_layers import feature_alpha_dropout
    >>> y = feature_alpha_dropout(mta.zeros(2, 50, 3), p=0.5, training=True)
    >>> all(len(set(channel)) == 1 for channel in y.reshape(100, 3).tolist())
    True
    """

    def compute(x: Tensor) -> Tensor:
        if training and 0.0 < p < 1.0 and x.numel() and x.ndim < 2:
            raise ValueError(
                f"Feature dropout requires at least 2 dimensions in the input, got {x.shape}"
            )
        return _alpha_drop(x, p, training, x.shape[:2] + (1,) * (x.ndim - 2))

    return _in_place(input, compute, inplace, "feature_alpha_dropout")


__all__ = [
    "alpha_dropout",
    "bilinear",
    "channel_shuffle",
    "embedding_bag",
    "feature_alpha_dropout",
    "glu",
    "local_response_norm",
    "rms_norm",
]
