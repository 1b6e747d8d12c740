"""``nn.parallel``, as ``torch.nn.parallel``: :class:`DataParallel` and
:func:`data_parallel`, defined in :mod:`minitorch_accel.parallel.data_parallel`.

They need the parallel layer's threads, and ``nn`` sits below ``parallel``, so this
module reaches them on first use (``import minitorch_accel.nn.parallel``, as PyTorch
scripts write it, imports nothing above ``nn``).

Examples
--------
>>> import minitorch_accel as mta
>>> import minitorch_accel.nn as nn
>>> import minitorch_accel.nn.parallel
>>> net = nn.Linear(2, 1)
>>> nn.parallel.data_parallel(net, mta.ones(4, 2)).shape
(4, 1)
>>> nn.parallel.DataParallel is nn.DataParallel
True
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from ..backends import DeviceLike
from .module import Module

# DataParallel is reached through __getattr__ (documented with its own module)
__all__ = ["data_parallel"]


def _implementation() -> Any:
    return importlib.import_module("minitorch_accel.parallel.data_parallel")


def data_parallel(
    module: Module,
    inputs: Any,
    device_ids: Sequence[DeviceLike | int] | None = None,
    output_device: DeviceLike | int | None = None,
    dim: int = 0,
    module_kwargs: dict[str, Any] | None = None,
) -> Any:
    """``module(*inputs)`` with the batch split over ``device_ids`` for this one call; see
    :func:`minitorch_accel.parallel.data_parallel.data_parallel`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> net = nn.Linear(3, 2).to("cpu:1")
    >>> nn.parallel.data_parallel(net, mta.ones(4, 3, device="cpu:1"), ["cpu:1", "cpu:2"]).shape
    (4, 2)
    """
    return _implementation().data_parallel(
        module, inputs, device_ids, output_device, dim, module_kwargs
    )


def __getattr__(name: str) -> Any:
    """``DataParallel``, the class of :mod:`minitorch_accel.parallel.data_parallel`."""
    if name == "DataParallel":
        return _implementation().DataParallel
    raise AttributeError(f"module 'minitorch_accel.nn.parallel' has no attribute {name!r}")
