"""Exponential and linear decay, chaining schedules, and lowering the rate on a plateau.

The rules and the numbers they give are PyTorch's: the rates come from the same
recurrences, so the sequences match ``torch.optim.lr_scheduler`` to rounding.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Any

from .optimizer import Optimizer
from .scheduler_base import LRScheduler


class ExponentialLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every epoch: ``lr = initial_lr * gamma**t``.

    Parameters
    ----------
    optimizer : Optimizer
    gamma : float
        The decay factor per epoch.
    last_epoch : int

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.optim import SGD
    >>> opt = SGD([mta.zeros(2, requires_grad=True)], lr=1.0)
    >>> sched = ExponentialLR(opt, gamma=0.5)
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    >>> sched.get_last_lr()
    [0.125]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The current rates times ``gamma`` (unchanged at step 0)."""
        if self._is_initial:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _closed_form_lr(self) -> list[float]:
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the learning rate by a factor going linearly from ``start_factor`` to
    ``end_factor`` over ``total_iters`` epochs, then keep it.

    ``lr(t) = initial_lr * (start + (end - start) * min(t, total_iters) / total_iters)``,
    computed (as in PyTorch) as a recurrence on the current rate.

    Parameters
    ----------
    optimizer : Optimizer
    start_factor : float, default 1/3
        In (0, 1]: the factor at epoch 0.
    end_factor : float, default 1.0
        In [0, 1]: the factor from epoch ``total_iters`` on.
    total_iters : int, default 5
    last_epoch : int

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.optim import SGD
    >>> opt = SGD([mta.zeros(2, requires_grad=True)], lr=1.0)
    >>> sched = LinearLR(opt, start_factor=0.25, total_iters=3)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [0.25, 0.5, 0.75, 1.0, 1.0]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or "
                f"equal to 1, got start_factor={start_factor}"
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError(
                f"Ending multiplicative factor expected to be between 0 and 1, got {end_factor}"
            )
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The next rates of the linear recurrence."""
        start, end, total = self.start_factor, self.end_factor, self.total_iters
        if self.last_epoch == 0:
            return [lr * start for lr in self._current_lrs()]
        if self._is_initial or self.last_epoch > total:
            return self._current_lrs()
        ratio = 1.0 + (end - start) / (total * start + (self.last_epoch - 1) * (end - start))
        return [lr * ratio for lr in self._current_lrs()]

    def _closed_form_lr(self) -> list[float]:
        start, end, total = self.start_factor, self.end_factor, self.total_iters
        factor = start + (end - start) * min(total, self.last_epoch) / total
        return [base * factor for base in self.base_lrs]


class SequentialLR(LRScheduler):
    """Run ``schedulers`` one after the other, switching at the epochs in ``milestones``.

    At a milestone the next schedule starts from its epoch 0 (e.g. a :class:`LinearLR`
    warm-up for 5 epochs, then an :class:`ExponentialLR` decay).

    A schedule may be a :class:`ChainedScheduler
    <minitorch_accel.optim.lr_scheduler.ChainedScheduler>` or another ``SequentialLR``:
    as in PyTorch, building this one takes back the first step of the schedulers they
    hold, and the rates follow PyTorch's step for step (a ``ChainedScheduler`` first
    steps each of its schedulers from epoch 0, so an :class:`ExponentialLR` in it
    already applies ``gamma`` once). A ``ChainedScheduler`` after the first milestone
    cannot be restarted there: its ``step`` raises ``NotImplementedError``, as PyTorch's.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer every scheduler of ``schedulers`` was built on.
    schedulers : list of LRScheduler
        At least one; not :class:`ReduceLROnPlateau` (its ``step`` needs the loss).
    milestones : list of int
        One fewer than ``schedulers``, increasing: the epochs where the next one starts.
    last_epoch : int

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.optim import SGD
    >>> opt = SGD([mta.zeros(2, requires_grad=True)], lr=1.0)
    >>> warmup = LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> decay = ExponentialLR(opt, gamma=0.5)
    >>> sched = SequentialLR(opt, [warmup, decay], milestones=[2])
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(sched.get_last_lr()[0])
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [0.5, 0.75, 1.0, 0.5, 0.25]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: Sequence[LRScheduler],
        milestones: Sequence[int],
        last_epoch: int = -1,
    ) -> None:
        if len(schedulers) < 1:
            raise ValueError("SequentialLR expects at least one scheduler, but got none")
        for i, scheduler in enumerate(schedulers):
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(
                    "SequentialLR does not support ReduceLROnPlateau (its step() needs the "
                    f"metric), but got one at index {i}"
                )
            if not isinstance(scheduler, LRScheduler):
                raise TypeError(f"schedulers[{i}] is a {type(scheduler).__name__}, not a scheduler")
            if scheduler.optimizer is not optimizer:
                raise ValueError(
                    f"SequentialLR expects all schedulers to belong to the same optimizer, but "
                    f"scheduler {type(scheduler).__name__} at index {i} has another one"
                )
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "SequentialLR expects one milestone fewer than schedulers, got "
                f"{len(schedulers)} schedulers and {len(milestones)} milestones"
            )
        self._schedulers = list(schedulers)
        self._milestones = [int(m) for m in milestones]
        self.optimizer = optimizer
        self.last_epoch = last_epoch + 1
        self._step_count = 0
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        for group in optimizer.param_groups:  # undo what building the schedulers did
            group["lr"] = group["initial_lr"]
        for scheduler in self._schedulers:
            _undo_initial_step(scheduler)
        first = self._schedulers[bisect.bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        """Advance one epoch: step the current schedule, or start the next at a milestone."""
        self._step_count += 1
        self.last_epoch += 1
        idx = bisect.bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._jump_to(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def get_lr(self) -> list[float]:
        """The rates set by the last step."""
        return self.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        """The state, with each inner scheduler's :meth:`state_dict` in ``_schedulers``."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict`, the inner schedulers' included."""
        state = dict(state_dict)
        inner = state.pop("_schedulers")
        self.__dict__.update(state)
        for scheduler, saved in zip(self._schedulers, inner, strict=True):
            scheduler.load_state_dict(saved)


def _undo_initial_step(scheduler: LRScheduler) -> None:
    """Take back the step ``scheduler`` took when it was built (PyTorch's
    ``recursive_undo``): for a :class:`ChainedScheduler
    <minitorch_accel.optim.lr_scheduler.ChainedScheduler>` or :class:`SequentialLR`
    inside, the steps of the schedulers it holds, not its own.
    """
    inner = getattr(scheduler, "_schedulers", None)
    if inner is not None:
        for each in inner:
            _undo_initial_step(each)
    elif hasattr(scheduler, "last_epoch"):
        scheduler.last_epoch -= 1


class ReduceLROnPlateau(LRScheduler):
    """Lower the learning rate when a metric (the validation loss) stops improving.

    ``step(metric)`` after each epoch: when the metric has not improved for more than
    ``patience`` epochs, every group's rate is multiplied by ``factor`` (not below
    ``min_lr``), then ``cooldown`` epochs pass before bad epochs count again.

    Parameters
    ----------
    optimizer : Optimizer
    mode : {"min", "max"}, default "min"
        Whether the metric should go down (a loss) or up (an accuracy).
    factor : float, default 0.1
        The factor of each reduction (< 1).
    patience : int, default 10
        Epochs without improvement tolerated before reducing.
    threshold : float, default 1e-4
        The least change that counts as an improvement.
    threshold_mode : {"rel", "abs"}, default "rel"
        ``"rel"``: better than ``best * (1 -/+ threshold)``; ``"abs"``: than
        ``best -/+ threshold``.
    cooldown : int, default 0
        Epochs to wait after a reduction before counting bad epochs again.
    min_lr : float or list of float, default 0
        The lowest rate, for all groups or one per group.
    eps : float, default 1e-8
        A reduction smaller than this is skipped.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.optim import SGD
    >>> opt = SGD([mta.zeros(2, requires_grad=True)], lr=1.0)
    >>> sched = ReduceLROnPlateau(opt, patience=1, factor=0.5)
    >>> for val_loss in [1.0, 0.9, 0.9, 0.9, 0.9]:
    ...     sched.step(val_loss)
    >>> sched.get_last_lr()
    [0.5]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: float | Sequence[float] = 0.0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau factor should be < 1.0, got {factor}")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(
                f"ReduceLROnPlateau threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}"
            )
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"expected {n} min_lrs, got {len(min_lr)}")
            self.default_min_lr: float | None = None
            self.min_lrs = [float(m) for m in min_lr]
        else:
            self.default_min_lr = float(min_lr)  # type: ignore[arg-type]
            self.min_lrs = [self.default_min_lr] * n
        self.optimizer = optimizer
        self.factor = factor
        self.mode = mode
        self.patience = patience
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._step_count = 0
        self.base_lrs = [group["lr"] for group in optimizer.param_groups]
        self._last_lr = self._current_lrs()
        self.best = math.inf if mode == "min" else -math.inf
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def is_better(self, current: float) -> bool:
        """Whether ``current`` improves on :attr:`best` by more than the threshold."""
        rel, best = self.threshold_mode == "rel", self.best
        if self.mode == "min":
            return current < (best * (1.0 - self.threshold) if rel else best - self.threshold)
        return current > (best * (1.0 + self.threshold) if rel else best + self.threshold)

    def step(self, metrics: float | Any = None) -> None:
        """Record one epoch's ``metrics`` (a number or a one-element tensor); reduce the
        rates when it has not improved for more than ``patience`` epochs.
        """
        if metrics is None:
            raise TypeError(
                "ReduceLROnPlateau.step needs the metric it watches, e.g. scheduler.step(val_loss)"
            )
        current = float(metrics.item() if hasattr(metrics, "item") else metrics)
        self._step_count += 1
        self.last_epoch += 1
        if self.is_better(current):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._current_lrs()

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"the optimizer has {len(groups)} parameter groups but ReduceLROnPlateau "
                    f"was given {len(self.min_lrs)} min_lrs: set scheduler.min_lrs to match"
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs, strict=True):
            old = float(group["lr"])
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:
                group["lr"] = new

    def get_lr(self) -> list[float]:
        """The current rates (they change only in :meth:`step`)."""
        return self._current_lrs()
