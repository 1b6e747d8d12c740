"""What the optimizers' fast steps buy: ``opt.step()`` on LeNet's parameters, fast paths
on against off, in one run.

The reference step (:meth:`SGD.step <minitorch_accel.optim.SGD.step>`,
:meth:`Adam.step <minitorch_accel.optim.Adam.step>`) is the textbook rule, one temporary
array per operation; the backend's fast step (``backends/numpy/fast_optim.py`` on the
CPU, ``backends/cupy/fast_optim.py`` on a GPU) computes the same values with scratch
buffers, on the CPU's thread pool, or in one GPU launch for every parameter. For SGD
with momentum and Nesterov and weight decay, Adam and AdamW, it prints the median time
of one step with the fast paths on and off (blocks of steps alternating between the
two) and their ratio (off / on: how many times faster the fast step is).

Run: ``python benchmarks/optim_step.py`` (CPU, float32), ``--device cuda``,
``--rounds 15``. Figures from a machine shared with other work are noisy: compare the
ratios, measured in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import minitorch_accel as mta
from minitorch_accel import optim
from minitorch_accel.nn.models import LeNet

OPTIMIZERS: dict[str, Callable[[list[mta.Tensor]], optim.Optimizer]] = {
    "SGD (momentum, Nesterov, weight decay)": lambda ps: optim.SGD(
        ps, lr=1e-3, momentum=0.9, nesterov=True, weight_decay=1e-4
    ),
    "SGD (momentum)": lambda ps: optim.SGD(ps, lr=1e-3, momentum=0.9),
    "Adam": lambda ps: optim.Adam(ps, lr=1e-4),
    "AdamW": lambda ps: optim.AdamW(ps, lr=1e-4),
}


def seconds_per_step(
    opt: optim.Optimizer, fast: bool, steps: int, sync: Callable[[], None]
) -> float:
    """The mean time of ``steps`` calls of ``opt.step()`` with the fast paths ``fast``."""
    with mta.fast_paths(fast):
        opt.step()  # warm: state made, kernels built
        sync()
        start = time.perf_counter()
        for _ in range(steps):
            opt.step()
        sync()
        return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--rounds", type=int, default=9, help="alternating blocks per tier")
    parser.add_argument("--steps", type=int, default=20, help="steps per block")
    args = parser.parse_args()

    mta.manual_seed(0)
    model = LeNet().to(args.device)
    params = list(model.parameters())
    rng = np.random.default_rng(0)
    for p in params:
        p.grad = mta.tensor(
            rng.standard_normal(p.shape).astype(np.float32) * 1e-3, device=args.device
        )
    device = mta.Device(args.device)

    def sync() -> None:
        device.backend.synchronize(device)

    count = sum(p.numel() for p in params)
    print(f"opt.step() on LeNet's {len(params)} parameters ({count:,} floats), {args.device}")
    print(f"{'optimizer':<40} {'fast on':>10} {'fast off':>10} {'off / on':>9}")
    for name, make in OPTIMIZERS.items():
        opt = make(params)
        times: dict[bool, list[float]] = {True: [], False: []}
        for i in range(args.rounds):
            for fast in (True, False) if i % 2 == 0 else (False, True):
                times[fast].append(seconds_per_step(opt, fast, args.steps, sync))
        on, off = statistics.median(times[True]), statistics.median(times[False])
        print(f"{name:<40} {on * 1e6:>8.0f}us {off * 1e6:>8.0f}us {off / on:>8.2f}x")


if __name__ == "__main__":
    main()
