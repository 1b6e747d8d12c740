"""Memory accounting, categories and the cap of :mod:`minitorch_accel.memory`."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import memory, nn, optim
from minitorch_accel.memory import OutOfMemoryError

DEV = "cpu:9"  # a device no other test uses, so its counters start at zero


@pytest.fixture
def counting() -> Iterator[str]:
    """Tracking on for the test; off again, with no limit, afterwards."""
    memory.set_memory_limit(DEV, None)
    with memory.tracking():
        yield DEV
    memory.set_memory_limit(DEV, None)


def test_off_by_default_counts_nothing() -> None:
    assert not memory.is_tracking()
    before = memory.memory_allocated("cpu:8")
    x = mta.zeros(1000, device="cpu:8")
    assert memory.memory_allocated("cpu:8") == before
    del x


def test_counts_every_tensor_to_the_byte_and_its_release(counting: str) -> None:
    start = memory.memory_allocated(counting)
    a = mta.zeros(300, 7, device=counting)  # float32
    b = mta.ones(5, 11, dtype="float64", device=counting)
    c = mta.arange(1000, device=counting)  # int64
    d = a * 2.0
    expected = 300 * 7 * 4 + 5 * 11 * 8 + 1000 * 8 + 300 * 7 * 4
    assert memory.memory_allocated(counting) - start == expected
    view = a.reshape(7, 300)[1:3]  # a view: its buffer is a's, counted once
    assert memory.memory_allocated(counting) - start == expected
    del a  # the view keeps the buffer alive
    assert memory.memory_allocated(counting) - start == expected
    del view
    assert memory.memory_allocated(counting) - start == expected - 300 * 7 * 4
    del b, c, d
    assert memory.memory_allocated(counting) == start
    assert memory.max_memory_allocated(counting) - start >= expected


def test_accounting_agrees_with_tracemalloc_on_numpys_domain(counting: str) -> None:
    numpy_only = [tracemalloc.DomainFilter(True, np.lib.tracemalloc_domain)]
    tracemalloc.start()
    try:
        first = tracemalloc.take_snapshot().filter_traces(numpy_only)
        start = memory.memory_allocated(counting)
        kept = [
            mta.zeros(64, 33, device=counting),
            mta.ones(17, 9, 5, dtype="float64", device=counting),
            mta.full((4096,), 3.0, device=counting),
        ]
        kept.append(kept[0] + 1.0)
        kept.append(kept[1].sum(dim=0))
        counted = memory.memory_allocated(counting) - start
        second = tracemalloc.take_snapshot().filter_traces(numpy_only)
    finally:
        tracemalloc.stop()
    traced = sum(stat.size_diff for stat in second.compare_to(first, "filename"))
    assert counted == sum(t.nbytes for t in kept)
    assert traced == counted


def test_categories_of_a_training_step(counting: str) -> None:
    mta.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 30), nn.ReLU(), nn.Linear(30, 5)).to(counting)
    params = sum(p.nbytes for p in model.parameters())
    opt = optim.Adam(model.parameters(), lr=1e-3)
    x = mta.tensor(np.ones((8, 20), np.float32), device=counting)
    y = mta.tensor(np.zeros(8, np.int64), device=counting)
    loss = nn.CrossEntropyLoss()(model(x), y)
    now = memory.memory_by_category(counting)
    assert now["activations"] > 0 and now["gradients"] == 0
    loss.backward()
    opt.step()
    del loss
    now = memory.memory_by_category(counting)
    assert now["gradients"] == params
    assert now["optimizer state"] >= 2 * params  # exp_avg and exp_avg_sq (and the step)
    assert now["activations"] == 0
    assert now["other"] == x.nbytes + y.nbytes
    # Parameters moved by .to() before counting started are re-labelled on creation here.
    assert now["parameters"] == params
    peak = memory.memory_by_category(counting, peak=True)
    assert sum(peak.values()) == memory.max_memory_allocated(counting)
    summary = memory.memory_summary(counting)
    assert "optimizer state" in summary and "at peak" in summary


def test_garbage_in_reference_cycles_is_freed_before_out_of_memory(counting: str) -> None:
    import gc

    base = memory.memory_allocated(counting)
    memory.set_memory_limit(counting, base + 10_000)
    gc.disable()  # the cycle below is freed only by a collection
    try:
        cycle: list[Any] = [mta.ones(2000, device=counting)]  # 8000 bytes
        cycle.append(cycle)
        del cycle
        assert memory.memory_allocated(counting) == base + 8000
        b = mta.ones(2000, device=counting)  # fits once the cycle is collected
    finally:
        gc.enable()
    assert memory.memory_allocated(counting) == base + 8000 and b.shape == (2000,)


def test_the_cap_raises_at_the_allocation_that_passes_it(counting: str) -> None:
    base = memory.memory_allocated(counting)
    memory.set_memory_limit(counting, base + 10_000)
    a = mta.ones(1000, device=counting)  # 4000 bytes
    b = mta.full((1000,), 2.0, device=counting)  # 8000 in all
    with pytest.raises(OutOfMemoryError) as caught:
        mta.zeros(1000, device=counting)  # 12000 > 10000
    error = caught.value
    assert isinstance(error, MemoryError) and isinstance(error, RuntimeError)
    assert error.requested == 4000 and error.allocated == base + 8000
    assert error.limit == base + 10_000
    assert str(error).startswith(f"Out of memory on {counting}: tried to allocate 3.91 KiB;")
    assert "set_memory_limit" in str(error) and "smaller batch" in str(error)
    np.testing.assert_array_equal(a.numpy(), np.ones(1000, np.float32))
    np.testing.assert_array_equal(b.numpy(), np.full(1000, 2.0, np.float32))
    assert memory.memory_allocated(counting) == base + 8000
    del b
    c = mta.zeros(1000, device=counting)  # fits again once b is gone
    assert memory.memory_allocated(counting) == base + 8000
    del a, c


def test_the_same_error_as_the_gpu() -> None:
    from minitorch_accel.backends.cupy.memory import OutOfMemoryError as GpuError

    assert OutOfMemoryError is GpuError is mta.cuda.OutOfMemoryError


def test_limit_arguments_are_checked(counting: str) -> None:
    with pytest.raises(ValueError, match="a memory limit is a number of bytes"):
        memory.set_memory_limit(counting, -1)
    with pytest.raises(ValueError, match=r"a memory fraction must be within \[0, 1\]"):
        memory.set_per_process_memory_fraction(1.5, counting)
    with pytest.raises(ValueError, match="unknown memory category 'weights'"):  # noqa: SIM117
        with memory.category("weights"):  # the error comes on entering
            pass
    memory.set_per_process_memory_fraction(0.5, counting)
    limit = memory.get_memory_limit(counting)
    assert limit is not None and limit == memory.memory_stats(counting)["total"]
    memory.set_memory_limit(counting, None)
    assert memory.get_memory_limit(counting) is None


def _model_and_data(batch: int) -> tuple[nn.Module, optim.Optimizer, mta.Tensor, mta.Tensor]:
    mta.manual_seed(1)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
    model.append(nn.Linear(64, 4))
    model.to(DEV)
    opt = optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(0)
    x = mta.tensor(rng.standard_normal((batch, 32)).astype(np.float32), device=DEV)
    y = mta.tensor(rng.integers(0, 4, batch), device=DEV)
    return model, opt, x, y


def _snapshot(model: nn.Module, opt: optim.Optimizer) -> list[np.ndarray]:
    arrays = [np.array(p.array) for p in model.parameters()]
    arrays += [np.array(p.grad.array) for p in model.parameters() if p.grad is not None]
    for state in opt.state.values():
        arrays += [np.array(v.array) for v in state.values() if isinstance(v, mta.Tensor)]
    return arrays


@pytest.mark.parametrize("where", ["forward", "backward"])
def test_out_of_memory_in_a_step_changes_nothing_and_training_goes_on(
    counting: str, where: str
) -> None:
    model, opt, x, y = _model_and_data(512)
    loss_fn = nn.CrossEntropyLoss()
    loss_fn(model(x[:16]), y[:16]).backward()  # a first step: gradients and Adam state
    opt.step()
    # Measure the step at full batch once, uncapped, to place the cap in the phase wanted.
    base = memory.memory_allocated(counting)
    memory.reset_peak_memory_stats(counting)
    loss = loss_fn(model(x), y)
    after_forward = memory.memory_allocated(counting)
    del loss
    limit = (base + after_forward) // 2 if where == "forward" else after_forward + 1024
    before = _snapshot(model, opt)
    grads_before = [p.grad for p in model.parameters()]
    memory.set_memory_limit(counting, limit)
    if where == "forward":
        with pytest.raises(OutOfMemoryError):
            loss_fn(model(x), y)
    else:
        loss = loss_fn(model(x), y)  # fits; no zero_grad: the old gradients must survive
        with pytest.raises(OutOfMemoryError):
            loss.backward()
        del loss
    assert [p.grad for p in model.parameters()] == grads_before
    after = _snapshot(model, opt)
    assert len(after) == len(before)
    for old, new in zip(before, after, strict=True):
        np.testing.assert_array_equal(old, new)
    opt.zero_grad()
    loss = loss_fn(model(x[:32]), y[:32])  # a smaller batch fits
    loss.backward()
    opt.step()
    assert np.isfinite(loss.item())
    assert memory.max_memory_allocated(counting) <= limit or where == "forward"


needs_gpu = pytest.mark.skipif(not mta.cuda.is_available(), reason="needs CuPy and a GPU")


@needs_gpu
def test_on_a_gpu_the_counting_agrees_with_cupys_pool() -> None:
    from minitorch_accel.backends.memory_tracker import tracker

    gpu = mta.Device("cuda:0")
    with memory.tracking():
        pool_before = memory.memory_allocated(gpu)
        counted_before = tracker.counts(gpu).allocated
        kept = [mta.zeros(1000 + 37 * i, device=gpu) for i in range(5)]
        mta.cuda.synchronize()
        pool_delta = memory.memory_allocated(gpu) - pool_before
        assert tracker.counts(gpu).allocated - counted_before == pool_delta > 0
        del kept


@needs_gpu
def test_on_a_gpu_the_cap_is_the_pools_limit() -> None:
    gpu = mta.Device("cuda:0")
    used = memory.memory_allocated(gpu)
    memory.set_memory_limit(gpu, used + (1 << 20))
    try:
        with pytest.raises(OutOfMemoryError, match=r"CUDA out of memory on cuda:0: .*; limit "):
            mta.zeros(1 << 20, device=gpu)  # 4 MiB
    finally:
        memory.set_memory_limit(gpu, None)
    assert memory.get_memory_limit(gpu) is None
