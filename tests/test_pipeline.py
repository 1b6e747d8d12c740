"""Pipeline: every schedule and number of stages gives the whole-batch step in float64,
the timeline is consistent, failures change nothing, close() leaves no thread."""

from __future__ import annotations

import copy
import threading
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn, optim
from minitorch_accel.autograd import Function
from minitorch_accel.parallel import (
    Pipeline,
    bubble_fraction,
    durations_of,
    gpipe_schedule,
    one_f_one_b_schedule,
    peak_in_flight,
    simulate,
    split_model,
    theoretical_bubble,
)
from minitorch_accel.parallel.schedules import Action, TimelineEvent

ATOL = 1e-10
F = nn.functional


def deep_mlp(layers: int = 4) -> nn.Sequential:
    mta.manual_seed(11)
    mods: list[nn.Module] = []
    for i in range(layers):
        mods.append(nn.Linear(5 if i == 0 else 7, 3 if i == layers - 1 else 7))
        if i < layers - 1:
            mods.append(nn.ReLU())
    return nn.Sequential(*mods).double()


def data(n: int, seed: int) -> tuple[mta.Tensor, mta.Tensor]:
    rng = np.random.default_rng(seed)
    return mta.tensor(rng.normal(size=(n, 5))), mta.tensor(rng.integers(0, 3, size=n))


def host(values: list[mta.Tensor]) -> list[np.ndarray]:
    return [v.detach().to("cpu").numpy() for v in values]


def build(
    devices: list[str], boundaries: list[int] | None, chunks: int, schedule: str, opt: bool
) -> tuple[nn.Sequential, Any, nn.Sequential, Pipeline, Any]:
    reference = deep_mlp()
    model = copy.deepcopy(reference)
    ref_opt = optim.Adam(reference.parameters(), lr=0.01) if opt else None
    pipe_opt = optim.Adam(model.parameters(), lr=0.01) if opt else None
    split = split_model(model, devices, boundaries)
    pipe = Pipeline(split.stages, devices, chunks, schedule, F.cross_entropy, optimizer=pipe_opt)
    return reference, ref_opt, model, pipe, pipe_opt


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize(
    "devices, boundaries",
    [
        (["cpu:1", "cpu:2"], None),
        (["cpu:1", "cpu:2", "cpu:3"], [1, 6]),  # uneven split of the layers
        (["cpu:1", "cpu:2", "cpu:3", "cpu:4"], None),
        (["cpu:1", "cpu:1", "cpu:2"], [2, 4]),  # two stages on one device
    ],
)
@pytest.mark.parametrize("n, chunks", [(12, 5), (12, 4), (7, 7), (9, 1)])
def test_pipeline_step_equals_the_whole_batch(
    schedule: str, devices: list[str], boundaries: list[int] | None, n: int, chunks: int
) -> None:
    reference, ref_opt, model, pipe, _ = build(devices, boundaries, chunks, schedule, opt=True)
    with pipe:
        for step in range(2):
            x, y = data(n, step)
            ref_opt.zero_grad()
            ref_loss = F.cross_entropy(reference(x), y)
            ref_loss.backward()
            ref_grads = host([p.grad for p in reference.parameters()])
            ref_opt.step()
            loss = pipe.step(x, y)
            assert abs(loss - ref_loss.item()) < ATOL
            for got, want in zip(
                host([p.grad for p in model.parameters()]), ref_grads, strict=True
            ):
                np.testing.assert_allclose(got, want, rtol=0, atol=ATOL)
            for got, want in zip(
                host(list(model.parameters())), host(list(reference.parameters())), strict=True
            ):
                np.testing.assert_allclose(got, want, rtol=0, atol=ATOL)
        x, _ = data(n, 9)
        out = pipe(x)
        assert out.device is mta.Device(devices[-1]) and not out.requires_grad
        np.testing.assert_allclose(host([out])[0], reference(x).detach().numpy(), rtol=0, atol=ATOL)


def test_without_optimizer_gradients_accumulate_like_backward() -> None:
    reference, _, model, pipe, _ = build(["cpu:1", "cpu:2"], None, 3, "1f1b", opt=False)
    x, y = data(8, 0)
    for _ in range(2):  # two backward passes accumulate, as loss.backward() twice would
        F.cross_entropy(reference(x), y).backward()
        pipe.step(x, y)
    for got, want in zip(
        host([p.grad for p in model.parameters()]),
        host([p.grad for p in reference.parameters()]),
        strict=True,
    ):
        np.testing.assert_allclose(got, want, rtol=0, atol=ATOL)
    pipe.close()


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize("stages, chunks", [(2, 3), (3, 5), (4, 8), (4, 2)])
def test_timeline_is_consistent(schedule: str, stages: int, chunks: int) -> None:
    devices = [f"cpu:{i + 1}" for i in range(stages)]
    _, _, _, pipe, _ = build(devices, None, chunks, schedule, opt=False)
    pipe.step(*data(2 * chunks, 0))
    timeline = pipe.last_timeline
    pipe.close()
    assert len(timeline) == 2 * stages * chunks
    for s in range(stages):
        row = sorted((e for e in timeline if e.stage == s), key=lambda e: e.start)
        # the stage follows its row of the schedule, one action at a time
        expected = (gpipe_schedule if schedule == "gpipe" else one_f_one_b_schedule)(
            stages, chunks
        )[s]
        assert [(e.microbatch, e.kind) for e in row] == [(a.microbatch, a.kind) for a in expected]
        for a, b in zip(row, row[1:], strict=False):
            assert a.end <= b.start
        assert all(e.device == devices[s] for e in row)
    at = {(e.stage, e.microbatch, e.kind): e for e in timeline}
    for s in range(stages):
        for i in range(chunks):
            assert at[s, i, "F"].end <= at[s, i, "B"].start  # backward after its forward
            if s > 0:  # data flows forward, gradients backward
                assert at[s - 1, i, "F"].end <= at[s, i, "F"].start
                assert at[s, i, "B"].end <= at[s - 1, i, "B"].start
    limit = chunks if schedule == "gpipe" else [min(chunks, stages - s) for s in range(stages)]
    assert pipe.peak_in_flight() == (limit if isinstance(limit, list) else [limit] * stages)
    assert 0.0 <= pipe.bubble_fraction() < 1.0


def test_schedules_as_data() -> None:
    assert [f"{a.kind}{a.microbatch}" for a in one_f_one_b_schedule(4, 6)[1]] == (
        "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5".split()
    )
    for make in (gpipe_schedule, one_f_one_b_schedule):
        for p, m in [(1, 1), (2, 5), (4, 3), (3, 8)]:
            rows = make(p, m)
            assert all(a.stage == s for s, row in enumerate(rows) for a in row)
            assert all(
                sorted((a.kind, a.microbatch) for a in row)
                == sorted((k, i) for k in "FB" for i in range(m))
                for row in rows
            )
    assert [peak_in_flight(r) for r in one_f_one_b_schedule(3, 2)] == [2, 2, 1]
    assert theoretical_bubble(4, 8) == pytest.approx(3 / 11)
    events = [
        TimelineEvent(0, 0, "F", 0.0, 1.0, "cpu:1"),
        TimelineEvent(1, 0, "F", 1.0, 2.0, "cpu:2"),
    ]
    assert bubble_fraction(events, 2) == pytest.approx(0.5)
    assert Action(0, 1, "F") == Action(0, 1, "F")


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize("failing_stage, kind", [(0, "F"), (1, "B"), (2, "F"), (2, "B")])
def test_a_failing_stage_changes_nothing(schedule: str, failing_stage: int, kind: str) -> None:
    _, _, model, pipe, opt = build(["cpu:1", "cpu:2", "cpu:3"], None, 4, schedule, opt=True)
    pipe.step(*data(8, 0))  # the optimizer now holds state
    before = host(list(model.parameters()))
    grads_before = host([p.grad for p in model.parameters()])
    state_before = {
        id(p): {k: copy.deepcopy(v) for k, v in s.items()} for p, s in opt.state.items()
    }

    stage = pipe.stages[failing_stage]
    calls = {"n": 0}

    class Boom(nn.Module):
        def forward(self, x: mta.Tensor) -> mta.Tensor:
            calls["n"] += 1
            if kind == "F" and calls["n"] == 3:
                raise ValueError("broken forward")
            return x if kind == "F" else _FailingBackward.apply(x)

    stage.append(Boom())
    with pytest.raises(
        RuntimeError,
        match=rf"pipeline stage {failing_stage} on device cpu:{failing_stage + 1} failed during "
        rf"the {'forward' if kind == 'F' else 'backward'} of micro-batch \d",
    ):
        pipe.step(*data(8, 1))
    for got, want in zip(host(list(model.parameters())), before, strict=True):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(host([p.grad for p in model.parameters()]), grads_before, strict=True):
        np.testing.assert_array_equal(got, want)
    for p, s in opt.state.items():
        for key, value in s.items():
            old = state_before[id(p)][key]
            if isinstance(value, mta.Tensor):
                np.testing.assert_array_equal(value.to("cpu").numpy(), old.to("cpu").numpy())
            else:
                assert value == old
    del stage[-1]  # the pipeline still works after a failure
    pipe.step(*data(8, 2))
    pipe.close()


class _FailingBackward(Function):
    def forward(self, x: Any) -> Any:  # type: ignore[override]
        return x.copy()

    def backward(self, grad: mta.Tensor) -> mta.Tensor:
        raise ValueError("broken backward")


def test_more_chunks_than_samples_is_refused() -> None:
    _, _, _, pipe, _ = build(["cpu:1", "cpu:2"], None, 5, "1f1b", opt=False)
    with pytest.raises(
        ValueError, match=r"batch of 3 sample\(s\) cannot be cut into chunks=5.*chunks <= 3"
    ):
        pipe.step(*data(3, 0))
    assert pipe(data(3, 0)[0]).shape == (3, 3)  # inference takes one sample per micro-batch
    pipe.close()


def test_bad_arguments_are_refused() -> None:
    stages = split_model(deep_mlp(), ["cpu:1", "cpu:2"]).stages
    with pytest.raises(ValueError, match="one device per stage"):
        Pipeline(stages, ["cpu:1"], 2)
    with pytest.raises(ValueError, match="schedule must be one of"):
        Pipeline(stages, ["cpu:1", "cpu:2"], 2, "zigzag")
    with pytest.raises(ValueError, match="chunks must be a positive int"):
        Pipeline(stages, ["cpu:1", "cpu:2"], 0)
    pipe = Pipeline(stages, ["cpu:1", "cpu:2"], 2)
    with pytest.raises(ValueError, match="needs a loss_fn"):
        pipe.step(*data(4, 0))
    pipe.close()
    with pytest.raises(RuntimeError, match="closed"):
        pipe(data(4, 0)[0])


def test_close_leaves_no_thread() -> None:
    before = set(threading.enumerate())
    _, _, _, pipe, _ = build(["cpu:1", "cpu:2", "cpu:3"], None, 3, "1f1b", opt=False)
    started = set(threading.enumerate()) - before
    assert sorted(t.name for t in started) == [f"pipeline-stage-{i}-cpu:{i + 1}" for i in range(3)]
    pipe.step(*data(6, 0))
    pipe.close()
    assert not any(t.is_alive() for t in started)


def test_bytes_moved_are_the_activations_and_gradients() -> None:
    _, _, _, pipe, _ = build(["cpu:1", "cpu:2"], [4], 3, "gpipe", opt=False)
    x, y = data(6, 0)
    pipe.step(x.to("cpu:1"), y.to("cpu:2"))
    timings = pipe.last_timings
    assert timings is not None
    # one boundary: a (6, 7) float64 activation forward and its gradient back
    assert timings.device_to_device == 2 * 6 * 7 * 8
    pipe.close()


def test_plot_timeline(tmp_path: Any) -> None:
    pytest.importorskip("matplotlib")
    _, _, _, pipe, _ = build(["cpu:1", "cpu:2"], None, 4, "1f1b", opt=False)
    pipe.step(*data(8, 0))
    fig = pipe.plot_timeline(str(tmp_path / "t.png"))
    assert (tmp_path / "t.png").stat().st_size > 0
    assert len(fig.axes[0].patches) == 16
    pipe.close()


@pytest.mark.parametrize("make", [gpipe_schedule, one_f_one_b_schedule])
@pytest.mark.parametrize("p, m", [(2, 1), (2, 4), (3, 5), (4, 8), (4, 16), (1, 3)])
def test_ideal_stages_leave_the_theoretical_bubble(make: Any, p: int, m: int) -> None:
    """On stages of equal speed (forward 1, backward 2) both schedules idle exactly
    (p - 1) / (m + p - 1) of the time, and 1F1B finishes no later than GPipe."""
    events = simulate(make(p, m))
    assert bubble_fraction(events, p) == pytest.approx(theoretical_bubble(p, m), abs=1e-12)
    assert max(e.end for e in events) == pytest.approx(3 * (m + p - 1))


def test_replay_with_each_actions_own_time() -> None:
    """GPipe, 2 stages, 2 micro-batches, the second stage's forwards twice as slow: worked
    out by hand, stage 1 runs F0 [1, 3], F1 [3, 5], B0 [5, 7], B1 [7, 9] and stage 0 waits
    for each backward: B0 [7, 9], B1 [9, 11]."""
    order = gpipe_schedule(2, 2)
    times = {
        (s, i, k): 2.0 if k == "B" or s == 1 else 1.0 for s in (0, 1) for i in (0, 1) for k in "FB"
    }
    events = simulate(order, durations=times)
    spans = {(e.stage, e.microbatch, e.kind): (e.start, e.end) for e in events}
    assert spans == {
        (0, 0, "F"): (0.0, 1.0),
        (0, 1, "F"): (1.0, 2.0),
        (1, 0, "F"): (1.0, 3.0),
        (1, 1, "F"): (3.0, 5.0),
        (1, 0, "B"): (5.0, 7.0),
        (1, 1, "B"): (7.0, 9.0),
        (0, 0, "B"): (7.0, 9.0),
        (0, 1, "B"): (9.0, 11.0),
    }
    assert bubble_fraction(events, 2) == pytest.approx(1 - 14 / 22, abs=1e-12)
    assert durations_of(events) == times


@pytest.mark.parametrize(
    "schedule, make", [("gpipe", gpipe_schedule), ("1f1b", one_f_one_b_schedule)]
)
def test_replaying_a_timeline(schedule: str, make: Any) -> None:
    """Replayed with their own times, ideal actions give their timeline back; a real
    step's actions keep their times and, handed on for free, finish no later than they
    did (exact by construction: an action's end is stamped before it hands its output
    on, so no action starts before what it needs has ended; 1e-9 s for rounding)."""
    order = make(3, 4)
    ideal = simulate(order, 1.0, 2.0)
    assert simulate(order, durations=durations_of(ideal)) == ideal
    _, _, _, pipe, _ = build(["cpu:1", "cpu:2", "cpu:3"], None, 4, schedule, opt=False)
    pipe.step(*data(8, 0))
    measured = pipe.last_timeline
    pipe.close()
    replay = simulate(order, durations=durations_of(measured))
    assert durations_of(replay) == pytest.approx(durations_of(measured), abs=1e-12)
    span = max(e.end for e in measured) - min(e.start for e in measured)
    assert max(e.end for e in replay) <= span + 1e-9


def test_a_deadlocking_order_is_refused() -> None:
    order = [[Action(0, 0, "B"), Action(0, 0, "F")], [Action(1, 0, "F"), Action(1, 0, "B")]]
    with pytest.raises(ValueError, match="deadlocks"):
        simulate(order)
