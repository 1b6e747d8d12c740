"""Tutorial 5: how long a copy to another device takes, as a function of its size."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from .common import best_seconds, machine_line, save, write_text

SIZES = [2**k for k in range(12, 28, 2)]  # 4 KiB .. 128 MiB of float32


def copy_curves(repeats: int = 5) -> dict[str, list[float]]:
    """Seconds per copy of each size in :data:`SIZES`, per kind of copy available here.

    ``cpu -> cpu:1`` is a memory copy (virtual devices share the host's memory); on a
    machine with a GPU, ``cpu -> cuda`` from ordinary (pageable) memory, from pinned
    memory, and the way back.
    """
    import minitorch_accel as mta
    from minitorch_accel import cuda

    curves: dict[str, list[float]] = {"cpu -> cpu:1 (memory copy)": []}
    gpu = cuda.is_available()
    if gpu:
        curves.update(
            {"cpu -> cuda, pageable": [], "cpu -> cuda, pinned": [], "cuda -> cpu, pageable": []}
        )
    for nbytes in SIZES:
        host = mta.ones(nbytes // 4)
        curves["cpu -> cpu:1 (memory copy)"].append(
            best_seconds(partial(host.to, "cpu:1"), repeats)
        )
        if gpu:
            curves["cpu -> cuda, pageable"].append(_gpu_copy(host.numpy(), repeats))
            curves["cpu -> cuda, pinned"].append(_gpu_copy(_pinned_copy(host.numpy()), repeats))
            dev = host.to("cuda")
            curves["cuda -> cpu, pageable"].append(best_seconds(dev.cpu, repeats))
    return curves


def _pinned_copy(array: np.ndarray) -> np.ndarray:
    from minitorch_accel.backends import Device

    out = Device("cuda").backend.pinned_empty(array.shape, array.dtype)
    out[...] = array
    return out


def _gpu_copy(array: np.ndarray, repeats: int) -> float:
    """Seconds of one host-to-GPU copy of ``array``, synchronized."""
    import cupy

    out = cupy.empty(array.shape, array.dtype)

    def copy() -> Any:
        out.set(array)
        cupy.cuda.Device().synchronize()

    return best_seconds(copy, repeats)


# Column names of the text table, short enough for the page's width.
SHORT = {
    "cpu -> cpu:1 (memory copy)": "host memcpy",
    "cpu -> cuda, pageable": "H2D pageable",
    "cpu -> cuda, pinned": "H2D pinned",
    "cuda -> cpu, pageable": "D2H pageable",
}


def make_transfer(out_dir: Path) -> list[Path]:
    """Copy time and bandwidth vs size; the bandwidths as text."""
    import matplotlib.pyplot as plt

    curves = copy_curves()
    mib = np.array(SIZES) / 2**20
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.4))
    header = "size MiB" + "".join(f"{SHORT.get(name, name):>15s}" for name in curves)
    legend = [f"  {SHORT.get(name, name)}: {name}" for name in curves]
    lines = [machine_line(), "GB/s reached per copy; columns:", *legend, "", header]
    for name, seconds in curves.items():
        left.loglog(mib, np.array(seconds) * 1e3, "o-", label=name, ms=3)
        right.semilogx(mib, np.array(SIZES) / np.array(seconds) / 1e9, "o-", label=name, ms=3)
    for k, size in enumerate(mib):
        lines.append(
            f"{size:8.3f}" + "".join(f"{SIZES[k] / curves[name][k] / 1e9:15.2f}" for name in curves)
        )
    left.set(xlabel="MiB copied", ylabel="ms per copy", title="time per copy")
    right.set(xlabel="MiB copied", ylabel="GB/s", title="bandwidth reached")
    right.legend(fontsize=8)
    fig.suptitle("Copies between devices (best of 5)", fontsize=10)
    fig.tight_layout()
    return [
        save(fig, out_dir / "transfer.png"),
        write_text(out_dir / "transfer.txt", "\n".join(lines)),
    ]
