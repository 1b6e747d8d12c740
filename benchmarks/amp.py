"""Mixed precision: a training step in float32 beside the same step under
``amp.autocast`` (float16 compute) with a ``GradScaler``, in the same run.

Models: the LeNet of the examples and the SmallVGG (width 32), on MNIST-shaped input.
On a GPU, CuPy's float16 matrix multiplies run on tensor cores: the speed-up is the
point. On the CPU, NumPy has no float16 BLAS (the GEMMs then run in float32 on the
float16 values, see ``ops/gemm.py``) and computes float16 elementwise ops in software,
so autocast there is several times *slower*: it only demonstrates the numerics.

Run: ``python benchmarks/amp.py [--device cuda] [--batch 256] [--steps 20]``. On the CPU
the defaults are small (LeNet, batch 64, 3 steps).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import minitorch_accel as mta
from minitorch_accel import amp, nn, optim
from minitorch_accel.nn.models import LeNet, SmallVGG
from minitorch_accel.utils import benchmark


def step_time(model_name: str, use_amp: bool, device: str, batch: int, steps: int) -> float:
    mta.manual_seed(0)
    model = (LeNet() if model_name == "LeNet" else SmallVGG(width=32)).to(device)
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = amp.GradScaler(enabled=use_amp)
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(0)
    x = mta.tensor(rng.random((batch, 1, 28, 28), dtype=np.float32), device=device)
    y = mta.tensor(rng.integers(0, 10, batch), device=device)

    def step() -> None:
        opt.zero_grad()
        with amp.autocast(enabled=use_amp):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    return benchmark(step, device=mta.Device(device), warmup=3, repeat=steps).median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch", type=int, default=None, help="default 256 (GPU), 64 (CPU)")
    parser.add_argument("--steps", type=int, default=None, help="default 20 (GPU), 3 (CPU)")
    parser.add_argument("--models", default=None, help="default LeNet,SmallVGG (GPU), LeNet (CPU)")
    args = parser.parse_args()
    on_cpu = mta.Device(args.device).type == "cpu"  # float16 is several times slower there
    args.batch = args.batch or (64 if on_cpu else 256)
    args.steps = args.steps or (3 if on_cpu else 20)
    args.models = args.models or ("LeNet" if on_cpu else "LeNet,SmallVGG")
    print(f"training step, batch {args.batch}, on {args.device}: float32 vs autocast float16")
    print(f"{'model':<10} {'float32 ms':>11} {'float16 ms':>11} {'speed-up':>9}")
    for name in args.models.split(","):
        fp32 = step_time(name, False, args.device, args.batch, args.steps)
        fp16 = step_time(name, True, args.device, args.batch, args.steps)
        print(f"{name:<10} {fp32 * 1e3:>11.2f} {fp16 * 1e3:>11.2f} {fp32 / fp16:>8.2f}x")
    if mta.Device(args.device).type == "cpu":
        print("(CPU: NumPy computes float16 in software; a speed-up needs a GPU's tensor cores)")


if __name__ == "__main__":
    main()
