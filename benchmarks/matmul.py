"""Square matmul through minitorch_accel beside the array library's own matmul (NumPy's
BLAS on the CPU, ``cupy.matmul``/cuBLAS on a GPU), in the same run, per number format.

Formats (``--dtype``, several allowed): ``float32``; ``tf32``, float32 values multiplied
by the GPU's tensor cores with 10-bit mantissas (CuPy's ``CUPY_TF32=1``; a GPU mode, no
CPU has it); ``float16``; ``bfloat16``, which minitorch_accel tensors do not hold: only
the array library's own matmul is timed (through ``ml_dtypes`` on the CPU; CuPy has no
bfloat16 matmul).

Run: ``python benchmarks/matmul.py [--device cuda] [--sizes 1024,4096,8192]
[--dtype float32 tf32 float16 bfloat16]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import minitorch_accel as mta
from minitorch_accel.utils import benchmark

DTYPES = ("float32", "tf32", "float16", "bfloat16")


def row(dtype: str, n: int, ours: float | None, raw: float) -> str:
    ours_ms = f"{ours * 1e3:>10.3f}" if ours is not None else f"{'-':>10}"
    ratio = f"{ours / raw:>7.3f}" if ours is not None else f"{'-':>7}"
    best = ours if ours is not None else raw
    return f"{dtype:<9}{n:>6} {ours_ms} {raw * 1e3:>10.3f} {ratio} {2 * n**3 / best / 1e9:>9.1f}"


def time_dtype(device: mta.Device, dtype: str, n: int) -> str:
    """One row: ours and the array library's matmul of two n x n matrices in ``dtype``."""
    xp = device.xp
    repeat = 3 if device.type == "cpu" and n >= 4096 else 10
    if dtype == "bfloat16":
        if device.type != "cpu":
            return f"{dtype:<9}{n:>6}  not timed: CuPy has no bfloat16 matmul"
        try:
            import ml_dtypes
        except ImportError:
            return f"{dtype:<9}{n:>6}  not timed: needs ml_dtypes (pip install ml_dtypes)"
        x = mta.randn(n, n).array.astype(ml_dtypes.bfloat16)
        raw = benchmark(lambda: xp.matmul(x, x), device=device, warmup=1, repeat=repeat).median
        return row(dtype, n, None, raw)
    np_dtype = "float32" if dtype == "tf32" else dtype
    mta.backends.cuda.matmul.allow_tf32 = dtype == "tf32"  # ours: PyTorch's switch
    a = mta.randn(n, n, device=device, dtype=np_dtype)
    b = mta.randn(n, n, device=device, dtype=np_dtype)
    ours = benchmark(lambda: a @ b, device=device, warmup=2, repeat=repeat).median
    raw_a: Any = a.array
    raw_b: Any = b.array
    raw = benchmark(lambda: xp.matmul(raw_a, raw_b), device=device, warmup=2, repeat=repeat)
    return row(dtype, n, ours, raw.median)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda or cuda:N")
    parser.add_argument(
        "--sizes", default="256,1024,4096,8192", help="comma-separated matrix sizes n"
    )
    parser.add_argument(
        "--dtype", nargs="+", default=["float32"], choices=DTYPES,
        help="number formats to time, in order (default: float32)",
    )  # fmt: skip
    args = parser.parse_args()
    device = mta.Device(args.device)
    xp = device.xp
    sizes = [int(s) for s in args.sizes.split(",")]
    if os.environ.get("MTA_MATMUL_CHILD") is None:
        print(f"matmul on {device} ({xp.__name__}); median of repeated runs")
        print(f"{'dtype':<9}{'n':>6} {'ours ms':>10} {xp.__name__ + ' ms':>10} {'ratio':>7} "
              f"{'GFLOP/s':>9}")  # fmt: skip
    for dtype in args.dtype:
        if dtype == "tf32" and device.type == "cpu":
            print(f"{dtype:<9}  not timed: TF32 is a mode of GPU tensor cores")
            continue
        if dtype == "tf32" and os.environ.get("CUPY_TF32") != "1":
            # CuPy reads CUPY_TF32 once, at import: a fresh process runs the TF32 rows.
            env = dict(os.environ, CUPY_TF32="1", MTA_MATMUL_CHILD="1")
            cmd = [sys.executable, __file__, "--device", args.device, "--sizes", args.sizes]
            subprocess.run([*cmd, "--dtype", "tf32"], env=env, check=True)
            continue
        for n in sizes:
            print(time_dtype(device, dtype, n), flush=True)


if __name__ == "__main__":
    main()
