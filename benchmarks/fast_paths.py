"""What the fast paths buy: the LeNet training step with them on and off.

The same step as ``python -m minitorch_accel bench`` (LeNet, SGD with momentum, float32
MNIST-shaped input), timed with the fast paths on (the default) and off
(``mta.fast_paths(False)``: every op's reference implementation, every optimizer's
textbook update), in alternating rounds of one process. Printed: the median ms/step of
each and their ratio. ``--train-example`` also times ``examples/mnist_cnn.py`` (the
embedded sample, its default epochs) with ``MINITORCH_ACCEL_FAST_PATHS=0`` in a
subprocess: the reference tier must train it in under 5 minutes on 2 cores.

Run: ``python benchmarks/fast_paths.py [--batch 64] [--rounds 5] [--train-example]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import minitorch_accel as mta  # noqa: E402
from minitorch_accel.train.bench import lenet_step_time  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=5, help="measured steps per round")
    p.add_argument("--train-example", action="store_true")
    args = p.parse_args()
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(args.rounds):
        for mode in (True, False):
            with mta.fast_paths(mode):
                times[mode] += lenet_step_time(args.device, args.batch, args.steps, warmup=1)
    on, off = (1000 * float(np.median(times[m])) for m in (True, False))
    threads = mta.get_num_threads()
    print(f"LeNet training step on {args.device}, batch {args.batch}, {threads} thread(s)")
    print(f"  fast paths on : {on:8.2f} ms/step")
    print(f"  fast paths off: {off:8.2f} ms/step   (reference tier: {off / on:.2f}x the time)")
    if args.train_example:
        env = dict(os.environ, MINITORCH_ACCEL_FAST_PATHS="0", PYTHONPATH=str(ROOT))
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as folder:  # the example saves its weights there
            done = subprocess.run(
                [sys.executable, str(ROOT / "examples" / "mnist_cnn.py")],
                env=env,
                cwd=folder,
                capture_output=True,
                text=True,
            )
        seconds = time.perf_counter() - start
        found = [line for line in done.stdout.splitlines() if "accuracy" in line.lower()]
        print(f"examples/mnist_cnn.py with the fast paths off: {seconds:.0f} s")
        print(f"  its last accuracy line: {(found or ['(none)'])[-1].strip()}")
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            raise SystemExit(done.returncode)


if __name__ == "__main__":
    main()
