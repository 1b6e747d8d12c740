"""Helpers shared by the figure makers: timing and saving."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

DPI = 100


def best_seconds(fn: Callable[[], object], repeats: int, warmup: int = 2) -> float:
    """Shortest wall time of ``fn()`` over ``repeats`` calls, after ``warmup`` calls.

    The shortest, not the median: on a machine shared with other work, the fastest run is
    the one least disturbed by it.
    """
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def save(fig: Any, path: Path) -> Path:
    """Save ``fig`` as a compact PNG and close it."""
    fig.savefig(path, dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def write_text(path: Path, text: str) -> Path:
    """Write the numbers a page quotes, next to its figure."""
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    return path


def machine_line() -> str:
    """One line naming the machine a timing was taken on: CPU model and cores, GPU."""
    import os
    import platform

    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    gpu = "no GPU"
    try:
        from minitorch_accel import cuda

        if cuda.is_available():
            gpu = ", ".join(cuda.get_device_name(i) for i in range(cuda.device_count()))
    except Exception:  # any failure to query just means: no GPU to name
        pass
    return f"measured on: {model}, {os.cpu_count()} cores; {gpu}"
