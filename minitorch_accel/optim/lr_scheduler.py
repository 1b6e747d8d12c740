"""Learning-rate schedules: change ``group["lr"]`` of an optimizer as training goes.

Call ``scheduler.step()`` once per epoch (or per batch, for :class:`OneCycleLR`), after
``optimizer.step()``. The rules and the numbers they give are PyTorch's.

Examples
--------
>>> import minitorch_accel as mta
>>> from minitorch_accel.optim import SGD
>>> from minitorch_accel.optim.lr_scheduler import StepLR
>>> opt = SGD([mta.zeros(2, requires_grad=True)], lr=1.0)
>>> sched = StepLR(opt, step_size=2, gamma=0.5)
>>> lrs = []
>>> for epoch in range(5):
...     lrs.append(sched.get_last_lr()[0])
...     opt.step()
...     sched.step()
>>> lrs
[1.0, 1.0, 0.5, 0.5, 0.25]
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .optimizer import Optimizer


class LRScheduler:
    """Base class: sets every group's ``lr`` to :meth:`get_lr` at each :meth:`step`.

    Parameters
    ----------
    optimizer : Optimizer
        Whose learning rates to schedule. Creating the scheduler records each group's
        ``lr`` as ``"initial_lr"`` (the base learning rate) and performs step 0.
    last_epoch : int
        The index of the last epoch done; -1 (default) starts a new schedule. Another
        value resumes one, and needs ``"initial_lr"`` in every group.

    Attributes
    ----------
    base_lrs : list of float
        The ``"initial_lr"`` of each group.
    last_epoch : int
        How many times :meth:`step` was called since the start (0 after creation).
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming a scheduler with last_epoch >= 0: load the optimizer's "
                        "state dict first"
                    )
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self._is_initial = True
        self.step()
        self._is_initial = False

    def get_lr(self) -> list[float]:
        """The learning rate of each group at epoch :attr:`last_epoch`."""
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the last :meth:`step` (one per group)."""
        return list(self._last_lr)

    def step(self) -> None:
        """Advance the schedule by one epoch and set the new learning rates."""
        self._step_count += 1
        self.last_epoch += 1
        values = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _current_lrs(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state (everything but the optimizer), for checkpoints."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict` (load the optimizer's state dict too)."""
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``.

    Parameters
    ----------
    optimizer : Optimizer
    lr_lambda : callable or list of callables
        A function of the epoch, or one per parameter group.
    last_epoch : int

    Notes
    -----
    :meth:`state_dict` saves the attributes of callable *objects*, not plain functions
    or lambdas (code is never saved).
    """

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """``base_lr * lr_lambda(last_epoch)`` for each group."""
        return [
            base * fn(self.last_epoch)
            for fn, base in zip(self.lr_lambdas, self.base_lrs, strict=True)
        ]

    def state_dict(self) -> dict[str, Any]:
        """The state; ``lr_lambdas`` holds the ``__dict__`` of callable objects, else None."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [
            None
            if isinstance(fn, types.FunctionType) or not hasattr(fn, "__dict__")
            else dict(fn.__dict__)
            for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict`; the functions themselves stay the current ones."""
        state = dict(state_dict)
        saved = state.pop("lr_lambdas", [None] * len(self.lr_lambdas))
        self.__dict__.update(state)
        for fn, attrs in zip(self.lr_lambdas, saved, strict=True):
            if attrs is not None:
                fn.__dict__.update(attrs)


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` epochs.

    Parameters
    ----------
    optimizer : Optimizer
    step_size : int
        Epochs between two decays.
    gamma : float
        The decay factor.
    last_epoch : int
    """

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        if not isinstance(step_size, int) or step_size <= 0:
            raise ValueError(f"step_size must be a positive integer, got {step_size!r}")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The current rates, times ``gamma`` at every non-zero multiple of ``step_size``."""
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]


class MultiStepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` at each epoch listed in ``milestones``.

    Parameters
    ----------
    optimizer : Optimizer
    milestones : iterable of int
        Epochs at which to decay (an epoch listed twice decays twice).
    gamma : float
    last_epoch : int
    """

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Iterable[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        counts: dict[int, int] = {}
        for m in milestones:
            counts[int(m)] = counts.get(int(m), 0) + 1
        self.milestones = counts
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The current rates, times ``gamma ** count`` at a milestone."""
        count = self.milestones.get(self.last_epoch, 0)
        if count == 0:
            return self._current_lrs()
        return [lr * self.gamma**count for lr in self._current_lrs()]


class CosineAnnealingLR(LRScheduler):
    """Anneal the learning rate along a cosine, from ``initial_lr`` to ``eta_min``.

    ``lr(t) = eta_min + (initial_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2``, written
    (as in PyTorch) as a recurrence on the current ``lr``, so that it composes with
    other changes of the learning rate.

    Parameters
    ----------
    optimizer : Optimizer
    T_max : int
        Epochs of half a period: the rate reaches ``eta_min`` at ``t = T_max``.
    eta_min : float
        The lowest learning rate.
    last_epoch : int
    """

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        if T_max <= 0:
            raise ValueError(f"T_max must be positive, got {T_max!r}")
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The next rates of the cosine recurrence."""
        t, t_max, low = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current_lrs()
        if (t - 1 - t_max) % (2 * t_max) == 0:  # the bottom, where the ratio below is 0/0
            return [
                lr + (base - low) * (1 - math.cos(math.pi / t_max)) / 2
                for lr, base in zip(self._current_lrs(), self.base_lrs, strict=True)
            ]
        ratio = (1 + math.cos(math.pi * t / t_max)) / (1 + math.cos(math.pi * (t - 1) / t_max))
        return [ratio * (lr - low) + low for lr in self._current_lrs()]


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


__all__ = [
    "CosineAnnealingLR",
    "LRScheduler",
    "LambdaLR",
    "MultiStepLR",
    "OneCycleLR",
    "StepLR",
]
