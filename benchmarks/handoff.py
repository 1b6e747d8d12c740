"""What one parallel region costs beyond its work: the hand-offs to the pool and back.

A parallel region (:func:`~minitorch_accel.backends.numpy.threads.parallel_for`) gives
chunks to the pool's workers, runs chunks itself, and waits for the last one. On top of
the chunks' own work come three costs, measured here at 2 threads, in one process:

- **set-up**: from the call until the calling thread starts its first chunk (making the
  job, handing it to the pool), and an empty region's whole time;
- **the worker's start**: from the calling thread's first chunk until the worker starts
  its own, in a region of two equal chunks of work;
- **the return**: from the end of the last chunk until the call returns.

The work is LeNet's first Linear layer at batch 64, ``(64 x 1600) @ (1600 x 128)``, cut
into two halves of 64 output columns, as the framework's GEMM splits it. The region is
printed beside one half run alone (the time two threads could reach) and the whole
product on one thread. A core that has nothing to run goes idle, and on a virtual
machine an idle core may halt in the hypervisor: waking it, when the other core hands
it work or finishes the work it waits for, then takes tens of microseconds. Linux shows
how long an idle guest core polls before it halts, where its ``haltpoll`` driver runs
(``guest_halt_poll_ns``, 0: it halts at once); the script prints it.

Run: ``python benchmarks/handoff.py [--regions 500]``
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from lenet_step import median_ms  # this folder's timing loop

import minitorch_accel as mta
from minitorch_accel.backends.numpy.threads import parallel_for

HALT_POLL = Path("/sys/module/haltpoll/parameters/guest_halt_poll_ns")


def halt_poll() -> str:
    """The guest's halt-polling time, where Linux shows it."""
    try:
        return f"{HALT_POLL.read_text().strip()} ns ({HALT_POLL})"
    except OSError:
        return "not shown (no haltpoll driver: not a KVM guest, or another idle driver)"


def median_us(samples: list[float]) -> float:
    """The median, in microseconds."""
    return 1e6 * statistics.median(samples)


def alone_us(fn: Callable[[], object], repeat: int) -> float:
    """Median microseconds of ``fn()`` on this thread, after 20 calls of warm-up."""
    return 1e3 * median_ms(fn, lambda: None, steps=repeat, warmup=20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--regions", type=int, default=500)
    args = parser.parse_args()
    mta.set_num_threads(2)
    rng = np.random.default_rng(0)
    a = rng.random((64, 1600), dtype=np.float32)
    w_t = rng.random((128, 1600), dtype=np.float32).T  # a Linear's weight, transposed
    out = np.empty((64, 128), np.float32)
    caller = threading.get_ident()
    spans: list[tuple[bool, float, float]] = []  # (by the caller, start, end) of each chunk

    def half(start: int, stop: int) -> None:
        begin = time.perf_counter()
        np.matmul(a, w_t[:, start:stop], out=out[:, start:stop])
        spans.append((threading.get_ident() == caller, begin, time.perf_counter()))

    def nothing(start: int, stop: int) -> None:
        pass

    whole = alone_us(lambda: np.matmul(a, w_t, out=out), args.regions)
    one_half = alone_us(lambda: np.matmul(a, w_t[:, :64], out=out[:, :64]), args.regions)
    empty = alone_us(lambda: parallel_for(2, nothing), args.regions)
    region, setup, start, ret = [], [], [], []
    shared = 0
    for i in range(args.regions + 20):
        spans.clear()
        tick = time.perf_counter()
        parallel_for(128, half, grain=64)
        tock = time.perf_counter()
        if i < 20:  # warm-up
            continue
        region.append(tock - tick)
        mine = [s for s in spans if s[0]]
        theirs = [s for s in spans if not s[0]]
        setup.append(min(s[1] for s in mine) - tick)
        ret.append(tock - max(s[2] for s in spans))
        if theirs:
            shared += 1
            start.append(theirs[0][1] - mine[0][1])
    print(f"2 threads; idle-core halt polling: {halt_poll()}")
    print(f"medians of {args.regions} regions, microseconds")
    rows = [
        ("whole product, one thread", whole),
        ("one half alone (the 2-thread ideal)", one_half),
        ("region of the two halves, 2 threads", median_us(region)),
        ("  set-up: call to the caller's first chunk", median_us(setup)),
        ("  the worker's start after the caller's", median_us(start) if start else float("nan")),
        ("  return: last chunk's end to the call's", median_us(ret)),
        ("empty region (2 chunks that do nothing)", empty),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value:7.1f}")
    print(f"the worker ran a half in {shared} of {args.regions} regions")
    print(
        f"speed-up of the region over one thread: {whole / median_us(region):.2f}x "
        f"(ideal {whole / one_half:.2f}x)"
    )


if __name__ == "__main__":
    main()
