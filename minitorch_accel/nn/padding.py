"""Padding layers, as ``torch.nn``'s: ``ZeroPad``, ``ConstantPad``, ``ReflectionPad``,
``ReplicationPad`` and ``CircularPad``, each for 1, 2 and 3 spatial dims.

Each calls :func:`~minitorch_accel.ops.pad.pad` with its mode; ``padding`` is one int
for every side or a tuple ``(left, right[, top, bottom[, front, back]])``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.tensor import Tensor
from ..ops.pad import pad
from .module import Module


def _as_tuple(padding: Any, count: int, layer: str) -> tuple[int, ...]:
    """``padding`` as ``count`` ints: one int is repeated for every side.

    PyTorch takes any iterable as it is; a tuple of the wrong length is refused here
    when the layer is made rather than when it runs.
    """
    if isinstance(padding, (int, np.integer)) and not isinstance(padding, bool):
        return (int(padding),) * count
    widths = tuple(padding)
    if len(widths) != count:
        raise ValueError(
            f"{layer}: padding must be an int or a tuple of {count} ints, got {padding!r}"
        )
    return widths


class _PadNd(Module):
    """What the padding layers share: ``padding`` for ``spatial`` dims and a ``mode``."""

    mode = "constant"
    spatial = 1

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _as_tuple(padding, 2 * self.spatial, type(self).__name__)

    def forward(self, input: Tensor) -> Tensor:
        """``input`` padded (see :func:`~minitorch_accel.ops.pad.pad`)."""
        return pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        """The padding, as PyTorch prints it."""
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        """``input`` padded with :attr:`value`."""
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        """The padding and the value, as PyTorch prints them."""
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``: ``padding`` is an int or ``(left, right)``
    (negative widths crop).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.ConstantPad1d((1, 2), 3.5)(mta.ones(1, 2)).tolist()
    [[3.5, 1.0, 1.0, 3.5, 3.5]]
    """


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with ``value``: ``padding`` is an int or
    ``(left, right, top, bottom)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.ConstantPad2d(1, -1.0)(mta.ones(1, 2, 3)).shape
    (1, 4, 5)
    """

    spatial = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with ``value``: ``padding`` is an int or
    ``(left, right, top, bottom, front, back)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.ConstantPad3d(1, 0.0)(mta.ones(1, 1, 1, 1)).shape
    (1, 3, 3, 3)
    """

    spatial = 3


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros: ``padding`` is an int or ``(left, right)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.ZeroPad1d((2, 0))(mta.ones(1, 2)).tolist()
    [[0.0, 0.0, 1.0, 1.0]]
    """

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        """The padding, as PyTorch prints it."""
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last two dims with zeros: ``padding`` is an int or
    ``(left, right, top, bottom)``.

    Examples
    --------
    >>> from minitorch_accel import nn
    >>> nn.ZeroPad2d((1, 1, 2, 0))
    ZeroPad2d((1, 1, 2, 0))
    """

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        """The padding, as PyTorch prints it."""
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last three dims with zeros: ``padding`` is an int or
    ``(left, right, top, bottom, front, back)``.

    Examples
    --------
    >>> from minitorch_accel import nn
    >>> nn.ZeroPad3d(1).padding
    (1, 1, 1, 1, 1, 1)
    """

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        """The padding, as PyTorch prints it."""
        return f"{self.padding}"


class _ReflectionPadNd(_PadNd):
    mode = "reflect"


class _ReplicationPadNd(_PadNd):
    mode = "replicate"


class ReflectionPad1d(_ReflectionPadNd):
    """Pad the last dim with its reflection at the edge (the edge not repeated); each
    width must be smaller than the dim. Input ``(C, W)`` or ``(N, C, W)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.ReflectionPad1d(2)(mta.tensor([[1.0, 2.0, 3.0]])).tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]]
    """


class ReflectionPad2d(_ReflectionPadNd):
    """Pad the last two dims with their reflection; input ``(C, H, W)`` or
    ``(N, C, H, W)``, ``padding`` an int or ``(left, right, top, bottom)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.ReflectionPad2d(1)(mta.zeros(1, 2, 3, 3)).shape
    (1, 2, 5, 5)
    """

    spatial = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Pad the last three dims with their reflection; input ``(C, D, H, W)`` or
    ``(N, C, D, H, W)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.ReflectionPad3d(1)(mta.zeros(1, 2, 2, 2)).shape
    (1, 4, 4, 4)
    """

    spatial = 3


class ReplicationPad1d(_ReplicationPadNd):
    """Pad the last dim with copies of its edge values. Input ``(C, W)`` or
    ``(N, C, W)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.ReplicationPad1d((1, 2))(mta.tensor([[1.0, 2.0]])).tolist()
    [[1.0, 1.0, 2.0, 2.0, 2.0]]
    """


class ReplicationPad2d(_ReplicationPadNd):
    """Pad the last two dims with copies of their edges; input ``(C, H, W)`` or
    ``(N, C, H, W)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.ReplicationPad2d((0, 0, 1, 0))(mta.tensor([[[1.0], [2.0]]])).tolist()
    [[[1.0], [1.0], [2.0]]]
    """

    spatial = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Pad the last three dims with copies of their edges; input ``(C, D, H, W)`` or
    ``(N, C, D, H, W)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.ReplicationPad3d(2)(mta.zeros(1, 1, 1, 1)).shape
    (1, 5, 5, 5)
    """

    spatial = 3


class _CircularPadNd(_PadNd):
    mode = "circular"
    dims: tuple[int, int] = (2, 3)

    def forward(self, input: Tensor) -> Tensor:
        """``input`` wrapped around (see :func:`~minitorch_accel.ops.pad.pad`)."""
        if input.ndim not in self.dims:
            low, high = self.dims
            raise ValueError(f"expected {low}D or {high}D input (got {input.ndim}D input)")
        return pad(input, self.padding, self.mode)


class CircularPad1d(_CircularPadNd):
    """Pad the last dim with the input wrapped around (periodic); each width at most
    the dim. Input ``(C, W)`` or ``(N, C, W)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.CircularPad1d((1, 2))(mta.tensor([[1.0, 2.0, 3.0]])).tolist()
    [[3.0, 1.0, 2.0, 3.0, 1.0, 2.0]]
    """


class CircularPad2d(_CircularPadNd):
    """Pad the last two dims with the input wrapped around; input ``(C, H, W)`` or
    ``(N, C, H, W)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.CircularPad2d(1)(mta.zeros(1, 2, 2)).shape
    (1, 4, 4)
    """

    spatial = 2
    dims = (3, 4)


class CircularPad3d(_CircularPadNd):
    """Pad the last three dims with the input wrapped around; input ``(C, D, H, W)`` or
    ``(N, C, D, H, W)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.CircularPad3d(1)(mta.zeros(1, 1, 1, 1)).shape
    (1, 3, 3, 3)
    """

    spatial = 3
    dims = (4, 5)


__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]
