"""Operator fusion on the CPU: LeNet's training step with its first stage fused, against
the same modules run one by one.

A :class:`~minitorch_accel.nn.Sequential` runs LeNet's first convolution, its ReLU and
its max-pooling as one op (:mod:`minitorch_accel.ops.conv_pool`): the convolution's
output is pooled one cache block at a time and never kept, the ReLU is taken on the
pooled block, and the backward computes the weights' gradients from one byte per
window. ``Sequential.fuse_conv_pool = False`` runs the three modules one by one. This
script times the step both ways at 1 and 2 threads and batches 64 and 256, each way in
its own processes, alternating (``--rounds`` each; the median of their medians), and
prints the ratio fused/unfused, with the peak memory of a step (tracked by
:mod:`minitorch_accel.memory`, the same on any machine).

Run: ``python benchmarks/fusion.py [--threads 1,2] [--batches 64,256] [--rounds 6]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import numpy as np
from lenet_step import median_ms, ours_parts  # this folder's LeNet step and timing loop

import minitorch_accel as mta
from minitorch_accel import memory, nn


def child(fused: bool, threads: int, batch: int, steps: int) -> None:
    """In a subprocess: the median step time (ms) and the tracked peak of one step."""
    mta.set_num_threads(threads)
    model, opt, loss_fn, x, y = ours_parts(batch, "cpu")
    for seq in model.modules():
        if isinstance(seq, nn.Sequential):
            seq.fuse_conv_pool = fused

    def step() -> None:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    ms = median_ms(step, lambda: None, steps=steps, warmup=5)
    with memory.tracking():
        step()  # the optimizer's state exists from the steps above
        memory.reset_peak_memory_stats("cpu")
        step()
        peak = memory.max_memory_allocated("cpu")
    print(json.dumps({"ms": ms, "peak": peak}))


def measure(threads: int, batch: int, rounds: int, steps: int) -> dict[bool, tuple[float, int]]:
    """Fused and unfused: (median ms over ``rounds`` alternating processes, peak bytes)."""
    found: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    for r in range(rounds):
        for fused in (True, False) if r % 2 == 0 else (False, True):
            cmd = [sys.executable, __file__, "--child", str(int(fused))]
            cmd += ["--threads", str(threads), "--batches", str(batch), "--steps", str(steps)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True)
            found[fused].append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {
        fused: (float(np.median([f["ms"] for f in runs])), int(runs[0]["peak"]))
        for fused, runs in found.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--batches", default="64,256")
    parser.add_argument("--rounds", type=int, default=6, help="processes per way")
    parser.add_argument("--steps", type=int, default=20, help="timed steps per process")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(bool(args.child), int(args.threads), int(args.batches), args.steps)
        return
    print("LeNet training step, first stage fused (conv + ReLU + max-pool) or not;")
    print(f"median of {args.rounds} alternating processes x {args.steps} steps each\n")
    print("threads batch   fused ms unfused ms  ratio   fused MiB unfused MiB  ratio")
    for threads in (int(t) for t in args.threads.split(",")):
        for batch in (int(b) for b in args.batches.split(",")):
            found = measure(threads, batch, args.rounds, args.steps)
            (f_ms, f_peak), (u_ms, u_peak) = found[True], found[False]
            print(
                f"{threads:>7} {batch:>5} {f_ms:10.2f} {u_ms:10.2f} {f_ms / u_ms:6.3f}"
                f" {f_peak / 2**20:11.2f} {u_peak / 2**20:11.2f} {f_peak / u_peak:6.3f}"
            )


if __name__ == "__main__":
    main()
