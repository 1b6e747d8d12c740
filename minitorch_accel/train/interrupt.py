"""Ctrl-C and SIGTERM during training: finish the current batch, save, stop.

Python turns Ctrl-C into a ``KeyboardInterrupt`` wherever the program happens to be,
possibly in the middle of an optimizer step with half of the parameters updated; SIGTERM
(what Slurm and Kubernetes send before they preempt a job) ends the process at once
by default. The guard below replaces both, for the duration of training, by a flag
checked between batches; a second signal aborts at once, as usual.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType, TracebackType
from typing import Any

__all__ = ["EXIT_TERMINATED", "InterruptGuard", "Terminated"]

#: Exit status after SIGTERM, as shells report a process ended by it (128 + 15).
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(SystemExit):
    """Raised by :func:`~minitorch_accel.train.fit` after it saved a checkpoint on
    SIGTERM: the program exits with status 143 unless it catches this.

    Examples
    --------
    >>> Terminated().code
    143
    """

    def __init__(self) -> None:
        super().__init__(EXIT_TERMINATED)


class InterruptGuard:
    """Context manager turning the first SIGINT or SIGTERM into a request to stop
    between batches.

    Only the main thread can install signal handlers; elsewhere (or with
    ``enabled=False``) the guard does nothing and the signals act as usual.

    Attributes
    ----------
    requested : bool
        True once Ctrl-C was pressed or SIGTERM arrived.
    signal_name : str or None
        ``"SIGINT"`` or ``"SIGTERM"``: the first signal received.
    aborted : bool
        True when a second signal arrived (the ``KeyboardInterrupt`` then raised must
        not be taken for a clean stop).
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.requested = False
        self.aborted = False
        self.signal_name: str | None = None
        self._previous: dict[int, Any] = {}

    @property
    def terminated(self) -> bool:
        """Whether the stop was asked for by SIGTERM."""
        return self.signal_name == "SIGTERM"

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self.requested:
            self.aborted = True
            raise KeyboardInterrupt
        self.requested, self.signal_name = True, name
        what = "Ctrl-C" if signum == signal.SIGINT else name
        print(
            f"\n{what}: stopping after this batch to save a checkpoint "
            f"(send it again to abort without saving)",
            file=sys.stderr,
            flush=True,
        )

    def __enter__(self) -> InterruptGuard:
        if self.enabled and threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    @property
    def _installed(self) -> bool:
        return bool(self._previous)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for signum, previous in self._previous.items():
            if previous is None:
                previous = signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
            signal.signal(signum, previous)
        self._previous = {}
