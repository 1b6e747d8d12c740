"""Smaller layers of ``torch.nn``: :class:`GLU`, :class:`Bilinear`, :class:`Softmax2d`,
:class:`ChannelShuffle`, :class:`EmbeddingBag`, :class:`AlphaDropout` and
:class:`FeatureAlphaDropout`.
"""

from __future__ import annotations

import math

from ..backends import DeviceLike
from ..core import factories
from ..core.convert import DTypeLike
from ..core.grad_mode import no_grad
from ..core.tensor import Tensor
from ..ops.misc_layers import (
    alpha_dropout,
    bilinear,
    channel_shuffle,
    embedding_bag,
    feature_alpha_dropout,
    glu,
)
from ..ops.reduce import softmax
from . import init
from .module import Module
from .parameter import Parameter


class GLU(Module):
    """The gated linear unit along ``dim``: see
    :func:`~minitorch_accel.ops.misc_layers.glu`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.GLU()(mta.randn(4, 6)).shape
    (4, 3)
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.ops.misc_layers.glu`."""
        return glu(input, self.dim)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"dim={self.dim}"


class Bilinear(Module):
    """``y[..., k] = input1 @ weight[k] @ input2 + bias[k]``: see
    :func:`~minitorch_accel.ops.misc_layers.bilinear`.

    ``weight`` (out_features, in1_features, in2_features) and ``bias`` start as
    uniform samples in ``[-1/sqrt(in1_features), 1/sqrt(in1_features)]``, as PyTorch's.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.Bilinear(3, 4, 5)
    >>> layer
    Bilinear(in1_features=3, in2_features=4, out_features=5, bias=True)
    >>> layer(mta.randn(2, 3), mta.randn(2, 4)).shape
    (2, 5)
    """

    weight: Parameter
    bias: Parameter | None

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        shape = (out_features, in1_features, in2_features)
        self.weight = Parameter(factories.empty(*shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(factories.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw new uniform weights and bias in ``+-1/sqrt(in1_features)``."""
        bound = 1.0 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.ops.misc_layers.bilinear`."""
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class Softmax2d(Module):
    """Softmax over the channels of each position of a (N, C, H, W) or (C, H, W) input
    (dim -3).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> y = nn.Softmax2d()(mta.randn(2, 3, 4, 4))
    >>> bool(((y.sum(1) - 1).abs() < 1e-6).all())
    True
    """

    def forward(self, input: Tensor) -> Tensor:
        """Softmax along dim -3."""
        if input.ndim not in (3, 4):
            raise ValueError(
                f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead "
                f"(shape {input.shape})"
            )
        return softmax(input, -3)


class ChannelShuffle(Module):
    """Interleave the channels of ``groups`` groups: see
    :func:`~minitorch_accel.ops.misc_layers.channel_shuffle`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.ChannelShuffle(2)
    >>> layer
    ChannelShuffle(groups=2)
    >>> layer(mta.arange(4.0).reshape(1, 4, 1)).reshape(-1).tolist()
    [0.0, 2.0, 1.0, 3.0]
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.ops.misc_layers.channel_shuffle`."""
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"groups={self.groups}"


class EmbeddingBag(Module):
    """The sum, mean or max of bags of learned vectors: see
    :func:`~minitorch_accel.ops.misc_layers.embedding_bag`.

    ``weight`` (num_embeddings, embedding_dim) starts as N(0, 1) samples, the row
    ``padding_idx`` at zero. ``max_norm``, ``norm_type != 2``, ``scale_grad_by_freq``
    and ``sparse`` are PyTorch's options that are not supported here.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> bag = nn.EmbeddingBag(10, 3, mode="sum")
    >>> bag
    EmbeddingBag(10, 3, mode='sum')
    >>> bag(mta.tensor([1, 2, 4, 5, 4]), mta.tensor([0, 2])).shape
    (2, 3)
    >>> bag(mta.tensor([[1, 2], [4, 5]])).shape
    (2, 3)
    """

    weight: Parameter

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight: Tensor | None = None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        if max_norm is not None or norm_type != 2.0 or scale_grad_by_freq or sparse:
            raise NotImplementedError(
                "EmbeddingBag: max_norm, norm_type, scale_grad_by_freq and sparse are not "
                "supported; leave them at their defaults"
            )
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(
                    f"EmbeddingBag: padding_idx {padding_idx} must be within num_embeddings "
                    f"({num_embeddings})"
                )
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.mode, self.include_last_offset = mode, include_last_offset
        self.padding_idx = padding_idx
        shape = (num_embeddings, embedding_dim)
        if _weight is None:
            self.weight = Parameter(factories.empty(*shape, device=device, dtype=dtype))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != shape:
                raise ValueError(
                    f"EmbeddingBag: _weight of shape {_weight.shape} does not match "
                    f"(num_embeddings, embedding_dim) = {shape}"
                )
            self.weight = Parameter(_weight)

    def reset_parameters(self) -> None:
        """Draw new N(0, 1) rows (the padding row zero)."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
    ) -> EmbeddingBag:
        """An EmbeddingBag whose weight is ``embeddings`` (2-D), frozen (no gradient)
        unless ``freeze`` is False.

        Examples
        --------
        >>> import minitorch_accel as mta
        >>> from minitorch_accel import nn
        >>> bag = nn.EmbeddingBag.from_pretrained(mta.tensor([[1.0, 2.0], [3.0, 4.0]]))
        >>> bag(mta.tensor([[0, 1]])).tolist(), bag.weight.requires_grad
        ([[2.0, 3.0]], False)
        """
        if embeddings.ndim != 2:
            raise ValueError(
                f"EmbeddingBag.from_pretrained: embeddings must be 2-D, got {embeddings.shape}"
            )
        bag = cls(
            embeddings.shape[0],
            embeddings.shape[1],
            max_norm,
            norm_type,
            scale_grad_by_freq,
            mode,
            sparse,
            embeddings,
            include_last_offset,
            padding_idx,
        )
        bag.weight.requires_grad_(not freeze)
        return bag

    def forward(
        self,
        input: Tensor,
        offsets: Tensor | None = None,
        per_sample_weights: Tensor | None = None,
    ) -> Tensor:
        """Apply :func:`~minitorch_accel.ops.misc_layers.embedding_bag`."""
        return embedding_bag(
            input,
            self.weight,
            offsets,
            mode=self.mode,
            per_sample_weights=per_sample_weights,
            include_last_offset=self.include_last_offset,
            padding_idx=self.padding_idx,
        )

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        text = f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}"
        return text + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")


class AlphaDropout(Module):
    """Alpha dropout in training mode, the identity in evaluation mode: see
    :func:`~minitorch_accel.ops.misc_layers.alpha_dropout`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.AlphaDropout(0.2)
    >>> layer
    AlphaDropout(p=0.2, inplace=False)
    >>> x = mta.randn(3, 4)
    >>> bool((layer.eval()(x) == x).all())
    True
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.ops.misc_layers.alpha_dropout` when training."""
        return alpha_dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"p={self.p}, inplace={self.inplace}"


class FeatureAlphaDropout(AlphaDropout):
    """Alpha dropout of whole channels in training mode: see
    :func:`~minitorch_accel.ops.misc_layers.feature_alpha_dropout`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.FeatureAlphaDropout(0.5)(mta.randn(2, 3, 4, 4)).shape
    (2, 3, 4, 4)
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.ops.misc_layers.feature_alpha_dropout` when
        training.
        """
        return feature_alpha_dropout(input, self.p, self.training, self.inplace)


__all__ = [
    "AlphaDropout",
    "Bilinear",
    "ChannelShuffle",
    "EmbeddingBag",
    "FeatureAlphaDropout",
    "GLU",
    "Softmax2d",
]
