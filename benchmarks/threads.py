"""Every core of the CPU: the LeNet step at 1..N threads, minitorch_accel beside PyTorch.

Each measurement runs in a fresh process with the thread count fixed before anything is
imported (``MINITORCH_ACCEL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``
and ``torch.set_num_threads``), the two frameworks alternating (A B, then B A, ...):
in one process their thread pools keep spinning after their work and slow each other
down. Printed: the median ms/step of each over ``--rounds`` processes, their ratio
(ours / PyTorch; below 1 is faster), and the speed-up curve of each (time at 1 thread
over time at n threads).

``--fashion`` also times 3 epochs of Fashion-MNIST end to end (loading, training with
each framework's own DataLoader, evaluation) at batch 64 and ``--fashion-threads``
threads, for both, from the same initial weights and with the images in the same order,
and prints the wall times, their ratio and the test accuracies; ``--fashion-seeds K``
repeats it from K different starts (weights and orders) and compares the mean
accuracies, since one run's accuracy moves by a few tenths of a point with the rounding
of its sums. It
needs the dataset on disk (``apt-get install dataset-fashion-mnist``, or a copy under
``$MINITORCH_ACCEL_DATA/fashion-mnist``); without it, it says so and skips.

Run: ``python benchmarks/threads.py`` (1..all cores, batches 64 and 256),
``python benchmarks/threads.py --threads 1,2 --fashion``, ``--plot curve.png``;
``--faults`` adds a row for ours with freed memory handed back to the system
(``MINITORCH_ACCEL_KEEP_HEAP=0`` and glibc's thresholds pinned at 128 KiB with
``MALLOC_MMAP_THRESHOLD_`` and ``MALLOC_TRIM_THRESHOLD_``) and prints the page faults
per step of each.
Figures from a machine shared with other work are noisy: compare ratios from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

FRAMEWORKS = ("ours", "torch")
#: ``--faults``: ours with freed memory returned to the system (what keeping it saves).
HEAP_OFF = "ours, heap off"
#: Its environment: no ``mallopt`` from the framework, and glibc's thresholds pinned at
#: their 128 KiB defaults. Left alone, glibc raises its mmap threshold each time it frees
#: a larger mapped block, so the faults of an unpinned run depend on the order of its
#: allocations (from a few to thousands per step).
GIVE_BACK = {
    "MINITORCH_ACCEL_KEEP_HEAP": "0",
    "MALLOC_MMAP_THRESHOLD_": "131072",
    "MALLOC_TRIM_THRESHOLD_": "131072",
}


def thread_env(threads: int) -> dict[str, str]:
    """The environment of a child measured at ``threads`` threads."""
    n = str(threads)
    return {
        **os.environ,
        "PYTHONPATH": str(HERE.parent),
        "MINITORCH_ACCEL_NUM_THREADS": n,
        "OPENBLAS_NUM_THREADS": n,
        "OMP_NUM_THREADS": n,
        "MKL_NUM_THREADS": n,
    }


def step_child(framework: str, threads: int, batch: int, steps: int) -> dict[str, float]:
    """Runs in a child process: the median ms of ``steps`` LeNet steps, and the minor
    page faults per step (first touches of fresh memory pages)."""
    import resource

    from lenet_step import median_ms, ours_step, torch_step

    if framework == "torch":
        import torch

        torch.set_num_threads(threads)
        step = torch_step(batch, "cpu")
    else:  # HEAP_OFF: the environment has MINITORCH_ACCEL_KEEP_HEAP=0
        import minitorch_accel as mta

        mta.set_num_threads(threads)
        step = ours_step(batch, "cpu")
    for _ in range(3):  # warm-up: the first steps fault in their memory
        step()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    ms = median_ms(step, lambda: None, steps=steps, warmup=0)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    return {"ms": ms, "faults": faults / steps}


def epoch_order(epoch: int, size: int, seed: int = 0) -> list[int]:
    """The order of the training images in ``epoch`` of the run ``seed``: the same for
    both frameworks."""
    return np.random.default_rng((seed, epoch)).permutation(size).tolist()


def fashion_child(
    framework: str, threads: int, epochs: int, batch: int, init: str, seed: int = 0
) -> dict[str, float]:
    """Runs in a child process: Fashion-MNIST end to end; wall seconds and accuracy.

    Both frameworks start from the same weights (``init``, an ``.npz`` of LeNet's
    parameters in order) and see the images in the same order, each through its own
    DataLoader: the accuracies then differ only by rounding, not by luck.
    """
    start = time.perf_counter()
    from minitorch_accel.datasets import FashionMNIST

    train = FashionMNIST(train=True, download=False, normalize=True).arrays
    test = FashionMNIST(train=False, download=False, normalize=True).arrays
    with np.load(init) as saved:
        weights = [saved[f"arr_{i}"] for i in range(len(saved.files))]
    run = _fashion_torch if framework == "torch" else _fashion_ours
    accuracy = run(train, test, weights, threads, epochs, batch, seed)
    return {"seconds": time.perf_counter() - start, "accuracy": accuracy}


def _fashion_ours(
    train: Any, test: Any, weights: list[Any], threads: int, epochs: int, batch: int, seed: int
) -> float:
    import minitorch_accel as mta
    from minitorch_accel import nn, optim
    from minitorch_accel.data import DataLoader, TensorDataset
    from minitorch_accel.nn.models import LeNet

    mta.set_num_threads(threads)
    model = LeNet()
    with mta.no_grad():
        for p, w in zip(model.parameters(), weights, strict=True):
            p.copy_(mta.tensor(w))
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    dataset = TensorDataset(*train)
    for epoch in range(epochs):
        model.train()
        order = epoch_order(epoch, len(dataset), seed)
        for x, y in DataLoader(dataset, batch_size=batch, sampler=order):
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()
    model.eval()
    correct = 0
    with mta.no_grad():
        for x, y in DataLoader(TensorDataset(*test), batch_size=1000):
            correct += int((model(x).argmax(dim=1) == y).sum().item())
    return correct / len(test[1])


def _fashion_torch(
    train: Any, test: Any, weights: list[Any], threads: int, epochs: int, batch: int, seed: int
) -> float:
    import torch
    from lenet_step import torch_parts

    torch.set_num_threads(threads)
    model, _, loss_fn, _, _ = torch_parts(1, "cpu")
    with torch.no_grad():
        for p, w in zip(model.parameters(), weights, strict=True):
            p.copy_(torch.from_numpy(w))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    dataset = torch.utils.data.TensorDataset(*[torch.from_numpy(a) for a in train])
    for epoch in range(epochs):
        model.train()
        order = epoch_order(epoch, len(dataset), seed)
        for x, y in torch.utils.data.DataLoader(dataset, batch_size=batch, sampler=order):
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(*[torch.from_numpy(a) for a in test]), batch_size=1000
        ):
            correct += int((model(x).argmax(dim=1) == y).sum())
    return correct / len(test[1])


def lenet_init(path: Path, seed: int = 0) -> None:
    """Write LeNet's initial parameters (``seed``, this framework's initialization) to
    ``path``, for both frameworks of the Fashion-MNIST run.
    """
    import minitorch_accel as mta
    from minitorch_accel.nn.models import LeNet

    mta.manual_seed(seed)
    np.savez(path, *[p.detach().numpy() for p in LeNet().parameters()])


def in_child(threads: int, *args: str) -> dict[str, float] | None:
    """Run this script with ``args`` in a fresh process at ``threads`` threads."""
    cmd = [sys.executable, __file__, "--child", *args, "--child-threads", str(threads)]
    env = thread_env(threads)
    if HEAP_OFF in args:  # and glibc's fixed defaults, not its self-raising threshold
        env.update(GIVE_BACK)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        print(f"  (child {args} failed: {out.stderr.strip().splitlines()[-1:]})")
        return None
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def measure_steps(
    threads: list[int], batches: list[int], frameworks: list[str], steps: int, rounds: int
) -> tuple[dict[tuple[str, int, int], float], dict[tuple[str, int, int], float]]:
    """Median ms/step and page faults/step by (framework, threads, batch), over
    ``rounds`` alternating children."""
    times: dict[tuple[str, int, int], list[float]] = {}
    faults: dict[tuple[str, int, int], list[float]] = {}
    for batch in batches:
        for n in threads:
            for r in range(rounds):
                for fw in frameworks if r % 2 == 0 else frameworks[::-1]:
                    found = in_child(n, "step", fw, str(batch), str(steps))
                    if found is not None:
                        times.setdefault((fw, n, batch), []).append(found["ms"])
                        faults.setdefault((fw, n, batch), []).append(found["faults"])
    median = {key: float(np.median(t)) for key, t in times.items()}
    return median, {key: float(np.median(f)) for key, f in faults.items()}


def print_table(
    found: dict[tuple[str, int, int], float],
    threads: list[int],
    batches: list[int],
    title: str = "LeNet step, ms",
    ratio: bool = True,
) -> None:
    """The table: ms/step of each framework and the ratio, a column per (threads, batch)."""
    columns = [(n, b) for n in threads for b in batches]
    names = [f"{n} thr b{b}" for n, b in columns]
    print(f"{title:<18}" + "".join(f"{name:>13}" for name in names))
    for fw in (*FRAMEWORKS, HEAP_OFF) if any(k[0] == HEAP_OFF for k in found) else FRAMEWORKS:
        cells = [found.get((fw, n, b), float("nan")) for n, b in columns]
        print(f"{fw:<18}" + "".join(f"{c:>13.1f}" for c in cells))
    if ratio:
        ratios = [
            found.get(("ours", n, b), float("nan")) / found.get(("torch", n, b), float("nan"))
            for n, b in columns
        ]
        print(f"{'ratio ours/torch':<18}" + "".join(f"{r:>13.2f}" for r in ratios))


def print_curves(
    found: dict[tuple[str, int, int], float], threads: list[int], batches: list[int]
) -> None:
    """Speed-up over one thread (``t(1) / t(n)``) of each framework and batch."""
    print(f"\n{'speed-up vs 1 thread':<22}" + "".join(f"{n:>7}" for n in threads))
    for fw in FRAMEWORKS:
        for b in batches:
            base = found.get((fw, threads[0], b), float("nan"))
            cells = [base / found.get((fw, n, b), float("nan")) for n in threads]
            print(f"{fw + ' b' + str(b):<22}" + "".join(f"{c:>7.2f}" for c in cells))


def plot_curves(
    found: dict[tuple[str, int, int], float], threads: list[int], batches: list[int], path: str
) -> None:
    """The speed-up curves as a figure at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for fw in FRAMEWORKS:
        for b in batches:
            base = found.get((fw, threads[0], b), float("nan"))
            ys = [base / found.get((fw, n, b), float("nan")) for n in threads]
            ax.plot(threads, ys, marker="o", label=f"{fw}, batch {b}")
    ax.plot(threads, [n / threads[0] for n in threads], "k:", label="linear")
    ax.set_xlabel("threads")
    ax.set_ylabel("speed-up of the LeNet step")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    print(f"(speed-up curves written to {path})")


def run_fashion(threads: int, frameworks: list[str], epochs: int, seeds: int = 1) -> None:
    """Time Fashion-MNIST end to end for each framework, from ``seeds`` different initial
    weights and image orders, or say why not.
    """
    from minitorch_accel.datasets import FashionMNIST
    from minitorch_accel.datasets.mnist import find_files, search_dirs

    dirs = search_dirs(FashionMNIST.subdir, None, FashionMNIST.extra_dirs)
    if find_files(["train-images-idx3-ubyte"], dirs) is None:
        print(
            "\nFashion-MNIST end to end: skipped, the dataset is not on disk "
            "(apt-get install dataset-fashion-mnist, or put it under "
            "$MINITORCH_ACCEL_DATA/fashion-mnist)"
        )
        return
    print(
        f"\nFashion-MNIST, {epochs} epochs at batch 64, {threads} threads, end to end\n"
        "(each seed: the same initial weights and order of images for both):"
    )
    found: dict[str, list[dict[str, float]]] = {fw: [] for fw in frameworks}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(seeds):
            init = Path(tmp) / f"lenet_init_{seed}.npz"
            lenet_init(init, seed)
            row = {}
            for fw in frameworks if seed % 2 == 0 else frameworks[::-1]:
                args = (str(epochs), "64", str(init), str(seed))
                result = in_child(threads, "fashion", fw, *args)
                if result is not None:
                    found[fw].append(result)
                    row[fw] = f"{fw} {result['seconds']:5.1f} s {result['accuracy']:.2%}"
            print(f"  seed {seed}: " + "   ".join(row[fw] for fw in frameworks if fw in row))
    if len(found) == 2 and all(len(runs) == seeds for runs in found.values()):
        seconds = {fw: float(np.median([r["seconds"] for r in runs])) for fw, runs in found.items()}
        accuracy = {fw: np.array([100 * r["accuracy"] for r in runs]) for fw, runs in found.items()}
        for fw in FRAMEWORKS:
            spread = f" +- {accuracy[fw].std(ddof=1):.2f}" if seeds > 1 else ""
            print(
                f"  {fw:<6} {seconds[fw]:7.1f} s (median)   accuracy "
                f"{accuracy[fw].mean():.2f}%{spread} (mean of {seeds})"
            )
        gap = accuracy["ours"].mean() - accuracy["torch"].mean()
        print(
            f"  ratio ours/torch {seconds['ours'] / seconds['torch']:.2f}; "
            f"accuracy difference {gap:+.2f} pt"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    from minitorch_accel.backends.numpy.threads import available_cpus

    cores = available_cpus()
    parser.add_argument("--threads", default=",".join(str(n) for n in range(1, cores + 1)))
    parser.add_argument("--batches", default="64,256")
    parser.add_argument("--steps", type=int, default=20, help="timed steps per process")
    parser.add_argument("--rounds", type=int, default=3, help="processes per framework")
    parser.add_argument("--plot", default=None, help="write the speed-up curves there")
    parser.add_argument(
        "--faults", action="store_true", help="add ours with the heap off; page faults"
    )
    parser.add_argument("--fashion", action="store_true", help="also Fashion-MNIST end to end")
    parser.add_argument("--fashion-threads", type=int, default=cores)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument(
        "--fashion-seeds", type=int, default=1, help="Fashion-MNIST runs from different starts"
    )
    parser.add_argument("--child", nargs="+", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-threads", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, fw, *rest = args.child
        if kind == "step":
            result = step_child(fw, args.child_threads, int(rest[0]), int(rest[1]))
        else:
            epochs, batch, init, seed = rest
            result = fashion_child(fw, args.child_threads, int(epochs), int(batch), init, int(seed))
        print(json.dumps(result))
        return
    try:
        import torch  # noqa: F401

        frameworks = list(FRAMEWORKS)
    except ImportError:
        frameworks = ["ours"]
        print("(PyTorch is not installed: ours only)")
    if args.faults:
        frameworks.append(HEAP_OFF)
    threads = [int(n) for n in args.threads.split(",")]
    batches = [int(b) for b in args.batches.split(",")]
    print(
        f"LeNet training step (forward, loss, backward, SGD), {cores} cores available;\n"
        f"median of {args.rounds} processes x {args.steps} steps each\n"
    )
    found, faults = measure_steps(threads, batches, frameworks, args.steps, args.rounds)
    print_table(found, threads, batches)
    print_curves(found, threads, batches)
    if args.faults:
        print()
        print_table(faults, threads, batches, "page faults/step", ratio=False)
    if args.plot:
        plot_curves(found, threads, batches, args.plot)
    if args.fashion:
        fashion_frameworks = [f for f in frameworks if f != HEAP_OFF]
        run_fashion(args.fashion_threads, fashion_frameworks, args.epochs, args.fashion_seeds)


if __name__ == "__main__":
    main()
