"""Square float32 matmul through minitorch_accel beside the array library's own matmul
(NumPy's BLAS on the CPU, ``cupy.matmul``/cuBLAS on a GPU), in the same run.

Run: ``python benchmarks/matmul.py [--device cuda] [--sizes 1024,4096,8192]``.
Target on a GPU: at n = 8192 minitorch_accel within 10% of ``cupy.matmul``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import minitorch_accel as mta
from minitorch_accel.utils import benchmark


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--sizes", default="256,1024,4096,8192")
    args = parser.parse_args()
    device = mta.Device(args.device)
    xp = device.xp
    print(f"float32 matmul on {device} ({xp.__name__}); median of repeated runs")
    print(f"{'n':>6} {'ours ms':>10} {xp.__name__ + ' ms':>10} {'ratio':>7} {'GFLOP/s':>9}")
    for n in [int(s) for s in args.sizes.split(",")]:
        a = mta.randn(n, n, device=device)
        b = mta.randn(n, n, device=device)
        repeat = 3 if device.type == "cpu" and n >= 4096 else 10
        ours = benchmark(lambda a=a, b=b: a @ b, device=device, warmup=2, repeat=repeat).median
        raw = benchmark(
            lambda a=a, b=b: xp.matmul(a.array, b.array), device=device, warmup=2, repeat=repeat
        ).median
        print(
            f"{n:>6} {ours * 1e3:>10.3f} {raw * 1e3:>10.3f} {ours / raw:>7.3f} "
            f"{2 * n**3 / ours / 1e9:>9.1f}"
        )


if __name__ == "__main__":
    main()
