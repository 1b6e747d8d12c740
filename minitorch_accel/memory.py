"""Memory on every device: what is in use, its peak, by category, and a cap.

The names are those of ``torch.cuda`` (:func:`memory_allocated`,
:func:`max_memory_allocated`, :func:`reset_peak_memory_stats`, :func:`memory_summary`,
:func:`set_per_process_memory_fraction`), with a ``device`` argument that may be
``"cpu"``, ``"cpu:1"`` or ``"cuda:0"``; ``minitorch_accel.cuda``'s functions of the same
names call these.

**Counting.** While tracking is on (:func:`enable_tracking`, or a limit is set), every
array made for a tensor is counted when it is allocated and uncounted when it is
released, with the arrays an op saves for its backward; views count their buffer once
(see :mod:`minitorch_accel.backends.memory_tracker`). Tensors created before tracking
started are not counted. On a GPU, :func:`memory_allocated` and
:func:`max_memory_allocated` read CuPy's memory pool instead, which always counts.

**Categories.** ``parameters``, ``gradients`` (everything the backward pass allocates),
``optimizer state`` (what ``Optimizer.step`` allocates), ``activations`` (the tensors and
arrays the graph keeps for backward) and ``other`` (inputs, labels, tensors made under
``no_grad``). :func:`category` labels a block of your own code.

**A cap.** :func:`set_memory_limit` makes the allocation that would take a device past a
number of bytes raise :class:`~minitorch_accel.cuda.OutOfMemoryError` (also importable
from here), the GPU's error with the GPU's message,
so the out-of-memory lesson runs on a laptop on ``cpu:1``. On a GPU it caps CuPy's pool.

Examples
--------
>>> import minitorch_accel as mta
>>> from minitorch_accel import memory
>>> with memory.tracking():
...     x = mta.zeros(256, 256, device="cpu:1")        # float32: 262144 bytes
...     memory.memory_allocated("cpu:1")
262144
>>> memory.set_memory_limit("cpu:1", 300_000)
>>> try:
...     y = mta.zeros(256, 256, device="cpu:1")
... except memory.OutOfMemoryError as error:
...     print(str(error).split(";")[0])
Out of memory on cpu:1: tried to allocate 256.00 KiB
>>> memory.set_memory_limit("cpu:1", None)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .backends import Device, DeviceLike
from .backends.memory_tracker import CATEGORIES, tracker
from .backends.oom import OutOfMemoryError as OutOfMemoryError
from .backends.oom import format_bytes

__all__ = [
    "CATEGORIES",
    "category",
    "enable_tracking",
    "get_memory_limit",
    "is_tracking",
    "max_memory_allocated",
    "memory_allocated",
    "memory_by_category",
    "memory_stats",
    "memory_summary",
    "reset_peak_memory_stats",
    "set_memory_limit",
    "set_per_process_memory_fraction",
    "tracking",
]


def _device(device: DeviceLike | None) -> Device:
    return Device("cpu" if device is None else device)


def enable_tracking(enabled: bool = True) -> None:
    """Count the arrays of tensors from now on (``False`` stops counting new ones;
    a device with a limit keeps counting). Off by default: it then costs nothing.
    """
    tracker.enable(enabled)


def is_tracking() -> bool:
    """Whether new tensors are being counted."""
    return tracker.enabled


@contextlib.contextmanager
def tracking(enabled: bool = True) -> Iterator[None]:
    """Count (or not) inside the block; the previous setting comes back after it.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> with mta.memory.tracking():
    ...     mta.memory.is_tracking()
    True
    """
    previous = tracker._requested
    tracker.enable(enabled)
    try:
        yield
    finally:
        tracker.enable(previous)


def category(name: str | None) -> contextlib.AbstractContextManager[None]:
    """Count what is allocated in the block under ``name`` (one of :data:`CATEGORIES`;
    None restores the default rule).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> with mta.memory.tracking(), mta.memory.category("optimizer state"):
    ...     buf = mta.zeros(10, device="cpu:2")
    ...     mta.memory.memory_by_category("cpu:2")["optimizer state"]
    40
    """
    return tracker.category(name)


def memory_stats(device: DeviceLike | None = None) -> dict[str, int]:
    """The counters of ``device`` (bytes, default ``"cpu"``).

    ``allocated``, ``peak``, ``held`` (with CuPy's pool: cached blocks included),
    ``free`` and ``total`` (the limit if set), ``limit`` (0: none), ``allocations`` and
    ``frees`` (counted buffers), and per category ``allocated.<category>`` and
    ``peak.<category>`` (the split at the moment of the peak).
    """
    dev = _device(device)
    stats = dict(dev.backend.memory_stats(dev))
    counts = tracker.counts(dev)
    stats["limit"] = dev.backend.memory_limit(dev) or 0
    stats["allocations"], stats["frees"] = counts.allocations, counts.frees
    for name in CATEGORIES:
        stats[f"allocated.{name}"] = counts.by_category[name]
        stats[f"peak.{name}"] = counts.peak_by_category[name]
    return stats


def memory_allocated(device: DeviceLike | None = None) -> int:
    """Bytes in the arrays of live tensors on ``device`` (default ``"cpu"``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> with mta.memory.tracking():
    ...     before = mta.memory.memory_allocated("cpu:3")
    ...     x = mta.ones(1000, dtype="float64", device="cpu:3")
    ...     mta.memory.memory_allocated("cpu:3") - before
    8000
    """
    return _device(device).backend.memory_stats(_device(device))["allocated"]


def max_memory_allocated(device: DeviceLike | None = None) -> int:
    """The most bytes :func:`memory_allocated` reached since counting started or
    :func:`reset_peak_memory_stats`.
    """
    dev = _device(device)
    return dev.backend.memory_stats(dev)["peak"]


def reset_peak_memory_stats(device: DeviceLike | None = None) -> None:
    """Start a new peak measurement on ``device`` from the bytes in use now."""
    dev = _device(device)
    dev.backend.reset_peak_memory_stats(dev)


def memory_by_category(device: DeviceLike | None = None, peak: bool = False) -> dict[str, int]:
    """Counted bytes on ``device`` by category, now or (``peak=True``) at the peak."""
    counts = tracker.counts(_device(device))
    return dict(counts.peak_by_category if peak else counts.by_category)


def memory_summary(device: DeviceLike | None = None) -> str:
    """A table of the memory of ``device``: each category now and at the peak.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> print(mta.memory.memory_summary("cpu:7").splitlines()[1])
    category              current       at peak
    """
    dev = _device(device)
    stats = memory_stats(dev)
    limit = f"limit {format_bytes(stats['limit'])}" if stats["limit"] else "no limit"
    state = "tracking on" if tracker.enabled else "tracking off"
    lines = [
        f"Memory on {dev} ({state}; {limit})",
        f"{'category':<16} {'current':>12} {'at peak':>13}",
    ]
    for name in CATEGORIES:
        now, top = stats[f"allocated.{name}"], stats[f"peak.{name}"]
        lines.append(f"{name:<16} {format_bytes(now):>12} {format_bytes(top):>13}")
    lines.append(
        f"{'total':<16} {format_bytes(stats['allocated']):>12} {format_bytes(stats['peak']):>13}"
    )
    lines.append(f"allocations: {stats['allocations']}, frees: {stats['frees']}")
    return "\n".join(lines)


def set_memory_limit(device: DeviceLike, nbytes: int | None) -> None:
    """Cap ``device`` at ``nbytes`` bytes in tensors; None removes the cap.

    Past it, the allocation that would cross the cap raises
    :class:`~minitorch_accel.cuda.OutOfMemoryError`
    (bytes requested, in use, the limit, what to try); tensors made before stay intact.
    A CPU cap switches counting on; it counts the tensors created from then on. On a GPU
    this sets CuPy's pool limit. PyTorch has no such function for the CPU.

    Raises
    ------
    ValueError
        If ``nbytes`` is negative or not a whole number.
    """
    dev = _device(device)
    dev.backend.set_memory_limit(dev, nbytes)


def get_memory_limit(device: DeviceLike | None = None) -> int | None:
    """The cap of ``device`` in bytes, or None."""
    dev = _device(device)
    return dev.backend.memory_limit(dev)


def set_per_process_memory_fraction(fraction: float, device: DeviceLike | None = None) -> None:
    """Cap ``device`` at ``fraction`` of its memory (the machine's RAM for ``cpu``).

    Raises
    ------
    ValueError
        If ``fraction`` is not within [0, 1].
    """
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"a memory fraction must be within [0, 1], got {fraction}")
    dev = _device(device)
    dev.backend.set_memory_limit(dev, int(fraction * dev.backend.total_memory(dev)))
