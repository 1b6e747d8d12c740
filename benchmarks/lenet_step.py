"""The LeNet training step, minitorch_accel beside PyTorch, measured in the same run.

The step: forward, cross-entropy, backward, SGD with momentum, on float32 MNIST-shaped
input (conv 1->32 3x3, ReLU, maxpool 2, conv 32->64 3x3, ReLU, maxpool 2, linear
1600->128, ReLU, linear 128->10). Median over ``--steps`` steps after warm-up, at batch
64 and 256, the two frameworks taking turns in five rounds. Printed: ms/step for both,
their ratio, the step's GFLOP/s and its fraction of this machine's float32 GEMM peak
(measured in the same run), and the peak memory of the step (measured in a fresh
subprocess per framework: the growth of the resident set size during the steps).

Run: ``python benchmarks/lenet_step.py`` (CPU) or ``python benchmarks/lenet_step.py
--device cuda`` (GPU, beside PyTorch CUDA). Targets on the CPU: ratio <= 1.5 at batch
256, <= 1.75 at batch 64, memory ratio <= 2. On the GPU: ratio <= 2 at batch 256.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def lenet_flops(batch: int) -> float:
    """Multiply-adds x 2 of forward + backward (backward = 2x forward for conv/linear)."""
    conv1 = 26 * 26 * 32 * 1 * 9
    conv2 = 11 * 11 * 64 * 32 * 9
    fc = 1600 * 128 + 128 * 10
    forward = 2 * batch * (conv1 + conv2 + fc)
    return 3.0 * forward


def _sync(device: str) -> Callable[[], None]:
    if device.startswith("cuda"):
        import minitorch_accel as mta

        return lambda: mta.Device(device).backend.synchronize(mta.Device(device))
    return lambda: None


def ours_parts(batch: int, device: str) -> tuple[Any, Any, Any, Any, Any]:
    """minitorch_accel's LeNet, SGD with momentum, loss, and a random batch on ``device``."""
    import minitorch_accel as mta
    from minitorch_accel import nn, optim
    from minitorch_accel.nn.models import LeNet

    mta.manual_seed(0)
    model = LeNet().to(device)
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.default_rng(0)
    x = mta.tensor(rng.random((batch, 1, 28, 28), dtype=np.float32), device=device)
    y = mta.tensor(rng.integers(0, 10, batch), device=device)
    return model, opt, nn.CrossEntropyLoss(), x, y


def torch_parts(batch: int, device: str) -> tuple[Any, Any, Any, Any, Any]:
    """The same for PyTorch (the same layers; its own initialization)."""
    import torch

    torch.manual_seed(0)
    dev = "cuda" if device.startswith("cuda") else "cpu"
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 32, 3),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(32, 64, 3),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(1600, 128),
        torch.nn.ReLU(),
        torch.nn.Linear(128, 10),
    ).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.rand(batch, 1, 28, 28, device=dev)
    y = torch.randint(0, 10, (batch,), device=dev)
    return model, opt, torch.nn.CrossEntropyLoss(), x, y


def _step(parts: tuple[Any, Any, Any, Any, Any]) -> Callable[[], float]:
    model, opt, loss_fn, x, y = parts

    def step() -> float:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return 0.0

    return step


def ours_step(batch: int, device: str) -> Callable[[], float]:
    """One training step of minitorch_accel (forward, loss, backward, SGD)."""
    return _step(ours_parts(batch, device))


def torch_step(batch: int, device: str) -> Callable[[], float]:
    """The same step in PyTorch."""
    return _step(torch_parts(batch, device))


def median_ms(
    step: Callable[[], object], sync: Callable[[], None], steps: int, warmup: int
) -> float:
    """Median milliseconds of ``step()`` (then ``sync()``) over ``steps`` calls, after
    ``warmup`` untimed ones."""
    for _ in range(warmup):
        step()
    sync()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e3


def interleaved_ms(
    timed: dict[str, tuple[Callable[[], float], Callable[[], None]]],
    steps: int,
    warmup: int,
    rounds: int = 5,
) -> dict[str, float]:
    """Median ms/step of each ``name: (step, sync)``, measured in ``rounds`` alternating
    rounds (the order flips every round) so that a slow patch of a shared machine falls
    on every framework alike rather than on whichever ran then."""
    times: dict[str, list[float]] = {name: [] for name in timed}
    for step, sync in timed.values():
        for _ in range(warmup):
            step()
        sync()
    names = list(timed)
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            step, sync = timed[name]
            for _ in range(max(1, steps // rounds)):
                start = time.perf_counter()
                step()
                sync()
                times[name].append(time.perf_counter() - start)
    return {name: float(np.median(t)) * 1e3 for name, t in times.items()}


def gemm_peak_gflops(device: str) -> float:
    """float32 GEMM GFLOP/s at n=2048 on the device (NumPy's BLAS or cuBLAS)."""
    import minitorch_accel as mta

    xp = mta.Device(device).xp
    n = 2048
    a = xp.ones((n, n), dtype=np.float32)
    sync = _sync(device)
    ms = median_ms(lambda: float(xp.matmul(a, a)[0, 0]), sync, steps=5, warmup=2)
    return 2 * n**3 / (ms / 1e3) / 1e9


def peak_memory_child(framework: str, batch: int, device: str, steps: int) -> None:
    """Runs in a subprocess: prints the resident-set growth (bytes) over the steps."""
    if framework == "torch":
        import torch

        torch.set_num_threads(2)
    make = ours_step if framework == "ours" else torch_step
    step = make(batch, device)
    base = _high_water_bytes()  # after imports, model, data
    for _ in range(steps):
        step()
    peak = _high_water_bytes()
    print(json.dumps({"growth": peak - base, "peak": peak}))


def _high_water_bytes() -> int:
    """Peak resident set of this process (VmHWM; unlike ru_maxrss it is not inherited
    from the parent across fork + exec)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def peak_memory(framework: str, batch: int, device: str) -> float | None:
    cmd = [
        sys.executable,
        __file__,
        "--memory-child",
        framework,
        "--batch",
        str(batch),
        "--device",
        device,
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return None
    return float(json.loads(out.stdout.strip().splitlines()[-1])["growth"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--batches", default="64,256")
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--memory-child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, default=64, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        peak_memory_child(args.memory_child, args.batch, args.device, steps=10)
        return
    try:
        import torch

        torch.set_num_threads(2 if args.device == "cpu" else torch.get_num_threads())
        have_torch = True
    except ImportError:
        have_torch = False
    sync = _sync(args.device)
    peak = gemm_peak_gflops(args.device)
    print(f"LeNet training step on {args.device}; float32 GEMM peak measured: {peak:.0f} GFLOP/s")
    header = (
        f"{'batch':>5} {'ours ms':>9} {'torch ms':>9} {'ratio':>6} {'GFLOP/s':>8} "
        f"{'% peak':>7} {'ours MB':>8} {'torch MB':>9} {'mem ratio':>9}"
    )
    print(header)
    results: dict[str, Any] = {}
    for batch in [int(b) for b in args.batches.split(",")]:
        timed = {"ours": (ours_step(batch, args.device), sync)}
        if have_torch:
            timed["torch"] = (torch_step(batch, args.device), _torch_sync(args.device))
        found = interleaved_ms(timed, args.steps, warmup=5)
        ours, theirs = found["ours"], found.get("torch", float("nan"))
        gflops = lenet_flops(batch) / (ours / 1e3) / 1e9
        mem_ours = mem_torch = float("nan")
        if not args.no_memory and args.device == "cpu":
            mem_ours = (peak_memory("ours", batch, args.device) or float("nan")) / 2**20
            if have_torch:
                mem_torch = (peak_memory("torch", batch, args.device) or float("nan")) / 2**20
        print(
            f"{batch:>5} {ours:>9.2f} {theirs:>9.2f} {ours / theirs:>6.2f} {gflops:>8.1f} "
            f"{gflops / peak:>7.1%} {mem_ours:>8.0f} {mem_torch:>9.0f} "
            f"{mem_ours / mem_torch:>9.2f}"
        )
        results[str(batch)] = {"ours_ms": ours, "torch_ms": theirs, "gflops": gflops}
    print(
        "(memory: growth of the peak resident set of a fresh process over 10 steps, from "
        "after the model and batch are built: activations, gradients, optimizer state, caches)"
    )


def _torch_sync(device: str) -> Callable[[], None]:
    if device.startswith("cuda"):
        import torch

        return torch.cuda.synchronize
    return lambda: None


if __name__ == "__main__":
    main()
