"""Autograd overhead: a long chain of tiny ops, where bookkeeping costs more than math.

The chain alternates ``h = tanh(h)`` and ``h = h * a + b`` on 32-element float32
vectors, 1,000 ops in all, then runs backward to ``x``, ``a`` and ``b``. On so little
data every op costs about the same whatever it computes, so the time per op measures
the framework itself: building graph nodes, wrapping arrays, walking the graph back.

The same chain runs three ways in one process, so the numbers are comparable:

- ``numpy``: raw NumPy with the backward pass written by hand (no autograd at all);
- ``minitorch_accel``: this framework, with autograd;
- ``torch``: PyTorch eager with autograd on one thread (only if PyTorch is installed).

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


def chain_numpy(inputs: Inputs, n_ops: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Forward and hand-written backward of the chain in NumPy; returns the grads."""
    x, a, b = inputs
    saved: list[np.ndarray] = []
    h = x
    for i in range(n_ops):
        if i % 2 == 0:
            h = np.tanh(h)
            saved.append(h)  # tanh' = 1 - tanh^2 needs the output
        else:
            saved.append(h)  # d(h * a + b)/da needs the input
            h = h * a + b
    g = np.ones_like(h)
    grad_a = np.zeros_like(a)
    grad_b = np.zeros_like(b)
    for i in reversed(range(n_ops)):
        if i % 2 == 0:
            y = saved[i]
            g = g * (1.0 - y * y)
        else:
            grad_a += g * saved[i]
            grad_b += g
            g = g * a
    return g, grad_a, grad_b


def chain_ours(inputs: Inputs, n_ops: int) -> tuple[Any, Any, Any]:
    """The chain in minitorch_accel: forward, then ``backward()``; returns the grads."""
    x = mta.tensor(inputs[0], requires_grad=True)
    a = mta.tensor(inputs[1], requires_grad=True)
    b = mta.tensor(inputs[2], requires_grad=True)
    h = x
    for i in range(n_ops):
        h = h.tanh() if i % 2 == 0 else h * a + b
    h.sum().backward()
    return x.grad, a.grad, b.grad


def chain_torch(inputs: Inputs, n_ops: int) -> tuple[Any, Any, Any]:
    """The chain in PyTorch eager with autograd; returns the grads."""
    torch: Any = importlib.import_module("torch")

    x = torch.tensor(inputs[0], requires_grad=True)
    a = torch.tensor(inputs[1], requires_grad=True)
    b = torch.tensor(inputs[2], requires_grad=True)
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


def check_agreement(inputs: Inputs, n_ops: int, with_torch: bool) -> None:
    """Fail loudly if the implementations disagree (a fast wrong answer is no answer)."""
    reference = chain_numpy(inputs, n_ops)
    candidates = [("minitorch_accel", chain_ours(inputs, n_ops))]
    if with_torch:
        grads = chain_torch(inputs, n_ops)
        candidates.append(("torch", tuple(g.numpy() for g in grads)))
    for name, grads in candidates:
        for ref, got in zip(reference, grads, strict=True):
            np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-4, atol=1e-5, err_msg=name)


def torch_available() -> bool:
    """True when PyTorch can be imported (it is an optional reference here)."""
    try:
        import torch
    except ImportError:
        return False
    torch.set_num_threads(1)
    return True


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
    args = parser.parse_args(argv)

    inputs = make_inputs(args.size)
    with_torch = not args.no_torch and torch_available()
    check_agreement(inputs, args.ops, with_torch)

    runners: dict[str, Callable[[], object]] = {
        "numpy": lambda: chain_numpy(inputs, args.ops),
        "minitorch_accel": lambda: chain_ours(inputs, args.ops),
    }
    if with_torch:
        runners["torch"] = lambda: chain_torch(inputs, args.ops)
    times = {name: median_seconds(fn, args.repeat, args.warmup) for name, fn in runners.items()}

    print(
        f"chain of {args.ops} ops on {args.size}-element float32 tensors, forward + "
        f"backward, median of {args.repeat} runs"
    )
    for name, seconds in times.items():
        print(f"  {name:<16} {seconds * 1e3:9.2f} ms  {seconds / args.ops * 1e6:7.2f} us/op")
    print(f"  ours / numpy     {times['minitorch_accel'] / times['numpy']:9.2f}")
    if with_torch:
        print(f"  torch / numpy    {times['torch'] / times['numpy']:9.2f}")
        print(
            f"  ours / torch     {times['minitorch_accel'] / times['torch']:9.2f}  (target <= 1.5)"
        )
    else:
        print("  (no torch column: PyTorch is not installed, or --no-torch was given)")
    if args.profile:
        print(profile_ours(inputs, args.ops))
    return times


if __name__ == "__main__":
    main()
