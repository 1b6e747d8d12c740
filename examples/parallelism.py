"""Four ways to use several devices, on one model: data, model, pipeline, tensor.
==============================================================================

Teaches: the four ways to spread one model's training over several devices (data,
model, pipeline, tensor parallel), what each one moves between devices and why all of
them compute the same loss.
Prints: one row per strategy (step time, bytes moved, bubble, final loss, peak memory),
and with ``--timeline`` a Gantt chart of the 1F1B pipeline.
Takes: about 5-10 s on 2 CPU cores with the defaults.

The same MLP (``Linear -> ReLU`` blocks, float64) trains for ``--steps`` SGD steps from
the same initial weights on the same batches:

- on one device, the whole batch (the reference);
- **data parallel** (``nn.DataParallel``): the batch split, a replica per device;
- **model parallel** (``split_model``): the layers split, one device busy at a time;
- **pipeline** (``Pipeline``), GPipe and 1F1B: the layers split and the batch cut into
  ``--chunks`` micro-batches that flow through the stages;
- **tensor parallel** (``TensorParallelMLP``): every layer's weight split.

For each it prints the step time (median, after a warm-up step), the bytes moved per
step (:data:`minitorch_accel.backends.transfer_stats`), the pipeline's measured bubble
beside the theory ``(p - 1) / (m + p - 1)``, and the final loss, which is the same for
all of them (to 1e-10), and the peak memory per device counted by the memory accounting
(``minitorch_accel.memory.max_memory_allocated``, with tracking on). ``--timeline
PATH.png`` saves the 1F1B pipeline's last step as a Gantt chart.

On virtual CPU devices (the default, ``cpu:1`` ... ``cpu:4``) every device is the same
processor: the figures show what each strategy moves and how its stages overlap, not a
multi-device speed-up. ``--device cuda`` uses ``cuda:0`` ... instead.

Run: ``python examples/parallelism.py [--devices 4] [--device cpu] [--steps 5]
[--batch 256] [--width 512] [--chunks 8] [--timeline timeline.png]``
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import minitorch_accel as mta
from minitorch_accel import nn, optim
from minitorch_accel.backends import transfer_stats
from minitorch_accel.parallel import Pipeline, TensorParallelMLP, format_table, split_model

F = nn.functional
Step = Callable[[mta.Tensor, mta.Tensor], float]


def make_model(width: int, blocks: int, features: int, classes: int) -> nn.Sequential:
    """``blocks`` pairs of Linear layers (``in -> width -> width``) with ReLUs, then a
    classifier; float64 so every strategy can be compared exactly."""
    mta.manual_seed(0)
    layers: list[nn.Module] = []
    size = features
    for _ in range(blocks):
        layers += [nn.Linear(size, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU()]
        size = width
    layers.append(nn.Linear(width, classes))
    return nn.Sequential(*layers).double()


def plain_step(model: nn.Module, opt: Any, device: mta.Device) -> Step:
    """An ordinary step: the whole batch on ``device`` (the model must be there)."""

    def step(x: mta.Tensor, y: mta.Tensor) -> float:
        opt.zero_grad()
        loss = F.cross_entropy(model(x.to(device)), y.to(device))
        loss.backward()
        opt.step()
        return float(loss.item())

    return step


def tensor_parallel(model: nn.Sequential, devices: list[mta.Device]) -> nn.Sequential:
    """The same model with every ``Linear, ReLU, Linear`` pair as a TensorParallelMLP
    (the weights copied), then the classifier on the first device."""
    layers = list(model)
    parts: list[nn.Module] = []
    for i in range(0, len(layers) - 1, 4):
        parts += [TensorParallelMLP.from_layers(layers[i], layers[i + 2], devices), nn.ReLU()]
    parts.append(copy.deepcopy(layers[-1]).to(devices[0]))
    return nn.Sequential(*parts)


def peak_memory(devices: list[mta.Device]) -> list[int]:
    """Peak bytes counted per device since the last reset (memory tracking is on)."""
    return [int(mta.memory.max_memory_allocated(d)) for d in devices]


def reset_peaks(devices: list[mta.Device]) -> None:
    for d in devices:
        mta.memory.reset_peak_memory_stats(d)


def main() -> None:  # noqa: C901  (six strategies run in turn, read top to bottom)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--chunks", type=int, default=8)
    parser.add_argument("--timeline", default=None, help="save the 1F1B timeline here (PNG)")
    args = parser.parse_args()
    n = args.devices
    devices = [
        mta.Device(f"cpu:{i + 1}" if args.device == "cpu" else f"cuda:{i}") for i in range(n)
    ]
    features, classes = 64, 10
    rng = np.random.default_rng(0)
    data = [
        (
            mta.tensor(rng.normal(size=(args.batch, features))),
            mta.tensor(rng.integers(0, classes, args.batch)),
        )
        for _ in range(args.steps + 1)
    ]
    reference = make_model(args.width, n, features, classes)  # 2n Linear layers: n stages of 2

    def fresh() -> nn.Sequential:
        return copy.deepcopy(reference)

    def sgd(model: nn.Module) -> Any:
        return optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    pipes: dict[str, Pipeline] = {}

    def one_device() -> Step:
        model = fresh().to(devices[0])
        return plain_step(model, sgd(model), devices[0])

    def data_parallel() -> Step:
        model = fresh().to(devices[0])
        return plain_step(nn.DataParallel(model, devices), sgd(model), devices[0])

    def model_parallel() -> Step:
        model = fresh()
        opt = sgd(model)
        split = split_model(model, devices, [4 * i for i in range(1, n)])
        return plain_step(split, opt, split.output_device)

    def pipeline(schedule: str) -> Callable[[], Step]:
        def build() -> Step:
            model = fresh()
            opt = sgd(model)
            stages = split_model(model, devices, [4 * i for i in range(1, n)]).stages
            pipe = Pipeline(stages, devices, args.chunks, schedule, F.cross_entropy, optimizer=opt)
            pipes[schedule] = pipe
            return pipe.step

        return build

    def tensor() -> Step:
        model = tensor_parallel(fresh(), devices)
        return plain_step(model, sgd(model), devices[0])

    strategies: list[tuple[str, Callable[[], Step]]] = [
        ("one device", one_device),
        (f"data parallel ({n} replicas)", data_parallel),
        (f"model parallel ({n} stages)", model_parallel),
        (f"pipeline gpipe ({n} stages, {args.chunks} chunks)", pipeline("gpipe")),
        (f"pipeline 1f1b ({n} stages, {args.chunks} chunks)", pipeline("1f1b")),
        (f"tensor parallel ({n} shards)", tensor),
    ]
    rows, losses, peaks = [], [], []
    for name, build in strategies:
        step = build()
        step(*data[0])  # warm-up
        reset_peaks(devices)
        times, moved, loss = [], 0, 0.0
        for x, y in data[1:]:
            before = transfer_stats.total
            tick = time.perf_counter()
            loss = step(x, y)
            for d in devices:
                d.backend.synchronize(d)
            times.append(time.perf_counter() - tick)
            moved += transfer_stats.total - before
        losses.append(loss)
        peaks.append(peak_memory(devices))
        bubble = "-"
        schedule = name.split()[1] if name.startswith("pipeline") else None
        if schedule is not None:
            pipe = pipes[schedule]
            bubble = f"{pipe.bubble_fraction():.0%} (theory {pipe.theoretical_bubble():.0%})"
        row = [
            name,
            f"{1e3 * statistics.median(times):.1f}",
            f"{moved / args.steps / 1e6:.2f}",
            bubble,
            f"{loss:.12f}",
        ]
        rows.append(row)
    headers = ["strategy", "step ms", "MB moved/step", "peak MB per device", "bubble", "loss"]
    for row, p in zip(rows, peaks, strict=True):
        row.insert(3, " ".join(f"{b / 1e6:.1f}" for b in p))
    print(
        f"{n} devices ({', '.join(map(str, devices))}), batch {args.batch}, "
        f"width {args.width}, {args.steps} steps"
    )
    print(format_table(headers, rows))
    spread = max(losses) - min(losses)
    print(
        f"final losses agree to {spread:.1e} (float64){'' if spread < 1e-10 else '  <-- NOT EQUAL'}"
    )
    if args.timeline:
        pipes["1f1b"].plot_timeline(args.timeline)
        print(f"1F1B timeline of the last step written to {args.timeline}")
    for pipe in pipes.values():
        pipe.close()


if __name__ == "__main__":
    with mta.memory.tracking():
        main()
