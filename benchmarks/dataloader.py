"""How fast is the DataLoader alone? Samples per second on the embedded MNIST sample.

Run ``python benchmarks/dataloader.py`` (add ``--device cuda`` on a GPU machine).
It times full epochs over ``MNIST(sample=True)`` (4,000 images) at batch 256 for:

* the array path (fancy indexing), in order and shuffled;
* the sample-by-sample path (forced by a ``transform``: ``ToTensor`` and ``Normalize``,
  as torchvision scripts do), for contrast, in the calling process and in 2 workers;
* with ``--device``: batches copied there by the prefetching thread.

A loader is fast enough when it delivers batches much faster than the model
consumes them; compare the figures below with the training step time.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from minitorch_accel import transforms
from minitorch_accel.data import DataLoader
from minitorch_accel.datasets import MNIST


def samples_per_second(make: Callable[[], DataLoader], epochs: int) -> float:
    """Best-of-``epochs`` throughput of one full pass over the loader."""
    loader = make()
    for _ in loader:  # warm-up epoch (first allocations, CUDA initialization)
        pass
    best = float("inf")
    n = 0
    for _ in range(epochs):
        start = time.perf_counter()
        n = 0
        for batch in loader:
            n += batch[0].shape[0]
        best = min(best, time.perf_counter() - start)
    return n / best


def main() -> None:
    """Print a table of DataLoader throughputs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--device", default=None, help="also time prefetching to this device")
    args = parser.parse_args()

    plain = MNIST(sample=True)
    to_tensor = transforms.Compose(
        [transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))]
    )
    with_transform = MNIST(sample=True, transform=to_tensor)
    bs = args.batch_size
    cases: list[tuple[str, Callable[[], DataLoader]]] = [
        ("arrays, in order", lambda: DataLoader(plain, bs)),
        ("arrays, shuffled", lambda: DataLoader(plain, bs, shuffle=True, seed=0)),
        (
            "sample by sample, shuffled",
            lambda: DataLoader(with_transform, bs, shuffle=True, seed=0),
        ),
        (
            "sample by sample, shuffled, 2 workers",
            lambda: DataLoader(with_transform, bs, shuffle=True, seed=0, num_workers=2),
        ),
        (
            "arrays, shuffled, to cpu:1 (thread)",
            lambda: DataLoader(plain, bs, shuffle=True, seed=0, device="cpu:1"),
        ),
    ]
    if args.device:
        cases.append(
            (
                f"arrays, shuffled, to {args.device} (thread)",
                lambda: DataLoader(plain, bs, shuffle=True, seed=0, device=args.device),
            )
        )

    print(
        f"DataLoader on MNIST(sample=True): {len(plain)} images, batch {bs}, "
        f"best of {args.epochs} epochs"
    )
    print(f"{'case':<44} {'samples/s':>12} {'ms/batch':>9}")
    for name, make in cases:
        rate = samples_per_second(make, args.epochs)
        print(f"{name:<44} {rate:>12,.0f} {1000 * bs / rate:>9.3f}")
    image_mb = np.prod(plain.arrays[0].shape[1:]) * 4 * bs / 2**20
    print(f"(one batch of images is {image_mb:.2f} MiB of float32)")
    step_device = args.device or "cpu"
    step_rate = lenet_samples_per_second(bs, step_device)
    print(
        f"{'LeNet training step on ' + step_device + ' (the consumer)':<44} {step_rate:>12,.0f} "
        f"{1000 * bs / step_rate:>9.3f}"
    )
    loader_rate = samples_per_second(lambda: DataLoader(plain, bs, shuffle=True, seed=0), 2)
    print(f"loader / step throughput: {loader_rate / step_rate:.0f}x (target: at least 20x)")


def lenet_samples_per_second(batch: int, device: str, steps: int = 10) -> float:
    """Samples per second of the LeNet training step of ``benchmarks/lenet_step.py``."""
    from lenet_step import ours_step  # the step that benchmark times, from this folder

    import minitorch_accel as mta
    from minitorch_accel.utils import benchmark

    step = ours_step(batch, device)
    seconds = benchmark(step, device=mta.Device(device), warmup=2, repeat=steps).median
    return batch / seconds


if __name__ == "__main__":
    main()
