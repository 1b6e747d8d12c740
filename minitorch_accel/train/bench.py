"""``python -m minitorch_accel bench``: how long one LeNet training step takes here.

A quick check of a machine or a device, not a study (that is ``benchmarks/``): the
LeNet of the MNIST recipe, batches of random MNIST-shaped images, SGD with momentum;
a few unmeasured warm-up steps (on a GPU the first calls compile kernels), then the
median of ``--steps`` measured ones, each synchronized with the device::

    python -m minitorch_accel bench                  # the CPU
    python -m minitorch_accel bench --device cuda    # a GPU
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

__all__ = ["build_parser", "lenet_step_time", "main"]


def _at_least(minimum: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value

    return parse


def build_parser(prog: str = "python -m minitorch_accel bench") -> argparse.ArgumentParser:
    """The options of the command."""
    p = argparse.ArgumentParser(prog=prog, description="Time one LeNet training step.")
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:1, cpu:1...")
    p.add_argument("--batch-size", type=_at_least(1), default=64, help="default 64")
    p.add_argument("--steps", type=_at_least(1), default=10, help="measured steps (default 10)")
    p.add_argument("--warmup", type=_at_least(0), default=2, help="unmeasured steps (default 2)")
    return p


def lenet_step_time(device: str, batch_size: int, steps: int, warmup: int) -> list[float]:
    """Seconds of each of ``steps`` LeNet training steps (after ``warmup`` more).

    Examples
    --------
    >>> times = lenet_step_time("cpu", batch_size=2, steps=2, warmup=0)
    >>> len(times), all(t > 0 for t in times)
    (2, True)
    """
    import minitorch_accel as mta
    from minitorch_accel import nn, optim
    from minitorch_accel.nn.models import LeNet
    from minitorch_accel.utils.timing import benchmark

    mta.manual_seed(0)
    model = LeNet().to(device)
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.default_rng(0)
    x = mta.tensor(rng.random((batch_size, 1, 28, 28), dtype=np.float32), device=device)
    y = mta.tensor(rng.integers(0, 10, batch_size), device=device)
    loss_fn = nn.CrossEntropyLoss()

    def step() -> None:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    return list(benchmark(step, device=device, warmup=warmup, repeat=steps).times)


def main(argv: list[str] | None = None, prog: str = "python -m minitorch_accel bench") -> int:
    """Run the command; return the exit status (2 for a bad option or device)."""
    parser = build_parser(prog)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    from ..backends import Device

    try:
        device = Device(args.device)
        device.backend.check_device(device)
    except (ValueError, RuntimeError, ImportError, TypeError) as exc:
        parser.print_usage(sys.stderr)
        print(f"{prog}: error: --device {args.device}: {exc}", file=sys.stderr)
        return 2
    times = lenet_step_time(str(device), args.batch_size, args.steps, args.warmup)
    median = float(np.median(times))
    print(
        f"LeNet training step on {device}, batch {args.batch_size}: "
        f"{1000 * median:.2f} ms/step (median of {len(times)}, min {1000 * min(times):.2f}), "
        f"{args.batch_size / median:.0f} samples/s"
    )
    return 0
