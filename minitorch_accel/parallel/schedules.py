"""Pipeline schedules as data, and what a run of one looked like (its timeline).

A schedule is, for each stage, the ordered list of what it does: ``Action(stage,
microbatch, "F")`` (the forward pass of one micro-batch) or ``"B"`` (its backward pass).
The pipeline's threads only follow these lists; waiting for an input or a gradient from
the neighbouring stage is what makes the stages fill, run together, then drain.

- **GPipe** (Huang et al., 2019): every forward, then every backward. A stage holds the
  activations of all ``m`` micro-batches at once.
- **1F1B** (PipeDream-Flush, as PyTorch's ``Schedule1F1B``): stage ``s`` of ``p`` runs
  ``min(m, p - s)`` forwards, then alternates one backward and one forward, then drains
  the backwards. It holds at most ``p - s`` micro-batches' activations.

Both leave the same *bubble* (idle share of the stages' time) when every stage takes the
same time per micro-batch: ``(p - 1) / (m + p - 1)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Action:
    """One thing a stage does: the forward (``"F"``) or backward (``"B"``) pass of a
    micro-batch.
    """

    stage: int
    microbatch: int
    kind: str


@dataclass(frozen=True)
class TimelineEvent:
    """One action as it ran: seconds since the step began (waiting excluded)."""

    stage: int
    microbatch: int
    kind: str
    start: float
    end: float
    device: str


def gpipe_schedule(stages: int, microbatches: int) -> list[list[Action]]:
    """All forwards, then all backwards, for each stage.

    Examples
    --------
    >>> [f"{a.kind}{a.microbatch}" for a in gpipe_schedule(2, 3)[0]]
    ['F0', 'F1', 'F2', 'B0', 'B1', 'B2']
    """
    return [
        [Action(s, i, "F") for i in range(microbatches)]
        + [Action(s, i, "B") for i in range(microbatches)]
        for s in range(stages)
    ]


def one_f_one_b_schedule(stages: int, microbatches: int) -> list[list[Action]]:
    """Warm-up forwards, then one backward and one forward in turn, then the remaining
    backwards (stage ``s`` of ``p`` warms up with ``min(m, p - s)`` forwards).

    Examples
    --------
    >>> [" ".join(f"{a.kind}{a.microbatch}" for a in row) for row in one_f_one_b_schedule(2, 3)]
    ['F0 F1 B0 F2 B1 B2', 'F0 B0 F1 B1 F2 B2']
    """
    order = []
    for s in range(stages):
        warmup = min(microbatches, stages - s)
        row = [Action(s, i, "F") for i in range(warmup)]
        for i in range(microbatches):
            row.append(Action(s, i, "B"))
            if warmup + i < microbatches:
                row.append(Action(s, warmup + i, "F"))
        order.append(row)
    return order


def forward_schedule(stages: int, microbatches: int) -> list[list[Action]]:
    """Forwards only (inference): each stage takes the micro-batches in order."""
    return [[Action(s, i, "F") for i in range(microbatches)] for s in range(stages)]


SCHEDULES: dict[str, Callable[[int, int], list[list[Action]]]] = {
    "gpipe": gpipe_schedule,
    "1f1b": one_f_one_b_schedule,
}


def theoretical_bubble(stages: int, microbatches: int) -> float:
    """The idle share ``(p - 1) / (m + p - 1)`` of a pipeline of ``p`` equal stages.

    Examples
    --------
    >>> theoretical_bubble(4, 4)
    0.42857142857142855
    """
    return (stages - 1) / (microbatches + stages - 1)


def bubble_fraction(timeline: Sequence[TimelineEvent], stages: int) -> float:
    """The measured idle share: ``1 - busy / (stages * span)``, where ``span`` runs from
    the first action's start to the last one's end and ``busy`` sums every action.
    """
    if not timeline:
        return 0.0
    span = max(e.end for e in timeline) - min(e.start for e in timeline)
    busy = sum(e.end - e.start for e in timeline)
    return 1.0 - busy / (stages * span) if span > 0 else 0.0


def peak_in_flight(actions: Sequence[Action] | Sequence[TimelineEvent]) -> int:
    """The most micro-batches one stage holds at once (forward done, backward not yet),
    following its actions in order: the activations it must keep.

    Examples
    --------
    >>> [peak_in_flight(row) for row in one_f_one_b_schedule(4, 8)]
    [4, 3, 2, 1]
    >>> [peak_in_flight(row) for row in gpipe_schedule(4, 8)]
    [8, 8, 8, 8]
    """
    held = peak = 0
    for action in actions:
        held += 1 if action.kind == "F" else -1
        peak = max(peak, held)
    return peak


def simulate(
    order: Sequence[Sequence[Action]],
    forward_time: float = 1.0,
    backward_time: float = 2.0,
    durations: Mapping[tuple[int, int, str], float] | None = None,
) -> list[TimelineEvent]:
    """The timeline of ``order`` on ideal stages: every forward takes ``forward_time``,
    every backward ``backward_time``, copies take nothing. An action starts when its
    stage is free and its input is ready (the forward of the stage before, or the
    backward of the stage after).

    ``durations`` maps ``(stage, microbatch, kind)`` to that action's own time (for
    example those of a measured timeline, see :func:`durations_of`): the replay then
    shows the bubble that uneven actions alone make, with hand-offs that cost nothing.

    Raises
    ------
    ValueError
        If the order can never finish (a stage waits for something that never comes).

    Examples
    --------
    >>> events = simulate(one_f_one_b_schedule(4, 8))
    >>> round(bubble_fraction(events, 4), 6) == round(theoretical_bubble(4, 8), 6)
    True
    """
    done: dict[tuple[int, int, str], float] = {}
    free = [0.0] * len(order)
    position = [0] * len(order)
    events: list[TimelineEvent] = []
    while any(position[s] < len(row) for s, row in enumerate(order)):
        progressed = False
        for s, row in enumerate(order):
            while position[s] < len(row):
                a = row[position[s]]
                if a.kind == "F":
                    needs = (s - 1, a.microbatch, "F") if s > 0 else None
                else:
                    needs = (s + 1, a.microbatch, "B") if s < len(order) - 1 else None
                if needs is not None and needs not in done:
                    break
                start = max(free[s], done[needs] if needs is not None else 0.0)
                if durations is not None:
                    took = durations[(s, a.microbatch, a.kind)]
                else:
                    took = forward_time if a.kind == "F" else backward_time
                end = start + took
                done[(s, a.microbatch, a.kind)] = free[s] = end
                events.append(TimelineEvent(s, a.microbatch, a.kind, start, end, f"stage {s}"))
                position[s] += 1
                progressed = True
        if not progressed:
            raise ValueError("this schedule deadlocks: a stage waits for an action that never runs")
    return events


def durations_of(timeline: Sequence[TimelineEvent]) -> dict[tuple[int, int, str], float]:
    """Each action's time in a timeline, by ``(stage, microbatch, kind)``, for
    :func:`simulate`.

    Examples
    --------
    >>> events = simulate(gpipe_schedule(2, 2), forward_time=1.0, backward_time=3.0)
    >>> durations_of(events)[(1, 0, "B")]
    3.0
    """
    return {(e.stage, e.microbatch, e.kind): e.end - e.start for e in timeline}


def draw_timeline(
    ax: Any, timeline: Sequence[TimelineEvent], labels: Sequence[str], unit: float = 1e3
) -> None:
    """Draw ``timeline`` on the matplotlib axes ``ax`` as a Gantt chart: one row per stage
    (``labels`` top to bottom), a bar per action labelled with its micro-batch, times
    multiplied by ``unit`` (1e3: milliseconds).
    """
    from matplotlib.patches import Patch

    p = len(labels)
    colors = {"F": "#4c72b0", "B": "#dd8452"}
    for e in timeline:
        row = p - 1 - e.stage
        width = unit * (e.end - e.start)
        ax.barh(row, width, left=unit * e.start, color=colors[e.kind], edgecolor="white")
        ax.text(
            unit * (e.start + e.end) / 2,
            row,
            str(e.microbatch),
            ha="center",
            va="center",
            fontsize=7,
            color="white",
        )
    ax.set_yticks(range(p), list(reversed(labels)))
    handles = [
        Patch(color=colors["F"], label="forward"),
        Patch(color=colors["B"], label="backward"),
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
