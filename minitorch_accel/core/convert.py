"""Turning Python data and foreign arrays into backend arrays, and moving arrays between
devices (the one place where transfers are counted).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends import Device, DeviceLike, registry, transfer_stats
from .defaults import get_default_device, get_default_dtype

HOST = Device("cpu")
_SUPPORTED_KINDS = "biuf"
DTypeLike = Any


def as_dtype(dtype: DTypeLike) -> np.dtype[Any]:
    """Normalize a dtype given as a string, a NumPy dtype or a Python type.

    Raises
    ------
    TypeError
        For anything that is not bool, an integer or a floating-point type.
    """
    try:
        result = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"not a dtype: {dtype!r}") from exc
    if result.kind not in _SUPPORTED_KINDS:
        raise TypeError(
            f"unsupported dtype {result}: tensors hold bool, integers or floating point"
        )
    return result


def move_array(array: Any, src: Device, dst: Device, non_blocking: bool = False) -> Any:
    """Copy a backend array from ``src`` to ``dst`` and count the bytes moved.

    Between two backends the data goes through the host: ``download`` from the source,
    ``upload`` to the destination (from pinned memory, asynchronously, where the
    backend can and ``non_blocking`` asks for it).
    """
    src_backend, dst_backend = src.backend, dst.backend
    if src_backend is dst_backend:
        out = src_backend.copy_between(array, src, dst, non_blocking)
    elif src_backend.shares_host_memory:
        out = dst_backend.upload(array, dst, non_blocking)
    else:
        host = src_backend.download(array)
        if not dst_backend.shares_host_memory:
            host = dst_backend.upload(host, dst, non_blocking)
        out = host
    transfer_stats.record(src, dst, int(array.nbytes))
    return out


def to_array(data: Any, dtype: DTypeLike, device: DeviceLike | None) -> tuple[Device, Any]:
    """The device and backend array for ``Tensor(data, dtype, device)``.

    Python floats become float32 and Python ints int64 (as in PyTorch); arrays keep
    their dtype unless ``dtype`` is given. A CuPy array stays on its GPU unless
    ``device`` says otherwise (the backend that :meth:`~minitorch_accel.backends.base.Backend.owns`
    an array says where it lives).
    """
    if dtype is not None:
        dtype = as_dtype(dtype)
    source = _device_of_array(data)
    if device is None and source is HOST:
        device = get_default_device()
    dev = source if device is None else Device(device)
    if source is not dev and not source.shares_host_memory:
        data = source.backend.to_host(data)
    if dtype is None and not hasattr(data, "dtype"):
        probe = np.asarray(data)
        if probe.dtype.kind == "f":
            dtype = get_default_dtype()
        elif probe.dtype.kind in "iu":
            dtype = np.dtype(np.int64)
        data = probe
    array = dev.backend.asarray(data, dev, dtype)
    as_dtype(array.dtype)
    return dev, array


def _device_of_array(data: Any) -> Device:
    if isinstance(data, (np.ndarray, np.generic, list, tuple, int, float, bool)):
        return HOST
    return registry.device_of_array(data) or HOST
