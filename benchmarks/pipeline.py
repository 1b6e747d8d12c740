"""The pipeline's bubble against theory, and what its machinery costs per micro-batch.

**Bubble.** A balanced synthetic model (``--stages`` stages of equal work: each
``--layers`` ``Linear(width, width) -> ReLU``, with as many GEMMs in every stage's
backward; see :func:`balanced`) runs one :class:`Pipeline` step for
m = 1, 2, 4, 8, 16 micro-batches of ``--micro`` samples each, with both schedules. The
measured bubble (``1 - busy / (stages * span)`` on the step's timeline) is printed beside
the theory ``(p - 1) / (m + p - 1)`` and their relative difference. It can match only
when every stage has a core of its own: the script sets one BLAS thread per process and
``set_num_threads(1)`` (so one thread per stage, whatever the environment says) and says
how many cores it may use; with more stages than cores the stages take turns on the
cores and the bubble is reported without a bound. The theory assumes every action takes
the same time; the *replayed* column re-runs the schedule on paper
(:func:`~minitorch_accel.parallel.simulate`) with each action's measured time and free
hand-offs, which separates the two causes of a larger bubble: uneven actions (replayed
above theory) and the hand-offs themselves (measured above replayed).

**Overhead.** With one micro-batch the stages run one after another (each may use every
core, as the plain step does: the thread count is the default again), so the step's
wall time is the stages' compute plus the machinery (thread hand-offs, copies of
activations and gradients between devices, the detached input of each stage, timeline
bookkeeping, the loss's scaling). It is compared with the same forward and backward
written plainly (one model on one device, the whole batch) in the same process,
alternating the two, medians of ``--repeat`` runs; the difference per stage is printed
as a share of one stage's compute.

Run: ``python benchmarks/pipeline.py [--stages 4] [--width 1024] [--layers 2]
[--micro 256] [--batch 256] [--repeat 15]``
"""

from __future__ import annotations

import os

# One BLAS thread per stage (set before NumPy loads its BLAS; overrides the environment).
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import copy  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import minitorch_accel as mta  # noqa: E402
from minitorch_accel import nn  # noqa: E402
from minitorch_accel.backends.numpy.threads import available_cpus  # noqa: E402
from minitorch_accel.parallel import (  # noqa: E402
    Pipeline,
    bubble_fraction,
    durations_of,
    format_table,
    simulate,
    split_model,
)
from minitorch_accel.parallel.schedules import SCHEDULES  # noqa: E402

F = nn.functional


class ScaleShift(nn.Module):
    """``(x - shift) * scale``, a learnable shift and factor per feature (the first
    stage's first module): two elementwise passes forward, like the loss's subtraction
    and square on the last stage, and reductions for its two gradients backward, like
    the loss's backward.
    """

    def __init__(self, width: int) -> None:
        super().__init__()
        self.shift = nn.Parameter(mta.zeros(width))
        self.scale = nn.Parameter(mta.ones(width))

    def forward(self, x: mta.Tensor) -> mta.Tensor:
        return (x - self.shift) * self.scale


def balanced(stages: int, layers: int, width: int) -> nn.Sequential:
    """``stages * layers`` equal ``Linear(width, width) -> ReLU`` blocks (float32) behind a
    :class:`ScaleShift`, whose stages do equal work. Without it, the first Linear would
    need no input gradient (the data has none) and the first stage would run one GEMM
    fewer in backward. With it every stage runs ``layers`` GEMMs forward and ``2 *
    layers`` backward (input and weight gradients), and the two ends do the same
    elementwise work: the scale and shift on the first stage, the mean squared error on
    the last (their stages' compute measured equal within about 1%; with a scale alone,
    the last stage did 1-1.5% more, which at m = 16 adds a tenth to the bubble). Split
    it at :func:`boundaries`.
    """
    mta.manual_seed(0)
    mods: list[nn.Module] = [ScaleShift(width)]
    for _ in range(stages * layers):
        mods += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*mods)


def boundaries(stages: int, layers: int) -> list[int]:
    """Where :func:`balanced` is cut into stages of ``layers`` blocks (the scale-shift goes
    first)."""
    return [1 + 2 * layers * s for s in range(1, stages)]


def bubbles(args: argparse.Namespace, devices: list[str]) -> None:
    p = args.stages
    model = balanced(p, args.layers, args.width)
    bounds = boundaries(p, args.layers)
    rng = np.random.default_rng(0)
    rows = []
    for schedule in ("gpipe", "1f1b"):
        for m in (1, 2, 4, 8, 16):
            stages = split_model(copy.deepcopy(model), devices, bounds).stages
            n = m * args.micro
            x = mta.tensor(rng.normal(size=(n, args.width)), dtype="float32")
            y = mta.tensor(rng.normal(size=(n, args.width)), dtype="float32")
            order = SCHEDULES[schedule](p, m)
            with Pipeline(stages, devices, m, schedule, F.mse_loss) as pipe:
                measured, replayed = [], []
                for _ in range(args.bubble_repeat + 1):
                    pipe.step(x, y)
                    measured.append(pipe.bubble_fraction())
                    # the same actions, each taking its measured time, handed on for free
                    replay = simulate(order, durations=durations_of(pipe.last_timeline))
                    replayed.append(bubble_fraction(replay, p))
                theory = pipe.theoretical_bubble()
            got = statistics.median(measured[1:])  # the first step warms up
            ideal = statistics.median(replayed[1:])
            rows.append(
                [
                    schedule,
                    str(m),
                    f"{got:.3f}",
                    f"{ideal:.3f}",
                    f"{theory:.3f}",
                    f"{relative(got, theory):+.0%}",
                    f"{relative(got, ideal):+.0%}",
                ]
            )
    print(
        f"Bubble, {p} stages of {args.layers} Linear({args.width}) layers, micro-batch "
        f"{args.micro}, medians of {args.bubble_repeat} steps"
    )
    header = [
        "schedule",
        "m",
        "measured",
        "replayed",
        "(p-1)/(m+p-1)",
        "vs theory",
        "vs replayed",
    ]
    print(format_table(header, rows))
    print(
        "replayed: the schedule re-run on paper with each action's measured time and free "
        "hand-offs\n(measured - replayed: the hand-offs; replayed - theory: uneven actions)"
    )


def relative(value: float, reference: float) -> float:
    """``(value - reference) / reference`` (``value`` itself where the reference is 0)."""
    return (value - reference) / reference if reference > 0 else value


def overhead(args: argparse.Namespace, devices: list[str]) -> None:
    p = args.stages
    model = balanced(p, args.layers, args.width)
    bounds = boundaries(p, args.layers)
    plain = copy.deepcopy(model).to(devices[0])
    stages = split_model(copy.deepcopy(model), devices, bounds).stages
    rng = np.random.default_rng(1)
    x = mta.tensor(rng.normal(size=(args.batch, args.width)), dtype="float32")
    y = mta.tensor(rng.normal(size=(args.batch, args.width)), dtype="float32")
    x0, y0 = x.to(devices[0]), y.to(devices[0])

    def plain_step() -> None:
        plain.zero_grad()
        F.mse_loss(plain(x0), y0).backward()

    with Pipeline(stages, devices, 1, "gpipe", F.mse_loss) as pipe:

        def pipe_step() -> None:
            for stage in stages:
                stage.zero_grad()
            pipe.step(x, y)

        times: dict[str, list[float]] = {"plain": [], "pipeline": []}
        for _ in range(args.repeat + 2):
            for name, run in (("plain", plain_step), ("pipeline", pipe_step)):
                tick = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - tick)
    plain_t = statistics.median(times["plain"][2:])
    pipe_t = statistics.median(times["pipeline"][2:])
    per_stage = (pipe_t - plain_t) / p
    stage_compute = plain_t / p
    print(
        f"\nOverhead, one micro-batch of {args.batch} through {p} stages (stages run in turn), "
        f"set_num_threads({mta.get_num_threads()}), medians of {args.repeat} alternating runs"
    )
    print(
        format_table(
            ["", "ms"],
            [
                ["plain forward+backward, one device", f"{1e3 * plain_t:.2f}"],
                ["pipeline step, 1 micro-batch", f"{1e3 * pipe_t:.2f}"],
                ["one stage's compute (plain / p)", f"{1e3 * stage_compute:.2f}"],
                ["machinery per stage and micro-batch", f"{1e3 * per_stage:.3f}"],
            ],
        )
    )
    print(f"machinery = {per_stage / stage_compute:.1%} of a stage's compute (target: at most 5%)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stages", type=int, default=4)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=2, help="Linear layers per stage")
    parser.add_argument("--micro", type=int, default=256, help="samples per micro-batch (bubble)")
    parser.add_argument("--batch", type=int, default=256, help="batch of the overhead run")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--bubble-repeat", type=int, default=5)
    args = parser.parse_args()
    devices = [f"cpu:{i + 1}" for i in range(args.stages)]
    threads = mta.get_num_threads()
    # one thread per stage: the framework's own pool would otherwise split every GEMM of
    # every stage over all the cores, and concurrent stages would fight over them
    mta.set_num_threads(1)
    cores = available_cpus()
    print(
        f"{args.stages} stages on {', '.join(devices)}; {cores} usable core(s); "
        f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}, "
        f"set_num_threads({mta.get_num_threads()})"
    )
    if args.stages > cores:
        print(
            f"note: more stages than cores ({args.stages} > {cores}): stages share cores, so "
            "the bubble is reported without a bound"
        )
    bubbles(args, devices)
    # with one micro-batch the stages take turns: each may use every core, as the plain step does
    mta.set_num_threads(threads)
    overhead(args, devices)


if __name__ == "__main__":
    main()
