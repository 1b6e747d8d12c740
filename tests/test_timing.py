"""``utils.timing``: Timer and benchmark synchronize the device, warm up, and report
correct statistics (checked with a fake device that records its synchronizations)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator

import pytest

import minitorch_accel as mta
from minitorch_accel.backends import Backend, Device, registry
from minitorch_accel.utils.timing import BenchmarkResult, Timer, benchmark


class RecordingBackend(Backend):
    """A backend whose only job is to log the calls made to it."""

    name = "rec"

    def __init__(self) -> None:
        self.log: list[str] = []

    def device_count(self) -> int:
        return 2

    def synchronize(self, device: Device | None = None) -> None:
        self.log.append(f"sync {device}")


@pytest.fixture
def recorder() -> Iterator[RecordingBackend]:
    backend = RecordingBackend()
    registry.register("rec", lambda: backend)
    yield backend
    registry.unregister("rec")


def test_timer_measures_host_time() -> None:
    with Timer() as t:
        time.sleep(0.02)
    assert 0.02 <= t.elapsed < 0.5
    assert t.elapsed_ms == pytest.approx(t.elapsed * 1e3)


def test_timer_is_nan_until_the_block_ends() -> None:
    timer = Timer("cpu")
    assert timer.elapsed != timer.elapsed  # nan
    with timer:
        pass
    assert timer.elapsed >= 0


def test_timer_synchronizes_before_and_after(recorder: RecordingBackend) -> None:
    with Timer("rec:1"):
        recorder.log.append("work")
    assert recorder.log == ["sync rec:1", "work", "sync rec:1"]


def test_benchmark_warms_up_then_times_each_call(recorder: RecordingBackend) -> None:
    calls: list[int] = []

    def work() -> None:
        calls.append(len(calls))
        recorder.log.append("work")

    result = benchmark(work, device="rec:1", warmup=2, repeat=3)
    assert len(calls) == 5 and len(result.times) == 3 and result.device == "rec:1"
    # warm-up calls back to back, one synchronization, then sync / work / sync per run
    assert recorder.log == ["work", "work", "sync rec:1"] + ["sync rec:1", "work", "sync rec:1"] * 3


def test_benchmark_on_the_host() -> None:
    x = mta.ones(32, 32)
    result = benchmark(lambda: x @ x, warmup=0, repeat=4)
    assert result.device == "cpu" and len(result.times) == 4
    assert all(t > 0 for t in result.times)


def test_benchmark_result_statistics() -> None:
    result = BenchmarkResult((0.004, 0.001, 0.003, 0.002, 0.010), "cuda:0")
    assert result.median == 0.003 and result.min == 0.001 and result.max == 0.010
    assert result.mean == pytest.approx(0.004)
    assert result.stdev == pytest.approx(statistics.stdev(result.times))
    assert str(result) == ("median 3.000 ms (mean 4.000, min 1.000, max 10.000; 5 runs on cuda:0)")
    assert BenchmarkResult((0.5,)).stdev == 0.0


@pytest.mark.parametrize("warmup, repeat", [(0, 0), (-1, 3)])
def test_benchmark_rejects_bad_counts(warmup: int, repeat: int) -> None:
    with pytest.raises(ValueError, match="benchmark needs repeat >= 1 and warmup >= 0"):
        benchmark(lambda: None, warmup=warmup, repeat=repeat)
