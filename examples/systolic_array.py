"""A TPU's matrix unit: a weight-stationary systolic array, simulated cycle by cycle.
==================================================================================

Teaches: how a TPU's matrix unit multiplies: weights stay in a grid of multiply-add
cells and the data flows through it one step per clock; why small batches and padding
leave most of the cells idle.
Prints: a small product checked against ``A @ B`` with its cycle count, then a table of
cycles and utilisation of a 128 x 128 array against the batch and the padding.
Takes: under a second (a few seconds with ``--plot``).

(1) A small product on an 8 x 8 array, checked against ``A @ B``, with its cycles.
(2) Cycles and processing-element utilisation of a 128 x 128 array (a TPU core's size)
    against the batch ``m`` and against padding (``k`` one past a multiple of 128).
(3) With ``--plot PATH``, a figure of the data wavefront: which row of ``A`` each PE
    works on, cycle after cycle (needs matplotlib).

Run: ``python examples/systolic_array.py [--size 8] [--plot wavefront.png]``
"""

from __future__ import annotations

import argparse

import numpy as np

from minitorch_accel.sim import cycle_count, systolic_matmul, utilisation


def small_product(size: int) -> None:
    """Run a 20 x 12 by 12 x 10 product on a ``size x size`` array and check it."""
    rng = np.random.default_rng(0)
    a = rng.integers(-5, 6, (20, 12))
    b = rng.integers(-5, 6, (12, 10))
    run = systolic_matmul(a, b, size=size)
    same = bool((run.output == a @ b).all())
    print(f"(1) (20 x 12) @ (12 x 10) on a {size} x {size} array")
    print(
        f"    equal to A @ B: {same}; {run.cycles} cycles (closed form: "
        f"{cycle_count(20, 12, 10, size)}); utilisation {run.utilisation:.1%}"
    )


def utilisation_table(size: int = 128) -> None:
    """Utilisation of a ``size x size`` array against batch and padding (closed form)."""
    print(f"\n(2) a {size} x {size} array, (m x k) @ (k x n): cycles and PE utilisation")
    print(f"{'m':>6} {'k':>6} {'n':>6} {'tiles':>6} {'cycles':>8} {'utilisation':>12}")
    shapes = [
        (8, 128, 128),
        (128, 128, 128),
        (1024, 128, 128),
        (8192, 128, 128),
        (1024, 129, 128),
        (1024, 256, 256),
        (1024, 257, 257),
    ]
    for m, k, n in shapes:
        tiles = -(-k // size) * -(-n // size)
        print(
            f"{m:>6} {k:>6} {n:>6} {tiles:>6} {cycle_count(m, k, n, size):>8} "
            f"{utilisation(m, k, n, size):>12.1%}"
        )


def plot_wavefront(size: int, path: str) -> None:
    """Six snapshots of the wavefront of a 6-row product on a ``size x size`` array."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = 6
    run = systolic_matmul(np.ones((m, size)), np.ones((size, size)), size=size, record=True)
    cycles = np.linspace(0, len(run.wavefront) - 1, 6).round().astype(int)
    fig, axes = plt.subplots(1, 6, figsize=(12, 2.6))
    cmap = matplotlib.colormaps["viridis"].resampled(m)
    cmap.set_bad("#eeeeee")
    for ax, t in zip(axes, cycles, strict=True):
        rows = np.ma.masked_less(run.wavefront[t], 0)
        ax.imshow(rows, cmap=cmap, vmin=-0.5, vmax=m - 0.5)
        ax.set_title(f"cycle {t}", fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
    axes[0].set_ylabel("k (grid row)")
    fig.suptitle(
        f"Rows of A moving through a {size} x {size} weight-stationary array "
        f"(colour: row 0..{m - 1} of A; grey: idle PE)",
        fontsize=11,
    )
    fig.savefig(path, dpi=100, bbox_inches="tight", metadata={"Software": None})
    print(f"wrote {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument(
        "--size",
        type=int,
        default=8,
        help="side of the simulated array for (1) and the figure (default 8)",
    )
    parser.add_argument(
        "--plot", metavar="PATH", help="save the wavefront figure to PATH (PNG; needs matplotlib)"
    )
    args = parser.parse_args()
    small_product(args.size)
    utilisation_table()
    if args.plot:
        plot_wavefront(args.size, args.plot)


if __name__ == "__main__":
    main()
