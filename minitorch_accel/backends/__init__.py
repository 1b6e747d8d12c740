"""Array backends, the registry and devices.

``cpu`` (NumPy, with virtual ``cpu:N`` devices) is always there; ``cuda`` (CuPy) is
registered too and built lazily, on first use.
"""

from __future__ import annotations

from . import cuda
from .base import Backend, CaptureError, Transfer, TransferStats, transfer_stats
from .device import Device, DeviceLike
from .registry import available, get, register, registered, unregister


def _make_numpy() -> Backend:
    from .numpy_backend import NumpyBackend

    return NumpyBackend()


def _make_cupy() -> Backend:
    from .cupy_backend import CupyBackend

    return CupyBackend()


register("cpu", _make_numpy)
register("cuda", _make_cupy)

__all__ = [
    "Backend",
    "CaptureError",
    "Device",
    "DeviceLike",
    "Transfer",
    "TransferStats",
    "available",
    "cuda",
    "get",
    "register",
    "registered",
    "transfer_stats",
    "unregister",
]
