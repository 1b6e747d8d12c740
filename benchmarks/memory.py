"""Memory remedies and the cost of counting, measured as ratios in one run.

1. Activation checkpointing (``utils.checkpoint_sequential``) on a 16-layer MLP and on
   SmallVGG, in 6 segments: the peak memory of a training step (``memory.max_memory_allocated``) and
   its median time, with checkpointing over without. Targets: memory ratio <= 0.60,
   time ratio <= 1.40.
2. Gradient accumulation (4 micro-batches) and float16 autocast on LeNet: the same two
   ratios.
3. The cost of memory accounting on the LeNet training step (batch 64): tracking off
   and on, each in its own process, alternating, ``--rounds`` processes each; the
   medians of the per-process median step times; then the same in one process,
   switching every 3 steps (steadier on a loaded machine). Targets: on/off <= 1.10; off
   is the code path every user runs, one attribute test per tensor created.

Run: ``python benchmarks/memory.py [--device cpu] [--rounds 5] [--steps 20]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import minitorch_accel as mta
from minitorch_accel import memory, nn, optim
from minitorch_accel.amp import GradScaler, autocast
from minitorch_accel.nn.models import LeNet, SmallVGG
from minitorch_accel.utils import checkpoint_sequential

SEGMENTS = 6  # about the square root of the depth: the least memory for one recomputation


def mlp16(width: int = 256) -> nn.Sequential:
    layers: list[nn.Module] = []
    for _ in range(16):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(width, 10))


def make_step(model: Any, x: mta.Tensor, y: mta.Tensor, how: str) -> Callable[[], None]:
    """One SGD step of ``model`` on ``(x, y)``: plain, checkpointed, accumulated or amp."""
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    scaler = GradScaler()

    def forward(xs: mta.Tensor) -> mta.Tensor:
        if how != "checkpoint":
            return model(xs)  # type: ignore[no-any-return]
        if isinstance(model, SmallVGG):
            feats = checkpoint_sequential(model.features, SEGMENTS, xs)
            return model.classifier(model.pool(feats))  # type: ignore[no-any-return]
        return checkpoint_sequential(model, SEGMENTS, xs)

    def step() -> None:
        opt.zero_grad()
        if how == "amp":
            with autocast(device=str(x.device)):
                loss = loss_fn(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            return
        parts = 4 if how == "accumulate" else 1
        n = int(y.shape[0])
        for i in range(parts):
            lo, hi = n * i // parts, n * (i + 1) // parts
            xs, ys = (x, y) if parts == 1 else (x[lo:hi], y[lo:hi])
            (loss_fn(forward(xs), ys) * ((hi - lo) / n)).backward()
        opt.step()

    return step


def peak_and_time(
    make: Callable[[], Any], shape: tuple[int, ...], hows: list[str], device: str, steps: int
) -> dict[str, tuple[float, float]]:
    """``how: (peak bytes, median ms)``; the ways take turns, step by step."""
    rng = np.random.default_rng(0)
    runs = {}
    with memory.tracking():
        for i, how in enumerate(hows):
            dev = f"{device}:{20 + i}" if device == "cpu" else device
            mta.manual_seed(0)
            model = make().to(dev)
            x = mta.tensor(rng.random(shape, dtype=np.float32), device=dev)
            y = mta.tensor(rng.integers(0, 10, shape[0]), device=dev)
            step = make_step(model, x, y, how)
            step()
            memory.reset_peak_memory_stats(dev)
            step()
            runs[how] = (step, memory.max_memory_allocated(dev), dev)
    times: dict[str, list[float]] = {how: [] for how in hows}
    for _ in range(steps):
        for how in hows:
            step, _, dev = runs[how]
            start = time.perf_counter()
            step()
            mta.Device(dev).backend.synchronize(mta.Device(dev))
            times[how].append(time.perf_counter() - start)
    return {how: (float(runs[how][1]), 1e3 * float(np.median(times[how]))) for how in hows}


def report(title: str, found: dict[str, tuple[float, float]]) -> None:
    base_peak, base_ms = found["plain"]
    print(title)
    for how, (peak, ms) in found.items():
        print(
            f"  {how:<11} peak {peak / 2**20:8.1f} MiB  ratio {peak / base_peak:5.2f}   "
            f"step {ms:8.1f} ms  ratio {ms / base_ms:5.2f}"
        )


def accounting_child(tracking: bool, steps: int) -> None:
    """In a subprocess: the median LeNet step time (ms) with tracking off or on."""
    memory.enable_tracking(tracking)
    mta.manual_seed(0)
    model = LeNet()
    rng = np.random.default_rng(0)
    x = mta.tensor(rng.random((64, 1, 28, 28), dtype=np.float32))
    y = mta.tensor(rng.integers(0, 10, 64))
    step = make_step(model, x, y, "plain")
    for _ in range(3):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    print(json.dumps({"ms": 1e3 * float(np.median(times))}))


def accounting_cost(rounds: int, steps: int) -> tuple[float, float]:
    """Medians over ``rounds`` alternating processes of (off ms, on ms)."""
    found: dict[bool, list[float]] = {False: [], True: []}
    for r in range(rounds):
        for tracking in (False, True) if r % 2 == 0 else (True, False):
            cmd = [sys.executable, __file__, "--child", str(int(tracking)), "--steps", str(steps)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True)
            found[tracking].append(json.loads(out.stdout.strip().splitlines()[-1])["ms"])
    return float(np.median(found[False])), float(np.median(found[True]))


def accounting_in_process(rounds: int = 12) -> tuple[float, float]:
    """(off ms, on ms) of the LeNet step in this process, tracking switched every 3
    steps in alternating order: a slow patch of a shared machine hits both alike."""
    mta.manual_seed(0)
    rng = np.random.default_rng(0)
    x = mta.tensor(rng.random((64, 1, 28, 28), dtype=np.float32))
    y = mta.tensor(rng.integers(0, 10, 64))
    step = make_step(LeNet(), x, y, "plain")
    for _ in range(3):
        step()
    found: dict[bool, list[float]] = {False: [], True: []}
    for r in range(rounds):
        for tracking in (False, True) if r % 2 == 0 else (True, False):
            memory.enable_tracking(tracking)
            start = time.perf_counter()
            for _ in range(3):
                step()
            found[tracking].append((time.perf_counter() - start) / 3 * 1e3)
    memory.enable_tracking(False)
    return float(np.median(found[False])), float(np.median(found[True]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        accounting_child(bool(int(args.child)), args.steps)
        return
    steps = max(5, args.steps // 2)
    report(
        f"16-layer MLP (256 wide), batch 2048, checkpoint_sequential in {SEGMENTS} segments:",
        peak_and_time(mlp16, (2048, 256), ["plain", "checkpoint"], args.device, steps),
    )
    report(
        f"SmallVGG (width 16), 28x28, batch 64, checkpoint_sequential(features, {SEGMENTS}):",
        peak_and_time(
            lambda: SmallVGG(width=16), (64, 1, 28, 28), ["plain", "checkpoint"], args.device, 5
        ),
    )
    report(
        "LeNet, batch 128: gradient accumulation (4 micro-batches), float16 autocast:",
        peak_and_time(LeNet, (128, 1, 28, 28), ["plain", "accumulate", "amp"], args.device, steps),
    )
    off, on = accounting_cost(args.rounds, args.steps)
    print(
        f"memory accounting on the LeNet step (batch 64, {args.rounds} processes each, "
        f"alternating): off {off:.2f} ms, on {on:.2f} ms, on/off {on / off:.3f}"
    )
    off, on = accounting_in_process()
    print(
        f"the same in one process, switched every 3 steps (12 rounds): off {off:.2f} ms, "
        f"on {on:.2f} ms, on/off {on / off:.3f}"
    )


if __name__ == "__main__":
    main()
