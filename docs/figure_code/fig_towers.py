"""Tutorial 6: where the time of a TowerTrainer step goes, phase by phase."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

from .common import machine_line, save, write_text

COLORS = {
    "broadcast": "#984ea3",
    "forward": "#377eb8",
    "backward": "#4daf4a",
    "gather": "#ff7f00",
    "average": "#e41a1c",
    "update": "#a65628",
}


def make_model() -> tuple[Any, str]:
    """LeNet when the convolution ops exist, else a two-layer perceptron; and its name."""
    from minitorch_accel import nn

    if importlib.util.find_spec("minitorch_accel.ops.conv") is not None:
        from minitorch_accel.nn.models import LeNet

        return LeNet(), "LeNet"
    return nn.Sequential(
        nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)
    ), "MLP 784-256-10"


def configurations() -> list[tuple[str, list[str], str]]:
    """(label, devices, reduce) of every setup timed: GPUs when there are, else cpu:N."""
    from minitorch_accel import cuda

    if cuda.is_available():
        gpus = [f"cuda:{i}" for i in range(cuda.device_count())]
        many = gpus if len(gpus) > 1 else gpus * 2  # one GPU: two towers share it
        kind = "cuda"
    else:
        many, kind = ["cpu:0", "cpu:1"], "cpu"
    return [
        (f"1 tower ({many[0]})", many[:1], "host"),
        (f"{len(many)} towers, reduce: host", many, "host"),
        (f"{len(many)} towers, reduce: {kind} devices", many, "device"),
    ]


def time_phases(devices: list[str], reduce: str, batch: int, steps: int) -> dict[str, float]:
    """Median seconds per phase over ``steps`` steps (after 2 warm-up steps).

    The median, not the mean: one step slowed by other work on a shared machine would
    skew a mean.
    """
    import minitorch_accel as mta
    from minitorch_accel import nn, optim
    from minitorch_accel.datasets import MNIST
    from minitorch_accel.parallel import TowerTrainer

    mta.manual_seed(0)
    model, _ = make_model()
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    images, labels = MNIST(sample=True).arrays
    x, y = mta.tensor(images[:batch]), mta.tensor(labels[:batch])
    with TowerTrainer(model, nn.CrossEntropyLoss(), opt, devices, reduce=reduce) as trainer:
        for _ in range(2):
            trainer.step(x, y)
        samples: dict[str, list[float]] = {}
        for _ in range(steps):
            trainer.step(x, y)
            assert trainer.last_timings is not None
            for name, seconds in trainer.last_timings.phases.items():
                samples.setdefault(name, []).append(seconds)
    return {name: float(np.median(values)) for name, values in samples.items()}


def make_towers(out_dir: Path, batch: int = 256, steps: int = 15) -> list[Path]:
    """Stacked bars of the phases per setup; the table as text."""
    import matplotlib.pyplot as plt

    _, model_name = make_model()
    rows = [
        (label, time_phases(devices, reduce, batch, steps))
        for label, devices, reduce in configurations()
    ]
    phases = list(COLORS)
    fig, ax = plt.subplots(figsize=(8.5, 2.8))
    for k, (_, times) in enumerate(rows[::-1]):
        left = 0.0
        for name in phases:
            ms = 1e3 * times.get(name, 0.0)
            ax.barh(k, ms, left=left, color=COLORS[name], label=name if k == 0 else None)
            left += ms
    ax.set_yticks(np.arange(len(rows)), [label for label, _ in rows[::-1]])
    ax.set_xlabel(f"ms per step ({model_name}, batch {batch}, median of {steps} steps)")
    ax.legend(ncol=6, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    header = f"{'setup (ms per step)':29s}" + "".join(f"{p:>10s}" for p in phases)
    lines = [machine_line(), "", header]
    for label, times in rows:
        lines.append(f"{label:29s}" + "".join(f"{1e3 * times.get(p, 0.0):10.2f}" for p in phases))
    return [save(fig, out_dir / "towers.png"), write_text(out_dir / "towers.txt", "\n".join(lines))]
