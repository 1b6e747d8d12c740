"""Eager against captured LeNet steps, ours and PyTorch's (``step_profile.py --captured``).

A captured step is the whole training step (forward, loss, backward, optimizer update)
recorded once as a CUDA graph and replayed with one launch per step: ours through
:func:`minitorch_accel.cuda.graphs.capture_step`, PyTorch's through ``torch.cuda.graph``
(its whole-network recipe: warm-up on a side stream, static input tensors), the fair
anchor. For each of the four variants: the host time until the step is queued, the
synced step time, the GPU's busy time and kernels per step, and the launches the host
makes per step (CUDA API calls with "Launch" in their name, from ``torch.profiler``).
Needs a GPU and PyTorch with CUDA.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from lenet_step import ours_parts, torch_parts

Step = Callable[[], Any]


def our_steps(batch: int, device: str) -> tuple[dict[str, Step], Callable[[], None]]:
    """minitorch_accel's eager and captured steps on one model, and its synchronize."""
    import minitorch_accel as mta
    from minitorch_accel.cuda.graphs import capture_step

    model, opt, loss_fn, x, y = ours_parts(batch, device)

    def step(inputs: Any, labels: Any) -> Any:
        opt.zero_grad()
        loss = loss_fn(model(inputs), labels)
        loss.backward()
        opt.step()
        return loss.detach()

    run = capture_step(step, (x, y), optimizers=opt)
    dev = mta.Device(device)
    return (
        {"ours eager": lambda: step(x, y), "ours captured": lambda: run(x, y)},
        lambda: dev.backend.synchronize(dev),
    )


def torch_steps(batch: int, device: str) -> tuple[dict[str, Step], Callable[[], None]]:
    """PyTorch's eager step and its CUDA-graphed step (``torch.cuda.graph``)."""
    import torch

    model, opt, loss_fn, x, y = torch_parts(batch, device)

    def step() -> Any:
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    new_x, new_y = x.clone(), y.clone()

    def replay() -> Any:
        x.copy_(new_x)  # the batch into the static inputs, as ours does
        y.copy_(new_y)
        graph.replay()
        return loss

    return {"torch eager": step, "torch captured": replay}, torch.cuda.synchronize


def step_times(step: Step, sync: Callable[[], None], steps: int) -> tuple[float, float]:
    """Median ``(host ms until queued, synced ms)`` of one step, after a warm-up."""
    for _ in range(5):
        step()
    host, synced = [], []
    for _ in range(steps):
        sync()
        start = time.perf_counter()
        step()
        host.append(time.perf_counter() - start)
        sync()
        synced.append(time.perf_counter() - start)
    return statistics.median(host) * 1e3, statistics.median(synced) * 1e3


def gpu_activity(step: Step, sync: Callable[[], None], steps: int) -> tuple[float, float, float]:
    """``(GPU busy ms, kernels, host launch calls)`` per step, from torch.profiler."""
    from torch.profiler import ProfilerActivity, profile

    step()
    sync()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        sync()
    events = prof.key_averages()
    kernels = [e for e in events if e.self_device_time_total > 0]
    busy = sum(e.self_device_time_total for e in kernels) / 1e3 / steps
    launches = sum(e.count for e in events if e.key.startswith("cu") and "Launch" in e.key)
    return busy, sum(e.count for e in kernels) / steps, launches / steps


def report(batch: int, device: str, steps: int) -> None:
    """Print the four variants side by side, with ratios to PyTorch's two steps."""
    ours, our_sync = our_steps(batch, device)
    theirs, torch_sync = torch_steps(batch, device)
    rows = []
    for steps_of, sync in ((ours, our_sync), (theirs, torch_sync)):
        for name, step in steps_of.items():
            host, synced = step_times(step, sync, steps)
            rows.append((name, host, synced, *gpu_activity(step, sync, 10)))
    print(f"\nEager against captured, LeNet batch {batch} on {device}: median ms of {steps} steps")
    print(
        f"{'step':<16} {'host ms':>8} {'synced ms':>10} {'GPU busy ms':>12} {'kernels':>8} "
        f"{'launches':>9}"
    )
    for name, host, synced, busy, kernels, launches in rows:
        print(
            f"{name:<16} {host:>8.3f} {synced:>10.3f} {busy:>12.3f} {kernels:>8.0f} "
            f"{launches:>9.0f}"
        )
    synced = {r[0]: r[2] for r in rows}
    busy = {r[0]: r[3] for r in rows}
    print(
        f"ours captured / torch eager {synced['ours captured'] / synced['torch eager']:.2f}, "
        f"/ torch captured {synced['ours captured'] / synced['torch captured']:.2f}; "
        f"GPU busy ours / torch {busy['ours captured'] / busy['torch captured']:.2f}"
    )
