"""Tutorial "Four ways to use several devices": schedules, a measured timeline, the table."""

from __future__ import annotations

from pathlib import Path

from .common import machine_line, save, write_text
from .fig_examples import run_example


def make_schedules(out_dir: Path, stages: int = 4, microbatches: int = 8) -> list[Path]:
    """GPipe and 1F1B on ideal stages (forward 1, backward 2 time units), simulated from
    the schedules' action lists."""
    import matplotlib.pyplot as plt

    from minitorch_accel.parallel import (
        bubble_fraction,
        gpipe_schedule,
        one_f_one_b_schedule,
        simulate,
    )
    from minitorch_accel.parallel.schedules import draw_timeline, peak_in_flight

    fig, axes = plt.subplots(2, 1, figsize=(9, 4.6), sharex=True)
    schedules = [("GPipe", gpipe_schedule), ("1F1B", one_f_one_b_schedule)]
    for ax, (name, make) in zip(axes, schedules, strict=True):
        order = make(stages, microbatches)
        events = simulate(order)
        draw_timeline(ax, events, [f"stage {s}" for s in range(stages)], unit=1.0)
        held = ", ".join(str(peak_in_flight(row)) for row in order)
        ax.set_title(
            f"{name}: bubble {bubble_fraction(events, stages):.0%}, "
            f"micro-batches held per stage: {held}",
            fontsize=10,
        )
    axes[-1].set_xlabel("time (a forward takes 1 unit, a backward 2)")
    fig.tight_layout()
    return [save(fig, out_dir / "pipeline_schedules.png")]


def make_parallelism(out_dir: Path) -> list[Path] | None:
    """``examples/parallelism.py`` on cpu:1..cpu:4: its table and the 1F1B timeline."""
    import os

    os.environ["OPENBLAS_NUM_THREADS"] = "1"  # one BLAS thread per stage thread
    png = out_dir / "pipeline_timeline.png"
    args = ["--steps", "4", "--batch", "256", "--width", "512", "--chunks", "8"]
    output = run_example("parallelism.py", *args, "--timeline", str(png))
    if output is None:
        return None
    lines = [line for line in output.splitlines() if "written to" not in line]
    shown = "$ python examples/parallelism.py " + " ".join(args)
    text = machine_line() + "\n\n" + shown + "\n" + "\n".join(lines).strip()
    return [png, write_text(out_dir / "parallelism.txt", text)]
