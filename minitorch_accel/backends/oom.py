"""Out-of-memory errors every backend raises, and the byte formatting their messages use.

:class:`OutOfMemoryError` is raised by a GPU backend when its device is full and by any
device capped with :func:`minitorch_accel.memory.set_memory_limit`; nothing here imports
a backend's array library.
"""

from __future__ import annotations

from typing import Any


def format_bytes(n: int | None) -> str:
    """``1536`` -> ``"1.50 KiB"``; None -> ``"unknown"``."""
    if n is None:
        return "unknown"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1024
    return f"{value:.2f} GiB"  # pragma: no cover  (the loop always returns)


class OutOfMemoryError(RuntimeError, MemoryError):
    """A device ran out of memory. Says how much was asked for and how much was free.

    Raised by a GPU, and by any device (``cpu``, ``cpu:1``...) capped with
    :func:`minitorch_accel.memory.set_memory_limit`, with the same message. A subclass
    of both ``RuntimeError`` (as PyTorch's) and ``MemoryError`` (as CuPy's), so either
    ``except`` clause catches it.

    Attributes
    ----------
    device : str
        For example ``"cuda:0"``.
    requested, free, total, allocated, held : int or None
        Bytes: asked for; free on the device and its capacity; in live arrays and held
        by the memory pool of this process. None where unknown.
    limit : int or None
        The cap set on the device (then ``total`` is the cap), or None.
    """

    def __init__(
        self,
        device: str,
        requested: int | None = None,
        free: int | None = None,
        total: int | None = None,
        allocated: int | None = None,
        held: int | None = None,
        limit: int | None = None,
    ) -> None:
        self.device, self.requested, self.free, self.total = device, requested, free, total
        self.allocated, self.held, self.limit = allocated, held, limit
        what = "CUDA out of memory" if device.startswith("cuda") else "Out of memory"
        capped = (
            ""
            if limit is None
            else f"; limit {format_bytes(limit)} set by minitorch_accel.memory.set_memory_limit"
        )
        super().__init__(
            f"{what} on {device}: tried to allocate {format_bytes(requested)}; "
            f"{format_bytes(free)} free of {format_bytes(total)} total "
            f"(this process: {format_bytes(allocated)} in arrays, {format_bytes(held)} held "
            f"by the memory pool{capped}). Release cached blocks with "
            "minitorch_accel.cuda.empty_cache(), free tensors you no longer need, or use "
            "a smaller batch, gradient accumulation (FitConfig(accumulate=k) for fit), activation "
            "checkpointing (minitorch_accel.utils.checkpoint) or mixed precision "
            "(minitorch_accel.amp)"
        )

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (
            type(self),
            (
                self.device,
                self.requested,
                self.free,
                self.total,
                self.allocated,
                self.held,
                self.limit,
            ),
        )
