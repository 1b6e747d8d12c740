"""Every core of the CPU: the same work at 1..N threads, ours beside PyTorch CPU.
==============================================================================

Teaches: how far one machine's cores speed up training, and Amdahl's law: the serial
part of the work caps the speed-up however many threads there are.
Prints: for each thread count the median time of a matmul, a LeNet step and an
elementwise add, ours beside PyTorch's, the speed-ups, and each curve's fitted parallel
fraction.
Takes: about a minute on 2 CPU cores with the defaults; longer with more threads and
repeats.

For each thread count, a fresh process times three pieces of work: a 1024 x 1024
float32 matmul, the LeNet-style training step at batch 64, and an elementwise add of 4M
values. Ours runs with ``minitorch_accel.set_num_threads`` (its own pool, which also
splits the matrix products, BLAS running on one thread inside each part); PyTorch with
``torch.set_num_threads``. Each framework runs in its
own processes, alternated (A B A B), because the spinning threads of one slow the other
down when they share a process. It prints medians, speed-ups against one thread, and
the parallel fraction ``p`` of Amdahl's law fitted to each curve:
``speed-up(t) = 1 / ((1 - p) + p / t)``.

Run: ``python examples/thread_scaling.py [--threads 1,2] [--repeats 2] [--plot out.png]``
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

WORK = ("matmul 1024", "LeNet step b64", "add 4M")


def best_ms(fn: Callable[[], object], repeat: int = 7) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * min(times)


def ours(threads: int) -> dict[str, float]:
    import minitorch_accel as mta
    from minitorch_accel import nn, optim
    from minitorch_accel.nn.models import LeNet

    mta.set_num_threads(threads)  # the framework's pool (BLAS held at one thread)
    mta.manual_seed(0)
    a, b = mta.randn(1024, 1024), mta.randn(1024, 1024)
    model = LeNet()
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x, y = mta.randn(64, 1, 28, 28), mta.tensor(np.arange(64) % 10)
    u, v = mta.randn(2**22), mta.randn(2**22)

    def step() -> None:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    return {
        "matmul 1024": best_ms(lambda: a @ b),
        "LeNet step b64": best_ms(step),
        "add 4M": best_ms(lambda: u + v),
    }


def torch_side(threads: int) -> dict[str, float]:
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 32, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(32, 64, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(1600, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10),
    )  # fmt: skip
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    x, y = torch.randn(64, 1, 28, 28), torch.arange(64) % 10
    u, v = torch.randn(2**22), torch.randn(2**22)

    def step() -> None:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    return {
        "matmul 1024": best_ms(lambda: a @ b),
        "LeNet step b64": best_ms(step),
        "add 4M": best_ms(lambda: u + v),
    }


def run_child(framework: str, threads: int) -> dict[str, float]:
    """Time the work in a fresh process with ``threads`` threads."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", framework, str(threads)],
        capture_output=True, text=True, check=True, env=dict(os.environ),
    )  # fmt: skip
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def amdahl_fraction(threads: list[int], speedups: list[float]) -> float:
    """Least-squares ``p`` of ``1/S = (1 - p) + p/t``, linear in ``p``, clipped to [0, 1]."""
    t, s = np.asarray(threads, float), np.asarray(speedups, float)
    x, y = 1.0 / t - 1.0, 1.0 / s - 1.0  # y = p * x
    if not np.any(x):
        return float("nan")
    return float(np.clip(np.dot(x, y) / np.dot(x, x), 0.0, 1.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument(
        "--threads",
        default=None,
        help="comma-separated thread counts (default: 1 to the CPU count)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=2,
        help="processes per framework and thread count, alternated (default 2)",
    )
    parser.add_argument("--plot", metavar="PATH", help="save the speed-up chart to PATH (PNG)")
    parser.add_argument(
        "--child", nargs=2, metavar=("FRAMEWORK", "THREADS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        framework, threads = args.child[0], int(args.child[1])
        print(json.dumps((ours if framework == "ours" else torch_side)(threads)))
        return
    counts = [int(t) for t in args.threads.split(",")] if args.threads else list(
        range(1, (os.cpu_count() or 1) + 1))  # fmt: skip
    try:
        import torch  # noqa: F401

        frameworks = ["ours", "torch"]
    except ImportError:
        frameworks = ["ours"]
        print("PyTorch is not installed: ours only")
    runs: dict[tuple[str, int], list[dict[str, float]]] = {}
    for _ in range(args.repeats):
        for threads in counts:
            for framework in frameworks:
                runs.setdefault((framework, threads), []).append(run_child(framework, threads))
    print(f"best ms per call, median of {args.repeats} processes; {os.cpu_count()} CPUs")
    print(f"{'work':<16}{'framework':<10}" + "".join(f"{f'{t} thr':>9}" for t in counts)
          + f"{'speed-up':>10}{'Amdahl p':>10}")  # fmt: skip
    curves = {}
    for work in WORK:
        for framework in frameworks:
            ms = [float(np.median([r[work] for r in runs[(framework, t)]])) for t in counts]
            speedup = [ms[0] / m for m in ms]
            p = amdahl_fraction(counts, speedup)
            curves[(work, framework)] = (speedup, p)
            print(f"{work:<16}{framework:<10}" + "".join(f"{m:>9.2f}" for m in ms)
                  + f"{speedup[-1]:>9.2f}x{p:>10.2f}")  # fmt: skip
    if args.plot:
        plot(counts, curves, args.plot)


def plot(counts: list[int], curves: dict[tuple[str, str], tuple[list[float], float]],
         path: str) -> None:  # fmt: skip
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(WORK), figsize=(11, 3.4), sharey=True)
    fine = np.linspace(1, max(counts), 50)
    for ax, work in zip(axes, WORK, strict=True):
        ax.plot(fine, fine, color="grey", ls=":", label="ideal")
        for (w, framework), (speedup, p) in curves.items():
            if w != work:
                continue
            line = ax.plot(counts, speedup, "o-", label=f"{framework}")[0]
            if p == p:  # not NaN
                ax.plot(fine, 1 / ((1 - p) + p / fine), color=line.get_color(), ls="--",
                        lw=1, label=f"{framework}, Amdahl p = {p:.2f}")  # fmt: skip
        ax.set_title(work, fontsize=10)
        ax.set_xlabel("threads")
        ax.set_xticks(counts)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("speed-up over 1 thread")
    fig.savefig(path, dpi=100, bbox_inches="tight", metadata={"Software": None})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
