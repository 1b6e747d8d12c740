"""``MultiheadAttention``: attention with ``num_heads`` heads, as ``torch.nn``'s.

The inputs are projected (``in_proj_weight``, one ``(3 E, E)`` matrix, or
``q_proj_weight``/``k_proj_weight``/``v_proj_weight`` when the key's or value's size
differs), split into ``num_heads`` heads of ``E / num_heads`` features, attended
(:func:`~minitorch_accel.nn.functional.scaled_dot_product_attention`), joined and
projected again (``out_proj``). Parameters, their names and ``state_dict`` keys, and the
masks' meaning are PyTorch's: in ``key_padding_mask`` and ``attn_mask`` a boolean True
means *may not attend* (the opposite of ``scaled_dot_product_attention``'s), a float
mask is added to the scores.

A query whose every key is masked out gets NaN with ``need_weights=True`` (a plain
softmax) and 0 with ``need_weights=False`` (through ``scaled_dot_product_attention``),
as PyTorch's module computes it while training or recording gradients.

Differences from PyTorch: shape errors are ``ValueError`` naming the shapes (PyTorch
raises ``AssertionError`` or ``RuntimeError``). There is no inference fast path: PyTorch
takes one in evaluation mode without gradients (batch_first self-attention, an even
number of heads, ...); its numbers equal these up to rounding except for a fully masked
query with ``need_weights=False``, NaN there and 0 here. ``F.multi_head_attention_forward``
and its ``static_k``/``static_v`` are not offered.
"""

from __future__ import annotations

import math
from typing import Any

from ..backends import DeviceLike
from ..core import factories
from ..core.convert import DTypeLike
from ..core.tensor import Tensor
from ..ops.attention import attention_softmax, mask_as_bias, scaled_dot_product_attention
from ..ops.dropout import dropout as dropout_op
from ..ops.shape import cat
from . import functional as F
from . import init
from .linear import Linear
from .module import Module
from .parameter import Parameter


class MultiheadAttention(Module):
    """Multi-head attention (Vaswani et al., 2017), with PyTorch's parameters.

    ``out = concat(head_1, ..., head_h) @ out_proj.weight.T + out_proj.bias`` where
    ``head_i = softmax(q_i @ k_i.T / sqrt(d) + mask) @ v_i`` and ``q, k, v`` are the
    projected query, key and value split into heads of ``d = embed_dim / num_heads``.

    Parameters
    ----------
    embed_dim : int
        Size E of the query and the output.
    num_heads : int
        Number of heads; must divide ``embed_dim``.
    dropout : float
        Dropout on the attention weights while training.
    bias : bool
        Learn ``in_proj_bias`` and ``out_proj.bias`` (zeros at first).
    add_bias_kv : bool
        Append learned ``bias_k``/``bias_v`` (1, 1, E) to the keys and values.
    add_zero_attn : bool
        Append a key and a value of zeros after the projection.
    kdim, vdim : int, optional
        Sizes of the key's and value's features (default ``embed_dim``). When either
        differs, the projections are three parameters instead of ``in_proj_weight``.
    batch_first : bool
        Inputs and output are (N, L, E) instead of (L, N, E).
    device, dtype : optional
        Where the parameters live and their dtype.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> mha = nn.MultiheadAttention(8, 2, batch_first=True)
    >>> x = mta.randn(3, 5, 8)
    >>> out, weights = mha(x, x, x)
    >>> out.shape, weights.shape
    ((3, 5, 8), (3, 5, 5))
    >>> list(mha.state_dict())
    ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']
    """

    in_proj_weight: Parameter | None
    in_proj_bias: Parameter | None
    q_proj_weight: Parameter | None
    k_proj_weight: Parameter | None
    v_proj_weight: Parameter | None
    bias_k: Parameter | None
    bias_v: Parameter | None

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                "MultiheadAttention: embed_dim and num_heads must be greater than 0, got "
                f"embed_dim={embed_dim} and num_heads={num_heads}"
            )
        if embed_dim % num_heads:
            raise ValueError(
                f"MultiheadAttention: embed_dim ({embed_dim}) must be divisible by "
                f"num_heads ({num_heads})"
            )
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first, self.add_zero_attn = dropout, batch_first, add_zero_attn

        def param(*shape: int) -> Parameter:
            return Parameter(factories.empty(*shape, device=device, dtype=dtype))

        if self._qkv_same_embed_dim:
            self.in_proj_weight = param(3 * embed_dim, embed_dim)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = param(embed_dim, embed_dim)
            self.k_proj_weight = param(embed_dim, self.kdim)
            self.v_proj_weight = param(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = param(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k, self.bias_v = param(1, 1, embed_dim), param(1, 1, embed_dim)
        else:
            self.bias_k = self.bias_v = None
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """PyTorch's initialization: ``xavier_uniform_`` on the input projections,
        zero biases, ``xavier_normal_`` on ``bias_k``/``bias_v`` (``out_proj.weight``
        keeps ``Linear``'s).
        """
        for weight in (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight):
            if weight is not None:
                init.xavier_uniform_(weight)
        if self.v_proj_weight is not None:
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None and self.out_proj.bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        for extra in (self.bias_k, self.bias_v):
            if extra is not None:
                init.xavier_normal_(extra)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend from ``query`` to ``key``/``value``.

        Parameters
        ----------
        query : Tensor
            (L, E), or (L, N, E) ((N, L, E) with ``batch_first``).
        key, value : Tensor
            (S, kdim) and (S, vdim), or batched as ``query``.
        key_padding_mask : Tensor, optional
            (S) or (N, S): True (or ``-inf``) for keys to ignore; a float mask is added.
        need_weights : bool
            Also return the attention weights (computed with a plain softmax: a query
            whose every key is masked gets NaN, as in PyTorch). Without them the
            attention is :func:`scaled_dot_product_attention`, whose fully masked
            rows give 0 (as PyTorch's on the CPU).
        attn_mask : Tensor, optional
            (L, S) or (N * num_heads, L, S): True where a query may *not* attend, or
            a float mask added to the scores.
        average_attn_weights : bool
            Average the returned weights over the heads: (N, L, S); else
            (N, num_heads, L, S).
        is_causal : bool
            A hint that ``attn_mask`` is the causal mask (which must then be given, as
            in PyTorch); without ``key_padding_mask`` and weights the causal attention
            is computed directly and ``attn_mask`` is not read.

        Returns
        -------
        tuple
            ``(attn_output, attn_weights)``, the weights None unless ``need_weights``.

        Raises
        ------
        ValueError
            If a shape does not fit (the message names it and the expected one).
        """
        batched = self._check_shapes(query, key, value, key_padding_mask, attn_mask)
        if not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        if is_causal and attn_mask is None:
            raise ValueError(
                "MultiheadAttention: is_causal=True is a hint that attn_mask is the causal "
                "mask and needs attn_mask; make one with "
                "nn.Transformer.generate_square_subsequent_mask(L)"
            )
        # as PyTorch: the hint replaces the mask only where nothing else needs the mask
        causal = is_causal and key_padding_mask is None and not need_weights
        mask = None if causal else _blocking_bias(attn_mask, query.dtype, "attn_mask")
        padding = _blocking_bias(key_padding_mask, query.dtype, "key_padding_mask")
        q, k, v, mask = self._heads(*self._project(query, key, value), mask, padding)
        target_len, batch, embed = query.shape
        heads = (batch, self.num_heads)
        p = self.dropout if self.training else 0.0
        weights = None
        if need_weights:  # PyTorch's explicit path: a plain softmax (NaN in fully masked rows)
            scores = (q * math.sqrt(1.0 / self.head_dim)) @ k.transpose(-2, -1)
            weights = attention_softmax(scores if mask is None else scores + mask, safe=False)
            dropped = dropout_op(weights, p, training=True) if p > 0.0 else weights
            heads_out = (dropped @ v).reshape(*heads, target_len, self.head_dim)
            weights = weights.reshape(*heads, target_len, k.shape[1])
            weights = weights.mean(1) if average_attn_weights else weights
            weights = weights if batched else weights.squeeze(0)
        else:
            if mask is not None:  # (1, L, S) -> (1, 1, L, S); (N * heads, ...) -> (N, heads, ...)
                mask = mask.reshape(*((1, 1) if mask.shape[0] == 1 else heads), *mask.shape[1:])
            q, k, v = (t.reshape(*heads, t.shape[1], self.head_dim) for t in (q, k, v))
            heads_out = scaled_dot_product_attention(q, k, v, mask, p, is_causal=causal)
        joined = heads_out.permute(2, 0, 1, 3).reshape(target_len, batch, embed)
        out = F.linear(joined, self.out_proj.weight, self.out_proj.bias)
        if not batched:
            out = out.squeeze(1)
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, weights

    def _heads(
        self, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, padding: Tensor | None
    ) -> tuple[Tensor, Tensor, Tensor, Tensor | None]:
        """Projected (length, N, E) inputs as (N * num_heads, length, head_dim), with
        ``bias_k``/``bias_v`` and the zero key appended, and the masks (their columns
        for the appended keys 0) merged into one additive (1 or N * heads, L, S) mask.
        """
        batch, embed = q.shape[1], q.shape[2]
        if mask is not None and mask.ndim == 2:
            mask = mask.unsqueeze(0)
        if self.bias_k is not None and self.bias_v is not None:
            k = cat([k, self.bias_k.expand(1, batch, embed)])
            v = cat([v, self.bias_v.expand(1, batch, embed)])
            mask, padding = _pad_last(mask), _pad_last(padding)
        q, k, v = (self._split_heads(t) for t in (q, k, v))
        if self.add_zero_attn:
            zeros = factories.zeros(k.shape[0], 1, self.head_dim, device=k.device, dtype=k.dtype)
            k, v = cat([k, zeros], dim=1), cat([v, zeros], dim=1)
            mask, padding = _pad_last(mask), _pad_last(padding)
        if padding is not None:
            source_len = k.shape[1]
            padding = padding.reshape(batch, 1, 1, source_len)
            padding = padding.expand(batch, self.num_heads, 1, source_len)
            padding = padding.reshape(batch * self.num_heads, 1, source_len)
            mask = padding if mask is None else mask + padding
        return q, k, v, mask

    def _project(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """The three input projections (one weight, or three when kdim/vdim differ)."""
        e = self.embed_dim
        if self.in_proj_weight is not None:
            weights = [self.in_proj_weight[i * e : (i + 1) * e] for i in range(3)]
        else:
            assert self.q_proj_weight is not None and self.k_proj_weight is not None
            assert self.v_proj_weight is not None
            weights = [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        b = self.in_proj_bias
        biases = [None] * 3 if b is None else [b[i * e : (i + 1) * e] for i in range(3)]
        q = F.linear(query, weights[0], biases[0])
        return q, F.linear(key, weights[1], biases[1]), F.linear(value, weights[2], biases[2])

    def _split_heads(self, x: Tensor) -> Tensor:
        """(length, N, E) -> (N * num_heads, length, head_dim), batch-major."""
        length, batch = x.shape[0], x.shape[1]
        return x.reshape(length, batch * self.num_heads, self.head_dim).transpose(0, 1)

    def _check_shapes(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None,
        attn_mask: Tensor | None,
    ) -> bool:
        """Check every shape against the others; True if the inputs are batched."""
        name = f"MultiheadAttention(embed_dim={self.embed_dim}, num_heads={self.num_heads})"
        if query.ndim not in (2, 3):
            raise ValueError(
                f"{name}: query must be (L, E) unbatched or 3-D batched, got {query.shape}"
            )
        batched = query.ndim == 3
        layout = "(N, L, E)" if self.batch_first else "(L, N, E)"
        for label, t, size in (("key", key, self.kdim), ("value", value, self.vdim)):
            if t.ndim != query.ndim:
                raise ValueError(
                    f"{name}: query {query.shape} is {query.ndim}-D, so {label} must be too, "
                    f"got {t.shape}"
                )
            if t.shape[-1] != size:
                raise ValueError(f"{name}: {label} must end with {size} features, got {t.shape}")
        if query.shape[-1] != self.embed_dim:
            raise ValueError(
                f"{name}: query must be {layout if batched else '(L, E)'} with "
                f"E={self.embed_dim}, got {query.shape}"
            )
        seq, batch = (1, 0) if batched and self.batch_first else (0, 1)
        if key.shape[seq] != value.shape[seq] or (
            batched and key.shape[batch] != value.shape[batch]
        ):
            raise ValueError(
                f"{name}: key {key.shape} and value {value.shape} must share S (and N)"
            )
        if batched and key.shape[batch] != query.shape[batch]:
            raise ValueError(f"{name}: query {query.shape} and key {key.shape} must share N")
        n = query.shape[batch] if batched else None
        self._check_masks(name, key_padding_mask, attn_mask, n, query.shape[seq], key.shape[seq])
        return batched

    def _check_masks(
        self,
        name: str,
        key_padding_mask: Tensor | None,
        attn_mask: Tensor | None,
        batch: int | None,
        target_len: int,
        source_len: int,
    ) -> None:
        if key_padding_mask is not None:
            expected = (source_len,) if batch is None else (batch, source_len)
            if tuple(key_padding_mask.shape) != expected:
                raise ValueError(
                    f"{name}: key_padding_mask must be (N, S) = {expected} (or (S,) unbatched), "
                    f"got {key_padding_mask.shape}"
                )
        if attn_mask is not None:
            shapes = [
                (target_len, source_len),
                ((batch or 1) * self.num_heads, target_len, source_len),
            ]
            if tuple(attn_mask.shape) not in shapes:
                raise ValueError(
                    f"{name}: attn_mask must be (L, S) = {shapes[0]} or "
                    f"(N * num_heads, L, S) = {shapes[1]}, got {attn_mask.shape}"
                )

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return (
            f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, "
            f"batch_first={self.batch_first}"
        )


def _blocking_bias(mask: Tensor | None, dtype: Any, name: str) -> Tensor | None:
    """PyTorch's ``_canonical_mask``: a boolean mask (True = may *not* attend) becomes
    ``-inf``/0 of ``dtype``; a float mask is returned as it is (None stays None).
    """
    return None if mask is None else mask_as_bias(mask, dtype, name, true_attends=False)


def _pad_last(mask: Tensor | None) -> Tensor | None:
    """``mask`` with a column of 0 appended to its last dim (a key every query sees)."""
    return None if mask is None else F.pad(mask, (0, 1))
