"""GPU utilities, as in ``torch.cuda``: availability, synchronization, memory.

Every function is safe to call on a machine without CuPy or without a GPU: the
questions answer ``False`` or ``0`` (and :func:`empty_cache` does nothing), while the
calls that need a GPU (:func:`synchronize`, :func:`get_device_name`,
:func:`mem_get_info`, :func:`current_device`) raise the backend's ``RuntimeError``,
which says whether CuPy, the driver or the device is missing.

``device`` arguments accept ``None`` (the current GPU), an index, ``"cuda:1"`` or a
:class:`~minitorch_accel.Device`.

This namespace is a facade: every function asks the backend registered as ``"cuda"``
(:data:`BACKEND`) through :class:`~minitorch_accel.backends.base.Backend` methods and
imports nothing of CuPy.

:mod:`minitorch_accel.cuda.graphs` captures a whole training step as a CUDA graph
(:func:`~minitorch_accel.cuda.graphs.capture_step`, and PyTorch's :class:`CUDAGraph` and
:func:`graph`).

Examples
--------
>>> import minitorch_accel as mta
>>> n = mta.cuda.device_count()     # 0 on a machine without a GPU
>>> if mta.cuda.is_available():
...     x = mta.ones(1024, 1024, device="cuda")
...     used = mta.cuda.memory_allocated()   # bytes in live arrays
...     mta.cuda.empty_cache()               # give cached blocks back to the driver
"""

from __future__ import annotations

import contextlib
from typing import Union

from .. import memory as _memory
from ..backends import Backend, Device, registry
from ..backends.oom import OutOfMemoryError, format_bytes
from . import graphs
from .graphs import CUDAGraph, capture_step, graph

DeviceArg = Union[int, str, Device, None]  # noqa: UP007  (a runtime alias)

__all__ = [
    "CUDAGraph",
    "capture_step",
    "graph",
    "graphs",
    "OutOfMemoryError",
    "current_device",
    "device_count",
    "empty_cache",
    "format_bytes",
    "get_device_name",
    "is_available",
    "max_memory_allocated",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "memory_summary",
    "oom_guard",
    "reset_peak_memory_stats",
    "set_per_process_memory_fraction",
    "synchronize",
    "translate_oom",
]


#: The device type (and registry name) of the backend this namespace speaks for.
BACKEND = "cuda"


def _backend() -> Backend | None:
    """The ``cuda`` backend, or None when it cannot run here."""
    try:
        return registry.get(BACKEND)
    except (RuntimeError, ImportError):
        return None


def _require() -> Backend:
    """The ``cuda`` backend; raises its clear ``RuntimeError`` when it cannot run here."""
    return registry.get(BACKEND)


def _device(device: DeviceArg) -> Device | None:
    if device is None:
        return None
    if isinstance(device, int):
        if device < 0:
            raise ValueError(f"a GPU index is non-negative, got {device}")
        return Device(f"{BACKEND}:{device}")
    dev = Device(device)
    if dev.type != BACKEND:
        raise ValueError(f"expected a CUDA device such as 'cuda:0', got '{dev}'")
    return dev


def is_available() -> bool:
    """True when CuPy is installed and at least one CUDA GPU answers."""
    return _backend() is not None


def device_count() -> int:
    """The number of usable GPUs (0 without CuPy, a driver or a GPU)."""
    backend = _backend()
    return 0 if backend is None else backend.device_count()


def current_device() -> int:
    """The index of CuPy's current GPU in this thread."""
    return _require().current_device()


def synchronize(device: DeviceArg = None) -> None:
    """Wait until every kernel and copy queued on ``device`` has finished.

    GPU work is asynchronous: a timing read without synchronizing first measures
    only how long it took to *queue* the work.
    """
    _require().synchronize(_device(device))


def get_device_name(device: DeviceArg = None) -> str:
    """The GPU's product name, e.g. ``"NVIDIA H100 80GB HBM3"``."""
    return _require().device_name(_device(device))


def mem_get_info(device: DeviceArg = None) -> tuple[int, int]:
    """``(free, total)`` bytes of the GPU, as the driver reports them."""
    stats = _require().memory_stats(_gpu(device))
    return stats["free"], stats["total"]


def memory_stats(device: DeviceArg = None) -> dict[str, int]:
    """``allocated``, ``held``, ``peak``, ``free`` and ``total`` bytes (all 0 without a GPU).

    See :meth:`minitorch_accel.backends.base.Backend.memory_stats`.
    """
    _device(device)  # checks the argument, GPU or not
    backend = _backend()
    if backend is None:
        return {"allocated": 0, "held": 0, "peak": 0, "free": 0, "total": 0}
    return backend.memory_stats(_gpu(device))


def _gpu(device: DeviceArg) -> Device:
    """``device`` as a Device, None meaning the current GPU."""
    dev = _device(device)
    return dev if dev is not None else Device(f"{BACKEND}:{current_device()}")


def memory_allocated(device: DeviceArg = None) -> int:
    """Bytes in live arrays on ``device`` (0 without a GPU); see
    :func:`minitorch_accel.memory.memory_allocated`.
    """
    _device(device)  # checks the argument, GPU or not
    if _backend() is None:
        return 0
    return _memory.memory_allocated(_gpu(device))


def max_memory_allocated(device: DeviceArg = None) -> int:
    """The most bytes in live arrays since the start or :func:`reset_peak_memory_stats`
    (see :func:`minitorch_accel.memory.max_memory_allocated`).

    On a GPU exact to within 1 MiB (the CuPy backend samples its pool's usage).
    """
    _device(device)
    if _backend() is None:
        return 0
    return _memory.max_memory_allocated(_gpu(device))


def memory_reserved(device: DeviceArg = None) -> int:
    """Bytes held by CuPy's memory pool: live arrays plus freed blocks kept for reuse.

    This, not :func:`memory_allocated`, is what ``nvidia-smi`` shows as used by the
    process (plus the CUDA context). :func:`empty_cache` lowers it.
    """
    return memory_stats(device)["held"]


def reset_peak_memory_stats(device: DeviceArg = None) -> None:
    """Restart the peak measurement from the bytes in use now (no-op without a GPU);
    see :func:`minitorch_accel.memory.reset_peak_memory_stats`.
    """
    _device(device)
    if _backend() is not None:
        _memory.reset_peak_memory_stats(_gpu(device))


def memory_summary(device: DeviceArg = None) -> str:
    """The table of :func:`minitorch_accel.memory.memory_summary` for a GPU ("no GPU"
    without one).
    """
    _device(device)
    if _backend() is None:
        return "no GPU"
    return _memory.memory_summary(_gpu(device))


def set_per_process_memory_fraction(fraction: float, device: DeviceArg = None) -> None:
    """Cap CuPy's pool on ``device`` at ``fraction`` of the GPU's memory, as
    ``torch.cuda.set_per_process_memory_fraction``; raises the backend's
    ``RuntimeError`` without a GPU.
    """
    _require()
    _memory.set_per_process_memory_fraction(fraction, _gpu(device))


def empty_cache() -> None:
    """Give every cached, unused block of CuPy's memory pools back to the driver.

    Live tensors are untouched; later allocations become slower until the pool has
    grown again. A no-op without a GPU.
    """
    backend = _backend()
    if backend is not None:
        backend.empty_cache()


def translate_oom(exc: BaseException, device: DeviceArg = None) -> OutOfMemoryError:
    """The :class:`OutOfMemoryError` describing a CuPy out-of-memory error ``exc``.

    Use as ``raise translate_oom(exc, device) from exc``. The result names the bytes
    requested (when CuPy says), and the free and total memory of the device.
    """
    dev, backend = _device(device), _backend()
    if backend is not None:
        return backend.translate_oom(exc, dev)
    if isinstance(exc, OutOfMemoryError):
        return exc
    return OutOfMemoryError(BACKEND if dev is None else str(dev), getattr(exc, "_size", None))


def oom_guard(device: DeviceArg = None) -> contextlib.AbstractContextManager[None]:
    """A context manager that turns CuPy out-of-memory errors into :class:`OutOfMemoryError`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> with mta.cuda.oom_guard():
    ...     pass
    """
    backend = _backend()
    if backend is None:
        return contextlib.nullcontext()
    return backend.oom_guard(_device(device))
