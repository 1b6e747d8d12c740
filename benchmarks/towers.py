"""What the tower machinery costs, and how towers scale: 1..4 towers vs one device.

For N = 1..4 towers this prints the median step time and the bytes moved per step of
:class:`~minitorch_accel.parallel.TowerTrainer`, next to a plain training step on a
single device with the whole batch.

**On virtual CPU devices** (``cpu:N``) every tower runs on the same cores, so towers
cannot beat one device; the question is what the machinery itself costs (splitting
the batch, packing flat buffers, the copies, the weighted average, smaller matrix
multiplies per shard). To measure that fairly the towers run *one after another in
the calling thread* (``TowerTrainer(concurrent=False, profile=False)``): the total
arithmetic is then the single device's, on the same cores, with no thread competing
for them, and ``tower step / single step - 1`` is the overhead (target: at most 15%).
The threaded figures (``concurrent=True``, the default) are printed beside it for
information; on a machine with few cores they also pay for oversubscription.
Measured on a 16-core host (LeNet, batch 256): +4% with one tower, -2% to -7% with two
to four (smaller shards fit the caches better); threaded, -3% to +9%.

**On GPUs** (when CUDA devices exist) it prints, for ``reduce="host"`` and
``reduce="device"``, the step time, samples/s and scaling efficiency (samples/s with
N GPUs divided by N times one GPU's) for N = 1..the GPU count; with a single GPU it
shows that GPU repeated, which measures the machinery on one card.

Run: ``python benchmarks/towers.py [--batch 256] [--repeat 10] [--towers 1,2,3,4]
[--model lenet|mlp] [--no-gpu]``
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

import minitorch_accel as mta
from minitorch_accel import nn, optim
from minitorch_accel.nn.models import LeNet
from minitorch_accel.parallel import TowerTrainer, format_table

F = nn.functional


def make_model(name: str) -> nn.Module:
    mta.manual_seed(0)
    if name == "lenet":
        return LeNet()
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10))


StepFn = Callable[[], object]


def interleaved_medians(steps: dict[str, tuple[StepFn, StepFn]], repeat: int) -> dict[str, float]:
    """Median wall-clock seconds of each ``(step, sync)`` pair, after two warm-up calls.

    The configurations take turns, one step each per round, so a change in the load of
    the machine (other processes) affects all of them alike.
    """
    for step, sync in steps.values():
        step()
        step()
        sync()
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(repeat):
        for name, (step, sync) in steps.items():
            start = time.perf_counter()
            step()
            sync()
            times[name].append(time.perf_counter() - start)
    return {name: float(np.median(t)) for name, t in times.items()}


def single_step(
    model: nn.Module, device: str, x: mta.Tensor, y: mta.Tensor
) -> tuple[StepFn, StepFn]:
    """A plain step on one device: batch to the device, forward, backward, SGD."""
    dev = mta.Device(device)
    model = copy.deepcopy(model).to(dev)
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step() -> None:
        opt.zero_grad()
        F.cross_entropy(model(x.to(dev)), y.to(dev)).backward()
        opt.step()

    return step, lambda: dev.backend.synchronize(dev)


def tower_trainer(
    model: nn.Module, devices: Sequence[str], **options: object
) -> TowerTrainer[nn.Module]:
    """A TowerTrainer over a copy of ``model``, with SGD and momentum."""
    model = copy.deepcopy(model)
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return TowerTrainer(model, F.cross_entropy, opt, devices, **options)  # type: ignore[arg-type]


def moved_mb(trainer: TowerTrainer[nn.Module]) -> list[str]:
    """Megabytes moved host-to-device, device-to-host and device-to-device in a step."""
    t = trainer.last_timings
    assert t is not None
    return [f"{n / 1e6:.3f}" for n in (t.host_to_device, t.device_to_host, t.device_to_device)]


def cpu_table(args: argparse.Namespace, x: mta.Tensor, y: mta.Tensor) -> str:
    model = make_model(args.model)
    steps = {"single": single_step(model, "cpu:0", x, y)}
    trainers = {}
    for n in args.towers:
        devices = [f"cpu:{i}" for i in range(n)]
        for mode, concurrent in (("turn", False), ("threads", True)):
            trainer = tower_trainer(model, devices, concurrent=concurrent, profile=False)
            trainers[(n, mode)] = trainer
            steps[f"{n}-{mode}"] = (partial(trainer.step, x, y), lambda: None)
    seconds = interleaved_medians(steps, args.repeat)
    single = seconds["single"]
    rows = []
    for n in args.towers:
        turn, threads = seconds[f"{n}-turn"], seconds[f"{n}-threads"]
        rows.append(
            [
                str(n),
                f"{1e3 * single:.1f}",
                f"{1e3 * turn:.1f}",
                f"{100 * (turn / single - 1):+.1f}%",
                f"{1e3 * threads:.1f}",
                f"{100 * (threads / single - 1):+.1f}%",
                *moved_mb(trainers[(n, "turn")]),
            ]
        )
    for trainer in trainers.values():
        trainer.close()
    headers = [
        "towers",
        "1 device ms",
        "towers ms (in turn)",
        "overhead",
        "towers ms (threads)",
        "vs 1 device",
        "MB h2d",
        "MB d2h",
        "MB d2d",
    ]
    return format_table(headers, rows)


def gpu_table(args: argparse.Namespace, x: mta.Tensor, y: mta.Tensor) -> str | None:
    if args.no_gpu or "cuda" not in mta.backends.available():
        return None
    count = mta.backends.get("cuda").device_count()
    model = make_model(args.model)
    sets = [[f"cuda:{i}" for i in range(n)] for n in range(1, count + 1)]
    if count == 1:
        sets.append(["cuda:0", "cuda:0"])
    steps = {"single": single_step(model, "cuda:0", x, y)}
    trainers = {}
    for devices in sets:
        for reduce in ("host", "device"):
            trainer = tower_trainer(model, devices, reduce=reduce, profile=False)
            key = ",".join(devices) + "/" + reduce
            trainers[key] = trainer
            steps[key] = (partial(trainer.step, x, y), lambda: None)
    seconds = interleaved_medians(steps, args.repeat)
    single = seconds["single"]
    rows = [
        [
            "1 GPU, plain step",
            "-",
            f"{1e3 * single:.2f}",
            f"{len(x) / single:.0f}",
            "100%",
            "-",
            "-",
            "-",
        ]
    ]
    for key, trainer in trainers.items():
        names, reduce = key.split("/")
        gpus = len(set(names.split(",")))
        efficiency = single / seconds[key] / gpus
        rows.append(
            [
                names,
                reduce,
                f"{1e3 * seconds[key]:.2f}",
                f"{len(x) / seconds[key]:.0f}",
                f"{100 * efficiency:.0f}%",
                *moved_mb(trainer),
            ]
        )
        trainer.close()
    headers = [
        "towers",
        "reduce",
        "ms/step",
        "samples/s",
        "scaling efficiency",
        "MB h2d",
        "MB d2h",
        "MB d2d",
    ]
    return format_table(headers, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--towers", default="1,2,3,4")
    parser.add_argument("--model", choices=["lenet", "mlp"], default="lenet")
    parser.add_argument("--no-gpu", action="store_true", help="skip the GPU table")
    args = parser.parse_args()
    args.towers = [int(n) for n in args.towers.split(",")]
    rng = np.random.default_rng(0)
    x = mta.tensor(rng.random((args.batch, 1, 28, 28), dtype=np.float32))
    y = mta.tensor(rng.integers(0, 10, size=args.batch))
    print(f"{args.model}, batch {args.batch}, median of {args.repeat} steps")
    print("\nVirtual CPU devices (towers share the cores; 'overhead' runs them in turn):")
    print(cpu_table(args, x, y))
    table = gpu_table(args, x, y)
    print("\nGPUs:" if table else "\nGPUs: none found (CuPy and a CUDA GPU are needed)")
    if table:
        print(table)


if __name__ == "__main__":
    main()
