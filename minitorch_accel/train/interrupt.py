"""Ctrl-C during training: finish the current batch, save, stop.

Python turns Ctrl-C into a ``KeyboardInterrupt`` wherever the program happens to be,
possibly in the middle of an optimizer step with half of the parameters updated. The
guard below replaces that, for the duration of training, by a flag checked between
batches; a second Ctrl-C aborts at once, as usual.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType, TracebackType
from typing import Any

__all__ = ["InterruptGuard"]


class InterruptGuard:
    """Context manager turning the first SIGINT into a request to stop between batches.

    Only the main thread can install signal handlers; elsewhere (or with
    ``enabled=False``) the guard does nothing and Ctrl-C raises as usual.

    Attributes
    ----------
    requested : bool
        True once Ctrl-C was pressed.
    aborted : bool
        True when Ctrl-C was pressed a second time (the ``KeyboardInterrupt`` then
        raised must not be taken for a clean stop).
    """

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.requested = False
        self.aborted = False
        self._previous: Any = None
        self._installed = False

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.requested:
            self.aborted = True
            raise KeyboardInterrupt
        self.requested = True
        print(
            "\nCtrl-C: stopping after this batch to save a checkpoint "
            "(press Ctrl-C again to abort without saving)",
            file=sys.stderr,
            flush=True,
        )

    def __enter__(self) -> InterruptGuard:
        if self.enabled and threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._installed:
            previous = self._previous if self._previous is not None else signal.default_int_handler
            signal.signal(signal.SIGINT, previous)
            self._installed = False
