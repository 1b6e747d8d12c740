"""Intra-op parallelism on the CPU: a small thread pool and the thread count.

NumPy releases the GIL inside its loops and BLAS calls, so Python threads that each
work on their own slice of a batch run on separate cores. :func:`parallel_for` splits
``range(total)`` into a few contiguous chunks per thread, claimed in order by the
calling thread and the pool's workers until none is left. Two pools of threads must not
fight over the cores, so there is one: BLAS is held at one thread, and a large matrix
product is split over this pool like any other loop
(:mod:`~minitorch_accel.backends.numpy.fast_gemm`), as PyTorch runs both on one OpenMP
pool. (OpenBLAS's own threads keep spinning for a while after each call, taking the
cores the elementwise work that follows needs.)

The thread count follows ``torch.set_num_threads``: :func:`set_num_threads`,
:func:`get_num_threads`, by default the cores this process may use (its CPU affinity
and the cgroup's CPU quota), or ``MINITORCH_ACCEL_NUM_THREADS``. At one thread no worker
starts and every op runs its reference code. BLAS's threads are set through
``threadpoolctl`` when the thread count is first chosen; NumPy products a program makes
outside the framework then run on one thread too (``threadpoolctl.threadpool_limits``
raises it for a block of code).

The workers belong to a :class:`concurrent.futures.ThreadPoolExecutor`: they are not
daemons, and the interpreter joins them at exit. Several Python threads (towers,
pipeline stages) may call :func:`parallel_for` at once: each call also runs its own
chunks, so it finishes even when every worker is busy with another call's.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

ENV_VAR = "MINITORCH_ACCEL_NUM_THREADS"

#: Chunks per thread: a thread that another process keeps off its core leaves its
#: unclaimed chunk to the others (with one chunk each, all would wait for it), while
#: each chunk costs a hand-off and some Python work under the GIL (measured on the
#: LeNet step at 2 threads: 2 per thread as fast as 4 at batch 256, 12% faster at 64).
CHUNKS_PER_THREAD = 2

_config_lock = threading.Lock()
_num_threads: int | None = None  # None: not chosen yet (default on first use)
_executor: ThreadPoolExecutor | None = None
_inside = threading.local()  # .active: this thread is running a chunk


def _cgroup_cpu_limit(path: str = "/sys/fs/cgroup/cpu.max") -> int | None:
    """Whole CPUs allowed by a cgroup v2 quota (``"200000 100000"`` -> 2), or None."""
    try:
        with open(path) as f:
            quota, period = f.read().split()[:2]
    except (OSError, ValueError):
        return None
    if quota == "max":
        return None
    return max(1, math.ceil(int(quota) / int(period)))


def available_cpus() -> int:
    """The cores this process may use: its CPU affinity, capped by the cgroup quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    limit = _cgroup_cpu_limit()
    return max(1, cores if limit is None else min(cores, limit))


def default_num_threads() -> int:
    """``MINITORCH_ACCEL_NUM_THREADS`` if set, else :func:`available_cpus`.

    Raises
    ------
    ValueError
        If the environment variable is not a positive integer.
    """
    value = os.environ.get(ENV_VAR, "").strip()
    if not value:
        return available_cpus()
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{ENV_VAR}={value!r}: expected a positive integer such as 2")
    return int(value)


def get_num_threads() -> int:
    """The number of threads CPU ops use, as ``torch.get_num_threads``.

    Returns
    -------
    int
        The value of the last :func:`set_num_threads`, else :func:`default_num_threads`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.get_num_threads() >= 1
    True
    """
    global _num_threads
    if _num_threads is None:
        with _config_lock:
            if _num_threads is None:
                _num_threads = default_num_threads()
                _blas.hold_one()
    return _num_threads


def set_num_threads(n: int) -> None:
    """Use ``n`` threads for CPU ops, as ``torch.set_num_threads``.

    Large matrix products are split over the same ``n`` threads, each running BLAS on
    one thread. At ``n == 1`` no pool worker runs. Workers of a previous count finish
    their current chunk and exit.

    Parameters
    ----------
    n : int
        A positive number of threads.

    Raises
    ------
    ValueError
        If ``n`` is not a positive integer.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> before = mta.get_num_threads()
    >>> mta.set_num_threads(1)
    >>> mta.get_num_threads()
    1
    >>> mta.set_num_threads(before)
    """
    global _num_threads, _executor
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: n must be a positive int, got {n!r}")
    with _config_lock:
        _num_threads = n
        old, _executor = _executor, None
    if old is not None:
        old.shutdown(wait=False)  # running chunks finish; idle workers exit
    _blas.hold_one()


class _BlasThreads:
    """BLAS's thread count through threadpoolctl: held at 1, and 1 while any chunks run
    even if the program raised it meanwhile (restored after the last region).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._regions = 0  # parallel_for calls running now, in all Python threads
        self._libs: list[Any] | None = None
        self._outside: list[int] = []  # the counts to restore after the last region

    def libs(self) -> list[Any]:
        """The controllers (threadpoolctl) of the loaded BLAS libraries; [] without it."""
        if self._libs is None:
            try:
                from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]
            except ImportError:
                self._libs = []
            else:
                self._libs = list(ThreadpoolController().select(user_api="blas").lib_controllers)
        return self._libs

    def hold_one(self) -> None:
        """Set every BLAS library to one thread (outside regions; inside, it is)."""
        with self._lock:
            if self._regions == 0:
                for lib in self.libs():
                    lib.set_num_threads(1)

    def enter(self) -> None:
        with self._lock:
            if self._regions == 0:
                libs = self.libs()
                self._outside = [lib.num_threads for lib in libs]
                for lib, n in zip(libs, self._outside, strict=True):
                    if n != 1:
                        lib.set_num_threads(1)
            self._regions += 1

    def leave(self) -> None:
        with self._lock:
            self._regions -= 1
            if self._regions == 0:
                for lib, n in zip(self.libs(), self._outside, strict=True):
                    if n != 1:
                        lib.set_num_threads(n)


_blas = _BlasThreads()


class _Job:
    """The chunks of one :func:`parallel_for` call, claimed one at a time by any thread."""

    def __init__(self, fn: Callable[[int, int], None], bounds: list[tuple[int, int]]) -> None:
        self.fn, self.bounds = fn, bounds
        self.lock = threading.Lock()
        self.next = 0
        self.unfinished = len(bounds)
        self.done = threading.Event()
        self.error: BaseException | None = None

    def run_available(self) -> None:
        """Run unclaimed chunks until none is left."""
        _inside.active = True
        try:
            while True:
                with self.lock:
                    if self.next == len(self.bounds):
                        return
                    start, stop = self.bounds[self.next]
                    self.next += 1
                try:
                    self.fn(start, stop)
                except BaseException as error:  # re-raised in the calling thread
                    self.error = self.error or error
                with self.lock:
                    self.unfinished -= 1
                    if self.unfinished == 0:
                        self.done.set()
        finally:
            _inside.active = False


def _finished(start: int, stop: int) -> None:
    """The ``fn`` of a job whose chunks have all run (no chunk is left to call it on)."""


def chunk_bounds(total: int, chunks: int) -> list[tuple[int, int]]:
    """``range(total)`` cut into ``chunks`` contiguous ``(start, stop)`` of near-equal size."""
    chunks = max(1, min(chunks, total))
    return [(total * i // chunks, total * (i + 1) // chunks) for i in range(chunks)]


def parallel_for(total: int, fn: Callable[[int, int], None], grain: int = 1) -> None:
    """Call ``fn(start, stop)`` over contiguous chunks that cover ``range(total)``.

    Up to ``CHUNKS_PER_THREAD`` chunks per thread, of at least ``grain`` items each,
    are claimed in order by :func:`get_num_threads` threads (the caller is one of
    them); with one chunk, ``fn(0, total)`` runs here. Each chunk must write only its
    own part of the result. While chunks run, BLAS uses one thread per chunk.

    Parameters
    ----------
    total : int
        Number of items (images of a batch, rows, elements).
    fn : callable
        ``fn(start, stop)`` does items ``start`` to ``stop - 1``.
    grain : int
        Fewest items worth a chunk of their own.

    Raises
    ------
    BaseException
        The first exception raised by a chunk, after every chunk has finished.

    Examples
    --------
    >>> import numpy as np
    >>> from minitorch_accel.backends.numpy.threads import parallel_for
    >>> x, out = np.arange(10.0), np.empty(10)
    >>> parallel_for(10, lambda s, e: np.multiply(x[s:e], 2, out=out[s:e]))
    >>> out.tolist()[:4]
    [0.0, 2.0, 4.0, 6.0]
    """
    chunks = _chunk_count(total, grain)
    if chunks <= 1:
        if total > 0:
            fn(0, total)
        return
    _run_chunks(fn, chunk_bounds(total, chunks), get_num_threads())


def _chunk_count(total: int, grain: int) -> int:
    """How many chunks :func:`parallel_for` cuts ``total`` items into: 1 (run on the
    calling thread) at one thread, inside a parallel region, or below two grains.
    """
    threads = get_num_threads()
    if threads == 1 or in_parallel_region():  # nested: serial
        return 1
    return max(1, min(threads * CHUNKS_PER_THREAD, total // max(1, grain)))


def splits(total: int, grain: int = 1) -> bool:
    """Whether :func:`parallel_for` would share ``total`` items out over threads (else it
    runs them on the calling thread): a fast path checks it before setting up a split.

    Examples
    --------
    >>> from minitorch_accel.backends.numpy.threads import splits
    >>> splits(10, grain=100)
    False
    """
    return _chunk_count(total, grain) > 1


def _run_chunks(
    fn: Callable[[int, int], None], bounds: list[tuple[int, int]], threads: int
) -> None:
    """Run ``fn`` on every ``(start, stop)`` of ``bounds``, claimed in order by up to
    ``threads`` threads (this one included); re-raise the first error.
    """
    chunks = len(bounds)
    job = _Job(fn, bounds)
    executor = _pool(threads)
    _blas.enter()
    try:
        for _ in range(min(threads, chunks) - 1):
            try:
                executor.submit(job.run_available)
            except RuntimeError:  # set_num_threads shut this pool down: run them here
                break
        job.run_available()
        job.done.wait()
    finally:
        # A worker may still hold the job after the last chunk (it is returning): drop
        # fn, and with it the arrays the chunks closed over, now, not when it returns.
        job.fn = _finished
        _blas.leave()
    if job.error is not None:
        raise job.error


#: More than two blocks come in a multiple of this many, so that 2 or 4 threads each
#: get as many: 5 blocks on 2 threads leave one idle for a fifth of the time (measured:
#: the input gradient of LeNet's second convolution, batch 64, 2 threads, 2.4 ms in 8
#: blocks against 3.0 ms in 5).
BLOCK_MULTIPLE = 4


def block_bounds(total: int, block: int) -> list[tuple[int, int]]:
    """The ``(start, stop)`` of the blocks :func:`for_blocks` calls ``fn`` on: at most
    ``block`` items each, more than two of them rounded up to a multiple of
    :data:`BLOCK_MULTIPLE`. They depend on ``total`` and ``block`` only, never on the
    thread count.

    Examples
    --------
    >>> block_bounds(10, 5)
    [(0, 5), (5, 10)]
    >>> block_bounds(10, 4)
    [(0, 2), (2, 5), (5, 7), (7, 10)]
    """
    count = max(1, -(-total // max(1, block)))
    if count > 2:
        count = min(total, -(-count // BLOCK_MULTIPLE) * BLOCK_MULTIPLE)
    return chunk_bounds(total, count)


def for_blocks(total: int, fn: Callable[[int, int], None], block: int) -> None:
    """Call ``fn(start, stop)`` over consecutive blocks of about ``block`` items, each
    block claimed on its own by the next free thread; at one thread they run one after
    another. Blocks small enough to stay in the core's cache make a chain of
    passes over each block faster than the same passes over the whole array (*cache
    blocking*), at any thread count.

    Examples
    --------
    >>> seen = []
    >>> for_blocks(10, lambda s, e: seen.append((s, e)), block=4)
    >>> sorted(seen)
    [(0, 2), (2, 5), (5, 7), (7, 10)]
    """
    blocks = block_bounds(total, block)
    threads = get_num_threads()
    if threads == 1 or len(blocks) == 1 or in_parallel_region():
        for start, stop in blocks:
            fn(start, stop)
        return
    _run_chunks(fn, blocks, threads)  # each block claimed on its own: the best balance


def in_parallel_region() -> bool:
    """True inside a chunk of :func:`parallel_for` (where a nested split runs serially)."""
    return bool(getattr(_inside, "active", False))


def _pool(threads: int) -> ThreadPoolExecutor:
    """The executor with ``threads - 1`` workers, started on first use."""
    global _executor
    with _config_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(threads - 1, thread_name_prefix="mta-cpu")
        return _executor


def _after_fork_in_child() -> None:
    """A forked child has none of its parent's workers: start afresh on first use."""
    global _executor, _blas, _config_lock
    _executor, _blas, _config_lock = None, _BlasThreads(), threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def pool_workers() -> int:
    """How many pool worker threads are alive now (0 before the first parallel op)."""
    return sum(t.name.startswith("mta-cpu") for t in threading.enumerate())


__all__ = [
    "available_cpus",
    "block_bounds",
    "chunk_bounds",
    "default_num_threads",
    "for_blocks",
    "get_num_threads",
    "in_parallel_region",
    "parallel_for",
    "pool_workers",
    "set_num_threads",
    "splits",
]
