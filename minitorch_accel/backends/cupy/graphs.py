"""CUDA graphs on CuPy: stream capture into a graph, and its replay.

While a stream captures, CUDA records the kernels queued on it instead of running them;
``Graph.launch`` later queues the whole recording with one call from the host. Each
capture gets a fresh stream, and with it its own arena of CuPy's memory pool (CuPy keeps
one per stream): the temporaries the recorded kernels use are never handed to other work,
so replaying the graph cannot overwrite someone else's arrays. The stream (and so the
arena) lives as long as the graph.
"""

from __future__ import annotations

from typing import Any

from ..base import CaptureError

#: Words of CUDA's errors for work a capture refuses (cudaErrorStreamCapture...).
CAPTURE_ERRORS = (
    "StreamCapture",
    "stream is capturing",
    "capturing stream",
    "during stream capture",  # CuPy's refusal of cuBLAS (cupy.matmul, einsum) in a capture
)


class CupyGraph:
    """A captured graph and the stream whose memory arena its kernels use."""

    def __init__(self, graph: Any, stream: Any) -> None:
        self.graph = graph
        self.stream = stream


class CupyGraphs:
    """Begin, end and replay captures on CuPy, one capture per device at a time."""

    def __init__(self, cupy: Any) -> None:
        self.cp = cupy
        self._capturing: dict[int, Any] = {}

    @property
    def active(self) -> bool:
        """True while any capture runs (checked first: it costs no CUDA call)."""
        return bool(self._capturing)

    def is_capturing(self, index: int) -> bool:
        """True while a capture runs on GPU ``index``."""
        return index in self._capturing

    def begin(self, index: int) -> None:
        """Make a fresh stream current on GPU ``index`` and start capturing on it."""
        if index in self._capturing:
            raise CaptureError(f"a capture is already running on cuda:{index}: end it first")
        cp = self.cp
        with cp.cuda.Device(index):
            cp.cuda.get_current_stream().synchronize()  # the warm-up's work is done
            stream = cp.cuda.Stream(non_blocking=True)
            stream.__enter__()
            try:
                stream.begin_capture()  # relaxed mode: the memory pool may still grow
            except Exception:
                stream.__exit__(None, None, None)
                raise
        self._capturing[index] = stream

    def end(self, index: int) -> CupyGraph:
        """Stop capturing on GPU ``index`` and return the graph."""
        stream = self._capturing.pop(index, None)
        if stream is None:
            raise CaptureError(f"no capture is running on cuda:{index}")
        with self.cp.cuda.Device(index):
            try:
                graph = stream.end_capture()
            finally:
                stream.__exit__(None, None, None)
        return CupyGraph(graph, stream)

    def abort(self, index: int) -> None:
        """End a failed capture on GPU ``index`` and drop what it recorded."""
        stream = self._capturing.pop(index, None)
        if stream is None:
            return
        with self.cp.cuda.Device(index):
            try:
                stream.end_capture()
            except Exception:  # an invalidated capture reports its error here: ignored
                pass
            finally:
                stream.__exit__(None, None, None)

    def replay(self, graph: CupyGraph, index: int) -> None:
        """Queue ``graph`` on GPU ``index``'s current stream."""
        with self.cp.cuda.Device(index):
            graph.graph.launch(stream=self.cp.cuda.get_current_stream())


def capture_error(exc: BaseException) -> CaptureError | None:
    """The :class:`CaptureError` for a CUDA error that a capture caused, else None."""
    if isinstance(exc, CaptureError):
        return exc
    text = f"{type(exc).__name__}: {exc}"
    if any(word in text for word in CAPTURE_ERRORS):
        return CaptureError(
            "CUDA refused an operation while capturing: a host sync (reading a value back, "
            "synchronize), a copy from pageable host memory, or a cuBLAS call through CuPy "
            f"(cupy.matmul, einsum) instead of the backend's gemm ({text})"
        )
    return None
