"""Where the time of a tower step goes: seconds per phase and bytes moved.

The phases follow the recipe. With ``reduce="host"``: ``broadcast`` (pack the master
parameters, copy them and the batch shards to each device), ``forward``, ``backward``,
``gather`` (pack each tower's gradients, copy them to the host), ``average`` (the
weighted average on the host), ``update`` (the optimizer on the master parameters).
With ``reduce="device"``: ``broadcast`` is the copy of the shards and of the averaged
gradients back to the towers, ``gather`` the packing and the copies to tower 0 (zero
with NCCL, which does it all in ``average``), ``update`` every replica's optimizer.
Towers run concurrently; a step counts the phases of its slowest tower.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from time import perf_counter

from ..backends import transfer_stats

PHASES = ("broadcast", "forward", "backward", "gather", "average", "update")
TOWER_PHASES = ("receive", "forward", "backward", "send")


@dataclass
class TowerTiming:
    """One tower's share of a step (seconds), measured in its own thread."""

    device: str
    samples: int
    receive: float = 0.0
    forward: float = 0.0
    backward: float = 0.0
    send: float = 0.0


@dataclass
class StepTimings:
    """Seconds per phase and bytes moved in one step.

    Attributes
    ----------
    phases : dict of str to float
        Seconds for each name of :data:`PHASES`.
    total : float
        Wall-clock seconds of the whole step.
    host_to_device, device_to_host, device_to_device : int
        Bytes moved during the step, from
        :data:`minitorch_accel.backends.transfer_stats`.
    towers : list of TowerTiming
        Each tower's own figures.
    """

    phases: dict[str, float]
    total: float
    host_to_device: int = 0
    device_to_host: int = 0
    device_to_device: int = 0
    towers: list[TowerTiming] = field(default_factory=list)

    @classmethod
    def from_towers(
        cls,
        phases: dict[str, float],
        towers: list[TowerTiming],
        start: float,
        moved_before: dict[str, int],
    ) -> StepTimings:
        """The timings of a step that began at ``start`` (a ``perf_counter`` reading),
        when ``transfer_stats`` read ``moved_before``.

        ``phases`` holds the host's own seconds. The towers run at once, so the step
        waits for the slowest one: its receive, forward, backward and send are added to
        broadcast, forward, backward and gather (the phases then add up to at most the
        step; the rest is thread hand-offs and waiting).
        """
        critical = max(towers, key=lambda t: sum(getattr(t, name) for name in TOWER_PHASES))
        slowest = {name: getattr(critical, name) for name in TOWER_PHASES}
        merged = {name: phases.get(name, 0.0) for name in PHASES}
        merged["broadcast"] += slowest["receive"]
        merged["forward"] += slowest["forward"]
        merged["backward"] += slowest["backward"]
        merged["gather"] += slowest["send"]
        after = transfer_stats.as_dict()
        return cls(
            phases=merged,
            total=perf_counter() - start,
            host_to_device=after["host_to_device"] - moved_before["host_to_device"],
            device_to_host=after["device_to_host"] - moved_before["device_to_host"],
            device_to_device=after["device_to_device"] - moved_before["device_to_device"],
            towers=towers,
        )

    @classmethod
    def from_phases(
        cls, phases: dict[str, float], start: float, moved_before: dict[str, int]
    ) -> StepTimings:
        """The timings of a step without towers (a pipeline, model or tensor parallel step)
        that began at ``start``; phases not in ``phases`` are zero.
        """
        after = transfer_stats.as_dict()
        return cls(
            phases={name: phases.get(name, 0.0) for name in PHASES},
            total=perf_counter() - start,
            host_to_device=after["host_to_device"] - moved_before["host_to_device"],
            device_to_host=after["device_to_host"] - moved_before["device_to_host"],
            device_to_device=after["device_to_device"] - moved_before["device_to_device"],
        )

    @property
    def bytes_moved(self) -> int:
        """All bytes moved in the step, whichever way."""
        return self.host_to_device + self.device_to_host + self.device_to_device


class TimingLog:
    """Sums :class:`StepTimings` over steps and prints their per-step means."""

    def __init__(self) -> None:
        self.steps = 0
        self.phases = dict.fromkeys(PHASES, 0.0)
        self.total = 0.0
        self.bytes = {"host_to_device": 0, "device_to_host": 0, "device_to_device": 0}

    def add(self, timings: StepTimings) -> None:
        """Count one more step."""
        self.steps += 1
        self.total += timings.total
        for name in PHASES:
            self.phases[name] += timings.phases.get(name, 0.0)
        self.bytes["host_to_device"] += timings.host_to_device
        self.bytes["device_to_host"] += timings.device_to_host
        self.bytes["device_to_device"] += timings.device_to_device

    def mean_phases(self) -> dict[str, float]:
        """Mean seconds per step of each phase (zeros before any step)."""
        steps = max(self.steps, 1)
        return {name: seconds / steps for name, seconds in self.phases.items()}

    def summary(self, title: str) -> str:
        """A table: each phase's mean milliseconds and share of the step, the time no
        phase accounts for (thread hand-offs, waiting), then the bytes moved per step.
        """
        steps = max(self.steps, 1)
        step = self.total / steps
        means = self.mean_phases()
        means["other (threads, waiting)"] = max(step - sum(means.values()), 0.0)
        means["step (wall clock)"] = step
        rows = [
            [name, f"{1e3 * seconds:.3f}", f"{100 * seconds / step if step > 0 else 0.0:.1f}%"]
            for name, seconds in means.items()
        ]
        table = format_table(["phase", "ms/step", "share"], rows)
        moved = ", ".join(
            f"{name.replace('_', ' ')} {n / steps / 1e6:.3f} MB" for name, n in self.bytes.items()
        )
        return f"{title} ({self.steps} step(s))\n{table}\nper step: {moved}"


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table with columns padded to their widest cell.

    Examples
    --------
    >>> print(format_table(["a", "bb"], [["1", "2"]]))
    a | bb
    --+---
    1 | 2
    """
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        return " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    rule = "-+-".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])
