"""More normalization layers: :class:`InstanceNorm1d`, :class:`InstanceNorm2d`,
:class:`InstanceNorm3d`, :class:`LocalResponseNorm` and :class:`RMSNorm`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from ..backends import DeviceLike
from ..core import factories
from ..core.convert import DTypeLike
from ..core.tensor import Tensor
from ..ops.instance_norm import instance_norm
from ..ops.misc_layers import local_response_norm, rms_norm
from . import init
from .module import Module
from .norm import _BatchNorm
from .parameter import Parameter


class _InstanceNorm(_BatchNorm):
    """What the instance norms share: batch norm's parameters and buffers (as PyTorch's
    ``_NormBase``), other defaults, and a forward that normalizes each sample alone.
    """

    _unbatched_dims = 0  # the number of dims of an input without its batch dim

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        if affine and not bias:
            self.bias = None

    def forward(self, input: Tensor) -> Tensor:
        """Normalize each sample's channels with their own statistics (training, or no
        running statistics kept) or with the running ones (evaluation).

        ``num_batches_tracked`` is kept (for ``state_dict``) but never counted, and a
        ``momentum`` of None means 0, as PyTorch's instance norms.
        """
        name, unbatched = type(self).__name__, self._unbatched_dims
        if input.ndim not in (unbatched, unbatched + 1):
            raise ValueError(
                f"{name}: expected {unbatched}D or {unbatched + 1}D input "
                f"(got {input.ndim}D input of shape {input.shape})"
            )
        channel_dim = input.ndim - unbatched
        if input.shape[channel_dim] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"{name}: expected input's size at dim={channel_dim} to match "
                    f"num_features ({self.num_features}), but got: {input.shape[channel_dim]} "
                    f"(input of shape {input.shape})."
                )
            warnings.warn(
                f"input's size at dim={channel_dim} does not match num_features. You can "
                "silence this warning by not passing in num_features, which is not used "
                "because affine=False",
                stacklevel=2,
            )
        batched = input if input.ndim == unbatched + 1 else input.unsqueeze(0)
        out = instance_norm(
            batched,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
        )
        return out if input.ndim == unbatched + 1 else out.squeeze(0)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr`` (PyTorch's, ``bias`` included)."""
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization over (N, C, L) or unbatched (C, L) inputs: each channel
    of each sample normalized over L, ``y = (x - mean) / sqrt(var + eps) * weight +
    bias`` (variance biased). See
    :func:`~minitorch_accel.ops.instance_norm.instance_norm`.

    Parameters
    ----------
    num_features : int
        C.
    eps : float
    momentum : float or None
        Weight of each batch in the running statistics (None means 0, as PyTorch).
    affine : bool
        Learn ``weight`` (initially 1) and ``bias`` (initially 0); default False.
    track_running_stats : bool
        Keep ``running_mean``, ``running_var`` (and ``num_batches_tracked``, never
        counted), updated in training and used in evaluation; default False (the
        samples' own statistics in evaluation too).
    device, dtype : optional
    bias : bool, keyword-only
        With ``affine``, learn ``bias`` too.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.InstanceNorm1d(3, affine=True)
    >>> layer
    InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=False)
    >>> layer(mta.randn(2, 3, 5)).shape, layer(mta.randn(3, 5)).shape
    ((2, 3, 5), (3, 5))
    """

    _unbatched_dims = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization over (N, C, H, W) or unbatched (C, H, W) inputs;
    parameters as :class:`InstanceNorm1d`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.InstanceNorm2d(3, track_running_stats=True)
    >>> [name for name, _ in layer.named_buffers()]
    ['running_mean', 'running_var', 'num_batches_tracked']
    >>> layer(mta.randn(2, 3, 4, 4)).shape
    (2, 3, 4, 4)
    """

    _unbatched_dims = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization over (N, C, D, H, W) or unbatched (C, D, H, W) inputs;
    parameters as :class:`InstanceNorm1d`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.InstanceNorm3d(2)(mta.randn(2, 2, 3, 3, 3)).shape
    (2, 2, 3, 3, 3)
    """

    _unbatched_dims = 4


class LocalResponseNorm(Module):
    """Divide each value by the activity of its ``size`` neighbouring channels; see
    :func:`~minitorch_accel.ops.misc_layers.local_response_norm`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.LocalResponseNorm(2)
    >>> layer
    LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    >>> layer(mta.randn(2, 4, 3, 3)).shape
    (2, 4, 3, 3)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.ops.misc_layers.local_response_norm`."""
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class RMSNorm(Module):
    """Scale the last dims (``normalized_shape``) of each sample to a root mean square
    of 1, then by a learned ``weight`` (ones): see
    :func:`~minitorch_accel.ops.misc_layers.rms_norm`.

    Parameters
    ----------
    normalized_shape : int or sequence of int
    eps : float, optional
        None (the default) takes the machine epsilon of the input's dtype, as PyTorch.
    elementwise_affine : bool
        Learn ``weight``.
    device, dtype : optional

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.RMSNorm([2, 3])
    >>> layer
    RMSNorm((2, 3), eps=None, elementwise_affine=True)
    >>> layer(mta.randn(4, 2, 3)).shape
    (4, 2, 3)
    """

    weight: Parameter | None

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float | None = None,
        elementwise_affine: bool = True,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape = tuple(shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            ones = factories.ones(*self.normalized_shape, device=device, dtype=dtype)
            self.weight = Parameter(ones)
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        """Weight 1."""
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.ops.misc_layers.rms_norm`."""
        return rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


__all__ = [
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LocalResponseNorm",
    "RMSNorm",
]
