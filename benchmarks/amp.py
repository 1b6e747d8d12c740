"""Mixed precision: a training step in float32 beside the same step under
``amp.autocast`` (float16 compute) with a ``GradScaler``, in the same run.

Models: the LeNet of the examples, the SmallVGG (width 32) and a wide MLP (784-4096-4096-
4096-10), on MNIST-shaped input. On a GPU, float16 matrix multiplies run on tensor cores:
the speed-up is the point, and it shows where the GEMMs are most of the step (the wide
MLP); on LeNet the step is a hundred small kernels whose cost autocast's casts only add
to. The GPU run also times float32 with TF32 tensor-core GEMMs
(``backends.cuda.matmul.allow_tf32``).

On the CPU, NumPy has no float16 BLAS (the GEMMs then run in float32 on the
float16 values, see ``ops/gemm.py``) and computes float16 elementwise ops in software,
so autocast there is several times *slower*: it only demonstrates the numerics.

Run: ``python benchmarks/amp.py [--device cuda] [--batch 256] [--steps 20] [--captured]``;
``--captured`` adds the same steps captured as CUDA graphs, where the host's cost per
kernel no longer hides what the tensor cores save. On the CPU
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
from minitorch_accel.cuda.graphs import capture_step
from minitorch_accel.nn.models import LeNet, SmallVGG
from minitorch_accel.utils import benchmark

MODES = ("float32", "tf32", "float16")


def make_model(name: str) -> nn.Module:
    """One of the benchmark's models, by name."""
    if name == "LeNet":
        return LeNet()
    if name == "SmallVGG":
        return SmallVGG(width=32)
    if name == "WideMLP":
        return nn.Sequential(
            nn.Flatten(),
            nn.Linear(784, 4096), nn.ReLU(),
            nn.Linear(4096, 4096), nn.ReLU(),
            nn.Linear(4096, 4096), nn.ReLU(),
            nn.Linear(4096, 10),
        )  # fmt: skip
    raise ValueError(f"unknown model {name!r}: LeNet, SmallVGG or WideMLP")


def step_time(
    model_name: str, mode: str, device: str, batch: int, steps: int, captured: bool = False
) -> float:
    """Median seconds of a training step in ``mode`` (float32, tf32 or float16); with
    ``captured``, of the step captured as a CUDA graph (``cuda.graphs.capture_step``).
    A captured step cannot read the scaler's overflow check back, so it runs without
    loss scaling (fine for timing; a static scale would do for training).
    """
    mta.manual_seed(0)
    model = make_model(model_name).to(device)
    use_amp = mode == "float16"
    mta.backends.cuda.matmul.allow_tf32 = mode == "tf32"
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = amp.GradScaler(enabled=use_amp and not captured)
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(0)
    x = mta.tensor(rng.random((batch, 1, 28, 28), dtype=np.float32), device=device)
    y = mta.tensor(rng.integers(0, 10, batch), device=device)

    def step(inputs: mta.Tensor, labels: mta.Tensor) -> mta.Tensor:
        opt.zero_grad()
        with amp.autocast(enabled=use_amp):
            loss = loss_fn(model(inputs), labels)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss.detach()

    run = capture_step(step, (x, y), optimizers=opt) if captured else step
    try:
        return benchmark(
            lambda: run(x, y), device=mta.Device(device), warmup=3, repeat=steps
        ).median
    finally:
        mta.backends.cuda.matmul.allow_tf32 = False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--batch", type=int, default=None, help="default 256, WideMLP 1024 (GPU); 64 (CPU)"
    )
    parser.add_argument("--steps", type=int, default=None, help="default 20 (GPU), 3 (CPU)")
    parser.add_argument(
        "--models", default=None, help="default LeNet,SmallVGG,WideMLP (GPU), LeNet (CPU)"
    )
    parser.add_argument(
        "--captured", action="store_true", help="also each step captured as a CUDA graph (GPU)"
    )
    args = parser.parse_args()
    on_cpu = mta.Device(args.device).type == "cpu"  # float16 is several times slower there
    steps = args.steps or (3 if on_cpu else 20)
    models = args.models or ("LeNet" if on_cpu else "LeNet,SmallVGG,WideMLP")
    modes = ("float32", "float16") if on_cpu else MODES  # TF32 is a GPU mode
    print(f"training step on {args.device}: {', '.join(modes)} (median ms; float16: autocast)")
    print(f"{'model':<10} {'batch':>6} " + " ".join(f"{m + ' ms':>11}" for m in modes), end="")
    print(" " + " ".join(f"{m + ' x':>10}" for m in modes[1:]))
    for captured in (False, True) if args.captured and not on_cpu else (False,):
        if captured:
            print("captured steps (cuda.graphs.capture_step; float16 without loss scaling):")
        for name in models.split(","):
            batch = args.batch or (64 if on_cpu else 1024 if name == "WideMLP" else 256)
            times = [step_time(name, mode, args.device, batch, steps, captured) for mode in modes]
            cells = " ".join(f"{t * 1e3:>11.2f}" for t in times)
            ups = " ".join(f"{times[0] / t:>9.2f}x" for t in times[1:])
            print(f"{name:<10} {batch:>6} {cells} {ups}")
    print("(x: speed-up over float32)")
    if mta.Device(args.device).type == "cpu":
        print("(CPU: NumPy computes float16 in software; a speed-up needs a GPU's tensor cores)")


if __name__ == "__main__":
    main()
