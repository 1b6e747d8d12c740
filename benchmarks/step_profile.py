"""Where the time of one LeNet training step goes, beside PyTorch's, measured in one run.

A GPU step can be limited by the GPU (its kernels take longer than the host needs to
launch them) or by the host (Python, autograd and the launches themselves take longer
than the kernels). This script tells which, phase by phase:

- **synced**: wall time of the phase, the device synchronized before and after;
- **host**: time until the phase has *queued* its work (no synchronization at its end):
  where synced and host agree, the host is the limit.

It prints both for zero_grad, forward (with the loss), backward and the optimizer step
(and their total),
for minitorch_accel and for PyTorch (if installed) on the same device. Options:
``--kernels`` adds the GPU's busy time and kernel count per step for both frameworks
(``torch.profiler`` with CUPTI records the kernels CuPy launches too); ``--api`` the
CUDA runtime and driver calls of our step, and how much of the step they take
(``--trace FILE`` writes the timeline for chrome://tracing); ``--python`` adds
minitorch_accel's 25 most expensive Python functions (:mod:`cProfile`); ``--launches``
the host time of one call of each building block (a CuPy ``RawKernel``,
``ElementwiseKernel`` and reduction, a cuBLAS GEMM, a tensor op of ours) beside
PyTorch's nearest call; ``--captured`` the eager step against the step captured as a
CUDA graph, ours and PyTorch's (host time, GPU busy time, kernels and launches per step;
see ``captured_step.py``).

Run: ``python benchmarks/step_profile.py`` (CPU) or ``python benchmarks/step_profile.py
--device cuda --kernels --python`` (GPU).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lenet_step import ours_parts, torch_parts

PHASES = ("zero_grad", "forward", "backward", "optimizer")
Phases = dict[str, Callable[[], None]]


def phases_of(parts: tuple[Any, Any, Any, Any, Any]) -> Phases:
    """The four phases of a step over ``(model, optimizer, loss, x, y)``."""
    model, opt, loss_fn, x, y = parts
    held: dict[str, Any] = {}

    def forward() -> None:
        held["loss"] = loss_fn(model(x), y)

    return {
        "zero_grad": opt.zero_grad,
        "forward": forward,
        "backward": lambda: held["loss"].backward(),
        "optimizer": opt.step,
    }


def ours(batch: int, device: str) -> tuple[Phases, Callable[[], None]]:
    """minitorch_accel's phases, and its device synchronization."""
    import minitorch_accel as mta

    dev = mta.Device(device)
    return phases_of(ours_parts(batch, device)), lambda: dev.backend.synchronize(dev)


def theirs(batch: int, device: str) -> tuple[Phases, Callable[[], None]] | None:
    """PyTorch's phases, or None without PyTorch (or without its CUDA build)."""
    try:
        import torch
    except ImportError:
        return None
    cuda = device.startswith("cuda")
    if cuda and not torch.cuda.is_available():
        return None
    if not cuda:
        torch.set_num_threads(2)  # as the CPU targets assume
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    return phases_of(torch_parts(batch, device)), sync


def time_phases(phases: Phases, sync: Callable[[], None], steps: int) -> dict[str, float]:
    """Median ms of each phase, synced and host-only, and of the whole step."""
    times: dict[str, list[float]] = {
        f"{p} {kind}": [] for p in PHASES for kind in ("synced", "host")
    }
    times["total synced"], times["total host"] = [], []
    for _ in range(5):  # warm-up: kernels compiled, caches filled
        for phase in PHASES:
            phases[phase]()
    for _ in range(steps):
        for kind in ("synced", "host"):
            sync()
            begin = time.perf_counter()
            for phase in PHASES:
                start = time.perf_counter()
                phases[phase]()
                if kind == "synced":
                    sync()
                times[f"{phase} {kind}"].append(time.perf_counter() - start)
            times[f"total {kind}"].append(time.perf_counter() - begin)
            sync()
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def gpu_busy(phases: Phases, sync: Callable[[], None], steps: int) -> tuple[float, float]:
    """(GPU busy ms per step, kernels per step), from torch.profiler's CUDA activity."""
    from torch.profiler import ProfilerActivity, profile

    for phase in PHASES:
        phases[phase]()
    sync()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            for phase in PHASES:
                phases[phase]()
        sync()
    events = prof.key_averages()
    busy = sum(e.self_device_time_total for e in events) / 1e3 / steps
    return busy, sum(e.count for e in events) / steps


def api_calls(
    phases: Phases, sync: Callable[[], None], steps: int, trace: str | None = None
) -> tuple[float, list[tuple[str, float, float]]]:
    """Wall ms per step, and the CUDA runtime/driver calls the step makes: ``(name, calls
    per step, host ms per step)``, from torch.profiler's CUPTI records (they include
    the calls CuPy makes). Wall time minus the time inside these calls is the time
    Python and the framework take. ``trace``: also write a Chrome trace (a timeline)."""
    from torch.profiler import ProfilerActivity, profile

    for phase in PHASES:
        phases[phase]()
    sync()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        start = time.perf_counter()
        for _ in range(steps):
            for phase in PHASES:
                phases[phase]()
            sync()
        wall = (time.perf_counter() - start) / steps * 1e3
    if trace:
        prof.export_chrome_trace(trace)
    rows = [
        (e.key, e.count / steps, e.self_cpu_time_total / steps / 1e3)
        for e in prof.key_averages()
        if e.key.startswith(("cu", "nccl"))
    ]
    return wall, sorted(rows, key=lambda row: -row[2])


def python_profile(phases: Phases, sync: Callable[[], None], steps: int, top: int = 25) -> str:
    """minitorch_accel's most expensive Python functions (self time) over ``steps``."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        for phase in PHASES:
            phases[phase]()
    sync()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def per_call_us(fn: Callable[[], object], sync: Callable[[], None], calls: int = 2000) -> float:
    """Host microseconds per call of ``fn``: the median of 5 rounds of ``calls`` calls,
    synchronizing every 200 calls so the GPU's queue never fills."""
    for _ in range(50):
        fn()
    sync()
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for i in range(calls):
            fn()
            if i % 200 == 199:
                sync()
        rounds.append((time.perf_counter() - start) / calls * 1e6)
        sync()
    return statistics.median(rounds)


def launch_costs() -> list[tuple[str, float, str, float]]:
    """(ours, us, PyTorch's nearest, us) per building block, on a (256, 128) float32
    array and a (256, 1600) @ (1600, 128) GEMM."""
    import cupy as cp
    import torch

    import minitorch_accel as mta

    fast = mta.Device("cuda").backend._fast  # type: ignore[attr-defined]
    a, b, m = (
        cp.ones((256, 1600), cp.float32),
        cp.ones((1600, 128), cp.float32),
        cp.ones((256, 128), cp.float32),
    )
    ta, tb, tm = (torch.ones(*x.shape, device="cuda") for x in (a, b, m))
    x = mta.ones(256, 128, device="cuda")
    add_one = cp.RawKernel(
        'extern "C" __global__ void add_one(float* x, int n) {'
        " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.f; }",
        "add_one",
    )
    size = cp.int32(m.size)
    sync = cp.cuda.Device().synchronize
    rows = [
        (
            "cupy.ndarray (allocate)",
            lambda: cp.ndarray((256, 128), cp.float32),
            "torch.empty",
            lambda: torch.empty(256, 128, device="cuda"),
        ),
        (
            "RawKernel launch",
            lambda: add_one((64,), (512,), (m, size)),
            "torch add_ (in place)",
            lambda: tm.add_(1.0),
        ),
        ("ElementwiseKernel (m + m)", lambda: m + m, "torch m + m", lambda: tm + tm),
        ("reduction (m.sum(0))", lambda: m.sum(axis=0), "torch m.sum(0)", lambda: tm.sum(0)),
        ("cuBLAS sgemm (ours)", lambda: fast.gemm(a, b), "torch.mm", lambda: torch.mm(ta, tb)),
        ("tensor op x + x (ours)", lambda: x + x, "torch m + m", lambda: tm + tm),
        ("tensor op x.relu() (ours)", lambda: x.relu(), "torch.relu", lambda: torch.relu(tm)),
    ]
    return [
        (name, per_call_us(fn, sync), tname, per_call_us(tfn, torch.cuda.synchronize))
        for name, fn, tname, tfn in rows
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--kernels", action="store_true", help="GPU busy time (needs torch)")
    parser.add_argument("--python", action="store_true", help="cProfile of minitorch_accel")
    parser.add_argument(
        "--api", action="store_true", help="CUDA runtime/driver calls of our step (needs torch)"
    )
    parser.add_argument("--trace", default=None, help="with --api: write a Chrome trace")
    parser.add_argument(
        "--launches",
        action="store_true",
        help="host time per call of CuPy, cuBLAS and our ops (GPU, torch)",
    )
    parser.add_argument(
        "--captured",
        action="store_true",
        help="eager against CUDA-graph-captured steps, ours and PyTorch's (GPU, torch)",
    )
    args = parser.parse_args()
    runs = {"ours": ours(args.batch, args.device), "torch": theirs(args.batch, args.device)}
    found = {name: time_phases(*run, args.steps) for name, run in runs.items() if run}
    print(f"LeNet step on {args.device}, batch {args.batch}: median ms of {args.steps} steps")
    print(
        f"{'phase':<10} {'ours synced':>12} {'ours host':>10} {'torch synced':>13} "
        f"{'torch host':>11} {'ratio':>6}"
    )
    for phase in (*PHASES, "total"):
        o = found["ours"]
        t = found.get("torch", {})
        ratio = o[f"{phase} synced"] / t[f"{phase} synced"] if t else float("nan")
        print(
            f"{phase:<10} {o[f'{phase} synced']:>12.3f} {o[f'{phase} host']:>10.3f} "
            f"{t.get(f'{phase} synced', float('nan')):>13.3f} "
            f"{t.get(f'{phase} host', float('nan')):>11.3f} {ratio:>6.2f}"
        )
    print(
        "(host: until the phase has queued its work; where it equals synced, the host is the limit)"
    )
    gpu_reports(args, runs)


def gpu_reports(args: argparse.Namespace, runs: dict[str, Any]) -> None:
    """The optional reports (each needs PyTorch; most a GPU)."""
    if args.kernels and args.device.startswith("cuda") and runs["torch"] is not None:
        print(f"\n{'':<10} {'GPU busy ms/step':>17} {'kernels/step':>13}")
        for name, run in runs.items():
            if run is not None:
                busy, kernels = gpu_busy(*run, steps=10)
                print(f"{name:<10} {busy:>17.3f} {kernels:>13.0f}")
    if args.api and runs["torch"] is not None:
        wall, rows = api_calls(*runs["ours"], steps=10, trace=args.trace)  # type: ignore[misc]
        inside = sum(ms for _, _, ms in rows)
        print(
            f"\nours: {wall:.3f} ms/step wall, {inside:.3f} ms in CUDA API calls "
            f"({len(rows)} kinds):"
        )
        for name, calls, ms in rows[:15]:
            print(f"  {name:<40} {calls:>7.1f} calls {ms:>8.3f} ms")
    if args.python:
        print("\n" + python_profile(*runs["ours"], steps=args.steps))  # type: ignore[misc]
    if args.launches and args.device.startswith("cuda") and runs["torch"] is not None:
        print(f"\n{'host us per call':<28} {'us':>7}   {'PyTorch':<22} {'us':>7} {'ratio':>6}")
        for name, us, tname, tus in launch_costs():
            print(f"{name:<28} {us:>7.1f}   {tname:<22} {tus:>7.1f} {us / tus:>6.2f}")
    if args.captured and args.device.startswith("cuda") and runs["torch"] is not None:
        from captured_step import report

        report(args.batch, args.device, args.steps)


if __name__ == "__main__":
    main()
