"""TEST DOUBLE: the devices of the strict stand-in for CuPy (see ``strict_xp.py``).

Like CUDA, the stand-in has a *current device* per thread; ``StrictDevice(n)`` (the
stand-in's ``cupy.cuda.Device``) makes ``n`` current inside a ``with`` block. Every
StrictArray is made on the current device and may only be computed on there.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

_state = threading.local()


def current_device() -> int:
    """The calling thread's current device (``cupy.cuda.runtime.getDevice()``)."""
    return getattr(_state, "device", 0)  # type: ignore[no-any-return]


@contextlib.contextmanager
def on_device(index: int) -> Iterator[None]:
    """Make ``index`` the current device inside the block (``cupy.cuda.Device``)."""
    previous = current_device()
    _state.device = index
    try:
        yield
    finally:
        _state.device = previous


class StrictDevice:
    """``cupy.cuda.Device`` of the stand-in: a context that makes ``id`` current."""

    def __init__(self, device: int | None = None) -> None:
        self.id = current_device() if device is None else int(device)
        self._blocks: list[contextlib.AbstractContextManager[None]] = []

    def __enter__(self) -> StrictDevice:
        block = on_device(self.id)
        block.__enter__()
        self._blocks.append(block)
        return self

    def __exit__(self, *exc: object) -> None:
        self._blocks.pop().__exit__(None, None, None)

    def synchronize(self) -> None:
        """Nothing to wait for: the stand-in computes at once."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StrictDevice) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)
