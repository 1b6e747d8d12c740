"""The CuPy backend and ``minitorch_accel.cuda``.

The first part runs everywhere: the utilities must answer sensibly without a GPU, the
out-of-memory error must say what happened, the allocator must track peaks. The
second part (``@pytest.mark.gpu``) needs CuPy and a CUDA GPU and is skipped otherwise:
the op suite against the CPU, non-blocking copies, memory statistics, several GPUs,
out-of-memory translation, timing, DLPack, prefetch and bfloat16. The fused kernels are
checked in ``test_cuda_kernels.py``.
"""

from __future__ import annotations

import pickle
import types
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from support.helpers import cuda_available
from test_strict_backend import CASES, INT, F, evaluate, functional

import minitorch_accel as mta
import minitorch_accel.cuda as mcuda
from minitorch_accel.backends.cupy.memory import (
    OutOfMemoryError,
    TrackingAllocator,
    format_bytes,
    is_out_of_memory,
)

GPU = cuda_available()
gpu = pytest.mark.gpu


# ------------------------------------------------------------------ without a GPU
@pytest.mark.skipif(GPU, reason="checks the behaviour on machines without a GPU")
def test_utilities_without_a_gpu() -> None:
    assert mcuda.is_available() is False and mcuda.device_count() == 0
    assert mcuda.memory_allocated() == 0 and mcuda.max_memory_allocated("cuda:1") == 0
    assert mcuda.memory_reserved(0) == 0 and mcuda.memory_stats()["total"] == 0
    mcuda.empty_cache()
    mcuda.reset_peak_memory_stats()
    for needs in (mcuda.synchronize, mcuda.get_device_name, mcuda.mem_get_info):
        with pytest.raises(RuntimeError, match="device 'cuda' needs"):
            needs()


def test_device_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="expected a CUDA device such as 'cuda:0', got 'cpu:1'"):
        mcuda.memory_allocated("cpu:1")
    with pytest.raises(ValueError, match="a GPU index is non-negative, got -1"):
        mcuda.memory_reserved(-1)


def test_out_of_memory_error_message() -> None:
    err = OutOfMemoryError(
        "cuda:1",
        requested=3 << 30,
        free=512 << 20,
        total=80 << 30,
        allocated=70 << 30,
        held=79 << 30,
    )
    assert isinstance(err, MemoryError) and isinstance(err, RuntimeError)
    assert str(err).startswith(
        "CUDA out of memory on cuda:1: tried to allocate 3.00 GiB; 512.00 MiB free of "
        "80.00 GiB total (this process: 70.00 GiB in arrays, 79.00 GiB held"
    )
    assert "empty_cache()" in str(err)
    again = pickle.loads(pickle.dumps(err))
    assert (again.device, again.requested, again.free, str(again)) == (
        "cuda:1",
        3 << 30,
        512 << 20,
        str(err),
    )
    assert mcuda.OutOfMemoryError is OutOfMemoryError


@pytest.mark.parametrize(
    "n, text", [(None, "unknown"), (12, "12 B"), (1536, "1.50 KiB"), (5 << 40, "5120.00 GiB")]
)
def test_format_bytes(n: int | None, text: str) -> None:
    assert format_bytes(n) == text


def test_translate_oom_from_cupy_error() -> None:
    cupy = pytest.importorskip("cupy")
    exc = cupy.cuda.memory.OutOfMemoryError(1000, 500, 0)
    assert is_out_of_memory(exc) and not is_out_of_memory(ValueError("x"))
    err = mcuda.translate_oom(exc, "cuda:0")
    assert isinstance(err, OutOfMemoryError) and err.requested == 1000 and err.device == "cuda:0"
    assert "tried to allocate 1000 B" in str(err)
    with (
        pytest.raises(OutOfMemoryError, match="tried to allocate 1000 B") as info,
        mcuda.oom_guard(0),
    ):
        raise exc
    assert info.value.__cause__ is exc
    with pytest.raises(KeyError), mcuda.oom_guard():
        raise KeyError("other errors pass through")


class FakePool:
    """Stands for CuPy's memory pool: ``malloc`` and ``used_bytes``."""

    def __init__(self, capacity: int) -> None:
        self.capacity, self.used, self.reads = capacity, 0, 0

    def malloc(self, size: int) -> Any:
        if self.used + size > self.capacity:
            raise FakeOOMError(size)
        self.used += size
        return types.SimpleNamespace(device_id=0, size=size)

    def used_bytes(self) -> int:
        self.reads += 1
        return self.used


class FakeOOMError(MemoryError):
    def __init__(self, size: int) -> None:
        super().__init__(f"Out of memory allocating {size} bytes")
        self._size = size


def test_tracking_allocator_peak_and_oom() -> None:
    pool = FakePool(capacity=10 << 20)
    fake = types.SimpleNamespace(
        get_default_memory_pool=lambda: pool,
        cuda=types.SimpleNamespace(memory=types.SimpleNamespace(OutOfMemoryError=FakeOOMError)),
    )
    allocator = TrackingAllocator(fake, device_count=1, sample_bytes=1 << 20)
    allocator(4 << 20)
    assert allocator.peak[0] == 4 << 20  # a large allocation is sampled at once
    for _ in range(100):
        allocator(1000)  # small ones only once they add up to sample_bytes
    assert pool.reads == 1
    pool.used -= 4 << 20  # the big array is freed
    assert allocator.observe(0, pool.used) == 4 << 20
    allocator.reset_peak(0, pool.used)
    assert allocator.peak[0] == 100_000
    with pytest.raises(OutOfMemoryError, match="tried to allocate 20.00 MiB") as info:
        allocator(20 << 20)
    assert info.value.requested == 20 << 20 and isinstance(info.value.__cause__, FakeOOMError)


# ------------------------------------------------------------------ on a GPU
def cuda_array(tensor: mta.Tensor) -> Any:
    assert type(tensor.array).__module__.startswith("cupy"), type(tensor.array)
    return tensor.array


@gpu
def test_utilities_on_a_gpu() -> None:
    assert mcuda.is_available() and mcuda.device_count() >= 1
    assert mcuda.get_device_name() and mcuda.current_device() == 0
    free, total = mcuda.mem_get_info(0)
    assert 0 < free <= total
    mcuda.synchronize()
    mcuda.synchronize("cuda:0")


@gpu
@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("fn, makers, order", [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_op_suite_matches_cpu(
    fn: Callable[..., mta.Tensor], makers: list[Any], order: int, precision: str
) -> None:
    rng = np.random.default_rng(0)
    arrays = [m(rng) for m in makers]
    if precision == "float32":
        arrays = [a.astype(np.float32) if a.dtype == np.float64 else a for a in arrays]
        order = min(order, 1)
    expected = evaluate(fn, arrays, "cpu", order)
    found = evaluate(fn, arrays, "cuda", order)
    rtol, atol = (1e-9, 1e-11) if precision == "float64" else (2e-4, 2e-5)
    for e, f in zip(expected, found, strict=True):
        assert f.dtype == e.dtype and f.shape == e.shape
        np.testing.assert_allclose(f, e, rtol=rtol, atol=atol)


def check_on_gpu(fn: Callable[..., mta.Tensor], makers: list[Any], order: int = 1) -> None:
    rng = np.random.default_rng(0)
    arrays = [m(rng) for m in makers]
    for e, f in zip(
        evaluate(fn, arrays, "cpu", order), evaluate(fn, arrays, "cuda", order), strict=True
    ):
        np.testing.assert_allclose(f, e, rtol=1e-9, atol=1e-11)


@gpu
def test_losses_and_norms_match_cpu() -> None:
    check_on_gpu(
        lambda x, y: functional("cross_entropy")(x, y, label_smoothing=0.1), [F(6, 5), INT(5, 6)]
    )
    check_on_gpu(lambda x, y: functional("nll_loss")(x.log_softmax(1), y), [F(6, 5), INT(5, 6)])
    check_on_gpu(
        lambda x, w, b: functional("batch_norm")(x, None, None, w, b, training=True),
        [F(4, 3, 2, 2), F(3), F(3)],
    )
    check_on_gpu(lambda x, w, b: functional("linear")(x, w, b), [F(5, 4), F(3, 4), F(3)])


@gpu
@pytest.mark.parametrize(
    "channels, kwargs",
    [(1, {}), (8, {"stride": 2, "padding": 1}), (8, {"groups": 2, "dilation": 2})],
)
def test_conv_and_pool_match_cpu(channels: int, kwargs: dict[str, Any]) -> None:
    groups = kwargs.get("groups", 1)
    check_on_gpu(
        lambda x, w, b: functional("conv2d")(x, w, b, **kwargs),
        [F(2, channels, 7, 7), F(4, channels // groups, 3, 3), F(4)],
    )
    check_on_gpu(lambda x: functional("max_pool2d")(x.relu(), 2), [F(2, channels, 6, 6)])
    check_on_gpu(lambda x: functional("avg_pool2d")(x, 3, 2, 1), [F(2, channels, 6, 6)])


@gpu
def test_non_blocking_copies_are_correct() -> None:
    backend: Any = mta.Device("cuda").backend
    host = np.arange(1 << 22, dtype=np.float32)
    assert not backend.is_pinned(host) and backend.is_pinned(backend.pin(host))
    device_array = backend.upload(host, mta.Device("cuda"), non_blocking=True)
    doubled = device_array * 2  # queued after the copy: must see all of it
    out = backend.download(doubled, non_blocking=True)
    mcuda.synchronize()
    np.testing.assert_array_equal(out, host * 2)
    x = mta.tensor(host.reshape(1024, -1))
    y = x.to("cuda", non_blocking=True)
    assert float(y.sum().item()) == pytest.approx(float(host.astype(np.float64).sum()))
    np.testing.assert_array_equal(y.to("cpu").numpy(), x.numpy())
    assert backend.upload(host[:4], mta.Device("cuda"), dtype=np.float16).dtype == np.float16


@gpu
def test_memory_statistics() -> None:
    mcuda.empty_cache()
    base = mcuda.memory_allocated()
    mcuda.reset_peak_memory_stats()
    x = mta.empty(16 << 20, device="cuda")  # 64 MiB
    assert mcuda.memory_allocated() >= base + (64 << 20)
    assert mcuda.max_memory_allocated() >= base + (64 << 20)
    held = mcuda.memory_reserved()
    assert held >= mcuda.memory_allocated()
    del x
    assert mcuda.memory_allocated() < base + (64 << 20)  # freed ...
    assert mcuda.memory_reserved() == held  # ... but the pool still holds the block
    assert mcuda.max_memory_allocated() >= base + (64 << 20)
    mcuda.empty_cache()
    assert mcuda.memory_reserved() <= held - (64 << 20)
    mcuda.reset_peak_memory_stats()
    assert mcuda.max_memory_allocated() == mcuda.memory_allocated()


@gpu
def test_out_of_memory_is_translated() -> None:
    free, total = mcuda.mem_get_info()
    request = 4 * total  # more than the card has
    with pytest.raises(
        mcuda.OutOfMemoryError,
        match="CUDA out of memory on cuda:0: tried to "
        r"allocate .* free of .* total",
    ) as info:
        mta.empty(request // 4, device="cuda")
    assert info.value.requested is not None and info.value.requested >= request
    assert info.value.total == total
    mta.ones(4, device="cuda")  # and the GPU still works


@gpu
@pytest.mark.skipif(mcuda.device_count() < 2, reason="needs 2 GPUs")
def test_second_gpu_runs_its_own_work() -> None:
    x = mta.randn(64, 64, device="cuda:1", requires_grad=True)
    y = (x @ x).relu().sum()
    y.backward()
    assert x.grad is not None
    assert cuda_array(y).device.id == 1 and cuda_array(x.grad).device.id == 1
    z = x.detach().to("cuda:0")
    assert cuda_array(z).device.id == 0
    np.testing.assert_array_equal(z.cpu().numpy(), x.detach().cpu().numpy())
    assert mcuda.memory_allocated("cuda:1") > 0


@gpu
def test_manual_seed_on_gpu() -> None:
    mta.manual_seed(11)
    a = mta.rand(5, device="cuda").tolist()
    mta.manual_seed(11)
    assert mta.rand(5, device="cuda").tolist() == a


# ------------------------------------------------------------------ timing and DLPack
@gpu
def test_timer_and_benchmark_on_gpu() -> None:
    from minitorch_accel.utils.timing import Timer, benchmark

    a = mta.randn(2048, 2048, device="cuda")
    with Timer("cuda") as events:
        a @ a
    with Timer("cuda", cuda_events=False) as clock:
        a @ a
    assert 0 < events.elapsed < 1 and 0 < clock.elapsed < 1
    result = benchmark(lambda: a @ a, device="cuda", warmup=2, repeat=5)
    assert len(result.times) == 5 and result.device == "cuda:0" and result.min > 0


@gpu
def test_dlpack_on_gpu() -> None:
    import cupy as cp

    from minitorch_accel.core.dlpack import export_capsule, from_dlpack

    source = cp.arange(4.0)
    t = from_dlpack(source)
    source[0] = 9.0
    assert t.device == mta.Device("cuda:0") and t.tolist() == [9.0, 1.0, 2.0, 3.0]
    back = cp.from_dlpack(export_capsule(t))
    back[1] = -1.0
    assert t.tolist() == [9.0, -1.0, 2.0, 3.0]
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        tt = torch.arange(3, dtype=torch.float32, device="cuda")
        t2 = from_dlpack(tt)
        tt[2] = 7.0
        assert t2.tolist() == [0.0, 1.0, 7.0]


@gpu
def test_loader_prefetch_to_the_gpu_orders_work_after_the_copies() -> None:
    import cupy as cp

    from minitorch_accel.data import DataLoader, TensorDataset

    images = np.random.default_rng(13).standard_normal((300, 64)).astype(np.float32)
    ds = TensorDataset(images, np.arange(300))
    loader = DataLoader(ds, batch_size=32, shuffle=True, seed=2, device="cuda", prefetch=2)
    with cp.cuda.Stream(non_blocking=True):  # the consumer's own stream waits too
        kept = [(x, y, (x * 2).sum(dim=1)) for x, y in loader]
    for x, y, doubled in kept:  # every batch intact after the buffers were reused
        rows = images[y.numpy()]
        np.testing.assert_array_equal(x.numpy(), rows)
        np.testing.assert_allclose(
            doubled.numpy(), 2 * rows.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5
        )
    transfer = mta.Device("cuda").backend.upload_async(images[:3], mta.Device("cuda"))
    transfer.finish()
    np.testing.assert_array_equal(cp.asnumpy(transfer.array), images[:3])


@gpu
def test_bfloat16_on_the_gpu_works_or_says_why_not() -> None:
    import cupy as cp

    from minitorch_accel.amp import autocast

    if getattr(cp, "bfloat16", None) is None:  # CuPy 14 has no bfloat16 dtype
        with pytest.raises(TypeError, match="bfloat16 is not supported by the 'cuda' backend"):
            autocast("bfloat16", device="cuda")
        return
    layer = mta.nn.Linear(8, 4).to("cuda")
    x = mta.randn(16, 8, device="cuda")
    with autocast("bfloat16", device="cuda"):
        loss = layer(x).float().sum()
    loss.backward()
    assert layer.weight.grad is not None and np.isfinite(layer.weight.grad.numpy()).all()
