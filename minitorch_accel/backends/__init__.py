"""Array backends, the registry and devices.

``cpu`` (NumPy, with virtual ``cpu:N`` devices, in :mod:`.numpy`) is always there;
``cuda`` (CuPy, in :mod:`.cupy`) is registered too and built lazily, on first use. A
backend is one folder with one ``register()`` call; nothing outside this package imports
CuPy.
"""

from __future__ import annotations

from . import cuda, cudnn, cupy, numpy
from .base import Backend, CaptureError, Communicator, Transfer, TransferStats, transfer_stats
from .device import Device, DeviceLike
from .registry import available, get, register, registered, unregister

# Each backend is one folder with one register() call.
numpy.register()
cupy.register()

__all__ = [
    "Backend",
    "CaptureError",
    "Communicator",
    "Device",
    "DeviceLike",
    "Transfer",
    "TransferStats",
    "available",
    "cuda",
    "cudnn",
    "get",
    "register",
    "registered",
    "transfer_stats",
    "unregister",
]
