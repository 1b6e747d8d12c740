"""Scaled dot-product attention, as ``torch.nn.functional.scaled_dot_product_attention``.

The reference implementation is PyTorch's own formulation, composed of differentiable
ops (so gradients of every order come from them)::

    scores = query @ key.T * scale + bias      # bias: 0 where attending, -inf where not
    weights = softmax(scores, dim=-1)          # rows that are all -inf give 0 (see below)
    output = dropout(weights, dropout_p) @ value

A boolean ``attn_mask`` (True = may attend) and ``is_causal`` become the additive
``bias``; a float ``attn_mask`` is the bias itself. As in PyTorch's math path the bias
is *added* (a NaN or ``+inf`` score stays NaN under a mask), never written over the
scores.

**A fully masked row** (every score ``-inf``: every key masked out) gives an output row
of 0 and gradients of 0, as PyTorch's math path on the CPU does since 2.5 (its
``_safe_softmax``): :class:`AttentionSoftmax` with ``safe=True``. A plain softmax gives
NaN there; :class:`~minitorch_accel.nn.MultiheadAttention` with ``need_weights=True``
uses the plain one, as PyTorch's does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.tensor import Tensor
from .dropout import dropout
from .reduce import Softmax, normalize_dims


class AttentionSoftmax(Softmax):
    """Softmax over ``dim`` whose rows of only ``-inf`` give 0 when ``safe`` (PyTorch's
    ``_safe_softmax``), else NaN (a plain softmax). The backward is softmax's,
    ``s * (grad - (grad * s).sum(dim))``, with the zeroed ``s``: 0 in such rows.
    """

    def forward(self, a: Any, *, dim: int, safe: bool = True) -> Any:
        xp = self.xp
        with np.errstate(invalid="ignore"):  # -inf - -inf: NaN, replaced below when safe
            out = super().forward(a, dim=dim)
        if safe:
            masked_rows = (a == -np.inf).all(axis=dim, keepdims=True)
            out = xp.where(masked_rows, out.dtype.type(0), out)
        return out


def attention_softmax(scores: Tensor, safe: bool = True) -> Tensor:
    """Softmax over the last dim of ``scores``; with ``safe``, a row of only ``-inf``
    gives 0 instead of NaN (see :class:`AttentionSoftmax`).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> inf = float("inf")
    >>> attention_softmax(mta.tensor([[0.0, 0.0], [-inf, -inf]])).tolist()
    [[0.5, 0.5], [0.0, 0.0]]
    """
    return AttentionSoftmax.apply(scores, dim=normalize_dims(-1, scores.ndim)[0], safe=safe)


def mask_as_bias(
    mask: Tensor, dtype: Any, name: str = "attn_mask", true_attends: bool = True
) -> Tensor:
    """An additive attention bias from ``mask``: a boolean one becomes 0 where a query
    may attend and ``-inf`` where not, in ``dtype`` (True means *may attend* as in
    ``scaled_dot_product_attention``, or with ``true_attends=False`` *may not*, as in
    ``MultiheadAttention``); a float one is returned as it is.

    Raises
    ------
    TypeError
        If ``mask`` is neither boolean nor floating point.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mask_as_bias(mta.tensor([True, False]), mta.float32).tolist()
    [0.0, -inf]
    >>> mask_as_bias(mta.tensor([True, False]), mta.float32, true_attends=False).tolist()
    [-inf, 0.0]
    """
    if mask.dtype == np.bool_:
        zero, minus_inf = np.dtype(dtype).type(0), np.dtype(dtype).type(-np.inf)
        with mask.device.guard():
            if true_attends:
                bias = mask.xp.where(mask.array, zero, minus_inf)
            else:
                bias = mask.xp.where(mask.array, minus_inf, zero)
        return Tensor._make(bias, mask.device, False, None)
    if mask.dtype.kind != "f":
        raise TypeError(f"{name} must be a bool or floating-point tensor, got {mask.dtype}")
    return mask


def causal_bias(query_len: int, key_len: int, like: Tensor) -> Tensor:
    """The ``(L, S)`` bias of a causal mask aligned to the upper left (query ``i`` sees
    keys ``0..i``), as ``ones(L, S).tril()`` in PyTorch: 0 on and below the diagonal,
    ``-inf`` above it, of ``like``'s dtype and device.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> causal_bias(2, 3, mta.zeros(1)).tolist()
    [[0.0, -inf, -inf], [0.0, 0.0, -inf]]
    """
    with like.device.guard():
        keep = like.xp.tril(like.xp.ones((query_len, key_len), dtype=bool))
    return mask_as_bias(Tensor._make(keep, like.device, False, None), like.dtype)


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(query @ key.T * scale + bias) @ value`` over the last two dims.

    Parameters
    ----------
    query : Tensor
        ``(..., L, E)``: any leading (batch, head) dims, broadcast against the others'.
    key : Tensor
        ``(..., S, E)``.
    value : Tensor
        ``(..., S, Ev)``.
    attn_mask : Tensor, optional
        Broadcastable to ``(..., L, S)``. Boolean: True where a query may attend to a
        key (the opposite of ``MultiheadAttention``'s masks). Float: added to the scores.
    dropout_p : float
        Dropout probability on the attention weights, always applied when above 0 (as
        PyTorch: pass 0.0 in evaluation); the mask comes from the device's generator.
    is_causal : bool
        Query ``i`` attends to keys ``0..i`` (aligned to the upper left, as PyTorch's);
        cannot be combined with ``attn_mask``.
    scale : float, optional
        Multiplies the scores; ``1 / sqrt(E)`` by default.
    enable_gqa : bool
        Grouped-query attention: ``key`` and ``value`` have ``Hkv`` heads in dim -3,
        each shared by ``Hq / Hkv`` consecutive query heads (``Hq % Hkv == 0``).

    Returns
    -------
    Tensor
        ``(..., L, Ev)``. A query whose every key is masked out gets a row of 0 (and
        gradients 0), as PyTorch's math path on the CPU.

    Raises
    ------
    ValueError
        If the shapes do not fit (naming them), ``attn_mask`` is given with
        ``is_causal``, ``dropout_p`` is outside ``[0, 1]``, or GQA's heads do not divide.
    TypeError
        If the inputs are not floating point, or the mask neither bool nor float.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> import minitorch_accel.nn.functional as F
    >>> q, k, v = mta.randn(2, 4, 3, 8), mta.randn(2, 4, 5, 8), mta.randn(2, 4, 5, 6)
    >>> F.scaled_dot_product_attention(q, k, v, is_causal=True).shape
    (2, 4, 3, 6)
    >>> keys = mta.tensor([[1.0], [2.0]])
    >>> F.scaled_dot_product_attention(keys, keys, keys, is_causal=True).tolist()[0]
    [1.0]
    """
    _check_inputs(query, key, value, attn_mask, dropout_p, is_causal)
    if enable_gqa:
        if key.ndim >= 3 and value.ndim >= 3 and key.shape[-3] != value.shape[-3]:
            raise ValueError(
                "scaled_dot_product_attention: enable_gqa needs key and value with as many "
                f"heads (dim -3), got {key.shape} and {value.shape}"
            )
        key, value = _share_heads(query, key), _share_heads(query, value)
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = query @ key.transpose(-2, -1) * scale
    if is_causal:
        scores = scores + causal_bias(query.shape[-2], key.shape[-2], scores)
    elif attn_mask is not None:
        if not _broadcasts_to(attn_mask.shape, scores.shape):
            raise ValueError(
                f"scaled_dot_product_attention: attn_mask of shape {attn_mask.shape} does "
                f"not broadcast to the attention scores' shape (..., L, S) = {scores.shape}"
            )
        scores = scores + mask_as_bias(attn_mask, scores.dtype)
    weights = attention_softmax(scores, safe=True)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return weights @ value


def _check_inputs(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    is_causal: bool,
) -> None:
    name = "scaled_dot_product_attention"
    for label, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: {label} must be a Tensor, got {type(t).__name__}")
        if t.ndim < 2:
            raise ValueError(
                f"{name}: {label} must have at least 2 dims (..., L, E), got {t.shape}"
            )
        if t.dtype.kind != "f":
            raise TypeError(f"{name}: {label} must be floating point, got {t.dtype}")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            f"{name}: query {query.shape} and key {key.shape} must share the last dim E"
        )
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(
            f"{name}: key {key.shape} and value {value.shape} must share the sequence dim S"
        )
    if is_causal and attn_mask is not None:
        raise ValueError(f"{name}: give attn_mask or is_causal=True, not both")
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"{name}: dropout_p must be in [0, 1], got {dropout_p}")


def _broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


def _share_heads(query: Tensor, kv: Tensor) -> Tensor:
    """``kv`` (..., Hkv, S, E) with each head repeated ``Hq / Hkv`` times in place
    (``repeat_interleave`` along dim -3), for grouped-query attention.
    """
    if query.ndim < 3 or kv.ndim < 3:
        raise ValueError(
            "scaled_dot_product_attention: enable_gqa needs a head dim (..., H, L, E); "
            f"got query {query.shape} and key/value {kv.shape}"
        )
    heads, kv_heads = query.shape[-3], kv.shape[-3]
    if heads % kv_heads:
        raise ValueError(
            f"scaled_dot_product_attention: enable_gqa needs the query's heads ({heads}) "
            f"to be a multiple of the key's and value's heads ({kv_heads}); shapes "
            f"{query.shape} and {kv.shape}"
        )
    lead, (seq, features) = kv.shape[:-3], kv.shape[-2:]
    grouped = kv.unsqueeze(-3).expand(*lead, kv_heads, heads // kv_heads, seq, features)
    return grouped.reshape(*lead, heads, seq, features)


__all__ = [
    "AttentionSoftmax",
    "attention_softmax",
    "causal_bias",
    "mask_as_bias",
    "scaled_dot_product_attention",
]
