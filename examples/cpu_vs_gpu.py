"""CPU vs GPU on the same work: a square matrix multiply, then the LeNet training step.

(1) Matmul at sizes 256..8192: time and GFLOP/s on the CPU and on each GPU, speed-up.
(2) The LeNet training step at batch 64 and 256 on the CPU and each GPU: the lab's
    table (device, cores, step time in s/batch, speed-up, loss after N steps).
(3) A bar chart PNG of both (``--plot PATH``; needs matplotlib).

Without a GPU it prints the CPU columns and says plainly that no GPU was found.

Run: ``python examples/cpu_vs_gpu.py [--sizes 256,1024,4096] [--steps 20] [--plot out.png]``
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import numpy as np

import minitorch_accel as mta
from minitorch_accel import cuda, nn, optim
from minitorch_accel.models import LeNet


def timed(fn: Callable[[], object], device: mta.Device, repeat: int, warmup: int = 1) -> float:
    """Median seconds of ``fn``, synchronizing the device before reading the clock."""
    for _ in range(warmup):
        fn()
    device.backend.synchronize(device)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        device.backend.synchronize(device)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def matmul_row(n: int, device: mta.Device) -> tuple[float, float]:
    a = mta.randn(n, n, device=device)
    b = mta.randn(n, n, device=device)
    repeat = 3 if device.type == "cpu" and n >= 4096 else 10
    seconds = timed(lambda: a @ b, device, repeat)
    return seconds, 2 * n**3 / seconds / 1e9


def lenet_row(batch: int, device: mta.Device, steps: int) -> tuple[float, float]:
    """Median seconds per training step and the loss after ``steps`` steps."""
    mta.manual_seed(0)
    model = LeNet().to(device)
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    from minitorch_accel.datasets import MNIST

    images, labels = MNIST(sample=True).arrays
    x = mta.tensor(images[:batch], device=device)
    y = mta.tensor(labels[:batch], device=device)
    losses: list[float] = []

    def step() -> None:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss)  # kept as a tensor: reading it would synchronize

    seconds = timed(step, device, repeat=steps, warmup=2)
    return seconds, float(losses[-1].item())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="256,512,1024,2048,4096,8192")
    parser.add_argument("--batches", default="64,256")
    parser.add_argument("--steps", type=int, default=20, help="LeNet steps timed")
    parser.add_argument("--plot", default=None, help="write a bar chart PNG here")
    args = parser.parse_args()

    devices = [mta.Device("cpu")]
    if cuda.is_available():
        devices += [mta.Device(f"cuda:{i}") for i in range(cuda.device_count())]
    else:
        print("No GPU was found (CuPy missing, no CUDA driver, or no device): CPU columns only.")
    names = {d: ("CPU" if d.type == "cpu" else cuda.get_device_name(d.index or 0)) for d in devices}
    cores = {d: (f"{os.cpu_count()} cores" if d.type == "cpu" else "GPU") for d in devices}

    print("\n(1) Square matmul, float32")
    print(
        f"{'n':>6} "
        + " ".join(f"{str(d) + ' ms':>14} {'GFLOP/s':>9}" for d in devices)
        + ("  speed-up" if len(devices) > 1 else "")
    )
    matmul: dict[int, list[float]] = {}
    for n in [int(s) for s in args.sizes.split(",")]:
        row = [matmul_row(n, d) for d in devices]
        matmul[n] = [g for _, g in row]
        cells = " ".join(f"{t * 1e3:>14.2f} {g:>9.1f}" for t, g in row)
        speed = f"  {row[0][0] / row[-1][0]:>7.1f}x" if len(devices) > 1 else ""
        print(f"{n:>6} {cells}{speed}")

    print(f"\n(2) LeNet training step (forward, cross-entropy, backward, SGD), {args.steps} steps")
    print(f"{'device':<28} {'cores':>9} {'batch':>6} {'s/batch':>10} {'speed-up':>9} {'loss':>8}")
    lenet: dict[int, list[float]] = {}
    for batch in [int(b) for b in args.batches.split(",")]:
        rows = [lenet_row(batch, d, args.steps) for d in devices]
        lenet[batch] = [s for s, _ in rows]
        for d, (seconds, loss) in zip(devices, rows, strict=True):
            print(
                f"{names[d] + ' (' + str(d) + ')':<28} {cores[d]:>9} {batch:>6} "
                f"{seconds:>10.5f} {rows[0][0] / seconds:>8.1f}x {loss:>8.4f}"
            )
    if args.plot:
        plot(args.plot, devices, matmul, lenet)


def plot(
    path: str,
    devices: list[mta.Device],
    matmul: dict[int, list[float]],
    lenet: dict[int, list[float]],
) -> None:
    """Bar charts: matmul GFLOP/s per size, LeNet step time per batch, per device."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.8 / len(devices)
    for k, d in enumerate(devices):
        xs = np.arange(len(matmul)) + k * width
        left.bar(xs, [v[k] for v in matmul.values()], width, label=str(d))
        xs = np.arange(len(lenet)) + k * width
        right.bar(xs, [v[k] * 1e3 for v in lenet.values()], width, label=str(d))
    left.set_xticks(np.arange(len(matmul)) + 0.4 - width / 2, [str(n) for n in matmul])
    left.set(title="Square matmul (float32)", xlabel="n", ylabel="GFLOP/s", yscale="log")
    right.set_xticks(np.arange(len(lenet)) + 0.4 - width / 2, [str(b) for b in lenet])
    right.set(title="LeNet training step", xlabel="batch", ylabel="ms per step", yscale="log")
    left.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
