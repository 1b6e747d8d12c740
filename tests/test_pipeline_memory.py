"""Per-stage peak memory of a pipeline step, from the memory accounting: GPipe holds
every micro-batch's activations, 1F1B at most as many as there are stages.
"""

from __future__ import annotations

import copy

import pytest

import minitorch_accel as mta
from minitorch_accel import nn
from minitorch_accel.parallel import Pipeline, split_model

DEVICES = ["cpu:1", "cpu:2"]
MICRO = 64  # samples per micro-batch


def _net() -> nn.Sequential:
    mta.manual_seed(0)
    mods: list[nn.Module] = []
    for _ in range(4):
        mods += [nn.Linear(32, 32), nn.ReLU()]
    return nn.Sequential(*mods).double()


def _peaks(schedule: str, chunks: int) -> list[int]:
    stages = split_model(copy.deepcopy(_net()), DEVICES, boundaries=[4]).stages
    x = mta.randn(chunks * MICRO, 32).double()
    y = mta.randn(chunks * MICRO, 32).double()
    with mta.memory.tracking(), Pipeline(stages, DEVICES, chunks, schedule, nn.MSELoss()) as p:
        p.step(x, y)  # the first step allocates the gradients; the second reuses them
        p.step(x, y)
        assert p.last_peak_memory is not None
        return p.last_peak_memory


def test_gpipe_memory_grows_with_micro_batches_and_1f1b_memory_does_not() -> None:
    gpipe4, gpipe8 = _peaks("gpipe", 4), _peaks("gpipe", 8)
    f1b4, f1b8 = _peaks("1f1b", 4), _peaks("1f1b", 8)
    # A stage saves about 80 KB per micro-batch (5 float64 tensors of 64 x 32) here:
    # doubling m adds about 4 micro-batches' worth to GPipe's first stage (more than
    # 1.5x) and nothing to 1F1B's, which holds at most p = 2 micro-batches (10% margin
    # for the messages between the stages, whose timing varies).
    assert gpipe8[0] > 1.5 * gpipe4[0], (gpipe4, gpipe8)
    assert f1b8[0] <= 1.1 * f1b4[0], (f1b4, f1b8)
    assert f1b8[0] < 0.5 * gpipe8[0], (f1b8, gpipe8)


def test_no_figure_without_tracking() -> None:
    stages = split_model(_net(), DEVICES, boundaries=[4]).stages
    with mta.memory.tracking(False), Pipeline(stages, DEVICES, 2, "1f1b", nn.MSELoss()) as p:
        p.step(mta.randn(4, 32).double(), mta.randn(4, 32).double())
        assert p.last_peak_memory is None


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_the_peak_covers_what_a_stage_saves(schedule: str) -> None:
    # Stage 0 saves at least its input and its two layers' outputs for one micro-batch.
    one_micro = 3 * MICRO * 32 * 8
    assert min(_peaks(schedule, 2)) >= one_micro
