"""Timing code correctly on CPUs and GPUs: :class:`Timer` and :func:`benchmark`.

A GPU runs kernels asynchronously: a Python call that launches one returns long
before the kernel ends. Reading the clock right after it measures the launch, not
the work. So both tools wait for the device (``synchronize``) before reading the
clock, or time the GPU itself with CUDA events. The first calls are slow too (CuPy
compiles each kernel on first use, memory pools grow): :func:`benchmark` runs a few
warm-up calls that are not measured.

Examples
--------
>>> import minitorch_accel as mta
>>> from minitorch_accel.utils.timing import Timer, benchmark
>>> x = mta.ones(64, 64)
>>> with Timer() as t:
...     y = x @ x
>>> t.elapsed >= 0
True
>>> result = benchmark(lambda: x @ x, warmup=1, repeat=5)
>>> len(result.times)
5
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..backends import Device, DeviceLike

__all__ = ["BenchmarkResult", "Timer", "benchmark"]


@dataclass(frozen=True)
class BenchmarkResult:
    """The times (seconds) of the measured calls of :func:`benchmark`.

    Attributes
    ----------
    times : tuple of float
        One duration per measured call, in order.
    device : str
        The device that was synchronized (``"cpu"`` when none).
    """

    times: tuple[float, ...]
    device: str = "cpu"

    @property
    def median(self) -> float:
        """The median time (s): the figure to report, robust to outliers."""
        return statistics.median(self.times)

    @property
    def mean(self) -> float:
        """The mean time (s)."""
        return statistics.fmean(self.times)

    @property
    def min(self) -> float:
        """The shortest time (s)."""
        return min(self.times)

    @property
    def max(self) -> float:
        """The longest time (s)."""
        return max(self.times)

    @property
    def stdev(self) -> float:
        """The sample standard deviation (s); 0 for a single time."""
        return statistics.stdev(self.times) if len(self.times) > 1 else 0.0

    def __str__(self) -> str:
        return (
            f"median {self.median * 1e3:.3f} ms (mean {self.mean * 1e3:.3f}, "
            f"min {self.min * 1e3:.3f}, max {self.max * 1e3:.3f}; "
            f"{len(self.times)} runs on {self.device})"
        )


class Timer:
    """Time a block of code, waiting for the device's queued work to finish.

    On entry the device is synchronized (work queued before the block is not counted);
    on exit it is synchronized again and the clock read. On a device whose backend
    records timing events (a GPU: :meth:`~minitorch_accel.backends.base.Backend.record_event`)
    with ``cuda_events=True`` the device timestamps two events instead, which measures
    its own time between the start and the end of the block.

    Parameters
    ----------
    device : str or Device, optional
        The device whose work is timed; None (default) times host code only.
    cuda_events : bool
        Use CUDA events on a CUDA device (default) rather than the host clock.

    Attributes
    ----------
    elapsed : float
        Seconds, set when the block exits.
    """

    def __init__(self, device: DeviceLike | None = None, cuda_events: bool = True) -> None:
        self.device = None if device is None else Device(device)
        self.cuda_events = cuda_events
        self.elapsed = math.nan
        self._start: Any = None
        self._events: tuple[Any, None] | None = None

    @property
    def elapsed_ms(self) -> float:
        """:attr:`elapsed` in milliseconds."""
        return self.elapsed * 1e3

    def _sync(self) -> None:
        if self.device is not None:
            self.device.backend.synchronize(self.device)

    def __enter__(self) -> Timer:
        self._sync()
        device = self.device
        if device is not None and self.cuda_events:
            start = device.backend.record_event(device)  # None: the host clock it is
            self._events = None if start is None else (start, None)
        if self._events is None:
            self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._events is not None:
            assert self.device is not None
            backend = self.device.backend
            end = backend.record_event(self.device)
            self.elapsed = backend.elapsed_time(self._events[0], end)
            self._events = None
        else:
            self._sync()
            self.elapsed = time.perf_counter() - self._start


def benchmark(
    fn: Callable[[], Any],
    *,
    device: DeviceLike | None = None,
    warmup: int = 3,
    repeat: int = 20,
    cuda_events: bool = True,
) -> BenchmarkResult:
    """Time ``fn()``: ``warmup`` unmeasured calls, then ``repeat`` measured ones.

    Each measured call runs inside a :class:`Timer` on ``device``, so queued GPU work
    is included and nothing from one call leaks into the next.

    Parameters
    ----------
    fn : callable
        Called with no arguments (wrap arguments in a lambda).
    device : str or Device, optional
        The device ``fn`` runs on; None for host-only code.
    warmup, repeat : int
        Numbers of unmeasured and measured calls (``repeat`` at least 1).
    cuda_events : bool
        Passed to :class:`Timer`.

    Returns
    -------
    BenchmarkResult
        With ``median``, ``mean``, ``min``, ``max``, ``stdev`` and every time.

    Raises
    ------
    ValueError
        If ``repeat < 1`` or ``warmup < 0``.
    """
    if repeat < 1 or warmup < 0:
        raise ValueError(f"benchmark needs repeat >= 1 and warmup >= 0, got {repeat}, {warmup}")
    dev = None if device is None else Device(device)
    for _ in range(warmup):
        fn()
    if dev is not None:
        dev.backend.synchronize(dev)
    times = []
    for _ in range(repeat):
        with Timer(dev, cuda_events=cuda_events) as timer:
            fn()
        times.append(timer.elapsed)
    return BenchmarkResult(tuple(times), "cpu" if dev is None else str(dev))
