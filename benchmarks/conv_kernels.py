"""Time the CNN's convolution/pooling layers: our NumPy kernels against PyTorch CPU.

The layers of the MNIST CNN, float32, forward and backward::

    conv 1->32 3x3, ReLU, max-pool 2, conv 32->64 3x3, ReLU, max-pool 2

Both sides run in the same process, alternately, on 2 threads (``torch.set_num_threads``;
OpenBLAS keeps its own 2), and the median over many repetitions is reported with the
ratio ours / PyTorch. The machine is shared and noisy: trust the ratios, not the ms.

Run::

    python benchmarks/conv_kernels.py               # batch 64 and 256
    python benchmarks/conv_kernels.py --stages      # plus where our time goes
    python benchmarks/conv_kernels.py --memory      # plus peak RSS of each side
    python benchmarks/conv_kernels.py --tiers       # only: fast paths on vs off

``--tiers`` times the same layers through the framework's functionals (tensors,
autograd) with the fast paths on and off (``minitorch_accel.fast_paths``), alternately
in one process, and prints the ratio off / on: what the fast paths buy over the
reference code. It needs no PyTorch.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from minitorch_accel.backends import conv_kernels as ck
from minitorch_accel.backends import pool_kernels as pk

Arrays = dict[str, Any]


def make_inputs(batch: int, seed: int = 0) -> Arrays:
    """Random float32 MNIST-shaped input, the layers' parameters and an upstream gradient."""
    rng = np.random.default_rng(seed)
    f32 = np.float32
    return {
        "x": rng.random((batch, 1, 28, 28), dtype=f32),
        "w1": rng.standard_normal((32, 1, 3, 3), dtype=f32) / 3,
        "b1": rng.standard_normal(32, dtype=f32) * 0.1,
        "w2": rng.standard_normal((64, 32, 3, 3), dtype=f32) / 17,
        "b2": rng.standard_normal(64, dtype=f32) * 0.1,
        "g": rng.standard_normal((batch, 64, 5, 5), dtype=f32),
    }


def ours_step(a: Arrays, timer: Callable[[str], None] | None = None) -> Arrays:
    """Forward and backward through our raw kernels (ReLU as the framework does it)."""
    mark = timer or (lambda name: None)
    y1, cols1 = ck.conv2d_forward(np, a["x"], a["w1"], a["b1"])
    mark("conv1 fwd")
    r1 = np.maximum(y1, 0)
    mark("relu1 fwd")
    p1 = pk.max_pool2d_forward(np, r1, 2)
    mark("pool1 fwd")
    y2, cols2 = ck.conv2d_forward(np, p1, a["w2"], a["b2"])
    mark("conv2 fwd")
    r2 = np.maximum(y2, 0)
    mark("relu2 fwd")
    p2 = pk.max_pool2d_forward(np, r2, 2)
    mark("pool2 fwd")
    del y1, y2
    g2 = pk.max_pool2d_backward(np, a["g"], r2, p2, 2)
    mark("pool2 bwd")
    g2 = g2 * np.greater(r2, 0)
    mark("relu2 bwd")
    grads = {"w2": ck.conv2d_grad_weight(np, g2, cols2, a["w2"].shape)}
    grads["b2"] = ck.conv2d_grad_bias(np, g2)
    mark("conv2 bwd w,b")
    del cols2
    g1 = ck.conv2d_grad_input(np, g2, a["w2"], p1.shape)
    mark("conv2 bwd x")
    del g2, p2, r2
    g1 = pk.max_pool2d_backward(np, g1, r1, p1, 2)
    mark("pool1 bwd")
    g1 = g1 * np.greater(r1, 0)
    mark("relu1 bwd")
    del r1, p1
    grads["w1"] = ck.conv2d_grad_weight(np, g1, cols1, a["w1"].shape)
    grads["b1"] = ck.conv2d_grad_bias(np, g1)
    mark("conv1 bwd w,b")
    return grads


def torch_setup(a: Arrays) -> tuple[Any, Callable[[], Arrays]]:
    """PyTorch's version of the same layers, on 2 threads."""
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(2)
    t = {k: torch.from_numpy(v) for k, v in a.items()}
    params = {k: t[k].clone().requires_grad_(True) for k in ("w1", "b1", "w2", "b2")}

    def step() -> Arrays:
        for p in params.values():
            p.grad = None
        h = F.max_pool2d(F.relu(F.conv2d(t["x"], params["w1"], params["b1"])), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, params["w2"], params["b2"])), 2)
        h.backward(t["g"])  # type: ignore[no-untyped-call]
        return {k: p.grad.numpy() for k, p in params.items()}  # type: ignore[union-attr]

    return torch, step


def median_ms(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``fn`` in ms."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def compare(batch: int, repeats: int, pause: float) -> tuple[list[float], list[float]]:
    """ms per step of ours and of PyTorch, one step each in turn; checks the gradients agree.

    A pause before every step lets the other library's worker threads stop spinning
    (OpenBLAS spins for about 0.1 s after a GEMM and would steal PyTorch's second core).
    """
    a = make_inputs(batch)
    _, torch_step = torch_setup(a)
    ours, ref = ours_step(a), torch_step()
    for k in ours:
        scale = float(np.abs(ref[k]).max())
        err = float(np.abs(ours[k] - ref[k]).max()) / scale
        if err > 1e-3:
            raise AssertionError(f"batch {batch}: grad {k} differs from PyTorch by {err:.2e}")
    steps = {"ours": lambda: ours_step(a), "torch": torch_step}
    found: dict[str, list[float]] = {"ours": [], "torch": []}
    order = ["ours", "torch"]
    for r in range(repeats):
        for side in order if r % 2 else order[::-1]:
            steps[side]()  # warm: the caches of this side's buffers
            time.sleep(pause)
            found[side].append(median_ms(steps[side], 1))
    return found["ours"], found["torch"]


def framework_step(a: Arrays) -> Callable[[], None]:
    """The same layers through the framework's functionals: forward, then backward."""
    import minitorch_accel as mta

    functional = mta.nn.functional
    x, grad = mta.tensor(a["x"]), mta.tensor(a["g"])
    params = {k: mta.tensor(a[k], requires_grad=True) for k in ("w1", "b1", "w2", "b2")}

    def step() -> None:
        for p in params.values():
            p.grad = None
        h = functional.conv2d(x, params["w1"], params["b1"]).relu()
        h = functional.conv2d(functional.max_pool2d(h, 2), params["w2"], params["b2"]).relu()
        functional.max_pool2d(h, 2).backward(grad)

    return step


def tiers(batch: int, repeats: int, pause: float) -> dict[bool, list[float]]:
    """ms per framework step with the fast paths on (True) and off (False), in turn."""
    import minitorch_accel as mta

    step = framework_step(make_inputs(batch))
    found: dict[bool, list[float]] = {True: [], False: []}
    for r in range(repeats):
        for on in (True, False) if r % 2 else (False, True):
            with mta.fast_paths(on):
                step()  # warm: this tier's buffers
                time.sleep(pause)
                found[on].append(median_ms(step, 1))
    return found


class StageTimer:
    """Collects the ms between successive :meth:`mark` calls, by stage name."""

    def __init__(self) -> None:
        self.found: dict[str, list[float]] = {}
        self.last = time.perf_counter()

    def mark(self, name: str) -> None:
        """End the stage ``name`` now and start the next."""
        now = time.perf_counter()
        self.found.setdefault(name, []).append(1e3 * (now - self.last))
        self.last = now


def stages(batch: int, repeats: int) -> dict[str, float]:
    """Median ms of each stage of our step."""
    a = make_inputs(batch)
    timer = StageTimer()
    for _ in range(repeats):
        timer.last = time.perf_counter()
        ours_step(a, timer.mark)
    return {k: statistics.median(v) for k, v in timer.found.items()}


def peak_rss_mb(side: str, batch: int) -> float:
    """Peak RSS growth (MB) of ``side`` ('ours' or 'torch') over 10 steps, in a subprocess.

    Reads VmHWM (the peak of this address space; ``ru_maxrss`` would include the peak of
    the parent process, inherited across fork and exec).
    """
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
        "import conv_kernels as b\n"
        f"a = b.make_inputs({batch})\n"
        f"fn = b.torch_setup(a)[1] if {side!r} == 'torch' else (lambda: b.ours_step(a))\n"
        "base = b.rss_kb('VmRSS')\n"
        "for _ in range(10): fn()\n"
        "print((b.rss_kb('VmHWM') - base) / 1024)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def rss_kb(field: str) -> int:
    """A memory figure of this process from /proc/self/status, in kB (Linux only)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def main() -> None:
    """Print the comparison table (and optionally the stage breakdown and memory)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--pause", type=float, default=0.15, help="seconds before each step")
    parser.add_argument("--stages", action="store_true")
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--tiers", action="store_true", help="only fast paths on vs off")
    args = parser.parse_args()
    if args.tiers:
        print(f"fast paths on vs off, median of {args.repeats}, {args.pause} s pause before each")
        print(f"{'batch':>5} {'on ms':>9} {'off ms':>9} {'off/on':>7}")
        for batch in args.batches:
            found = tiers(batch, args.repeats, args.pause)
            on, off = statistics.median(found[True]), statistics.median(found[False])
            print(f"{batch:>5} {on:>9.2f} {off:>9.2f} {off / on:>7.2f}")
        return
    print(
        f"numpy {np.__version__}, threads: torch 2, OpenBLAS default; "
        f"median of {args.repeats}, {args.pause} s pause before each step"
    )
    print(f"{'batch':>5} {'ours ms':>9} {'torch ms':>9} {'ratio':>6}   (min: ours, torch, ratio)")
    for batch in args.batches:
        ours, ref = compare(batch, args.repeats, args.pause)
        med, best = (statistics.median(ours), statistics.median(ref)), (min(ours), min(ref))
        print(
            f"{batch:>5} {med[0]:>9.2f} {med[1]:>9.2f} {med[0] / med[1]:>6.2f}   "
            f"({best[0]:.2f}, {best[1]:.2f}, {best[0] / best[1]:.2f})"
        )
    if args.stages:
        for batch in args.batches:
            found = stages(batch, args.repeats)
            print(f"\nour stages, batch {batch} (ms):")
            for name, ms in found.items():
                print(f"  {name:<14} {ms:7.2f}")
    if args.memory:
        print(f"\n{'batch':>5} {'ours MB':>9} {'torch MB':>9} {'ratio':>6}  (peak RSS growth)")
        for batch in args.batches:
            ours_mb, torch_mb = peak_rss_mb("ours", batch), peak_rss_mb("torch", batch)
            print(f"{batch:>5} {ours_mb:>9.1f} {torch_mb:>9.1f} {ours_mb / torch_mb:>6.2f}")


if __name__ == "__main__":
    main()
