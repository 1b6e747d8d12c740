"""All-reduce bandwidth over MPI next to a plain memory copy of the same bytes.

Run: ``mpiexec -n 2 python benchmarks/mpi_allreduce.py`` (run without mpiexec, it starts
itself under ``mpiexec -n 2``). Sizes: the LeNet's gradient (float32) and 100 MB.
Bandwidth is reported as bytes of the buffer per second of the collective ("algorithm
bandwidth"), the copy as bytes copied per second; the ratio says how far the collective
is from the memory system's own speed on this machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import numpy as np


def _median_seconds(fn: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main() -> None:
    from minitorch_accel import distributed as dist
    from minitorch_accel.nn.models import LeNet

    comm = dist.init(timeout=600)
    lenet_floats = sum(p.numel() for p in LeNet().parameters())
    sizes = [("LeNet gradient", lenet_floats * 4), ("100 MB", 100 * 2**20)]
    rows = []
    for name, nbytes in sizes:
        buf = np.ones(nbytes // 4, dtype=np.float32)
        dst = np.empty_like(buf)
        repeat = 50 if nbytes < 2**24 else 10
        for _ in range(3):
            dist.allreduce_array(buf)
        comm.Barrier()
        t_reduce = _median_seconds(lambda b=buf: dist.allreduce_array(b), repeat)
        t_copy = _median_seconds(lambda b=buf, d=dst: np.copyto(d, b), repeat)
        rows.append((name, nbytes, t_reduce, t_copy))
    if dist.rank() == 0:
        print(f"MPI all-reduce, {dist.world_size()} ranks on one machine (sum of float32)")
        print(
            f"{'buffer':<16}{'bytes':>12}{'allreduce ms':>14}{'GB/s':>8}{'copy ms':>10}"
            f"{'GB/s':>8}{'allreduce/copy':>16}"
        )
        for name, nbytes, t_reduce, t_copy in rows:
            print(
                f"{name:<16}{nbytes:>12,}{t_reduce * 1e3:>14.3f}{nbytes / t_reduce / 1e9:>8.2f}"
                f"{t_copy * 1e3:>10.3f}{nbytes / t_copy / 1e9:>8.2f}{t_reduce / t_copy:>15.1f}x"
            )


if __name__ == "__main__":
    if "OMPI_COMM_WORLD_SIZE" not in os.environ and "PMI_SIZE" not in os.environ:
        mpiexec = shutil.which("mpiexec") or os.path.join(
            os.path.dirname(sys.executable), "mpiexec"
        )
        sys.exit(subprocess.call([mpiexec, "-n", "2", sys.executable, *sys.argv]))
    main()
