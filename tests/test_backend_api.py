"""The Backend methods and capability flags that code outside ``backends/`` goes through
(pinned buffers, copies into buffers, communicators, DLPack, GEMM, array ownership,
timing events, out-of-memory errors), on the NumPy backend, on the strict stand-in for
CuPy, on small test backends built from them, and (marked ``gpu``) on CuPy.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest
from support import strict_backend
from support.strict_xp import STRICT, StrictArray

import minitorch_accel as mta
from minitorch_accel.backends import (
    Backend,
    Communicator,
    Device,
    registry,
    transfer_stats,
)
from minitorch_accel.backends.numpy.backend import NumpyBackend
from minitorch_accel.backends.oom import OutOfMemoryError
from minitorch_accel.core.dlpack import dlpack_device, from_dlpack
from minitorch_accel.distributed import comm, sync
from minitorch_accel.ops.gemm import gemm
from minitorch_accel.parallel.reduce import DeviceReducer, HostLink, host_buffer
from minitorch_accel.utils.timing import Timer


@pytest.fixture(scope="module", autouse=True)
def strict() -> Iterator[None]:
    with strict_backend.registered():
        yield


@contextlib.contextmanager
def plugged(name: str, factory: Callable[[], Backend]) -> Iterator[Backend]:
    registry.register(name, factory)
    try:
        yield registry.get(name)
    finally:
        registry.unregister(name)


# ---------------------------------------------------------------- flags
def test_capability_flags() -> None:
    cpu, strict = Device("cpu").backend, Device("strict:1").backend
    assert (cpu.shares_host_memory, cpu.has_pinned_memory, cpu.is_asynchronous) == (
        True,
        False,
        False,
    )
    assert (strict.shares_host_memory, strict.has_pinned_memory, strict.is_asynchronous) == (
        False,
        False,
        False,
    )
    assert Device("cpu:5").shares_host_memory and not Device("strict:2").shares_host_memory


# ---------------------------------------------------------------- GEMM
def test_numpy_gemm_float16_accumulates_in_float32() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 300)).astype(np.float16)
    b = rng.standard_normal((300, 4)).astype(np.float16)
    expected = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    backend = Device("cpu").backend
    got = backend.gemm(a, b)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, expected)
    out = np.empty((5, 4), np.float16)
    assert backend.gemm(a, b, out) is out
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_numpy_gemm_is_matmul(dtype: str) -> None:
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 7)).astype(dtype), rng.standard_normal((7, 2)).astype(dtype)
    np.testing.assert_array_equal(Device("cpu").backend.gemm(a, b), np.matmul(a, b))
    out = np.zeros((3, 2), dtype)
    Device("cpu").backend.gemm(a, b, out)
    np.testing.assert_array_equal(out, np.matmul(a, b))


def test_ops_gemm_goes_to_the_backend_of_the_array_module() -> None:
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(3.0).reshape(3, 1)
    np.testing.assert_array_equal(gemm(np, a, b), a @ b)
    with strict_backend.on_device(0):
        sa, sb = STRICT.asarray(a), STRICT.asarray(b)
        result = gemm(STRICT, sa, sb)  # the base Backend.gemm: xp.matmul
    assert isinstance(result, StrictArray)
    np.testing.assert_array_equal(STRICT.asnumpy(result), a @ b)
    assert registry.for_module(np) is Device("cpu").backend
    with pytest.raises(ValueError, match="no backend uses the array module 'math'"):
        registry.for_module(math)


# ---------------------------------------------------------------- arrays and devices
def test_owns_and_device_of() -> None:
    cpu = Device("cpu").backend
    assert cpu.owns(np.zeros(2)) and not cpu.owns([1.0])
    assert cpu.device_of(np.zeros(2)) is Device("cpu")
    strict = Device("strict").backend
    with strict_backend.on_device(2):
        array = STRICT.zeros(3)
    assert strict.owns(array) and not strict.owns(np.zeros(3)) and not cpu.owns(array)
    assert strict.device_of(array) is Device("strict:2")
    assert registry.device_of_array(array) is Device("strict:2")
    assert registry.device_of_array(np.zeros(1)) is Device("cpu")
    assert registry.device_of_array(object()) is None
    with pytest.raises(TypeError, match="the 'abstract' backend does not own a list"):
        Backend().device_of([])
    assert not Backend().owns(np.zeros(1))


def test_a_backend_that_cannot_run_is_asked_once_about_arrays() -> None:
    built: list[int] = []

    def unusable() -> Backend:
        built.append(1)
        raise RuntimeError("device 'nogpu' needs a library that is not installed")

    registry.register("nogpu", unusable)
    try:
        assert registry.device_of_array(object()) is None
        assert registry.device_of_array(object()) is None
        assert built == [1]
        registry.register("nogpu", unusable)  # registered anew: asked again
        assert registry.device_of_array(range(2)) is None and built == [1, 1]
        with pytest.raises(RuntimeError, match="needs a library"):
            Device("nogpu").backend  # noqa: B018  (the error is still raised on use)
    finally:
        registry.unregister("nogpu")


def test_a_tensor_from_a_backend_array_stays_on_its_device() -> None:
    with strict_backend.on_device(3):
        array = STRICT.asarray(np.arange(4.0))
    t = mta.tensor(array)
    assert t.device is Device("strict:3")
    np.testing.assert_array_equal(t.numpy(), np.arange(4.0))
    moved = mta.tensor(array, device="cpu")
    assert moved.device is Device("cpu") and moved.tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("device", ["cpu", "cpu:1", "strict:1"])
def test_upload_into_and_download_into(device: str) -> None:
    dev = Device(device)
    backend = dev.backend
    with backend.device_context(dev):
        out = dev.xp.zeros((2, 3))
    host = np.arange(6.0).reshape(2, 3)
    assert backend.upload_into(out, host, dev) is out
    back = np.empty((2, 3))
    assert backend.download_into(back, out, dev) is back
    np.testing.assert_array_equal(back, host)
    host[...] = -1  # the device array is a copy, not a view of the host array
    assert backend.download_into(back, out, dev)[0, 0] == 0.0


def test_base_copies_into_buffers_go_through_asarray_and_to_host() -> None:
    dev = Device("strict:2")
    backend = dev.backend
    with backend.device_context(dev):
        out = dev.xp.zeros(4)
    Backend.upload_into(backend, out, np.arange(4.0), dev)
    back = Backend.download_into(backend, np.empty(4), out, dev)
    np.testing.assert_array_equal(back, np.arange(4.0))


def test_host_link_counts_and_copies_on_the_strict_device() -> None:
    link = HostLink(Device("strict:1"))
    transfer_stats.reset()
    on_device = link.to_device(np.arange(5.0))
    assert isinstance(on_device, StrictArray)
    np.testing.assert_array_equal(link.to_host(on_device), np.arange(5.0))
    assert transfer_stats.host_to_device == transfer_stats.device_to_host == 40


class PinnedBackend(NumpyBackend):
    """The NumPy backend claiming page-locked memory: counts its pinned buffers."""

    name = "pinned"
    has_pinned_memory = True

    def __init__(self) -> None:
        super().__init__()
        self.pinned: list[tuple[tuple[int, ...], Any]] = []

    def pinned_empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        self.pinned.append((tuple(shape), np.dtype(dtype)))
        return np.empty(shape, dtype)


def test_host_buffer_is_pinned_only_by_a_backend_that_has_pinned_memory() -> None:
    plain = host_buffer([Device("cpu:1"), Device("strict:1")], 6, np.float32)
    assert plain.shape == (6,) and plain.dtype == np.float32
    with plugged("pinned", PinnedBackend) as backend:
        assert isinstance(backend, PinnedBackend)
        buffer = host_buffer([Device("cpu:1"), Device("pinned:0")], 6, np.float64)
        assert buffer.shape == (6,) and backend.pinned == [((6,), np.dtype(np.float64))]


def test_device_description() -> None:
    backend = Device("cpu").backend
    assert backend.current_device() == 0
    assert backend.device_name() != ""
    assert f"NumPy {np.__version__}" in backend.describe()
    assert Device("strict").backend.describe() == "4 device(s)"


# ---------------------------------------------------------------- timing
def test_the_cpu_records_no_events() -> None:
    backend = Device("cpu").backend
    assert backend.record_event(Device("cpu")) is None
    with pytest.raises(NotImplementedError, match="records no timing events"):
        backend.elapsed_time(None, None)


class EventBackend(NumpyBackend):
    """Events are ticks of a counter; elapsed time is 0.25 s per tick."""

    name = "events"
    is_asynchronous = True

    def __init__(self) -> None:
        super().__init__()
        self.ticks = 0
        self.synchronized = 0

    def record_event(self, device: Device) -> Any:
        self.ticks += 3
        return self.ticks

    def elapsed_time(self, start: Any, end: Any) -> float:
        return float(end - start) * 0.25

    def synchronize(self, device: Device | None = None) -> None:
        self.synchronized += 1


def test_timer_reads_the_backends_events() -> None:
    with plugged("events", EventBackend) as backend:
        assert isinstance(backend, EventBackend)
        with Timer("events:0") as timer:
            pass
        assert timer.elapsed == 0.75 and backend.ticks == 6
        assert backend.synchronized == 1  # before the start; the end event waits itself
        with Timer("events:0", cuda_events=False) as host_timed:
            pass
        assert backend.ticks == 6 and backend.synchronized == 3
        assert 0.0 <= host_timed.elapsed < 60.0


# ---------------------------------------------------------------- out of memory
def test_oom_guard_and_translate_oom() -> None:
    backend = Device("cpu").backend
    with backend.oom_guard(Device("cpu")):
        pass
    with pytest.raises(ValueError, match="passes"), backend.oom_guard(None):
        raise ValueError("passes through")
    error = MemoryError("full")
    error._size = 1024  # type: ignore[attr-defined]
    translated = backend.translate_oom(error, Device("cpu:2"))
    assert isinstance(translated, OutOfMemoryError)
    assert str(translated).startswith("Out of memory on cpu:2: tried to allocate 1.00 KiB")
    assert backend.translate_oom(translated) is translated
    backend.empty_cache()  # nothing cached: a no-op that must not fail


def test_the_cuda_facade_without_a_gpu() -> None:
    if mta.cuda.is_available():
        pytest.skip("checks the answers without a GPU")
    error = mta.cuda.translate_oom(MemoryError("full"), 1)
    assert str(error).startswith("CUDA out of memory on cuda:1")
    with mta.cuda.oom_guard(0):
        pass
    with pytest.raises(ValueError, match="expected a CUDA device such as 'cuda:0', got 'cpu'"):
        mta.cuda.memory_allocated("cpu")
    assert mta.cuda.memory_stats()["total"] == 0


# ---------------------------------------------------------------- DLPack
def test_dlpack_through_the_backend() -> None:
    backend = Device("cpu").backend
    assert backend.dlpack_device_types == (1, 3)
    source = np.arange(3.0)
    device, array = backend.from_dlpack(source, 0)
    assert device is Device("cpu") and np.shares_memory(array, source)
    assert backend.dlpack_device(source, Device("cpu:4")) == (1, 0)
    assert dlpack_device(mta.ones(2, device="cpu:4")) == (1, 0)
    assert Device("strict").backend.dlpack_device_types == ()
    with pytest.raises(BufferError, match="the 'strict' backend does not import DLPack"):
        Device("strict").backend.from_dlpack(source, 0)


class HostAtDeviceType(NumpyBackend):
    """Imports DLPack device type 7 (an unclaimed code) as host memory."""

    name = "seven"
    dlpack_device_types = (7,)

    def from_dlpack(self, obj: Any, device_id: int) -> tuple[Device, Any]:
        return Device(f"seven:{device_id}"), np.asarray(obj.values)


class ClaimsSeven:
    def __init__(self) -> None:
        self.values = np.arange(3.0)

    def __dlpack__(self, **kwargs: Any) -> Any:
        raise AssertionError("not called: the backend imports it")

    def __dlpack_device__(self) -> tuple[int, int]:
        return (7, 2)


def test_from_dlpack_asks_the_backends() -> None:
    with pytest.raises(BufferError, match="DLPack device type 7 is not supported"):
        from_dlpack(ClaimsSeven())
    with plugged("seven", HostAtDeviceType):
        t = from_dlpack(ClaimsSeven())
        assert t.device is Device("seven:2") and t.tolist() == [0.0, 1.0, 2.0]


# ---------------------------------------------------------------- communicators
def test_no_communicator_on_the_cpu() -> None:
    backend = Device("cpu").backend
    devices = [Device("cpu:0"), Device("cpu:1")]
    reason = backend.collectives_unavailable_reason(devices)
    assert reason == "the 'cpu' backend has no all-reduce between devices"
    with pytest.raises(RuntimeError, match="has no all-reduce between devices"):
        backend.device_communicator(devices)
    assert backend.process_communicator(Device("cpu"), 0, 2, lambda v: v) is None


class SumCommunicator(Communicator):
    """Sums NumPy arrays in place (what NCCL does between GPUs)."""

    name = "sum"

    def __init__(self, calls: list[int]) -> None:
        self.calls = calls

    def all_reduce(self, arrays: Sequence[Any]) -> None:
        total = np.sum(arrays, axis=0)
        for array in arrays:
            array[...] = total
        self.calls.append(len(arrays))


class CollectiveBackend(NumpyBackend):
    """The NumPy backend with an all-reduce between its devices and between processes."""

    name = "coll"

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []
        self.joined: list[tuple[int, int, Any]] = []

    def collectives_unavailable_reason(self, devices: Sequence[Device]) -> str | None:
        return None

    def device_communicator(self, devices: Sequence[Device]) -> Communicator:
        return SumCommunicator(self.calls)

    def process_communicator(
        self, device: Device, rank: int, world_size: int, broadcast_object: Callable[[Any], Any]
    ) -> Communicator | None:
        self.joined.append((rank, world_size, broadcast_object("id")))
        return _TwoRanks(self.calls)


class _TwoRanks(SumCommunicator):
    """Another rank holding the same values: the sum doubles them."""

    def all_reduce(self, arrays: Sequence[Any]) -> None:
        for array in arrays:
            array *= 2
        self.calls.append(len(arrays))


def test_device_reducer_uses_the_backends_communicator() -> None:
    with plugged("coll", CollectiveBackend) as backend:
        assert isinstance(backend, CollectiveBackend)
        devices = [Device("coll:0"), Device("coll:1"), Device("coll:2")]
        reducer = DeviceReducer(devices)
        assert reducer.method == "sum" and reducer.reason is None
        flats = [np.full(4, 1.0), np.full(4, 2.0), np.full(4, 4.0)]
        transfer_stats.reset()
        averaged, seconds = reducer.all_reduce(flats, [0.5, 0.25, 0.25])
        for out in averaged:
            np.testing.assert_array_equal(out, np.full(4, 2.0))  # weighted: 0.5 + 0.5 + 1
        assert backend.calls == [3] and seconds["gather"] == 0.0
        assert transfer_stats.device_to_device == 3 * (32 * 2 * 2 // 3)
        mixed = DeviceReducer([Device("coll:0"), Device("cpu:1")])
        assert mixed.method == "copy" and mixed.reason == "the devices belong to different backends"


def test_allreduce_flat_uses_the_process_communicator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(comm, "world_size", lambda: 2)
    monkeypatch.setattr(comm, "rank", lambda: 1)
    monkeypatch.setattr(comm, "broadcast_object", lambda value: f"root's {value}")
    monkeypatch.setattr(comm, "guarded", lambda name, operation: operation())
    with plugged("coll", CollectiveBackend) as backend:
        assert isinstance(backend, CollectiveBackend)
        flat = mta.tensor([1.0, 2.5], device="coll:0")
        sync.allreduce_flat(flat)
        assert flat.tolist() == [2.0, 5.0]
        assert backend.joined == [(1, 2, "root's id")] and backend.calls == [1]


# ---------------------------------------------------------------- CuPy (needs a GPU)
@pytest.mark.gpu
def test_cupy_flags_and_ownership() -> None:
    import cupy

    backend = Device("cuda").backend
    assert backend.has_pinned_memory and backend.is_asynchronous
    assert not backend.shares_host_memory
    array = cupy.arange(3.0)
    assert backend.owns(array) and not backend.owns(np.zeros(1))
    assert backend.device_of(array) is Device(f"cuda:{array.device.id}")
    assert mta.tensor(array).device is Device(f"cuda:{array.device.id}")
    assert "CuPy" in backend.describe() and backend.current_device() >= 0


@pytest.mark.gpu
def test_cupy_copies_into_buffers_and_pinned_memory() -> None:
    dev = Device("cuda:0")
    backend = dev.backend
    host = backend.pinned_empty((5,), np.float32)
    host[...] = np.arange(5.0)
    out = dev.xp.zeros(5, np.float32)
    backend.upload_into(out, host, dev)
    back = np.empty(5, np.float32)
    backend.download_into(back, out, dev)
    np.testing.assert_array_equal(back, np.arange(5.0))
    assert host_buffer([Device("cpu"), dev], 4, np.float32).shape == (4,)


@pytest.mark.gpu
def test_cupy_gemm_dlpack_and_events() -> None:
    dev = Device("cuda:0")
    backend = dev.backend
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((8, 5)), rng.standard_normal((5, 3))
    got = backend.gemm(dev.xp.asarray(a), dev.xp.asarray(b))
    np.testing.assert_allclose(dev.xp.asnumpy(got), a @ b, rtol=1e-12)
    t = from_dlpack(dev.xp.arange(4.0))
    assert t.device is dev and dlpack_device(t) == (2, 0)
    start = backend.record_event(dev)
    dev.xp.ones(1 << 20).sum()
    assert backend.elapsed_time(start, backend.record_event(dev)) >= 0.0
    with backend.oom_guard(dev):
        pass


@pytest.mark.gpu
def test_cupy_collectives_answer() -> None:
    backend = Device("cuda").backend
    reason = backend.collectives_unavailable_reason([Device("cuda:0"), Device("cuda:0")])
    assert reason == "a GPU appears twice (NCCL needs one rank per GPU)"
    if backend.device_count() < 2:
        pytest.skip("an NCCL all-reduce needs two GPUs")
    devices = [Device("cuda:0"), Device("cuda:1")]
    if backend.collectives_unavailable_reason(devices) is not None:
        pytest.skip("CuPy has no NCCL here")
    flats = []
    for i, device in enumerate(devices):
        with backend.device_context(device):
            flats.append(device.xp.full(3, float(i + 1)))
    backend.device_communicator(devices).all_reduce(flats)
    for device, flat in zip(devices, flats, strict=True):
        backend.synchronize(device)
        np.testing.assert_array_equal(flat.get(), np.full(3, 3.0))
