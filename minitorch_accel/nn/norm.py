"""Batch normalization layers: :class:`BatchNorm1d`, :class:`BatchNorm2d` and
:class:`BatchNorm3d`.
"""

from __future__ import annotations

from ..backends import DeviceLike
from ..core import factories
from ..core.convert import DTypeLike
from ..core.tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class _BatchNorm(Module):
    """What BatchNorm1d, 2d and 3d share; they differ only in the inputs accepted."""

    weight: Parameter | None
    bias: Parameter | None
    running_mean: Tensor | None
    running_var: Tensor | None
    num_batches_tracked: Tensor | None
    _accepted_dims: tuple[int, ...] = ()

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(factories.ones(num_features, device=device, dtype=dtype))
            self.bias = Parameter(factories.zeros(num_features, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer(
                "running_mean", factories.zeros(num_features, device=device, dtype=dtype)
            )
            self.register_buffer(
                "running_var", factories.ones(num_features, device=device, dtype=dtype)
            )
            self.register_buffer(
                "num_batches_tracked", factories.zeros((), device=device, dtype="int64")
            )
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batch seen."""
        if self.running_mean is not None and self.running_var is not None:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
        if self.num_batches_tracked is not None:
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Running statistics reset, weight 1, bias 0."""
        self.reset_running_stats()
        if self.weight is not None and self.bias is not None:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        """Normalize ``input`` with batch statistics (training) or running ones (eval)."""
        if input.ndim not in self._accepted_dims:
            raise ValueError(
                f"{type(self).__name__}: expected a {' or '.join(map(str, self._accepted_dims))}"
                f"-D input, got shape {input.shape}"
            )
        if input.shape[1] != self.num_features:
            raise ValueError(
                f"{type(self).__name__}({self.num_features}): input of shape {input.shape} "
                f"has {input.shape[1]} channels (dim 1)"
            )
        momentum = self.momentum if self.momentum is not None else 0.0
        if self.training and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)  # in place, on the buffer's own device
            if self.momentum is None:  # a cumulative average of every batch so far
                momentum = 1.0 / float(self.num_batches_tracked.item())
        use_batch_stats = self.training or self.running_mean is None
        return F.batch_norm(
            input,
            self.running_mean if not self.training or self.track_running_stats else None,
            self.running_var if not self.training or self.track_running_stats else None,
            self.weight,
            self.bias,
            use_batch_stats,
            momentum,
            self.eps,
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalization over (N, C) or (N, C, L) inputs, per channel C.

    ``y = (x - mean) / sqrt(var + eps) * weight + bias``: batch statistics in training
    (and running averages updated with ``momentum``; ``None`` gives a cumulative
    average), running statistics in evaluation. See
    :func:`~minitorch_accel.nn.functional.batch_norm`.

    Parameters
    ----------
    num_features : int
        C.
    eps : float
    momentum : float or None
    affine : bool
        Learn ``weight`` (initially 1) and ``bias`` (initially 0).
    track_running_stats : bool
        Keep the buffers ``running_mean``, ``running_var`` and ``num_batches_tracked``;
        without them, batch statistics are used in evaluation too.
    device, dtype : optional
    """

    _accepted_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization over (N, C, H, W) inputs, per channel C; parameters as
    :class:`BatchNorm1d`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> bn = nn.BatchNorm2d(3)
    >>> y = bn(mta.randn(4, 3, 5, 5))
    >>> [name for name, _ in bn.named_buffers()]
    ['running_mean', 'running_var', 'num_batches_tracked']
    """

    _accepted_dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalization over (N, C, D, H, W) inputs, per channel C; parameters as
    :class:`BatchNorm1d`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.BatchNorm3d(2)(mta.randn(3, 2, 4, 4, 4)).shape
    (3, 2, 4, 4, 4)
    """

    _accepted_dims = (5,)
