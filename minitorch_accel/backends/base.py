"""What every array backend provides, and the counter of bytes moved between devices."""

from __future__ import annotations

import contextlib
import platform
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .oom import OutOfMemoryError

if TYPE_CHECKING:
    from .device import Device


class TransferStats:
    """Bytes and copies moved between devices since the last :meth:`reset`.

    ``host_to_device`` counts copies from ``"cpu"`` to any other device,
    ``device_to_host`` the way back, ``device_to_device`` copies between two non-host
    devices (``cpu:0`` to ``cpu:1``, ``cuda:0`` to ``cuda:1``...).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """Set every counter to zero."""
        with self._lock:
            self.host_to_device = 0
            self.device_to_host = 0
            self.device_to_device = 0
            self.copies = 0

    def record(self, src: Device, dst: Device, nbytes: int) -> None:
        """Count one copy of ``nbytes`` from ``src`` to ``dst``."""
        with self._lock:
            self.copies += 1
            if src.is_host:
                self.host_to_device += nbytes
            elif dst.is_host:
                self.device_to_host += nbytes
            else:
                self.device_to_device += nbytes

    @property
    def total(self) -> int:
        """All bytes moved, whichever way."""
        return self.host_to_device + self.device_to_host + self.device_to_device

    def as_dict(self) -> dict[str, int]:
        """The counters as a plain dict."""
        return {
            "host_to_device": self.host_to_device,
            "device_to_host": self.device_to_host,
            "device_to_device": self.device_to_device,
            "copies": self.copies,
        }


transfer_stats = TransferStats()


class CaptureError(RuntimeError):
    """Something in a step cannot be recorded into a CUDA graph.

    The message names the cause (a host sync, a host-to-device copy, a shape change...)
    and, where known, the operation that caused it.
    """


class Transfer:
    """A copy from the host to a device, possibly still running.

    Attributes
    ----------
    array : backend array
        The destination; its values may be read only by work ordered after the copy.
    """

    def __init__(
        self,
        array: Any,
        wait: Callable[[], None] | None = None,
        finish: Callable[[], None] | None = None,
    ) -> None:
        self.array = array
        self._wait = wait
        self._finish = finish

    def wait(self) -> None:
        """Order the work the calling thread queues from now on after the copy (on a
        GPU its current stream waits for the copy's event; the host does not block).
        """
        if self._wait is not None:
            self._wait()

    def finish(self) -> None:
        """Block until the copy is done: the source may then be overwritten."""
        if self._finish is not None:
            self._finish()


class Communicator:
    """Sums one buffer per device in place, so that every device holds the sum (an
    all-reduce), as NCCL does between GPUs.

    Made by :meth:`Backend.device_communicator` (one process, several devices) or
    :meth:`Backend.process_communicator` (one device per process).

    Attributes
    ----------
    name : str
        What carries the sums, e.g. ``"nccl"``; used in timings and error messages.
    """

    name: str = "abstract"

    def all_reduce(self, arrays: Sequence[Any]) -> None:
        """Replace each array (one per device of the communicator, in its order) by the
        elementwise sum of all of them; queued on each device's current stream (wait
        with :meth:`Backend.synchronize`).
        """
        raise NotImplementedError


class Backend:
    """An array backend: an array module ``xp`` plus the few things ops cannot do alone.

    Subclasses set :attr:`name` and :attr:`xp` and override what differs. Ops are
    written once against ``xp``; a backend may also offer fast paths (see
    :meth:`kernel`).
    """

    name: str = "abstract"
    xp: Any = np
    #: Whether work must be wrapped in :meth:`device_context` to run on the right
    #: device: False for the CPU and for a machine with a single GPU, where every
    #: kernel runs on the one device anyway (the context costs time on every op).
    needs_device_context: bool = False
    #: Whether this backend's arrays are NumPy arrays in the host's memory (the CPU and
    #: its virtual devices): then a host array is already "on" the device, and copies
    #: between the two are plain ``numpy.copyto``.
    shares_host_memory: bool = False
    #: Whether :meth:`pinned_empty` gives page-locked memory the device copies from
    #: asynchronously (worth allocating host buffers through it).
    has_pinned_memory: bool = False
    #: Whether work is queued and runs later (a GPU): the host must
    #: :meth:`synchronize` before it reads a clock to time that work.
    is_asynchronous: bool = False
    #: Whether the fast convolution keeps its im2col matrix for the weight gradient
    #: (a GPU's); the CPU's makes each block's rows again from the input, which costs
    #: less than reading the matrix back from main memory. Counted by
    #: :func:`~minitorch_accel.utils.memory_estimate`.
    keeps_conv_cols: bool = True

    def device_count(self) -> int:
        """How many devices of this type exist."""
        raise NotImplementedError

    def check_device(self, device: Device) -> None:
        """Raise ``RuntimeError`` naming the problem if ``device`` cannot be used."""
        count = self.device_count()
        if device.index is not None and device.index >= count:
            raise RuntimeError(
                f"device {device} does not exist: this machine has {count} {self.name} "
                f"device(s) (indices 0..{count - 1})"
            )

    def asarray(self, obj: Any, device: Device, dtype: Any = None) -> Any:
        """An array of this backend on ``device`` holding ``obj``."""
        raise NotImplementedError

    def to_host(self, array: Any) -> np.ndarray:
        """A NumPy array with the contents of ``array``."""
        raise NotImplementedError

    def upload(
        self, host: np.ndarray, device: Device, non_blocking: bool = False, dtype: Any = None
    ) -> Any:
        """Copy a host array to ``device`` (asynchronously where the backend can)."""
        return self.asarray(host, device, dtype)

    def upload_async(self, host: np.ndarray, device: Device) -> Transfer:
        """Start copying ``host`` to ``device`` and return the :class:`Transfer`.

        ``host`` must not change until :meth:`Transfer.finish` (buffers reused batch
        after batch wait for it); work on the result must come after
        :meth:`Transfer.wait`. Here the copy is done on return (and is a real copy even
        where the device shares the host's memory).
        """
        return Transfer(self.upload(np.array(host, copy=True), device))

    def pinned_empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """An uninitialised host array the device can copy from asynchronously
        (page-locked memory on a GPU; ordinary memory here).
        """
        return np.empty(shape, dtype)

    def download(self, array: Any, non_blocking: bool = False) -> np.ndarray:
        """Copy an array of this backend to the host."""
        return self.to_host(array)

    def copy_between(self, array: Any, src: Device, dst: Device, non_blocking: bool) -> Any:
        """Copy ``array`` from ``src`` to ``dst``, both devices of this backend."""
        raise NotImplementedError

    def clone(self, array: Any) -> Any:
        """A C-contiguous copy of ``array`` on its own device (the leaf gradients that
        backward stores are such copies).
        """
        return array.copy()

    def synchronize(self, device: Device | None = None) -> None:
        """Wait until all work queued on ``device`` has finished (no-op on the CPU)."""

    def defer_check(self, check: Callable[[], None]) -> None:
        """Run ``check``, which raises on bad input, when the host next waits for the
        device anyway (:meth:`synchronize`, reading values back); the CPU, which never
        runs ahead, runs it at once.

        A GPU check that read its verdict back at once would stall the queue of
        kernels; deferred, the error appears a little later, as CUDA errors do.
        ``check`` must be safe to call more than once (its owner may run it first).
        """
        check()

    def device_context(self, device: Device) -> contextlib.AbstractContextManager[Any]:
        """A context in which work runs on ``device`` (a no-op on the CPU)."""
        return contextlib.nullcontext()

    def generator(self, device: Device) -> Any:
        """The random generator of ``device``."""
        raise NotImplementedError

    def manual_seed(self, seed: int) -> None:
        """Reseed the random generators of every device of this backend."""
        raise NotImplementedError

    def memory_stats(self, device: Device) -> dict[str, int]:
        """Memory figures for ``device`` (bytes): ``allocated`` and ``held`` at least.

        Here the counts of :mod:`~minitorch_accel.backends.memory_tracker` (bytes of the
        arrays behind tensors created while tracking is on); ``total`` is the limit set
        with :meth:`set_memory_limit` or else the machine's memory.
        """
        from .memory_tracker import tracker

        counts = tracker.counts(device)
        total = counts.limit if counts.limit is not None else self.total_memory(device)
        return {
            "allocated": counts.allocated,
            "held": counts.allocated,
            "peak": counts.peak,
            "free": max(total - counts.allocated, 0),
            "total": total,
        }

    def reset_peak_memory_stats(self, device: Device) -> None:
        """Restart the peak measurement of ``device`` from the bytes in use now."""
        from .memory_tracker import tracker

        tracker.reset_peak(device)

    def total_memory(self, device: Device) -> int:
        """Bytes of memory of ``device`` (here the machine's physical memory)."""
        import os

        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))

    def set_memory_limit(self, device: Device, nbytes: int | None) -> None:
        """Make allocations that would take ``device`` past ``nbytes`` raise
        :class:`~minitorch_accel.backends.oom.OutOfMemoryError` (None: no limit).

        Here the memory tracker counts and enforces it (and is switched on for it).
        """
        from .memory_tracker import tracker

        tracker.set_limit(device, nbytes)

    def memory_limit(self, device: Device) -> int | None:
        """The limit set with :meth:`set_memory_limit`, or None."""
        from .memory_tracker import tracker

        return tracker.counts(device).limit

    #: The fast paths registered for this backend (see :mod:`.fast_paths`): op name ->
    #: a drop-in for the op's reference ``forward``. The registry fills it on build.
    fast_forwards: dict[str, Callable[..., Any]] = {}

    def kernel(self, name: str) -> Any:
        """A backend fast path called ``name``, or None when the generic ``xp`` code is used."""
        return None

    def gemm(self, a: Any, b: Any, out: Any = None) -> Any:
        """The matrix product ``a @ b`` (into ``out`` if given), at the precision the
        backend chooses for the dtype (see :mod:`minitorch_accel.backends.cuda` for the
        GPU's TF32 setting).
        """
        if out is None:
            return self.xp.matmul(a, b)
        return self.xp.matmul(a, b, out=out)

    # ------------------------------------------------------------------ arrays and devices
    def owns(self, array: Any) -> bool:
        """True if ``array`` is an array of this backend (then :meth:`device_of` says
        where it lives).
        """
        return False

    def device_of(self, array: Any) -> Device:
        """The device holding ``array``, an array this backend :meth:`owns`."""
        raise TypeError(f"the {self.name!r} backend does not own a {type(array).__name__}")

    def upload_into(self, out: Any, host: np.ndarray, device: Device) -> Any:
        """Copy the host array ``host`` into ``out``, an array of ``device`` with the same
        shape and dtype (asynchronously on a GPU when ``host`` is pinned); return ``out``.
        """
        with self.device_context(device):
            out[...] = self.asarray(host, device)
        return out

    def download_into(self, out: np.ndarray, array: Any, device: Device) -> np.ndarray:
        """Copy ``array`` (on ``device``) into the host array ``out``; return ``out``."""
        out[...] = self.to_host(array)
        return out

    def current_device(self) -> int:
        """The index of the device this thread's work goes to by default."""
        return 0

    def device_name(self, device: Device | None = None) -> str:
        """The product name of ``device`` (here the host's processor)."""
        return platform.processor() or platform.machine() or "unknown processor"

    def describe(self) -> str:
        """One line for the environment report: what this backend offers here."""
        return f"{self.device_count()} device(s)"

    # ------------------------------------------------------------------ timing
    def record_event(self, device: Device) -> Any:
        """A timing event recorded now on ``device``'s current stream, or None where
        the device runs work as the host queues it (time it with the host clock).
        """
        return None

    def elapsed_time(self, start: Any, end: Any) -> float:
        """Seconds between two events of :meth:`record_event`, waiting for ``end``."""
        raise NotImplementedError(f"the {self.name!r} backend records no timing events")

    # ------------------------------------------------------------------ out of memory
    def oom_guard(self, device: Device | None = None) -> contextlib.AbstractContextManager[Any]:
        """A context turning the array library's out-of-memory errors on ``device`` into
        :class:`~minitorch_accel.backends.oom.OutOfMemoryError` (a no-op here).
        """
        return contextlib.nullcontext()

    def translate_oom(self, exc: BaseException, device: Device | None = None) -> OutOfMemoryError:
        """The :class:`~minitorch_accel.backends.oom.OutOfMemoryError` describing ``exc``."""
        if isinstance(exc, OutOfMemoryError):
            return exc
        name = self.name if device is None else str(device)
        return OutOfMemoryError(name, getattr(exc, "_size", None))

    def empty_cache(self, device: Device | None = None) -> None:
        """Give cached, unused memory blocks back to the system (nothing is cached here)."""

    # ------------------------------------------------------------------ DLPack
    #: The DLPack device codes (``__dlpack_device__()[0]``) whose memory this backend
    #: wraps in :meth:`from_dlpack`: 1 is the host, 2 a CUDA GPU, 3 pinned host memory.
    dlpack_device_types: tuple[int, ...] = ()

    def from_dlpack(self, obj: Any, device_id: int) -> tuple[Device, Any]:
        """``(device, array)``: an array of this backend sharing ``obj``'s memory, which
        DLPack says is on device ``device_id`` of a type in :attr:`dlpack_device_types`.
        """
        raise BufferError(f"the {self.name!r} backend does not import DLPack capsules")

    def dlpack_device(self, array: Any, device: Device) -> tuple[int, int]:
        """``(device_type, device_id)`` of ``array`` (on ``device``) in DLPack's codes."""
        device_type, device_id = array.__dlpack_device__()
        return (int(device_type), int(device_id))

    # ------------------------------------------------------------------ collectives
    def collectives_unavailable_reason(self, devices: Sequence[Device]) -> str | None:
        """Why :meth:`device_communicator` cannot serve ``devices`` (a list of this
        backend's devices), or None when it can.
        """
        return f"the {self.name!r} backend has no all-reduce between devices"

    def device_communicator(self, devices: Sequence[Device]) -> Communicator:
        """A :class:`Communicator` between ``devices`` of this process (one per device)."""
        raise RuntimeError(
            self.collectives_unavailable_reason(devices) or "no communicator between devices"
        )

    def process_communicator(
        self,
        device: Device,
        rank: int,
        world_size: int,
        broadcast_object: Callable[[Any], Any],
    ) -> Communicator | None:
        """A :class:`Communicator` joining ``device`` of this process (``rank`` of
        ``world_size``) with one device in every other process, or None where the
        backend has none (the caller then goes through host memory and MPI).

        ``broadcast_object(value)`` returns rank 0's ``value`` on every rank (the set-up
        exchanges an identifier that way). Every rank must call this together.
        """
        return None

    # ------------------------------------------------------------------ graph capture
    #: Whether :meth:`begin_capture` can record work into a replayable graph here.
    supports_capture: bool = False

    def begin_capture(self, device: Device) -> None:
        """Start recording the work queued on ``device`` instead of running it.

        Until :meth:`end_capture`, kernels are recorded, not run; reading values back
        to the host, waiting for the device or copying from the host is refused with a
        :class:`CaptureError`.
        """
        raise CaptureError(f"the {self.name!r} backend cannot capture graphs: run the step eagerly")

    def end_capture(self, device: Device) -> Any:
        """Stop recording on ``device`` and return the graph (pass it to :meth:`replay`)."""
        raise CaptureError(f"the {self.name!r} backend is not capturing")

    def abort_capture(self, device: Device) -> None:
        """End a capture that failed part-way, dropping what it recorded (no-op here)."""

    def replay(self, graph: Any, device: Device) -> None:
        """Queue every kernel ``graph`` recorded, in order, on ``device``'s current stream."""
        raise CaptureError(f"the {self.name!r} backend cannot replay graphs")

    def capture_status(self, device: Device) -> bool:
        """True while work queued on ``device`` is being recorded into a graph."""
        return False

    def release_graph(self, graph: Any) -> None:
        """Free what ``graph`` holds (its memory pool); it must not be replayed again."""

    def capture_error(self, exc: BaseException) -> CaptureError | None:
        """The :class:`CaptureError` that ``exc``, raised while capturing, stands for
        (``exc`` itself, or the backend's own error for refused work), else None.
        """
        return exc if isinstance(exc, CaptureError) else None

    def refuse_in_capture(self, device: Device | None, what: str) -> None:
        """Raise :class:`CaptureError` saying ``what`` is refused if ``device`` captures."""
        if device is not None and self.capture_status(device):
            raise CaptureError(f"{what} is not allowed while a CUDA graph is being captured")
