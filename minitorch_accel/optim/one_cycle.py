"""The 1cycle learning-rate policy, stepped once per batch.

:class:`OneCycleLR` is importable from :mod:`minitorch_accel.optim.lr_scheduler` with the
other schedules; its rules and numbers are PyTorch's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .optimizer import Optimizer
from .scheduler_base import LRScheduler


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith and Topin): warm up to ``max_lr``, then anneal far below.

    Stepped once per *batch*. The learning rate rises from ``max_lr / div_factor`` to
    ``max_lr`` over the first ``pct_start`` of the steps, then falls to
    ``initial_lr / final_div_factor``. When ``cycle_momentum`` is on, the momentum (or
    Adam's ``beta1``) moves the opposite way, between ``max_momentum`` and
    ``base_momentum``.

    Parameters
    ----------
    optimizer : Optimizer
        Must have ``momentum`` or ``betas`` when ``cycle_momentum`` is True.
    max_lr : float or list of float
        The peak learning rate (one per group, or one for all).
    total_steps : int, optional
        The number of steps in the cycle; or give ``epochs`` and ``steps_per_epoch``.
    epochs, steps_per_epoch : int, optional
    pct_start : float
        The fraction of the cycle spent increasing the learning rate.
    anneal_strategy : {"cos", "linear"}
    cycle_momentum : bool
    base_momentum, max_momentum : float or list of float
    div_factor : float
        ``initial_lr = max_lr / div_factor``.
    final_div_factor : float
        ``min_lr = initial_lr / final_div_factor``.
    three_phase : bool
        Come back down to ``initial_lr`` symmetrically, then anneal to ``min_lr``.
    last_epoch : int
    """

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | Sequence[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | Sequence[float] = 0.85,
        max_momentum: float | Sequence[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self.anneal_strategy = anneal_strategy
        n = self.total_steps
        warm_up = _phase(float(pct_start * n) - 1, "initial", "max", "max", "base")
        if three_phase:
            self._schedule_phases = [
                warm_up,
                _phase(float(2 * pct_start * n) - 2, "max", "initial", "base", "max"),
                _phase(n - 1, "initial", "min", "max", "max"),
            ]
        else:
            self._schedule_phases = [warm_up, _phase(n - 1, "max", "min", "base", "max")]
        groups = optimizer.param_groups
        max_lrs = _per_group("max_lr", groups, max_lr)
        if last_epoch == -1:
            for peak, group in zip(max_lrs, groups, strict=True):
                group["initial_lr"] = peak / div_factor
                group["max_lr"] = peak
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            highs = _per_group("max_momentum", groups, max_momentum)
            lows = _per_group("base_momentum", groups, base_momentum)
            if last_epoch == -1:
                for high, low, group in zip(highs, lows, groups, strict=True):
                    self._set_momentum(group, high)
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict[str, Any], value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        """The rates of the current phase (and, as a side effect, the momentum)."""
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"Tried to step {step} times. The specified number of total steps is "
                f"{self.total_steps}"
            )
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step <= end_step or i == last:
                    pct = (step - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        momentum = self._anneal(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                        )
                        self._set_momentum(group, momentum)
                    break
                start_step = end_step
        return lrs


def _phase(end_step: float, lr_from: str, lr_to: str, m_from: str, m_to: str) -> dict[str, Any]:
    """One phase of the 1cycle policy: from one named group value to another, by end_step."""
    return {
        "end_step": end_step,
        "start_lr": f"{lr_from}_lr",
        "end_lr": f"{lr_to}_lr",
        "start_momentum": f"{m_from}_momentum",
        "end_momentum": f"{m_to}_momentum",
    }


def _total_steps(total: int | None, epochs: int | None, per_epoch: int | None) -> int:
    if total is not None:
        if not isinstance(total, int) or total <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total}")
        return total
    if epochs is None or per_epoch is None:
        raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
    if not isinstance(epochs, int) or epochs <= 0:
        raise ValueError(f"Expected positive integer epochs, but got {epochs}")
    if not isinstance(per_epoch, int) or per_epoch <= 0:
        raise ValueError(f"Expected positive integer steps_per_epoch, but got {per_epoch}")
    return epochs * per_epoch


def _per_group(name: str, groups: list[dict[str, Any]], value: Any) -> list[float]:
    if isinstance(value, (list, tuple)):
        if len(value) != len(groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. {name} has "
                f"{len(value)} values, param_groups has {len(groups)}."
            )
        return list(value)
    return [value] * len(groups)
