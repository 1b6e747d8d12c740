"""Tutorial 6: a model of the step time on several GPUs, from single-GPU measurements.

No machine with several GPUs was available, so this is a *model*, labelled as one: the
LeNet-style step's measured phases on one H100 and the measured (or specified) link
rates, combined by the formulas below. Measured points replace it where real GPUs ran.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .common import save, write_text

# Inputs, each measured on one H100 (docs/benchmarks.rst, tutorials 5 and 6) or specified.
INPUTS = {
    "t_host": (2.71e-3, "s", "host time of one step (step_profile.py, 'ours host')"),
    "t_gpu": (0.84e-3, "s", "GPU busy time of one step (step_profile.py --kernels)"),
    "grad_bytes": (900_136, "B", "LeNet-style gradients, float32 (one flat buffer)"),
    "pcie": (54.1e9, "B/s", "host <-> GPU, pinned, 64 MiB copy (transfer.txt)"),
    "latency": (20e-6, "s", "fixed cost of one copy (4 KiB pinned copy, transfer.txt)"),
    "host_mem": (11.0e9, "B/s", "host memory copy rate (transfer.txt, 1 MiB)"),
    "nvlink": (450e9, "B/s", "NVLink 4 per direction, H100 SXM: specified, not measured"),
}
GPUS = np.arange(1, 9)


def step_seconds(n: np.ndarray, setup: str) -> np.ndarray:
    """Modelled seconds of one step with ``n`` GPUs, each on a fixed batch (256)."""
    v = {k: value for k, (value, _, _) in INPUTS.items()}
    g, lat = v["grad_bytes"], v["latency"]
    if setup == "towers, host reduction":  # one process: the host launches for every GPU
        compute = np.maximum(v["t_gpu"], n * v["t_host"])
        reduce = 2 * n * (lat + g / v["pcie"]) + n * g / v["host_mem"]
        return compute + np.where(n > 1, reduce, 0.0)
    compute = np.maximum(v["t_gpu"], v["t_host"])  # one process (and host thread) per GPU
    if setup == "one process per GPU, host reduction":
        reduce = 2 * (lat + g / v["pcie"]) + n * g / v["host_mem"]
    else:  # ring all-reduce over NVLink: 2(n-1) steps, each a latency and g/n bytes
        reduce = 2 * (n - 1) * lat + 2 * (n - 1) / n * g / v["nvlink"]
    return compute + np.where(n > 1, reduce, 0.0)


SETUPS = (
    "towers, host reduction",
    "one process per GPU, host reduction",
    "one process per GPU, NVLink all-reduce",
)


def make_scaling(out_dir: Path) -> list[Path]:
    """The modelled speed-up (images per second against one GPU) and its inputs as text."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.8))
    ax.plot(GPUS, GPUS, color="grey", ls=":", label="ideal")
    lines = ["MODEL, not a measurement: LeNet-style step, batch 256 per GPU", "", "inputs:"]
    lines += [f"  {k:<10} {val:>10.3g} {unit:<4} {what}" for k, (val, unit, what) in INPUTS.items()]
    lines += ["", "speed-up over one GPU:"]
    lines += [f"  ({chr(97 + i)}) {setup}" for i, setup in enumerate(SETUPS)]
    lines += [
        f"{'GPUs':>6}" + "".join(f"{'(' + chr(97 + i) + ')':>10}" for i in range(len(SETUPS)))
    ]
    speedups = {}
    for setup in SETUPS:
        t = step_seconds(GPUS, setup)
        speedups[setup] = GPUS * t[0] / t
        ax.plot(GPUS, speedups[setup], "o--", ms=4, label=setup)
    for i, n in enumerate(GPUS):
        lines.append(f"{n:>6}" + "".join(f"{speedups[s][i]:>9.2f}x" for s in SETUPS))
    ax.set(xlabel="GPUs", ylabel="speed-up (images/s over one GPU)")
    ax.set_title("A model, not a measurement: LeNet-style step on 1-8 H100s", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return [
        save(fig, out_dir / "scaling_model.png"),
        write_text(out_dir / "scaling_model.txt", "\n".join(lines)),
    ]
