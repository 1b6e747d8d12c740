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

from .cyclic_schedulers import CosineAnnealingWarmRestarts, CyclicLR
from .factor_schedulers import ChainedScheduler, ConstantLR, MultiplicativeLR, PolynomialLR
from .more_schedulers import ExponentialLR, LinearLR, ReduceLROnPlateau, SequentialLR
from .one_cycle import OneCycleLR
from .optimizer import Optimizer
from .scheduler_base import LRScheduler


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

    def _closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


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

    def _closed_form_lr(self) -> list[float]:
        passed = sum(c for m, c in self.milestones.items() if m <= self.last_epoch)
        return [base * self.gamma**passed for base in self.base_lrs]


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

    def _closed_form_lr(self) -> list[float]:
        cosine = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base - self.eta_min) * cosine for base in self.base_lrs]


__all__ = [
    "ChainedScheduler",
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "MultiplicativeLR",
    "OneCycleLR",
    "PolynomialLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "StepLR",
]
