"""How big a model fits: grow the batch until out of memory, then try the remedies.
================================================================================

Teaches: a training step needs the weights, their gradients, the optimizer's
state (Adam: two more copies of the weights) and the activations kept for backward,
which grow with the batch; past the device's memory the step fails with
``OutOfMemoryError`` -- and the model is left as it was. Gradient accumulation,
activation checkpointing and mixed precision each buy a larger batch for some time;
data streamed from host memory lets a dataset larger than the device train.

Prints: for LeNet with Adam, batch after batch, the predicted peak
(``utils.memory_estimate``), the measured peak (``memory.max_memory_allocated``) and
whether it fits; the error of the first batch that does not; then for each remedy the
largest batch it allows and its step time relative to the plain step; then a
``np.memmap`` dataset larger than the cap trained through the ``DataLoader``'s prefetch.
With ``--png``, a figure of memory by category against the batch size (needs
matplotlib; skipped with a message otherwise).

Where: on ``cuda`` when there is a GPU, else on ``cpu:1`` capped at ``--limit-mib``
(default 48 MiB) by ``memory.set_memory_limit``: the same error as a GPU's, on a laptop.

Takes: about 20-30 s on one CPU core with the default cap; under 10 s with
``--limit-mib 16``.

Run: ``python examples/memory_limits.py [--limit-mib 48] [--png memory.png]``
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import minitorch_accel as mta
from minitorch_accel import memory, nn, optim
from minitorch_accel.amp import GradScaler, autocast
from minitorch_accel.data import DataLoader, TensorDataset
from minitorch_accel.nn.models import LeNet
from minitorch_accel.utils import checkpoint_sequential, memory_estimate

MiB = 2**20
REMEDIES = ("plain", "accumulate 4", "checkpoint", "float16 (amp)")


class Lab:
    """LeNet and Adam on ``device``; :meth:`step` runs one training step one way."""

    def __init__(self, device: str) -> None:
        self.device = device
        mta.manual_seed(0)
        self.model = LeNet().to(device)
        self.optimizer = optim.Adam(self.model.parameters(), lr=1e-3)
        self.loss_fn = nn.CrossEntropyLoss()
        self.scaler = GradScaler()

    def batch(self, size: int) -> tuple[mta.Tensor, mta.Tensor]:
        rng = np.random.default_rng(size)
        x = mta.tensor(rng.random((size, 1, 28, 28), dtype=np.float32), device=self.device)
        return x, mta.tensor(rng.integers(0, 10, size), device=self.device)

    def forward(self, x: mta.Tensor, how: str) -> mta.Tensor:
        if how == "checkpoint":  # keep the inputs of 2 segments (conv, ReLU, pool) only
            return self.model.classifier(checkpoint_sequential(self.model.features, 2, x))
        return self.model(x)  # type: ignore[no-any-return]

    def step(self, x: mta.Tensor, y: mta.Tensor, how: str = "plain") -> None:
        self.optimizer.zero_grad()
        if how == "float16 (amp)":
            with autocast(device=self.device):
                loss = self.loss_fn(self.model(x), y)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            return
        parts = 4 if how == "accumulate 4" else 1
        n = int(y.shape[0])
        for i in range(parts):  # gradient accumulation: one micro-batch at a time
            lo, hi = n * i // parts, n * (i + 1) // parts
            xs, ys = (x, y) if parts == 1 else (x[lo:hi], y[lo:hi])
            (self.loss_fn(self.forward(xs, how), ys) * ((hi - lo) / n)).backward()
        self.optimizer.step()

    def try_batch(self, size: int, how: str = "plain", repeat: int = 1) -> dict[str, Any]:
        """Peak memory and median step time of ``size``, or ``fits=False``."""
        # An earlier attempt's out-of-memory error left its traceback's frames, and the
        # tensors they hold, in reference cycles: free them now, not whenever the
        # garbage collector next runs, so every attempt starts from the same memory.
        gc.collect()
        try:
            x, y = self.batch(size)
            self.step(x, y, how)  # the first step creates Adam's state
            memory.reset_peak_memory_stats(self.device)
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                self.step(x, y, how)
                self.device_sync()
                times.append(time.perf_counter() - start)
        except memory.OutOfMemoryError as error:
            return {"batch": size, "fits": False, "error": str(error)}
        return {
            "batch": size,
            "fits": True,
            "peak": memory.max_memory_allocated(self.device),
            "by_category": memory.memory_by_category(self.device, peak=True),
            "ms": 1e3 * float(np.median(times)),
        }

    def device_sync(self) -> None:
        dev = mta.Device(self.device)
        dev.backend.synchronize(dev)


def largest_batch(lab: Lab, how: str, start: int, start_fits: bool, stop: int) -> int:
    """The largest batch that fits (to within 1/16), from ``start`` (already tried:
    ``start_fits``) up to ``stop``: double until it fails, then bisect (below ``start``
    if that does not fit)."""
    fits, fails = (start, start * 2) if start_fits else (0, start)
    while fails <= stop and lab.try_batch(fails, how)["fits"]:
        fits, fails = fails, fails * 2
    if fails > stop:
        return fits
    while fails - fits > max(1, fits // 16):
        middle = (fits + fails) // 2
        fits, fails = (middle, fails) if lab.try_batch(middle, how)["fits"] else (fits, middle)
    return fits


def batch_sizes(stop: int) -> list[int]:
    """16, 24, 32, 48, 64, 96, ... up to ``stop``."""
    sizes, size = [], 16
    while size <= stop:
        sizes += [size, size * 3 // 2]
        size *= 2
    return [s for s in sizes if s <= stop]


def grow(lab: Lab, max_batch: int) -> list[dict[str, Any]]:
    """Grow the batch from 16 until it does not fit; print each row."""
    print(f"{'batch':>6} {'predicted':>10} {'measured':>10}  fits")
    rows = []
    for size in batch_sizes(max_batch):
        predicted = memory_estimate(
            lab.model, (size, 1, 28, 28), lab.optimizer, device=lab.device
        ).total
        row = lab.try_batch(size)
        row["predicted"] = predicted
        rows.append(row)
        measured = f"{row['peak'] / MiB:8.2f} M" if row["fits"] else f"{'-':>10}"
        print(f"{size:>6} {predicted / MiB:8.2f} M {measured}  {'yes' if row['fits'] else 'NO'}")
        if not row["fits"]:
            print(f"\nOutOfMemoryError: {row['error']}\n")
            break
    return rows


def remedies(lab: Lab, plain_best: int, max_batch: int) -> list[dict[str, Any]]:
    """The largest batch of each remedy, and its step time at the plain largest batch
    relative to the plain step (medians of 5 steps, measured one after the other; "-"
    for a remedy that needs more memory than the plain step there)."""
    tried = {how: lab.try_batch(plain_best, how, repeat=5) for how in REMEDIES}
    print(f"{'remedy':<15} {'largest batch':>13} {'step time':>10}  (at batch {plain_best})")
    found = []
    for how in REMEDIES:
        best = largest_batch(lab, how, plain_best, tried[how]["fits"], max_batch)
        ratio = tried[how]["ms"] / tried["plain"]["ms"] if tried[how]["fits"] else None
        found.append({"remedy": how, "largest_batch": best, "time_ratio": ratio})
        shown = f"{ratio:>9.2f}x" if ratio is not None else f"{'-':>10}"
        print(f"{how:<15} {best:>13} {shown}")
    return found


def stream_from_host(lab: Lab, batch: int, limit: int) -> dict[str, float]:
    """Train one epoch over a memmap dataset 1.5x the device's cap."""
    images = max(int(1.5 * limit) // (28 * 28 * 4), batch)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "images.f32")
        data = np.memmap(path, np.float32, "w+", shape=(images, 1, 28, 28))
        data[:] = np.random.default_rng(0).random(data.shape, dtype=np.float32)
        data.flush()
        labels = np.random.default_rng(1).integers(0, 10, images)
        loader = DataLoader(TensorDataset(data, labels), batch_size=batch, device=lab.device)
        start = time.perf_counter()
        for _ in loader:  # loading and copying alone
            pass
        loading = time.perf_counter() - start
        mta.backends.transfer_stats.reset()
        memory.reset_peak_memory_stats(lab.device)
        start = time.perf_counter()
        for x, y in loader:
            lab.step(x, y)
        lab.device_sync()
        seconds = time.perf_counter() - start
        del data, loader
    moved = mta.backends.transfer_stats.host_to_device
    print(
        f"\nA {images * 28 * 28 * 4 / MiB:.1f} MiB np.memmap dataset (the cap is "
        f"{limit / MiB:.0f} MiB) trained through the DataLoader's prefetch in {seconds:.2f} s; "
        f"{moved / MiB:.1f} MiB were copied to {lab.device}; reading and copying alone take "
        f"{loading:.2f} s ({moved / MiB / loading:.0f} MiB/s), overlapped with the steps by "
        f"the prefetch; peak on the device {memory.max_memory_allocated(lab.device) / MiB:.1f} MiB"
    )
    return {
        "dataset_mib": images * 28 * 28 * 4 / MiB,
        "seconds": seconds,
        "loading_seconds": loading,
        "moved": moved,
    }


def plot(rows: list[dict[str, Any]], limit: int, path: str) -> None:
    """Stacked bars: the peak of each category against the batch size."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no figure (pip install matplotlib)")
        return
    fitting = [r for r in rows if r["fits"]]
    labels = [str(r["batch"]) for r in fitting]
    fig, ax = plt.subplots(figsize=(7, 4))
    bottom = np.zeros(len(fitting))
    for name in memory.CATEGORIES:
        values = np.array([r["by_category"][name] / MiB for r in fitting])
        ax.bar(labels, values, bottom=bottom, label=name)
        bottom += values
    ax.plot(labels, [r["predicted"] / MiB for r in fitting], "k.--", label="predicted")
    ax.axhline(limit / MiB, color="red", linestyle=":", label="device cap")
    ax.set_xlabel("batch size")
    ax.set_ylabel("peak memory of a step (MiB)")
    ax.set_title("LeNet + Adam: memory by category at the peak")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"figure: {os.path.relpath(path)}")


def run(
    limit_mib: float = 48,
    device: str | None = None,
    max_batch: int = 1 << 16,
    png: str | None = None,
    stream: bool = True,
    say: Callable[..., None] = print,
) -> dict[str, Any]:
    """Everything above, in order; returns the measured numbers."""
    if device is None:
        device = "cuda" if mta.cuda.is_available() else "cpu:1"
    limit = int(limit_mib * MiB)
    memory.set_memory_limit(device, limit)
    try:
        lab = Lab(device)
        say(f"LeNet + Adam on {device}, capped at {limit_mib:g} MiB\n")
        rows = grow(lab, max_batch)
        fitting = [r["batch"] for r in rows if r["fits"]]
        if not fitting:
            raise SystemExit("not even a batch of 16 fits: raise --limit-mib")
        say("")
        found = remedies(lab, fitting[-1], max_batch)
        # Half the largest batch: the prefetch holds the next batches on the device too.
        streamed = stream_from_host(lab, max(fitting[-1] // 2, 1), limit) if stream else {}
        if png:
            plot(rows, limit, png)
    finally:
        memory.set_memory_limit(device, None)
    return {"device": device, "limit": limit, "rows": rows, "remedies": found, "stream": streamed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit-mib", type=float, default=48.0, help="the device's cap")
    parser.add_argument("--device", default=None, help="default: cuda if present, else cpu:1")
    parser.add_argument("--max-batch", type=int, default=1 << 16)
    parser.add_argument("--png", default=None, help="write the figure there")
    args = parser.parse_args()
    run(args.limit_mib, args.device, args.max_batch, args.png)


if __name__ == "__main__":
    main()
