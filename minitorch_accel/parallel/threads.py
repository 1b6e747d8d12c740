"""The threads that drive the towers, and how a failure in one of them is reported.

Every tower runs its part of a step in its own long-lived thread, inside its device's
context. :func:`run_towers` waits for all of them and turns the first failure into a
``RuntimeError`` that names the tower and its device.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import wait as wait_futures
from functools import partial
from typing import Any, TypeVar

from ..backends import Device
from ..core.grad_mode import set_grad_enabled

T = TypeVar("T")
R = TypeVar("R")


class TowerThread:
    """One long-lived thread that drives one tower: it runs the work given to it, in
    order, and hands each result (or exception) back through a ``Future``.

    Starting a thread per step costs more than a small tower's forward pass; this one
    is started once. It is a daemon, so a forgotten trainer never blocks the exit.
    """

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]] | None] = (
            queue.SimpleQueue()
        )
        self.name = name
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def submit(self, work: Callable[[], T]) -> Future[T]:
        """Queue ``work``; its result or exception arrives in the returned future."""
        future: Future[T] = Future()
        self._jobs.put((work, future))
        return future

    def stop(self) -> None:
        """Let the thread end once the work already queued is done."""
        self._jobs.put(None)

    def join(self, timeout: float | None = None) -> None:
        """Wait until the thread has ended (after :meth:`stop`)."""
        self._thread.join(timeout)

    def is_alive(self) -> bool:
        """Whether the thread is still running."""
        return self._thread.is_alive()

    def _loop(self) -> None:
        while (job := self._jobs.get()) is not None:
            run_into(job[1], job[0])


def run_into(future: Future[Any], work: Callable[[], Any]) -> None:
    """Run ``work`` and put its result, or whatever it raised, into ``future``."""
    try:
        future.set_result(work())
    except BaseException as exc:  # handed to the caller, which decides what to raise
        future.set_exception(exc)


def stop_threads(threads: Sequence[TowerThread]) -> None:
    """Stop each of ``threads``."""
    for thread in threads:
        thread.stop()


def run_towers(
    devices: Sequence[Device],
    threads: Sequence[TowerThread],
    what: str,
    work: Callable[[int], R],
    timeout: float | None = None,
    abandoned: dict[int, Future[Any]] | None = None,
    grad_enabled: bool = True,
) -> list[R]:
    """``work(i)`` for every tower ``i``, each in its thread (or, without ``threads``, one
    after another in this one) and its device's context; wait for all, then raise the
    first failure as a ``RuntimeError`` naming its device.

    Parameters
    ----------
    devices : sequence of Device
        One per tower.
    threads : sequence of TowerThread
        One per tower, or empty to run every tower in the calling thread.
    what : str
        The part of the step, for the error message (``"forward/backward"``).
    work : callable
        ``work(i)`` does tower ``i``'s part.
    timeout : float, optional
        Seconds to wait for every tower (with threads). A tower still running then is
        abandoned (its future goes into ``abandoned``) and a ``RuntimeError`` names it.
    abandoned : dict, optional
        Receives ``{tower: future}`` for the towers that did not finish in time.
    grad_enabled : bool
        Whether operations are recorded for backward in the towers (grad mode is per
        thread, so the caller's does not carry over by itself).

    Returns
    -------
    list
        The results of ``work(i)``, in tower order.

    Raises
    ------
    RuntimeError
        If a tower raised an ``Exception``, chained to it, or did not finish within
        ``timeout``; other exceptions (``KeyboardInterrupt`` and the like) pass through
        unchanged.
    """
    calls = [partial(_in_context, devices[i], i, work, grad_enabled) for i in range(len(devices))]
    if threads:
        futures = [t.submit(call) for t, call in zip(threads, calls, strict=True)]
    else:  # one after another in this thread
        futures = [Future() for _ in calls]
        for call, future in zip(calls, futures, strict=True):
            run_into(future, call)
    if threads and timeout is not None:
        _, late = wait_futures(futures, timeout=timeout)
        if late:
            hung = [i for i, f in enumerate(futures) if f in late]
            if abandoned is not None:
                abandoned.update((i, futures[i]) for i in hung)
            names = ", ".join(f"tower {i} on device {devices[i]}" for i in hung)
            raise RuntimeError(
                f"{names} did not finish {what} within {timeout:g} s (timeout=): a device "
                "or its thread hangs; the step was abandoned and the master state is as "
                "before it"
            )
    outcomes = [(f.exception(), f) for f in futures]
    failed = [(i, exc) for i, (exc, _) in enumerate(outcomes) if exc is not None]
    if failed:
        i, exc = failed[0]
        if not isinstance(exc, Exception):
            raise exc  # KeyboardInterrupt and the like pass through unchanged
        also = f" ({len(failed) - 1} more tower(s) failed too)" if len(failed) > 1 else ""
        raise RuntimeError(
            f"tower {i} on device {devices[i]} failed during {what}: "
            f"{type(exc).__name__}: {exc}{also}"
        ) from exc
    return [f.result() for _, f in outcomes]


def _in_context(device: Device, i: int, work: Callable[[int], R], grad_enabled: bool) -> R:
    with device.backend.device_context(device), set_grad_enabled(grad_enabled):
        return work(i)  # grad mode is per thread: set it here
