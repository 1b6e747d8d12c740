"""One device vs several: LeNet on the embedded MNIST sample, the tower recipe timed.
==================================================================================

Teaches: the tower recipe of data parallelism on one machine (copy the weights to every
device, split the batch, average the gradients, step once) and where its time goes.
Prints: the single- vs multi-device table, the time of each phase of a step and the
bytes moved per step.
Takes: about 10 s on 2 CPU cores with the virtual devices ``cpu:0,cpu:1``.

LeNet trains for ``--steps`` steps three ways, from the same initial weights on the
same batches: on the first device alone with the whole batch, then with
:class:`~minitorch_accel.parallel.TowerTrainer` over ``--devices`` averaging on the
host, then averaging between the devices. It prints the single- vs multi-device table
(devices, step time, samples/s, speed-up, scaling efficiency, loss, test accuracy),
then where each step's time goes (broadcast, forward, backward, gather, average,
update) and the bytes moved per step.

On virtual CPU devices (the default, ``cpu:0,cpu:1``) the towers share the same
cores, so expect little or no speed-up: what shows is the machinery and its cost.
On several GPUs the towers really run side by side.

Run: ``python examples/mnist_multi_gpu.py [--devices cuda:0,cuda:1] [--batch-size 256]
[--steps 30] [--plot phases.png]``
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

import minitorch_accel as mta
from minitorch_accel import nn, optim
from minitorch_accel.data import DataLoader
from minitorch_accel.datasets import MNIST
from minitorch_accel.nn.models import LeNet
from minitorch_accel.parallel import PHASES, TowerTrainer, format_table

WARMUP = 2


def batches(batch_size: int) -> Iterator[tuple[mta.Tensor, mta.Tensor]]:
    """Shuffled training batches of the sample, epoch after epoch (same order each run)."""
    loader = DataLoader(
        MNIST(sample=True, normalize=True),
        batch_size=batch_size,
        shuffle=True,
        seed=0,
        drop_last=True,
    )
    while True:
        for x, y in loader:  # noqa: UP028  (two fields: images and labels)
            yield x, y


def accuracy(model: nn.Module, device: mta.Device) -> float:
    """Accuracy on the sample's 1,000 test images."""
    images, labels = MNIST(sample=True, train=False, normalize=True).arrays
    model.eval()
    with mta.no_grad():
        logits = model(mta.tensor(images, device=device))
    model.train()
    return float((logits.argmax(1).numpy() == labels).mean())


def run_single(device: mta.Device, model: nn.Module, args: argparse.Namespace) -> dict[str, Any]:
    """The plain loop on one device, timed phase by phase like the towers."""
    model = copy.deepcopy(model).to(device)
    opt = optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    phases = dict.fromkeys(PHASES, 0.0)
    data, sync = batches(args.batch_size), device.backend.synchronize
    for step in range(WARMUP + args.steps):
        if step == WARMUP:
            phases, start = dict.fromkeys(PHASES, 0.0), time.perf_counter()
        x, y = next(data)
        t0 = time.perf_counter()
        x, y = x.to(device), y.to(device)
        sync(device)
        t1 = time.perf_counter()
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        sync(device)
        t2 = time.perf_counter()
        loss.backward()
        sync(device)
        t3 = time.perf_counter()
        opt.step()
        sync(device)
        for name, seconds in zip(
            ("broadcast", "forward", "backward", "update"),
            (t1 - t0, t2 - t1, t3 - t2, time.perf_counter() - t3),
            strict=True,
        ):
            phases[name] += seconds
    seconds = (time.perf_counter() - start) / args.steps
    return {
        "name": f"{device} alone",
        "devices": 1,
        "step": seconds,
        "loss": float(loss.item()),
        "accuracy": accuracy(model, device),
        "phases": {k: v / args.steps for k, v in phases.items()},
        "bytes": x.nbytes + y.nbytes if not device.is_host else 0,
    }


def run_towers(
    devices: list[str], reduce: str, model: nn.Module, args: argparse.Namespace
) -> dict[str, Any]:
    """The same training with TowerTrainer over ``devices``."""
    model = copy.deepcopy(model)
    opt = optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    data = batches(args.batch_size)
    with TowerTrainer(model, nn.functional.cross_entropy, opt, devices, reduce) as trainer:
        for step in range(WARMUP + args.steps):
            if step == WARMUP:
                trainer.reset_timings()
                start = time.perf_counter()
            loss = trainer.step(*next(data))
        seconds = (time.perf_counter() - start) / args.steps
        trainer.sync_to_host()
        print(trainer.timings_summary(), end="\n\n")
        log = trainer.timing_log
        moved = sum(log.bytes.values()) / max(log.steps, 1)
        phases = log.mean_phases()
    return {
        "name": f"{len(devices)} towers, reduce={reduce}",
        "devices": len(set(devices)),
        "step": seconds,
        "loss": loss,
        "accuracy": accuracy(model, mta.Device("cpu")),
        "phases": phases,
        "bytes": moved,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--devices", default="cpu:0,cpu:1", help="comma-separated devices")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--steps", type=int, default=20, help="timed steps (after 2 warm-up)")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--reduce", choices=["host", "device", "both"], default="both")
    parser.add_argument("--plot", default=None, help="write a PNG of the phase breakdown here")
    args = parser.parse_args()
    devices = [d.strip() for d in args.devices.split(",") if d.strip()]
    mta.manual_seed(0)
    model = LeNet()  # the same initial weights for every run
    runs = [run_single(mta.Device(devices[0]), model, args)]
    for reduce in ("host", "device") if args.reduce == "both" else (args.reduce,):
        runs.append(run_towers(devices, reduce, model, args))
    base = runs[0]["step"]
    rows = [
        [
            r["name"],
            str(r["devices"]),
            f"{1e3 * r['step']:.1f}",
            f"{args.batch_size / r['step']:.0f}",
            f"{base / r['step']:.2f}x",
            f"{100 * base / r['step'] / r['devices']:.0f}%",
            f"{r['loss']:.3f}",
            f"{100 * r['accuracy']:.1f}%",
        ]
        for r in runs
    ]
    print(f"LeNet, batch {args.batch_size}, {args.steps} timed steps, devices {devices}")
    print(
        format_table(
            [
                "run",
                "devices",
                "ms/step",
                "samples/s",
                "speed-up",
                "efficiency",
                "loss",
                "test acc.",
            ],
            rows,
        )
    )
    print()
    print(
        format_table(
            ["run", *PHASES, "MB moved/step"],
            [
                [
                    r["name"],
                    *(f"{1e3 * r['phases'][p]:.2f}" for p in PHASES),
                    f"{r['bytes'] / 1e6:.3f}",
                ]
                for r in runs
            ],
        )
    )
    print("(phases in ms per step; tower phases count the slowest tower)")
    if args.plot:
        plot(args.plot, runs)


def plot(path: str, runs: list[dict[str, Any]]) -> None:
    """A stacked horizontal bar per run: milliseconds of each phase."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.6 * len(runs)))
    left = np.zeros(len(runs))
    for phase in PHASES:
        widths = np.array([1e3 * r["phases"][phase] for r in runs])
        ax.barh([r["name"] for r in runs], widths, left=left, label=phase)
        left += widths
    ax.set_xlabel("milliseconds per step")
    ax.set_title("Where a training step's time goes")
    ax.invert_yaxis()
    ax.legend(ncol=3, fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
