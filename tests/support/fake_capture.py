"""TEST DOUBLE: a fake CUDA stream capture for the strict stand-in (``strict_xp.py``).

While :class:`FakeCapture` is active every computation on StrictArrays is recorded, as
CUDA records the kernels queued on a capturing stream, and a host sync (reading a value
back, ``synchronize``, a copy from host memory) is refused with CUDA's error. Replaying
runs the recorded computations again, in order, on the same arrays: each result is
written into the array the capture produced, so outputs live at fixed places, as in a
CUDA graph.

CUDA does not run captured kernels; the stand-in must run them to learn the shapes of
their results, so it undoes what the capture wrote into arrays that existed before it
(each is saved before its first write), leaving memory as a real capture does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import support.strict_xp as sx
from minitorch_accel.backends import Device
from support.strict_backend import StrictBackend

#: CUDA's words for work refused while a stream captures.
REFUSED = "cudaErrorStreamCaptureUnsupported: operation not permitted when stream is capturing"


def _root(array: np.ndarray) -> np.ndarray:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _arrays(value: Any) -> list[np.ndarray]:
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in _arrays(v)]
    return []


class FakeGraph:
    """What a fake capture recorded: ``(kernel name, computation, result)`` in order."""

    def __init__(self, calls: list[tuple[str, Callable[[], Any], Any]]) -> None:
        self.calls = calls
        self.replays = 0

    @property
    def names(self) -> list[str]:
        """The recorded kernels' names, in launch order."""
        return [name for name, _, _ in self.calls]

    def __len__(self) -> int:
        return len(self.calls)

    def replay(self) -> None:
        """Run every recorded computation again; results land in the captured arrays."""
        for _, thunk, result in self.calls:
            fresh = thunk()
            if isinstance(fresh, np.generic):
                fresh = np.asarray(fresh)
            for old, new in zip(_arrays(result), _arrays(fresh), strict=True):
                if new is not old and old.flags.writeable:
                    old[...] = new
        self.replays += 1


class FakeCapture:
    """The recording in progress (installed as ``strict_xp.CAPTURE``)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Callable[[], Any], Any]] = []
        self._born: set[int] = set()
        self._saved: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def run(self, thunk: Callable[[], Any], writes: Any, name: str) -> Any:
        """Run and record the kernel ``name`` (``writes``: the array it writes into)."""
        if isinstance(writes, np.ndarray):
            root = _root(writes)
            if id(root) not in self._born and id(root) not in self._saved:
                self._saved[id(root)] = (root, root.copy())
        result = thunk()
        if isinstance(result, np.generic):  # a 0-d result: keep the array the caller gets
            result = np.asarray(result)
        for array in _arrays(result):
            if array.base is None:  # a fresh array, not a view of an older one
                self._born.add(id(array))
        self.calls.append((name, thunk, result))
        return result

    def refuse(self, what: str) -> None:
        """Raise CUDA's error for ``what``, a host sync."""
        raise RuntimeError(f"{REFUSED} ({what})")

    def finish(self) -> FakeGraph:
        """Undo the writes into arrays older than the capture; return the graph."""
        for root, saved in self._saved.values():
            root[...] = saved
        return FakeGraph(self.calls)


class CapturingStrictBackend(StrictBackend):
    """The strict backend with the fake stream capture (one capture at a time)."""

    supports_capture = True

    def __init__(self) -> None:
        super().__init__()
        self.capturing: Device | None = None
        self.graphs: list[FakeGraph] = []

    def asarray(self, obj: Any, device: Device, dtype: Any = None) -> Any:
        if sx.CAPTURE is not None and isinstance(obj, (int, float, bool, np.number, np.bool_)):
            # as the CuPy backend: a fill kernel with the value as its argument
            return sx.STRICT.full((), obj, dtype=dtype or np.asarray(obj).dtype)
        return super().asarray(obj, device, dtype)

    def begin_capture(self, device: Device) -> None:
        if sx.CAPTURE is not None:
            raise RuntimeError("cudaErrorIllegalState: a capture is already running")
        self.capturing = device
        sx.CAPTURE = FakeCapture()

    def end_capture(self, device: Device) -> FakeGraph:
        capture, sx.CAPTURE, self.capturing = sx.CAPTURE, None, None
        if capture is None:
            raise RuntimeError("cudaErrorIllegalState: no capture is running")
        graph = capture.finish()
        self.graphs.append(graph)
        return graph

    def abort_capture(self, device: Device) -> None:
        if sx.CAPTURE is not None:
            self.end_capture(device)
            self.graphs.pop()

    def replay(self, graph: Any, device: Device) -> None:
        graph.replay()

    def capture_status(self, device: Device) -> bool:
        return self.capturing == device

    def capture_error(self, exc: BaseException) -> Any:
        from minitorch_accel.backends.cupy.graphs import capture_error

        return capture_error(exc)

    def synchronize(self, device: Device | None = None) -> None:
        if sx.CAPTURE is not None:
            sx.CAPTURE.refuse("synchronize()")
