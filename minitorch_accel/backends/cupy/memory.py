"""GPU memory for the CuPy backend: the out-of-memory error, and the allocator that
tracks peak usage.

CuPy keeps freed blocks in a memory pool and reuses them, so "memory in use" (bytes
inside live arrays) and "memory held" (what the pool got from the driver) differ;
:class:`TrackingAllocator` also records the peak of the first. Nothing here imports
CuPy at module level.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from ..oom import OutOfMemoryError, format_bytes

__all__ = ["OutOfMemoryError", "TrackingAllocator", "format_bytes", "oom_guard", "translate_oom"]

#: ``cudaErrorMemoryAllocation``: how the CUDA runtime itself reports out of memory.
_CUDA_ERROR_MEMORY_ALLOCATION = 2


def is_out_of_memory(exc: BaseException) -> bool:
    """True for CuPy's ``OutOfMemoryError`` and for a CUDA runtime allocation failure."""
    if isinstance(exc, OutOfMemoryError):
        return True
    cupy = sys.modules.get("cupy")
    if cupy is None:
        return False
    if isinstance(exc, cupy.cuda.memory.OutOfMemoryError):
        return True
    runtime_error = cupy.cuda.runtime.CUDARuntimeError
    return isinstance(exc, runtime_error) and (
        getattr(exc, "status", None) == _CUDA_ERROR_MEMORY_ALLOCATION
    )


def translate_oom(exc: BaseException, device: int | None = None) -> OutOfMemoryError:
    """The :class:`OutOfMemoryError` describing ``exc`` (a CuPy out-of-memory error).

    Parameters
    ----------
    exc : BaseException
        The error CuPy raised; its requested size is read when it carries one.
    device : int, optional
        The GPU index; by default CuPy's current device.

    Returns
    -------
    OutOfMemoryError
        To be raised by the caller (``raise translate_oom(exc) from exc``).
    """
    if isinstance(exc, OutOfMemoryError):
        return exc
    requested = getattr(exc, "_size", None)
    free = total = allocated = held = limit = None
    index = device
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        try:
            if index is None:
                index = int(cupy.cuda.runtime.getDevice())
            with cupy.cuda.Device(index):
                free, total = (int(v) for v in cupy.cuda.runtime.memGetInfo())
                pool = cupy.get_default_memory_pool()
                allocated, held = int(pool.used_bytes()), int(pool.total_bytes())
                limit = int(pool.get_limit()) or None  # 0: no limit
        except Exception:  # the report must not fail while reporting a failure
            pass
    name = "cuda" if index is None else f"cuda:{index}"
    return OutOfMemoryError(name, requested, free, total, allocated, held, limit)


@contextlib.contextmanager
def oom_guard(device: int | None = None) -> Iterator[None]:
    """Turn a CuPy out-of-memory error raised inside the block into
    :class:`OutOfMemoryError`; every other exception passes through unchanged.

    Examples
    --------
    >>> with oom_guard():
    ...     pass
    """
    try:
        yield
    except Exception as exc:
        if is_out_of_memory(exc):
            raise translate_oom(exc, device) from exc
        raise


class TrackingAllocator:
    """CuPy's pool allocator, plus a peak-memory record and clear out-of-memory errors.

    Installed with ``cupy.cuda.set_allocator``. Every allocation goes to the default
    memory pool; an out-of-memory error becomes :class:`OutOfMemoryError`. Asking the
    pool for the bytes in use walks its live blocks, too slow to do on every small
    allocation, so the pool is asked once at least ``sample_bytes`` have been
    allocated since the last time: since frees only lower usage, the recorded peak is
    below the true one by less than ``sample_bytes`` (1 MiB) at worst.

    Parameters
    ----------
    cupy : module
        The imported ``cupy``.
    device_count : int
        Number of GPUs.
    sample_bytes : int
        Allocation volume between two readings of the pool.
    """

    def __init__(self, cupy: Any, device_count: int, sample_bytes: int = 1 << 20) -> None:
        self.pool = cupy.get_default_memory_pool()
        self._malloc = self.pool.malloc
        self._oom = cupy.cuda.memory.OutOfMemoryError
        self.sample_bytes = sample_bytes
        self.peak = [0] * device_count
        self._since = [0] * device_count

    def __call__(self, size: int) -> Any:
        """Allocate ``size`` bytes, raising :class:`OutOfMemoryError` when the device is full."""
        try:
            memory = self._malloc(size)
        except self._oom as exc:
            raise translate_oom(exc) from exc
        index = memory.device_id
        since = self._since[index] + size
        if since >= self.sample_bytes:
            self.observe(index, int(self.pool.used_bytes()))
            since = 0
        self._since[index] = since
        return memory

    def observe(self, index: int, used: int) -> int:
        """Record ``used`` bytes in use on GPU ``index``; return the peak so far."""
        if used > self.peak[index]:
            self.peak[index] = used
        return self.peak[index]

    def reset_peak(self, index: int, used: int) -> None:
        """Start a new peak measurement on GPU ``index`` from ``used`` bytes."""
        self.peak[index] = used
        self._since[index] = 0
