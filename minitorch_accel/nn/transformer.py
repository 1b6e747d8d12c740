"""The Transformer (Vaswani et al., 2017) as ``torch.nn``'s: encoder and decoder layers,
their stacks, and the whole model.

Submodules carry PyTorch's names (``self_attn``, ``multihead_attn``, ``linear1``,
``dropout``, ``linear2``, ``norm1``..``norm3``, ``dropout1``..``dropout3``,
``layers.0``, ``norm``, ``encoder``, ``decoder``), so a ``state_dict`` saved by PyTorch
loads here and the other way round.

Difference from PyTorch: there is no inference fast path. In evaluation mode without
gradients, PyTorch's ``TransformerEncoder`` turns a batch with ``src_key_padding_mask``
into a nested tensor and returns padded positions as 0 (before ``norm``); here they are
computed like every other position. The unpadded positions agree. And a
``TransformerDecoderLayer`` whose ``activation`` is a module (``nn.GELU()``) keeps it
in its copies in a ``TransformerDecoder`` here; PyTorch's copies fall back to relu (its
``__setstate__`` does not see the submodule), so pass a function such as ``F.gelu``
(or the string) to get the same numbers from both.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backends import DeviceLike
from ..core import factories
from ..core.convert import DTypeLike
from ..core.tensor import Tensor
from . import functional as F
from . import init
from .attention import MultiheadAttention
from .container import ModuleList
from .layers import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

Activation = str | Callable[[Tensor], Tensor]


def _activation_fn(activation: Activation) -> Callable[[Tensor], Tensor]:
    if not isinstance(activation, str):
        return activation
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise ValueError(f"activation should be 'relu', 'gelu' or a callable, not {activation!r}")


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward network, each with a residual connection and
    layer normalization: after it (``norm_first=False``, the original) or before it.

    ``x = norm1(x + sa(x)); x = norm2(x + ff(x))``, or with ``norm_first``
    ``x = x + sa(norm1(x)); x = x + ff(norm2(x))``, where ``ff(x) =
    linear2(dropout(activation(linear1(x))))``.

    Parameters
    ----------
    d_model, nhead : int
        Features and attention heads.
    dim_feedforward : int
        Width of the feed-forward network.
    dropout : float
        Dropout in the attention, after it and in the feed-forward network.
    activation : str or callable
        ``"relu"``, ``"gelu"`` or a function (or module) of one tensor.
    layer_norm_eps : float
    batch_first : bool
        (N, S, E) instead of (S, N, E).
    norm_first : bool
        Normalize before each block instead of after (pre-LN).
    bias : bool
        Biases in the linear layers and layer norms.
    device, dtype : optional

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> layer(mta.randn(5, 3, 8)).shape
    (5, 3, 8)
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        where: dict[str, Any] = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **where
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **where)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **where)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **where)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **where)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation_fn(activation)

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        """Encode ``src``; the masks and ``is_causal`` are those of
        :class:`MultiheadAttention` (``attn_mask``, ``key_padding_mask``).
        """
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        out: Tensor = self.norm2(x + self._ff_block(x))
        return out

    def _sa_block(
        self, x: Tensor, mask: Tensor | None, padding: Tensor | None, is_causal: bool
    ) -> Tensor:
        out = self.self_attn(
            x,
            x,
            x,
            attn_mask=mask,
            key_padding_mask=padding,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(out)  # type: ignore[no-any-return]

    def _ff_block(self, x: Tensor) -> Tensor:
        hidden = self.dropout(self.activation(self.linear1(x)))
        return self.dropout2(self.linear2(hidden))  # type: ignore[no-any-return]


class TransformerDecoderLayer(Module):
    """Self-attention, attention to the encoder's output (``memory``), then a
    feed-forward network, each with a residual connection and layer normalization
    (``norm1``..``norm3``, after each block or, with ``norm_first``, before).

    Parameters are those of :class:`TransformerEncoderLayer`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> layer(mta.randn(4, 3, 8), mta.randn(6, 3, 8)).shape
    (4, 3, 8)
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        where: dict[str, Any] = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **where
        )
        self.multihead_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **where
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **where)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **where)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **where)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **where)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **where)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation_fn(activation)

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """Decode ``tgt`` attending to ``memory``; the masks are
        :class:`MultiheadAttention`'s, ``tgt_*`` for the self-attention and
        ``memory_*`` for the attention to ``memory``.
        """
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(
            x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
        )
        out: Tensor = self.norm3(x + self._ff_block(x))
        return out

    def _sa_block(
        self, x: Tensor, mask: Tensor | None, padding: Tensor | None, is_causal: bool
    ) -> Tensor:
        out = self.self_attn(
            x,
            x,
            x,
            attn_mask=mask,
            key_padding_mask=padding,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout1(out)  # type: ignore[no-any-return]

    def _mha_block(
        self,
        x: Tensor,
        memory: Tensor,
        mask: Tensor | None,
        padding: Tensor | None,
        is_causal: bool,
    ) -> Tensor:
        out = self.multihead_attn(
            x,
            memory,
            memory,
            attn_mask=mask,
            key_padding_mask=padding,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout2(out)  # type: ignore[no-any-return]

    def _ff_block(self, x: Tensor) -> Tensor:
        hidden = self.dropout(self.activation(self.linear1(x)))
        return self.dropout3(self.linear2(hidden))  # type: ignore[no-any-return]


def _clones(layer: Module, num_layers: int) -> ModuleList:
    """``num_layers`` deep copies of ``layer`` (all start from the same weights, as in
    PyTorch).
    """
    return ModuleList([copy.deepcopy(layer) for _ in range(num_layers)])


class TransformerEncoder(Module):
    """A stack of ``num_layers`` deep copies of ``encoder_layer``, then ``norm`` if given.

    ``enable_nested_tensor`` and ``mask_check`` are accepted for PyTorch's signature and
    change nothing: no nested tensors are made (see the module's note).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    >>> encoder = nn.TransformerEncoder(layer, num_layers=2)
    >>> encoder(mta.randn(3, 5, 8)).shape
    (3, 5, 8)
    >>> [name for name, _ in encoder.named_parameters()][:2]
    ['layers.0.self_attn.in_proj_weight', 'layers.0.self_attn.in_proj_bias']
    """

    def __init__(
        self,
        encoder_layer: Module,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        """Pass ``src`` through every layer with the same masks, then ``norm``.
        ``is_causal=None`` (PyTorch detects a causal ``mask``) computes as False: the
        mask itself gives the same result.
        """
        output = src
        for layer in self.layers:
            output = layer(
                output,
                src_mask=mask,
                is_causal=bool(is_causal),
                src_key_padding_mask=src_key_padding_mask,
            )
        return output if self.norm is None else self.norm(output)


class TransformerDecoder(Module):
    """A stack of ``num_layers`` deep copies of ``decoder_layer``, then ``norm`` if given.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)
    >>> nn.TransformerDecoder(layer, 2)(mta.randn(4, 3, 8), mta.randn(6, 3, 8)).shape
    (4, 3, 8)
    """

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """Pass ``tgt`` through every layer, each attending to ``memory``, then ``norm``."""
        output = tgt
        for layer in self.layers:
            output = layer(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=bool(tgt_is_causal),
                memory_is_causal=memory_is_causal,
            )
        return output if self.norm is None else self.norm(output)


class Transformer(Module):
    """An encoder-decoder Transformer: ``decoder(tgt, encoder(src))``, each a stack of
    layers followed by a ``LayerNorm``; every weight of 2 or more dims starts from
    ``xavier_uniform_``, as in PyTorch.

    Parameters
    ----------
    d_model, nhead, num_encoder_layers, num_decoder_layers, dim_feedforward : int
        As PyTorch's (defaults 512, 8, 6, 6, 2048).
    dropout, activation, layer_norm_eps, batch_first, norm_first, bias : optional
        As PyTorch's (defaults 0.1, relu, 1e-5, False, False, True).
    custom_encoder, custom_decoder : Module, optional
        Used instead of the built stacks.
    device, dtype : optional

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
    ...                        num_decoder_layers=1, dim_feedforward=16, batch_first=True)
    >>> src, tgt = mta.randn(2, 5, 8), mta.randn(2, 4, 8)
    >>> mask = nn.Transformer.generate_square_subsequent_mask(4)
    >>> model(src, tgt, tgt_mask=mask).shape
    (2, 4, 8)
    """

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = F.relu,
        custom_encoder: Module | None = None,
        custom_decoder: Module | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        where: dict[str, Any] = {"device": device, "dtype": dtype}
        options: dict[str, Any] = {
            "dim_feedforward": dim_feedforward,
            "dropout": dropout,
            "activation": activation,
            "layer_norm_eps": layer_norm_eps,
            "batch_first": batch_first,
            "norm_first": norm_first,
            "bias": bias,
            **where,
        }
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, **options)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **where)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            dec_layer = TransformerDecoderLayer(d_model, nhead, **options)
            dec_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **where)
            self.decoder = TransformerDecoder(dec_layer, num_decoder_layers, dec_norm)
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """Encode ``src`` (S, N, E) and decode ``tgt`` (T, N, E) from it ((N, ., E) with
        ``batch_first``; unbatched (S, E) and (T, E) too).

        Raises
        ------
        ValueError
            If the batch sizes of ``src`` and ``tgt`` differ, or their features are not
            ``d_model``.
        """
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and (tgt.ndim != 3 or src.shape[batch_dim] != tgt.shape[batch_dim]):
            raise ValueError(
                f"Transformer: the batch sizes of src {src.shape} and tgt {tgt.shape} must "
                f"be equal (dim {batch_dim}, batch_first={self.batch_first})"
            )
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ValueError(
                f"Transformer: src {src.shape} and tgt {tgt.shape} must end with "
                f"d_model={self.d_model} features"
            )
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(  # type: ignore[no-any-return]
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(
        sz: int, device: DeviceLike | None = None, dtype: DTypeLike = None
    ) -> Tensor:
        """The ``(sz, sz)`` causal mask: ``-inf`` above the diagonal, 0 on and below it
        (float32 by default).

        Examples
        --------
        >>> from minitorch_accel import nn
        >>> nn.Transformer.generate_square_subsequent_mask(3).tolist()
        [[0.0, -inf, -inf], [0.0, 0.0, -inf], [0.0, 0.0, 0.0]]
        """
        mask = np.triu(np.full((sz, sz), -np.inf), k=1)
        return factories.tensor(mask, device=device, dtype=dtype or np.float32)


__all__ = [
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]
