"""Channel dropout layers: :class:`Dropout1d`, :class:`Dropout2d`, :class:`Dropout3d`.

Each zeroes whole channels in training mode (see
:mod:`~minitorch_accel.ops.channel_dropout`) and is the identity in evaluation mode.
"""

from __future__ import annotations

from ..core.tensor import Tensor
from ..ops.channel_dropout import dropout1d, dropout2d, dropout3d
from .module import Module


class _DropoutNd(Module):
    """``p`` and ``inplace``, checked and printed as PyTorch's dropout layers."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """Zero each channel of an ``(N, C, L)`` or ``(C, L)`` input with probability ``p``
    in training mode, scaling the others by ``1 / (1 - p)``; see
    :func:`~minitorch_accel.ops.channel_dropout.dropout1d`.

    Parameters
    ----------
    p : float
        Probability of zeroing a channel (default 0.5), in ``[0, 1]``.
    inplace : bool
        Write the result into the input (as PyTorch).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> layer = nn.Dropout1d(p=0.25)
    >>> layer
    Dropout1d(p=0.25, inplace=False)
    >>> x = mta.ones(2, 3, 4)
    >>> bool((layer.eval()(x) == x).all())
    True
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.ops.channel_dropout.dropout1d` when training."""
        return dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero each channel of an ``(N, C, H, W)`` input with probability ``p`` in
    training mode, scaling the others by ``1 / (1 - p)``; see
    :func:`~minitorch_accel.ops.channel_dropout.dropout2d` (which also says what a 3-D
    input does).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.Dropout2d(0.5)(mta.ones(2, 4, 3, 3)).shape
    (2, 4, 3, 3)
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.ops.channel_dropout.dropout2d` when training."""
        return dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zero each channel of an ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input with
    probability ``p`` in training mode, scaling the others by ``1 / (1 - p)``; see
    :func:`~minitorch_accel.ops.channel_dropout.dropout3d`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.Dropout3d(0.5)(mta.ones(2, 4, 2, 2, 2)).shape
    (2, 4, 2, 2, 2)
    """

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.ops.channel_dropout.dropout3d` when training."""
        return dropout3d(input, self.p, self.training, self.inplace)


__all__ = ["Dropout1d", "Dropout2d", "Dropout3d"]
