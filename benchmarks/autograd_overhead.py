"""Autograd overhead: a long chain of tiny ops, where bookkeeping costs more than math.

The chain alternates ``h = tanh(h)`` and ``h = h * a + b`` on 32-element float32
vectors, 1,000 ops in all, then runs backward to ``x``, ``a`` and ``b``. On so little
data every op costs about the same whatever it computes, so the time per op measures
the framework itself: building graph nodes, wrapping arrays, walking the graph back.

The same chain runs three ways in one process, so the numbers are comparable:

- ``numpy``: raw NumPy with the backward pass written by hand (no autograd at all);
- ``minitorch_accel``: this framework, with autograd;
- ``torch``: PyTorch eager with autograd on one thread (only if PyTorch is installed).

With ``--device cuda`` the chain runs on the GPU, where every op is a kernel launch:
the raw reference is then CuPy (each op a CuPy kernel, the backward by hand) and
PyTorch runs on CUDA. The time per op is then the host's cost of one launch through
each framework, which bounds any model whose kernels are short (the LeNet step).

Run it with ``python benchmarks/autograd_overhead.py`` (``--help`` lists the options;
``--profile`` prints where minitorch_accel spends its time, from :mod:`cProfile`).
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import io
import pstats
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import minitorch_accel as mta

Inputs = tuple[np.ndarray, np.ndarray, np.ndarray]


def make_inputs(size: int, seed: int = 0) -> Inputs:
    """The start vector ``x`` and the parameters ``a``, ``b`` of the chain (float32)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(size).astype(np.float32)
    a = (0.5 + 0.5 * rng.random(size)).astype(np.float32)
    b = (0.1 * rng.standard_normal(size)).astype(np.float32)
    return x, a, b


def chain_numpy(inputs: Inputs, n_ops: int, xp: Any = np) -> tuple[Any, Any, Any]:
    """Forward and hand-written backward of the chain in NumPy (or CuPy: ``xp``, with
    ``inputs`` already on the GPU); returns the grads."""
    x, a, b = inputs
    saved: list[Any] = []
    h = x
    for i in range(n_ops):
        if i % 2 == 0:
            h = xp.tanh(h)
            saved.append(h)  # tanh' = 1 - tanh^2 needs the output
        else:
            saved.append(h)  # d(h * a + b)/da needs the input
            h = h * a + b
    g = xp.ones_like(h)
    grad_a = xp.zeros_like(a)
    grad_b = xp.zeros_like(b)
    for i in reversed(range(n_ops)):
        if i % 2 == 0:
            y = saved[i]
            g = g * (1.0 - y * y)
        else:
            grad_a += g * saved[i]
            grad_b += g
            g = g * a
    return g, grad_a, grad_b


def chain_ours(inputs: Inputs, n_ops: int, device: str = "cpu") -> tuple[Any, Any, Any]:
    """The chain in minitorch_accel: forward, then ``backward()``; returns the grads."""
    x = mta.tensor(inputs[0], requires_grad=True, device=device)
    a = mta.tensor(inputs[1], requires_grad=True, device=device)
    b = mta.tensor(inputs[2], requires_grad=True, device=device)
    h = x
    for i in range(n_ops):
        h = h.tanh() if i % 2 == 0 else h * a + b
    h.sum().backward()
    return x.grad, a.grad, b.grad


def chain_torch(inputs: Inputs, n_ops: int, device: str = "cpu") -> tuple[Any, Any, Any]:
    """The chain in PyTorch eager with autograd; returns the grads."""
    torch: Any = importlib.import_module("torch")

    x = torch.tensor(inputs[0], requires_grad=True, device=device)
    a = torch.tensor(inputs[1], requires_grad=True, device=device)
    b = torch.tensor(inputs[2], requires_grad=True, device=device)
    h = x
    for i in range(n_ops):
        h = h.tanh() if i % 2 == 0 else h * a + b
    h.sum().backward()
    return x.grad, a.grad, b.grad


def median_seconds(fn: Callable[[], object], repeat: int, warmup: int) -> float:
    """The median wall time of ``fn()`` over ``repeat`` runs, after ``warmup`` runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def check_agreement(inputs: Inputs, n_ops: int, with_torch: bool, device: str) -> None:
    """Fail loudly if the implementations disagree (a fast wrong answer is no answer)."""
    reference = chain_numpy(inputs, n_ops)
    grads = chain_ours(inputs, n_ops, device)
    candidates = [("minitorch_accel", tuple(g.cpu().numpy() for g in grads))]
    if with_torch:
        grads = chain_torch(inputs, n_ops, device)
        candidates.append(("torch", tuple(g.cpu().numpy() for g in grads)))
    for name, found in candidates:
        for ref, got in zip(reference, found, strict=True):
            np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5, err_msg=name)


def torch_available(device: str) -> bool:
    """True when PyTorch can be imported and reach ``device`` (an optional reference)."""
    try:
        import torch
    except ImportError:
        return False
    torch.set_num_threads(1)
    return not device.startswith("cuda") or bool(torch.cuda.is_available())


def runners_for(
    inputs: Inputs, n_ops: int, device: str, with_torch: bool
) -> dict[str, Callable[[], object]]:
    """The chain per framework, each run ending when the device has finished it."""
    if not device.startswith("cuda"):
        found: dict[str, Callable[[], object]] = {
            "numpy": lambda: chain_numpy(inputs, n_ops),
            "minitorch_accel": lambda: chain_ours(inputs, n_ops),
        }
        if with_torch:
            found["torch"] = lambda: chain_torch(inputs, n_ops)
        return found
    cupy: Any = importlib.import_module("cupy")
    on_gpu = tuple(cupy.asarray(v) for v in inputs)
    dev = mta.Device(device)

    def finished(run: Callable[[], object], sync: Callable[[], object]) -> Callable[[], object]:
        return lambda: (run(), sync())

    found = {
        "cupy": finished(lambda: chain_numpy(on_gpu, n_ops, cupy), cupy.cuda.Device().synchronize),
        "minitorch_accel": finished(
            lambda: chain_ours(inputs, n_ops, device), lambda: dev.backend.synchronize(dev)
        ),
    }
    if with_torch:
        torch: Any = importlib.import_module("torch")
        found["torch"] = finished(
            lambda: chain_torch(inputs, n_ops, "cuda"), torch.cuda.synchronize
        )
    return found


def profile_ours(inputs: Inputs, n_ops: int, runs: int = 10, top: int = 20) -> str:
    """cProfile's table (sorted by own time) for ``runs`` runs of our chain."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(runs):
        chain_ours(inputs, n_ops)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> dict[str, float]:
    """Run the benchmark, print the table, and return the median times in seconds."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=1000, help="ops in the chain")
    parser.add_argument("--size", type=int, default=32, help="elements per tensor")
    parser.add_argument("--repeat", type=int, default=30, help="timed runs per framework")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first")
    parser.add_argument("--no-torch", action="store_true", help="skip PyTorch")
    parser.add_argument("--profile", action="store_true", help="print a cProfile table")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    args = parser.parse_args(argv)

    inputs = make_inputs(args.size)
    with_torch = not args.no_torch and torch_available(args.device)
    check_agreement(inputs, args.ops, with_torch, args.device)
    runners = runners_for(inputs, args.ops, args.device, with_torch)
    times = {name: median_seconds(fn, args.repeat, args.warmup) for name, fn in runners.items()}

    raw = "cupy" if "cupy" in times else "numpy"
    print(
        f"chain of {args.ops} ops on {args.size}-element float32 tensors on {args.device}, "
        f"forward + backward, median of {args.repeat} runs"
    )
    for name, seconds in times.items():
        print(f"  {name:<16} {seconds * 1e3:9.2f} ms  {seconds / args.ops * 1e6:7.2f} us/op")
    print(f"  ours / {raw:<9} {times['minitorch_accel'] / times[raw]:9.2f}")
    if with_torch:
        print(f"  torch / {raw:<8} {times['torch'] / times[raw]:9.2f}")
        target = "" if raw == "cupy" else "  (target <= 1.5)"
        print(f"  ours / torch     {times['minitorch_accel'] / times['torch']:9.2f}{target}")
    else:
        print("  (no torch column: PyTorch is not installed, or --no-torch was given)")
    if args.profile:
        print(profile_ours(inputs, args.ops))
    return times


if __name__ == "__main__":
    main()
