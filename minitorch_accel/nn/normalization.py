"""``LayerNorm`` and ``GroupNorm``: normalization over each sample's features (no running
statistics, so training and evaluation compute the same).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..backends import DeviceLike
from ..core import factories
from ..core.convert import DTypeLike
from ..core.tensor import Tensor
from . import functional as F
from .module import Module
from .parameter import Parameter


class LayerNorm(Module):
    """Normalize the last dims (``normalized_shape``) of each sample to mean 0 and
    variance 1, then scale and shift by learned ``weight`` (ones) and ``bias`` (zeros).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.LayerNorm(4)(mta.randn(2, 3, 4)).shape
    (2, 3, 4)
    """

    weight: Parameter | None
    bias: Parameter | None

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape = tuple(shape)
        self.eps = eps
        affine = elementwise_affine
        self.weight = (
            Parameter(factories.ones(*self.normalized_shape, device=device, dtype=dtype))
            if affine
            else None
        )
        self.bias = (
            Parameter(factories.zeros(*self.normalized_shape, device=device, dtype=dtype))
            if affine and bias
            else None
        )

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.layer_norm`."""
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.weight is not None}"
        )


class GroupNorm(Module):
    """Normalize each group of ``num_channels // num_groups`` channels of each sample,
    then apply a learned per-channel ``weight`` (ones) and ``bias`` (zeros).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.GroupNorm(2, 4)(mta.randn(3, 4, 5, 5)).shape
    (3, 4, 5, 5)
    """

    weight: Parameter | None
    bias: Parameter | None

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: DeviceLike | None = None,
        dtype: DTypeLike = None,
    ) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(
                f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups "
                f"({num_groups})"
            )
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        self.weight = (
            Parameter(factories.ones(num_channels, device=device, dtype=dtype)) if affine else None
        )
        self.bias = (
            Parameter(factories.zeros(num_channels, device=device, dtype=dtype)) if affine else None
        )

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.group_norm`."""
        if input.ndim < 2 or input.shape[1] != self.num_channels:
            raise ValueError(
                f"GroupNorm({self.num_groups}, {self.num_channels}) expects input of shape "
                f"(N, {self.num_channels}, ...), got {input.shape}"
            )
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}"
