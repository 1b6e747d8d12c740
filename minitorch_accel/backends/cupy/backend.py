"""The CuPy backend (``"cuda"``, ``"cuda:N"``), imported lazily.

"CuPy installed" is not "GPU usable": ``import cupy`` succeeds on a machine with no
driver, and only the first device call fails. :func:`load_cupy` probes with a real
device call and turns each failure into one clear error.

What this backend adds to :class:`~minitorch_accel.backends.base.Backend`:

* work on ``cuda:N`` runs inside ``cupy.cuda.Device(N)`` (:meth:`device_context`);
* one random generator per GPU, reseeded by ``manual_seed``;
* memory statistics from CuPy's pool (in use, held, peak) and :meth:`empty_cache`;
* host-to-device copies that do not block the host (:meth:`upload` with
  ``non_blocking=True``): the data goes through page-locked (pinned) memory on a
  separate copy stream, so it overlaps with kernels already queued;
* an out-of-memory error that says what was asked for and what is free;
* fused CUDA kernels as fast paths (:meth:`kernel`, see :mod:`.cupy_ops`).
"""

from __future__ import annotations

import collections
import contextlib
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base import Backend, CaptureError, Communicator, Transfer
from ..oom import OutOfMemoryError as OutOfMemoryError
from . import collectives
from .graphs import CupyGraph, CupyGraphs, capture_error
from .memory import TrackingAllocator, oom_guard, translate_oom

if TYPE_CHECKING:
    from ..device import Device

#: Python and NumPy scalars: what :meth:`CupyBackend.asarray` fills in on the device.
SCALARS = (int, float, bool, np.number, np.bool_)

#: Most checks :meth:`CupyBackend.defer_check` keeps waiting.
MAX_DEFERRED = 64

INSTALL_HINT = (
    "install CuPy for your CUDA version, e.g. `pip install 'minitorch_accel[gpu]'` "
    "(cupy-cuda12x) or `pip install cupy-cuda13x`"
)

__all__ = ["CupyBackend", "OutOfMemoryError", "load_cupy", "oom_guard", "translate_oom"]


def load_cupy() -> Any:
    """Import CuPy and check that at least one CUDA device answers.

    Raises
    ------
    RuntimeError
        Saying which is missing: CuPy itself, a working CUDA driver, or a CUDA device.
    """
    try:
        import cupy
    except ImportError as exc:
        raise RuntimeError(
            f"device 'cuda' needs CuPy, which is not installed: {INSTALL_HINT}"
        ) from exc
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # CUDARuntimeError: no driver, or a driver too old
        raise RuntimeError(
            "device 'cuda' needs a working CUDA driver and GPU: CuPy is installed but the "
            f"CUDA runtime failed ({type(exc).__name__}: {exc}). On a machine without an "
            "NVIDIA GPU use device='cpu' (or virtual devices 'cpu:N')"
        ) from exc
    if count == 0:
        raise RuntimeError("device 'cuda' needs a CUDA GPU: CuPy is installed but found no device")
    return cupy


def _index(device: Device | None) -> int | None:
    return None if device is None else (device.index or 0)


class CupyBackend(Backend):
    """Arrays are CuPy arrays on the GPU named by the device index.

    Building it installs a :class:`~.cuda_memory.TrackingAllocator` as CuPy's
    allocator (CuPy's own memory pool, plus peak tracking and clear out-of-memory
    errors).
    """

    name = "cuda"
    has_pinned_memory = True
    is_asynchronous = True
    dlpack_device_types: tuple[int, ...] = (2, 13)  # kDLCUDA, kDLCUDAManaged

    def __init__(self) -> None:
        from .ops import CupyFastPaths

        self.xp = load_cupy()
        self._count = int(self.xp.cuda.runtime.getDeviceCount())
        self._seed = 0
        self._generators: dict[Device, Any] = {}
        self.needs_device_context = self._count > 1
        self._fast = CupyFastPaths(self.xp, switch_devices=self._count > 1)
        self.allocator = TrackingAllocator(self.xp, self._count)
        self.xp.cuda.set_allocator(self.allocator)
        self._copy_streams: dict[int, Any] = {}
        # (event, host buffer): pinned buffers kept alive until their copy is done
        self._in_flight: collections.deque[tuple[Any, Any]] = collections.deque()
        self._checks: collections.deque[Callable[[], None]] = collections.deque()
        self._checks_lock = threading.Lock()
        self._graphs = CupyGraphs(self.xp)
        self._process_comms: dict[tuple[int, int, int], Communicator] = {}

    def device_count(self) -> int:
        """How many devices this backend has."""
        return self._count

    def device_context(self, device: Device) -> contextlib.AbstractContextManager[Any]:
        """A context manager that makes ``device`` the current device."""
        return self.xp.cuda.Device(device.index or 0)  # type: ignore[no-any-return]

    def _current(self, device: Device | None) -> int:
        index = _index(device)
        return int(self.xp.cuda.runtime.getDevice()) if index is None else index

    # ------------------------------------------------------------------ transfers
    def asarray(self, obj: Any, device: Device, dtype: Any = None) -> Any:
        """``obj`` as an array of this backend on ``device`` (copied only if needed)."""
        if isinstance(obj, np.ndarray):
            return self.upload(obj, device, dtype=dtype)
        if isinstance(obj, SCALARS) and self.capture_status(device):
            # a fill kernel takes the value as an argument: capturable, whereas copying
            # from host memory would make the graph read that memory at every replay
            with self.device_context(device):
                return self.xp.full((), obj, dtype=dtype or np.asarray(obj).dtype)
        with self.device_context(device), oom_guard(device.index):
            return self.xp.asarray(obj, dtype=dtype)

    def upload(
        self, host: np.ndarray, device: Device, non_blocking: bool = False, dtype: Any = None
    ) -> Any:
        """Copy a NumPy array to GPU ``device``.

        With ``non_blocking=True`` the copy is queued on the device's copy stream from
        pinned memory (``host`` is first copied there unless it already is pinned, see
        :meth:`pin`) and the call returns at once; kernels queued afterwards on the
        current stream wait for it, so results are always correct.
        """
        self._refuse(device, "a copy from host memory (a CPU tensor or a NumPy array in the step)")
        if non_blocking and host.nbytes > 0:
            transfer = self.upload_async(host, device)
            transfer.wait()
            out = transfer.array
        else:
            with self.device_context(device), oom_guard(device.index):
                out = self.xp.asarray(host)
        if dtype is not None and out.dtype != np.dtype(dtype):
            with self.device_context(device):
                out = out.astype(dtype)
        return out

    def upload_async(self, host: np.ndarray, device: Device) -> Transfer:
        """Queue the copy of ``host`` on the device's copy stream and return at once.

        From pinned memory the DMA engine reads ``host`` directly; from pageable memory
        it is first copied into a pinned buffer. Either is kept alive until the copy is
        done.
        The :class:`~minitorch_accel.backends.base.Transfer` waits on the copy's event:
        ``wait()`` makes the calling thread's current stream wait, ``finish()`` blocks.
        """
        cp = self.xp
        host = np.ascontiguousarray(host)
        with self.device_context(device), oom_guard(device.index):
            staged = host if self.is_pinned(host) else self.pin(host)
            out = cp.ndarray(host.shape, host.dtype)
            if host.nbytes == 0:
                return Transfer(out)
            stream = self._copy_stream(device.index or 0)
            # ``out`` may be a block that an array freed a moment ago held, which kernels
            # queued on the default stream still read: the copy waits for them
            stream.wait_event(cp.cuda.Stream.null.record())
            out.set(staged, stream=stream)
            done = stream.record()
            self._keep_until(done, staged)  # not freed (and reused) before the copy

        def wait() -> None:
            with self.device_context(device):
                cp.cuda.get_current_stream().wait_event(done)

        return Transfer(out, wait, done.synchronize)

    def download(self, array: Any, non_blocking: bool = False) -> np.ndarray:
        """Copy a CuPy array to the host.

        With ``non_blocking=True`` the copy into pinned memory is only queued on the
        current stream: call :meth:`synchronize` before reading the result.
        """
        self._refuse(None, "reading a device array back to the host (.item(), .numpy(), print)")
        with array.device:
            if not non_blocking:
                self.run_deferred_checks()
                return array.get()  # type: ignore[no-any-return]
            out = self.pinned_empty(array.shape, array.dtype)
            array.get(stream=self.xp.cuda.get_current_stream(), out=out, blocking=False)
            return out

    def to_host(self, array: Any) -> np.ndarray:
        """``array`` as a NumPy array in host memory."""
        if isinstance(array, np.ndarray):
            return array
        return self.download(array)

    def copy_between(self, array: Any, src: Device, dst: Device, non_blocking: bool) -> Any:
        """A copy of ``array`` (on ``src``) made on ``dst``."""
        with self.device_context(dst), oom_guard(dst.index):
            return array.copy()  # CuPy copies onto the current device, peer to peer

    def clone(self, array: Any) -> Any:
        """A copy of ``array``: one device-to-device memcpy when it is C-contiguous (a
        third of the host time of ``array.copy()``), ``array.copy()`` otherwise. An
        out-of-memory error is translated by the allocator.
        """
        if not array.flags.c_contiguous or array.size == 0:
            return array.copy()
        with array.device if self.needs_device_context else contextlib.nullcontext():
            copy = self.xp.ndarray(array.shape, array.dtype)
            copy.data.copy_from_device_async(array.data, array.nbytes)
        return copy

    def pinned_empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """An uninitialised NumPy array in page-locked host memory (from CuPy's pool)."""
        dt = np.dtype(dtype)
        count = int(np.prod(shape))
        memory = self.xp.cuda.alloc_pinned_memory(max(count * dt.itemsize, 1))
        return np.frombuffer(memory, dt, count).reshape(shape)

    def pin(self, host: np.ndarray) -> np.ndarray:
        """A copy of ``host`` in page-locked memory: the GPU can read it asynchronously."""
        out = self.pinned_empty(host.shape, host.dtype)
        out[...] = host
        return out

    def is_pinned(self, host: np.ndarray) -> bool:
        """True if ``host``'s memory is page-locked (registered with CUDA)."""
        if host.nbytes == 0:
            return False
        runtime = self.xp.cuda.runtime
        try:
            attributes = runtime.pointerGetAttributes(host.ctypes.data)
        except Exception:  # older drivers raise for ordinary pageable memory
            return False
        return bool(attributes.type == runtime.memoryTypeHost)

    def _copy_stream(self, index: int) -> Any:
        stream = self._copy_streams.get(index)
        if stream is None:
            with self.xp.cuda.Device(index):
                stream = self.xp.cuda.Stream(non_blocking=True)
            self._copy_streams[index] = stream
        return stream

    def _keep_until(self, event: Any, buffer: Any) -> None:
        self._release_finished()
        self._in_flight.append((event, buffer))

    def _release_finished(self) -> None:
        queue = self._in_flight
        while queue and queue[0][0].done:
            queue.popleft()

    def synchronize(self, device: Device | None = None) -> None:
        """Wait until the work queued on ``device`` (all devices if None) is done."""
        self._refuse(device, "synchronize()")
        self.xp.cuda.Device(self._current(device)).synchronize()
        self.run_deferred_checks()

    def defer_check(self, check: Callable[[], None]) -> None:
        """Keep ``check`` for the next synchronize or read-back (see the base class).

        At most ``MAX_DEFERRED`` wait: past that the oldest runs now (its kernel has long
        finished, so this costs no stall).
        """
        with self._checks_lock:
            self._checks.append(check)
            oldest = self._checks.popleft() if len(self._checks) > MAX_DEFERRED else None
        if oldest is not None:
            oldest()

    def run_deferred_checks(self) -> None:
        """Run every check :meth:`defer_check` holds (the first failing one raises)."""
        with self._checks_lock:
            checks, self._checks = self._checks, collections.deque()
        for check in checks:
            check()

    # ------------------------------------------------------------------ random numbers
    def generator(self, device: Device) -> Any:
        """The random generator of ``device`` (made on first use from the seed)."""
        gen = self._generators.get(device)
        if gen is None:
            sequence = np.random.SeedSequence([self._seed, (device.index or 0) + 1])
            seed = int(sequence.generate_state(1, np.uint32)[0])
            with self.device_context(device):
                gen = self.xp.random.default_rng(seed)
            self._generators[device] = gen
        return gen

    def manual_seed(self, seed: int) -> None:
        """Seed every device's generator of this backend."""
        self._seed = int(seed)
        self._generators.clear()

    # ------------------------------------------------------------------ memory
    def memory_stats(self, device: Device | None = None) -> dict[str, int]:
        """Bytes on GPU ``device`` (default: the current one).

        ``allocated``: in live arrays; ``held``: kept by CuPy's memory pool (live or
        cached for reuse); ``peak``: the most ``allocated`` reached since the start or
        :meth:`reset_peak_memory_stats`; ``free`` and ``total``: the device's.
        """
        index = self._current(device)
        with self.xp.cuda.Device(index):
            pool = self.xp.get_default_memory_pool()
            used, held = int(pool.used_bytes()), int(pool.total_bytes())
            free, total = (int(v) for v in self.xp.cuda.runtime.memGetInfo())
        peak = self.allocator.observe(index, used)
        return {"allocated": used, "held": held, "peak": peak, "free": free, "total": total}

    def reset_peak_memory_stats(self, device: Device | None = None) -> None:
        """Restart the peak measurement of ``device`` from the bytes in use now."""
        from ..device import Device
        from ..memory_tracker import tracker

        index = self._current(device)
        with self.xp.cuda.Device(index):
            used = int(self.xp.get_default_memory_pool().used_bytes())
        self.allocator.reset_peak(index, used)
        tracker.reset_peak(Device(f"{self.name}:{index}"))  # the peaks by category too

    def total_memory(self, device: Device) -> int:
        """Bytes of memory of GPU ``device``, as the driver reports them."""
        return self.memory_stats(device)["total"]

    def set_memory_limit(self, device: Device, nbytes: int | None) -> None:
        """Cap CuPy's memory pool on GPU ``device`` at ``nbytes`` (None: no cap); past
        it an allocation raises :class:`OutOfMemoryError` naming the limit.
        """
        if nbytes is not None and (isinstance(nbytes, bool) or int(nbytes) != nbytes or nbytes < 0):
            raise ValueError(f"a memory limit is a number of bytes >= 0 or None, got {nbytes!r}")
        with self.xp.cuda.Device(self._current(device)):
            self.xp.get_default_memory_pool().set_limit(size=0 if nbytes is None else int(nbytes))

    def memory_limit(self, device: Device) -> int | None:
        """The cap of CuPy's pool on GPU ``device``, or None."""
        with self.xp.cuda.Device(self._current(device)):
            return int(self.xp.get_default_memory_pool().get_limit()) or None

    def empty_cache(self, device: Device | None = None) -> None:
        """Give the memory pool's cached blocks back to the driver (every GPU by
        default), and the pinned host blocks whose copies have finished.
        """
        indices = range(self._count) if device is None else [device.index or 0]
        pool = self.xp.get_default_memory_pool()
        for index in indices:
            with self.xp.cuda.Device(index):
                pool.free_all_blocks()
        self._release_finished()
        self.xp.get_default_pinned_memory_pool().free_all_blocks()

    def device_name(self, device: Device | None = None) -> str:
        """The GPU's product name, e.g. ``"NVIDIA H100 80GB HBM3"``."""
        name = self.xp.cuda.runtime.getDeviceProperties(self._current(device))["name"]
        return name.decode() if isinstance(name, bytes) else str(name)

    def current_device(self) -> int:
        """The index of CuPy's current GPU in this thread."""
        return int(self.xp.cuda.runtime.getDevice())

    def describe(self) -> str:
        """The GPUs, CuPy's version and the first GPU's name."""
        return f"{self._count} device(s) (CuPy {self.xp.__version__}, {self.device_name()})"

    # ------------------------------------------------------------------ arrays and devices
    def owns(self, array: Any) -> bool:
        """True for CuPy arrays."""
        return isinstance(array, self.xp.ndarray)

    def device_of(self, array: Any) -> Device:
        """``cuda:N``, the GPU holding the CuPy array ``array``."""
        from ..device import Device

        return Device(f"{self.name}:{array.device.id}")

    def upload_into(self, out: Any, host: np.ndarray, device: Device) -> Any:
        """Copy ``host`` into the GPU array ``out`` on the current stream (without
        blocking the host when ``host`` is pinned).
        """
        with self.device_context(device):
            out.set(host)
        return out

    def download_into(self, out: np.ndarray, array: Any, device: Device) -> np.ndarray:
        """Copy the GPU array ``array`` into the host array ``out`` (blocking)."""
        with self.device_context(device):
            array.get(out=out)
        return out

    # ------------------------------------------------------------------ timing, errors
    def record_event(self, device: Device) -> Any:
        """A CUDA event recorded now on ``device``'s current stream."""
        with self.device_context(device):
            event = self.xp.cuda.Event()
            event.record()
        return event

    def elapsed_time(self, start: Any, end: Any) -> float:
        """Seconds between two CUDA events, once ``end`` has happened."""
        end.synchronize()
        return float(self.xp.cuda.get_elapsed_time(start, end)) / 1e3

    def oom_guard(self, device: Device | None = None) -> contextlib.AbstractContextManager[Any]:
        """Turn CuPy's out-of-memory errors into :class:`OutOfMemoryError`."""
        return oom_guard(_index(device))

    def translate_oom(self, exc: BaseException, device: Device | None = None) -> OutOfMemoryError:
        """The :class:`OutOfMemoryError` describing CuPy's error ``exc`` on ``device``."""
        return translate_oom(exc, _index(device))

    # ------------------------------------------------------------------ DLPack
    def from_dlpack(self, obj: Any, device_id: int) -> tuple[Device, Any]:
        """``(cuda:N, a CuPy array sharing obj's memory on GPU N)``."""
        from ..device import Device

        device = Device(f"{self.name}:{device_id}")
        device.backend  # noqa: B018  (checks the index)
        with self.device_context(device):
            return device, self.xp.from_dlpack(obj)

    def dlpack_device(self, array: Any, device: Device) -> tuple[int, int]:
        """``(2, N)``: CUDA memory of GPU ``N``."""
        return (2, device.index or 0)

    # ------------------------------------------------------------------ collectives
    def collectives_unavailable_reason(self, devices: Sequence[Device]) -> str | None:
        """Why NCCL cannot all-reduce between ``devices``, or None when it can."""
        if len({d.index for d in devices}) != len(devices):
            return "a GPU appears twice (NCCL needs one rank per GPU)"
        return collectives.nccl_unavailable_reason()

    def device_communicator(self, devices: Sequence[Device]) -> Communicator:
        """NCCL communicators between the distinct GPUs ``devices``."""
        reason = self.collectives_unavailable_reason(devices)
        if reason is not None:
            raise RuntimeError(f"cannot all-reduce with NCCL: {reason}")
        return collectives.local_communicator(self.xp, devices)

    def process_communicator(
        self,
        device: Device,
        rank: int,
        world_size: int,
        broadcast_object: Callable[[Any], Any],
    ) -> Communicator | None:
        """NCCL between this rank's GPU and the other ranks' (made once per GPU and
        world), or None when CuPy has no NCCL.
        """
        if collectives.nccl_unavailable_reason() is not None:
            return None
        key = (device.index or 0, rank, world_size)
        found = self._process_comms.get(key)
        if found is None:
            found = collectives.process_communicator(
                self.xp, key[0], rank, world_size, broadcast_object
            )
            self._process_comms[key] = found
        return found

    # ------------------------------------------------------------------ fast paths
    def kernel(self, name: str) -> Any:
        """A fused CUDA kernel (see :mod:`.cupy_ops` for the names), or None."""
        return self._fast.get(name)

    def gemm(self, a: Any, b: Any, out: Any = None) -> Any:
        """``a @ b``: 2-D float16/float32/float64 products in one cuBLAS call (float16
        on tensor cores with float32 accumulation, float32 in TF32 when
        ``backends.cuda.matmul.allow_tf32``, see :mod:`.fast_base`), else ``matmul``.
        """
        result = self._fast.gemm(a, b, out)
        if result is not None:
            return result
        if out is None:
            return self.xp.matmul(a, b)
        return self.xp.matmul(a, b, out=out)

    # ------------------------------------------------------------------ graph capture
    supports_capture = True

    def _refuse(self, device: Device | None, what: str) -> None:
        if self._graphs.active and self._graphs.is_capturing(self._current(device)):
            raise CaptureError(f"{what} is not allowed while a CUDA graph is being captured")

    def capture_status(self, device: Device) -> bool:
        """True while a capture runs on ``device`` (see :mod:`.cupy_graphs`)."""
        return self._graphs.is_capturing(device.index or 0)

    def begin_capture(self, device: Device) -> None:
        """Capture the work queued on ``device`` on a fresh stream (see :mod:`.cupy_graphs`)."""
        self.run_deferred_checks()
        self._graphs.begin(device.index or 0)

    def end_capture(self, device: Device) -> CupyGraph:
        """Stop capturing on ``device``; the graph keeps its stream's memory arena alive."""
        return self._graphs.end(device.index or 0)

    def abort_capture(self, device: Device) -> None:
        """End a capture that failed part-way."""
        self._graphs.abort(device.index or 0)

    def replay(self, graph: Any, device: Device) -> None:
        """Launch ``graph`` (one call from the host queues all of its kernels)."""
        self._graphs.replay(graph, device.index or 0)

    def capture_error(self, exc: BaseException) -> CaptureError | None:
        """Our :class:`CaptureError`, or CUDA's refusal of work during a capture, as one."""
        return capture_error(exc)

    def release_graph(self, graph: Any) -> None:
        """Drop the graph; its arena's blocks return to CuPy's pool with its stream."""
        graph.graph = None
