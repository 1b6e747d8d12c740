"""The roofline of this machine: measured peaks, and where real work lands under them.
===================================================================================

Teaches: the roofline model: a kernel is limited by compute or by memory bandwidth,
and its arithmetic intensity (FLOPs per byte) says which.
Prints: the measured peak FLOP/s and bandwidth, then for each piece of work its
intensity, its measured rate and the share of the roof it reaches.
Takes: about 5 s on 2 CPU cores.

(1) The two ceilings of a device, measured: the float32 GEMM rate (FLOP/s) and the
    memory bandwidth of a large copy (bytes read + written per second).
(2) Work of several kinds, timed: square matmuls of several sizes, an elementwise add,
    a convolution layer and the LeNet-style training step. Each has an arithmetic
    intensity, FLOPs per byte of compulsory memory traffic; the roofline says it can run
    at most at ``min(peak FLOP/s, intensity x bandwidth)``.
(3) With ``--plot PATH``, the roofline chart with the measured points (needs matplotlib).

Run: ``python examples/roofline.py [--device cuda] [--plot roofline.png]``
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import minitorch_accel as mta
import minitorch_accel.nn.functional as F
from minitorch_accel import nn, optim
from minitorch_accel.nn.models import LeNet

F32 = 4  # bytes


@dataclass
class Point:
    """One piece of work: its FLOPs, its compulsory bytes and its best time."""

    name: str
    flops: float
    bytes: float
    seconds: float

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes

    @property
    def gflops(self) -> float:
        return self.flops / self.seconds / 1e9


def best_seconds(fn: Callable[[], object], device: mta.Device, repeat: int = 10) -> float:
    """Shortest time of ``fn`` after a warm-up, synchronizing before reading the clock."""
    fn()
    device.backend.synchronize(device)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        device.backend.synchronize(device)
        times.append(time.perf_counter() - start)
    return min(times)


def peak_gflops(device: mta.Device, n: int) -> float:
    """float32 GEMM rate of an ``n x n`` product, the compute ceiling."""
    a, b = mta.randn(n, n, device=device), mta.randn(n, n, device=device)
    return 2 * n**3 / best_seconds(lambda: a @ b, device) / 1e9


def peak_bandwidth(device: mta.Device, n: int = 2**24) -> float:
    """The memory ceiling, as STREAM measures it: GB/s of the faster of a copy (read + write)
    and an add (two reads, one write) of ``n`` float32 values into memory already allocated.
    """
    xp = device.xp
    x, y = mta.randn(n, device=device).array, mta.randn(n, device=device).array
    out = xp.empty_like(x)
    copy = 2 * x.nbytes / best_seconds(lambda: xp.copyto(out, x), device)
    add = 3 * x.nbytes / best_seconds(lambda: xp.add(x, y, out=out), device)
    return max(copy, add) / 1e9


def matmul_point(device: mta.Device, n: int) -> Point:
    a, b = mta.randn(n, n, device=device), mta.randn(n, n, device=device)
    return Point(f"matmul {n}", 2 * n**3, 3 * n * n * F32, best_seconds(lambda: a @ b, device))


def add_point(device: mta.Device, n: int = 2**24) -> Point:
    """``x + y`` on tensors of 16M values: one FLOP per 12 bytes, and a fresh output each time."""
    x, y = mta.randn(n, device=device), mta.randn(n, device=device)
    return Point("add 16M", n, 3 * n * F32, best_seconds(lambda: x + y, device))


def conv_point(device: mta.Device, batch: int = 64) -> Point:
    """The LeNet-style model's second convolution, forward: 32 -> 64 channels, 3x3, 13x13."""
    x = mta.randn(batch, 32, 13, 13, device=device)
    w = mta.randn(64, 32, 3, 3, device=device)
    out_elems = batch * 64 * 11 * 11
    flops = 2 * out_elems * 32 * 9
    nbytes = (x.numel() + w.numel() + out_elems) * F32
    return Point("conv 32->64", flops, nbytes, best_seconds(lambda: F.conv2d(x, w), device))


def lenet_point(device: mta.Device, batch: int = 64) -> Point:
    """One training step of the LeNet-style CNN (forward, loss, backward, SGD).

    FLOPs: its convolutions and linear layers, forward and twice that backward. Bytes: an
    estimate of the compulsory traffic, each activation written in the forward pass, read
    in the backward pass, its gradient written and read (4 passes), and each parameter
    read twice, its gradient written once and the update read and written (5 passes).
    """
    mta.manual_seed(0)
    model = LeNet().to(device)
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x = mta.randn(batch, 1, 28, 28, device=device)
    y = mta.tensor(np.arange(batch) % 10, device=device)

    def step() -> None:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    macs = 26 * 26 * 32 * 9 + 11 * 11 * 64 * 32 * 9 + 1600 * 128 + 128 * 10
    flops = 3 * 2 * batch * macs
    activations = 28 * 28 + 2 * 32 * 26 * 26 + 32 * 13 * 13 + 2 * 64 * 11 * 11 + 1600 + 256 + 10
    params = sum(p.numel() for p in model.parameters())
    nbytes = (4 * batch * activations + 5 * params) * F32
    return Point(f"LeNet step b{batch}", flops, nbytes, best_seconds(step, device))


def plot(points: list[Point], peak: float, bandwidth: float, title: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    ai = np.logspace(-2, 3, 200)
    ax.loglog(ai, np.minimum(peak, ai * bandwidth), color="black", lw=2, label="roofline")
    ridge = peak / bandwidth
    ax.axvline(ridge, color="grey", ls=":", lw=1)
    ax.annotate(
        f"ridge {ridge:.0f} FLOP/B",
        (ridge, peak / 30),
        rotation=90,
        fontsize=8,
        ha="right",
        color="grey",
    )
    for p in points:
        colour = "tab:orange" if p.intensity < ridge else "tab:blue"
        ax.scatter(p.intensity, p.gflops, color=colour, zorder=3)
        ax.annotate(
            p.name, (p.intensity, p.gflops), textcoords="offset points", xytext=(5, -10), fontsize=8
        )
    ax.set_xlabel("arithmetic intensity (FLOP per byte of memory traffic)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    fig.savefig(path, dpi=100, bbox_inches="tight", metadata={"Software": None})
    print(f"wrote {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--device", default="cpu", help="device to measure: cpu (default) or cuda")
    parser.add_argument(
        "--sizes", default="64,256,1024", help="comma-separated matmul sizes to place on the chart"
    )
    parser.add_argument("--plot", metavar="PATH", help="save the roofline chart to PATH (PNG)")
    args = parser.parse_args()
    device = mta.device(args.device)
    big = 2048 if device.type == "cpu" else 8192
    points = [matmul_point(device, int(n)) for n in args.sizes.split(",")]
    # The compute ceiling: the best GEMM rate seen, n = 2048 (8192 on a GPU) or smaller.
    peak = max([peak_gflops(device, big)] + [p.gflops for p in points])
    bandwidth = peak_bandwidth(device)
    print(
        f"(1) ceilings of {device}: float32 GEMM {peak:,.0f} GFLOP/s; memory "
        f"{bandwidth:,.1f} GB/s (best of a copy and an add of 64 MiB arrays); "
        f"ridge point {peak / bandwidth:.1f} FLOP/byte"
    )
    points += [add_point(device), conv_point(device), lenet_point(device)]
    print("\n(2) measured work (best of 10 after a warm-up)")
    print(f"{'work':<15}{'GFLOP':>9}{'MB':>9}{'FLOP/B':>9}{'ms':>10}{'GFLOP/s':>10}{'% roof':>8}")
    for p in points:
        roof = min(peak, p.intensity * bandwidth)
        print(
            f"{p.name:<15}{p.flops / 1e9:>9.3f}{p.bytes / 1e6:>9.2f}{p.intensity:>9.1f}"
            f"{p.seconds * 1e3:>10.3f}{p.gflops:>10.1f}{p.gflops / roof:>8.0%}"
        )
    if args.plot:
        plot(points, peak, bandwidth, f"Roofline of {device}, measured", args.plot)


if __name__ == "__main__":
    main()
