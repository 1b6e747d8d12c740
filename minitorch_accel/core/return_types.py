"""Named ``(values, indices)`` pairs returned by reductions along a dim, as
``torch.return_types``: ``max``, ``min``, ``sort``, ``topk``, ``kthvalue``, ``median``,
``mode``.

Each unpacks as a 2-tuple (``values, indices = x.max(1)``), indexes as one
(``x.max(1)[1]`` is the indices) and names its fields (``x.max(1).indices``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .tensor import Tensor


class max(NamedTuple):  # noqa: N801  (torch.return_types.max)
    """``(values, indices)`` of :meth:`Tensor.max` along a dim."""

    values: Tensor
    indices: Tensor


class min(NamedTuple):  # noqa: N801
    """``(values, indices)`` of :meth:`Tensor.min` along a dim."""

    values: Tensor
    indices: Tensor


class sort(NamedTuple):  # noqa: N801
    """``(values, indices)`` of :meth:`Tensor.sort`."""

    values: Tensor
    indices: Tensor


class topk(NamedTuple):  # noqa: N801
    """``(values, indices)`` of :meth:`Tensor.topk`."""

    values: Tensor
    indices: Tensor


class kthvalue(NamedTuple):  # noqa: N801
    """``(values, indices)`` of :meth:`Tensor.kthvalue`."""

    values: Tensor
    indices: Tensor


class median(NamedTuple):  # noqa: N801
    """``(values, indices)`` of :meth:`Tensor.median` along a dim."""

    values: Tensor
    indices: Tensor


class mode(NamedTuple):  # noqa: N801
    """``(values, indices)`` of :meth:`Tensor.mode`."""

    values: Tensor
    indices: Tensor
