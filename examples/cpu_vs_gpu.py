"""CPU vs GPU on the same work: matmul, training step, inverse, gradient averaging.
================================================================================

Teaches: what a GPU buys and what it costs, measured on the same work: the big matmuls
where it wins by far, the small steps where launch and copy overheads eat the gain.
Prints: four tables (matmul GFLOP/s, the LeNet training step, matrix inverse, gradient
averaging), each CPU beside every GPU with the speed-up; CPU columns only without a GPU.
Takes: about 5 minutes on 2 busy CPU cores with the default sizes (the large matmuls
and inverses are most of it; ``--sizes 256,1024`` takes under a minute).

Every device is warmed up first (BLAS threads started, GPU kernels compiled), so the
first size timed is not charged for it.

(1) Matmul at sizes 256..8192: time and GFLOP/s on the CPU and on each GPU, speed-up.
(2) The LeNet-style training step (two 3x3 convolutions of 32 and 64 channels, max
    pooling, a 128-unit hidden layer) at batch 64 and 256 on the CPU and each GPU: the
    lab's table (device, cores, step time in s/batch, speed-up, loss after N steps),
    with PyTorch's CPU step on the same host when PyTorch is installed, run in its own
    process: the speed-up read against a CPU framework that uses every core.
(3) Matrix inverse (``minitorch_accel.linalg.inv``) at a few sizes.
(4) The towers' gradient averaging: the weighted sum of 4 gradient buffers (the
    LeNet-style model's 0.9 MB, and 64 MB), as ``parallel.TowerTrainer`` does each step.
(5) A bar chart PNG of (1) and (2) (``--plot PATH``; needs matplotlib).

Without a GPU it prints the CPU columns and says plainly that no GPU was found.

Run: ``python examples/cpu_vs_gpu.py [--sizes 256,1024,4096] [--steps 20] [--plot out.png]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np

import minitorch_accel as mta
from minitorch_accel import cuda, nn, optim
from minitorch_accel.nn.models import LeNet
from minitorch_accel.parallel.reduce import weighted_sum


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


def torch_lenet_row(batch: int, steps: int) -> tuple[float, float] | None:
    """PyTorch's CPU step of the same model, in a fresh process; None without PyTorch."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return None
    cmd = [sys.executable, __file__, "--torch-child", str(batch), str(steps)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    seconds, loss = json.loads(done.stdout.strip().splitlines()[-1])
    return float(seconds), float(loss)


def torch_child(batch: int, steps: int) -> None:
    """Print PyTorch's median CPU step time and last loss for the LeNet-style model."""
    import torch

    from minitorch_accel.datasets import MNIST

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 32, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(32, 64, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(1600, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10),
    )  # fmt: skip
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    images, labels = MNIST(sample=True).arrays
    x, y = torch.from_numpy(images[:batch].copy()), torch.from_numpy(labels[:batch].copy()).long()
    times, loss = [], torch.zeros(())
    for i in range(steps + 2):
        start = time.perf_counter()
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if i >= 2:  # two warm-up steps
            times.append(time.perf_counter() - start)
    print(json.dumps([float(np.median(times)), float(loss.item())]))


def warm_up(devices: list[mta.Device]) -> None:
    """Start the BLAS threads and compile the GPU kernels before anything is timed."""
    for d in devices:
        a = mta.randn(512, 512, device=d)
        for _ in range(3):
            a @ a
        lenet_row(64, d, steps=2)
        d.backend.synchronize(d)


def inverse_row(n: int, device: mta.Device) -> float:
    """Median seconds of ``linalg.inv`` of an n x n well-conditioned float32 matrix."""
    a = mta.randn(n, n, device=device) + mta.eye(n, device=device) * float(n)
    return timed(lambda: mta.linalg.inv(a), device, repeat=5)


def averaging_row(nbytes: int, device: mta.Device, towers: int = 4) -> float:
    """Median seconds of the weighted average of ``towers`` gradient buffers of ``nbytes``."""
    flats = [mta.randn(nbytes // 4, device=device).array for _ in range(towers)]
    out = device.xp.empty_like(flats[0])
    weights = [1.0 / towers] * towers
    return timed(lambda: weighted_sum(flats, weights, out=out, xp=device.xp), device, repeat=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes", default="256,512,1024,2048,4096,8192",
        help="comma-separated matrix sizes n of the matmul table (default 256 to 8192)",
    )  # fmt: skip
    parser.add_argument(
        "--batches", default="64,256",
        help="comma-separated batch sizes of the LeNet-style step (default 64,256)",
    )  # fmt: skip
    parser.add_argument("--steps", type=int, default=20,
                        help="training steps timed per batch size (default 20)")  # fmt: skip
    parser.add_argument(
        "--inverse-sizes", default="256,1024,2048",
        help="comma-separated sizes of the matrix-inverse table (default 256,1024,2048)",
    )  # fmt: skip
    parser.add_argument("--plot", default=None, metavar="PATH",
                        help="write a bar chart PNG of (1) and (2) to PATH")  # fmt: skip
    parser.add_argument("--torch-child", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_child:
        torch_child(*args.torch_child)
        return

    devices = [mta.Device("cpu")]
    if cuda.is_available():
        devices += [mta.Device(f"cuda:{i}") for i in range(cuda.device_count())]
    else:
        print("No GPU was found (CuPy missing, no CUDA driver, or no device): CPU columns only.")
    names = {d: ("CPU" if d.type == "cpu" else cuda.get_device_name(d.index or 0)) for d in devices}
    cores = {d: (f"{os.cpu_count()} cores" if d.type == "cpu" else "GPU") for d in devices}
    warm_up(devices)

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

    print(
        f"\n(2) LeNet-style training step (forward, cross-entropy, backward, SGD), "
        f"{args.steps} steps"
    )
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
        theirs = torch_lenet_row(batch, args.steps)
        if theirs is not None:
            print(
                f"{'PyTorch CPU (own process)':<28} {cores[devices[0]]:>9} {batch:>6} "
                f"{theirs[0]:>10.5f} {rows[0][0] / theirs[0]:>8.1f}x {theirs[1]:>8.4f}"
            )

    print("\n(3) Matrix inverse, float32 (linalg.inv)")
    print(f"{'n':>6} " + " ".join(f"{str(d) + ' ms':>14}" for d in devices))
    for n in [int(s) for s in args.inverse_sizes.split(",")]:
        print(f"{n:>6} " + " ".join(f"{inverse_row(n, d) * 1e3:>14.3f}" for d in devices))

    print("\n(4) Gradient averaging of 4 towers (weighted sum of 4 buffers)")
    print(f"{'MB':>6} " + " ".join(f"{str(d) + ' ms':>14}" for d in devices))
    for nbytes in (900_136, 64 * 2**20):
        cells = " ".join(f"{averaging_row(nbytes, d) * 1e3:>14.3f}" for d in devices)
        print(f"{nbytes / 1e6:>6.1f} {cells}")
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
