"""Regenerate every figure of the docs from real runs of minitorch_accel.

Run from the repository root::

    python docs/make_figures.py                 # every figure whose code exists
    python docs/make_figures.py im2col graph    # only these
    python docs/make_figures.py --list

Each figure is a PNG in ``docs/figures/``; where a page quotes numbers, the same run
also writes them to a ``.txt`` file beside the PNG, which the page includes. A figure
whose code is not in the package yet is skipped with a message. Timings come from this
machine: the pages say so, and ratios matter more than milliseconds.
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FIGURES = HERE / "figures"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import matplotlib  # noqa: E402

matplotlib.use("Agg")

# name -> (module under docs/figure_code, what it shows)
MAKERS: dict[str, tuple[str, str]] = {
    "graph": ("fig_autograd", "the graph recorded by a small forward pass (tutorial 1)"),
    "im2col": ("fig_conv", "im2col of a 4x4 image, drawn from the real cols matrix (tutorial 2)"),
    "conv_split": ("fig_conv", "GEMM vs the rest in the CNN's conv layers, timed (tutorial 2)"),
    "fp16": ("fig_precision", "float16 rounding error of a dot product vs its length (tutorial 8)"),
    "cpu_vs_gpu": ("fig_examples", "examples/cpu_vs_gpu.py: its tables and chart (tutorial 3)"),
    "benchmarks": ("fig_examples", "every benchmarks/*.py, its output (benchmarks page)"),
    "mpi": ("fig_examples", "mpiexec -n 2 examples/mnist_mpi.py: its output (tutorial 7)"),
    "mnist": ("fig_training", "examples/mnist_cnn.py; train --plot curves (tutorial 4)"),
    "transfer": ("fig_transfer", "copy time vs size between devices (tutorial 5)"),
    "towers": ("fig_towers", "phase breakdown of TowerTrainer steps (tutorial 6)"),
    "schedules": ("fig_parallelism", "GPipe and 1F1B simulated on ideal stages (parallelism)"),
    "parallelism": ("fig_parallelism", "examples/parallelism.py: table and timeline"),
    "systolic": ("fig_examples", "examples/systolic_array.py: wavefront and utilisation"),
    "roofline": ("fig_examples", "examples/roofline.py: measured roofline (hardware pages)"),
    "tensor_cores": ("fig_examples", "matmul TFLOP/s per format on a GPU (tutorial 8)"),
    "threads": ("fig_examples", "examples/thread_scaling.py: 1..N threads (hardware pages)"),
    "scaling": ("fig_scaling", "modelled multi-GPU speed-up from single-GPU phases (tutorial 6)"),
    "memory": ("fig_memory", "examples/memory_limits.py on a capped cpu:1, estimate table"),
}


def run(name: str) -> bool:
    """Make figure ``name``; False (with a message) when what it needs is missing."""
    module_name, _ = MAKERS[name]
    module = importlib.import_module(f"figure_code.{module_name}")
    make: Callable[[Path], list[Path] | None] = getattr(module, f"make_{name}")
    try:
        written = make(FIGURES)
    except ModuleNotFoundError as exc:
        print(f"{name}: skipped, {exc.name} does not exist yet")
        return False
    except subprocess.CalledProcessError as exc:  # an example script failed
        tail = "\n".join(str(exc.stderr).strip().splitlines()[-3:])
        print(f"{name}: skipped, {' '.join(exc.cmd[1:2])} failed:\n{tail}")
        return False
    if written is None:
        print(f"{name}: skipped (see the message above)")
        return False
    for path in written:
        kb = path.stat().st_size / 1024
        print(f"{name}: wrote {path.relative_to(ROOT)} ({kb:.0f} KB)")
        if path.suffix == ".png" and kb > 200:
            print(f"  warning: {path.name} is over 200 KB; lower its dpi or size")
    return True


def main() -> None:
    """Make the figures named on the command line, or all of them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="figures to make (default: all)")
    parser.add_argument("--list", action="store_true", help="list the figures and exit")
    args = parser.parse_args()
    if args.list:
        for name, (_, what) in MAKERS.items():
            print(f"{name:12s} {what}")
        return
    unknown = [n for n in args.names if n not in MAKERS]
    if unknown:
        parser.error(f"unknown figure(s) {unknown}; --list shows them")
    FIGURES.mkdir(exist_ok=True)
    for name in args.names or list(MAKERS):
        run(name)


if __name__ == "__main__":
    main()
