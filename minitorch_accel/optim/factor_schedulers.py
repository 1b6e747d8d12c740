"""Schedules that multiply the learning rate by a factor, and chaining several of them.

:class:`ConstantLR` (a lower rate for the first epochs), :class:`MultiplicativeLR` (a
factor per epoch from a function), :class:`PolynomialLR` (a polynomial decay to zero)
and :class:`ChainedScheduler` (several schedules stepped together, their factors
multiplied). All are importable from :mod:`minitorch_accel.optim.lr_scheduler`; the
rules and the numbers they give are PyTorch's (the same recurrences on the current
rate, so the sequences match ``torch.optim.lr_scheduler`` to rounding).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from typing import Any

from .more_schedulers import ReduceLROnPlateau
from .optimizer import Optimizer
from .scheduler_base import LRScheduler


class ConstantLR(LRScheduler):
    """Multiply the learning rate by ``factor`` until epoch ``total_iters``, then restore it.

    ``lr(t) = initial_lr * factor`` for ``t < total_iters``, ``initial_lr`` after;
    computed (as in PyTorch) on the current rate, so that it composes with other
    changes of the learning rate (see :class:`ChainedScheduler`).

    Parameters
    ----------
    optimizer : Optimizer
    factor : float, default 1/3
        In [0, 1]: the factor of the first ``total_iters`` epochs.
    total_iters : int, default 5
        The epoch at which the rate goes back to ``initial_lr``.
    last_epoch : int

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.optim import SGD
    >>> opt = SGD([mta.zeros(2, requires_grad=True)], lr=1.0)
    >>> sched = ConstantLR(opt, factor=0.5, total_iters=2)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(sched.get_last_lr()[0])
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [0.5, 0.5, 1.0, 1.0]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError(
                f"Constant multiplicative factor expected to be between 0 and 1, got {factor}"
            )
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The current rates times ``factor`` at epoch 0, divided by it at ``total_iters``."""
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._current_lrs()]
        if self.last_epoch != self.total_iters:
            return self._current_lrs()
        return [lr * (1.0 / self.factor) for lr in self._current_lrs()]

    def _closed_form_lr(self) -> list[float]:
        done = self.last_epoch >= self.total_iters
        return [base * (self.factor + done * (1 - self.factor)) for base in self.base_lrs]


class MultiplicativeLR(LRScheduler):
    """Multiply the learning rate by ``lr_lambda(epoch)`` at every step.

    ``lr(t) = lr(t - 1) * lr_lambda(t)`` for ``t >= 1`` (compare :class:`LambdaLR
    <minitorch_accel.optim.lr_scheduler.LambdaLR>`, where the function gives the
    factor from ``initial_lr``).

    Parameters
    ----------
    optimizer : Optimizer
    lr_lambda : callable or list of callables
        A function of the epoch giving the factor, or one per parameter group.
    last_epoch : int

    Notes
    -----
    :meth:`state_dict` saves the attributes of callable *objects*, not plain functions
    or lambdas (code is never saved).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.optim import SGD
    >>> opt = SGD([mta.zeros(2, requires_grad=True)], lr=1.0)
    >>> sched = MultiplicativeLR(opt, lr_lambda=lambda epoch: 0.5)
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    >>> sched.get_last_lr()
    [0.125]
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
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The current rates times ``lr_lambda(last_epoch)`` (unchanged at step 0)."""
        if self._is_initial:
            return self._current_lrs()
        return [
            lr * fn(self.last_epoch)
            for fn, lr in zip(self.lr_lambdas, self._current_lrs(), strict=True)
        ]

    def state_dict(self) -> dict[str, Any]:
        """The state; ``lr_lambdas`` holds the ``__dict__`` of callable objects, else None."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [_saved_attributes(fn) for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict`; the functions themselves stay the current ones."""
        state = dict(state_dict)
        saved = state.pop("lr_lambdas", [None] * len(self.lr_lambdas))
        self.__dict__.update(state)
        for fn, attrs in zip(self.lr_lambdas, saved, strict=True):
            if attrs is not None:
                fn.__dict__.update(attrs)


class PolynomialLR(LRScheduler):
    """Decay the learning rate along a polynomial, to zero at epoch ``total_iters``.

    ``lr(t) = initial_lr * (1 - min(t, total_iters) / total_iters) ** power``, computed
    (as in PyTorch) as a recurrence on the current rate.

    Parameters
    ----------
    optimizer : Optimizer
    total_iters : int, default 5
        The epoch at which the rate reaches zero (and stays).
    power : float, default 1.0
        The power of the polynomial (1: a straight line).
    last_epoch : int

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.optim import SGD
    >>> opt = SGD([mta.zeros(2, requires_grad=True)], lr=1.0)
    >>> sched = PolynomialLR(opt, total_iters=4, power=2.0)
    >>> lrs = []
    >>> for _ in range(6):
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [1.0, 0.5625, 0.25, 0.0625, 0.0, 0.0]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        total_iters: int = 5,
        power: float = 1.0,
        last_epoch: int = -1,
    ) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The current rates times the ratio of two successive values of the polynomial."""
        t, total = self.last_epoch, self.total_iters
        if self._is_initial or t > total:
            return self._current_lrs()
        ratio = ((1.0 - t / total) / (1.0 - (t - 1) / total)) ** self.power
        return [lr * ratio for lr in self._current_lrs()]

    def _closed_form_lr(self) -> list[float]:
        t, total = self.last_epoch, self.total_iters
        return [base * (1.0 - min(total, t) / total) ** self.power for base in self.base_lrs]


class ChainedScheduler(LRScheduler):
    """Step several schedules at once: each ``step()`` steps every one of ``schedulers``
    in order, so their factors multiply (e.g. a :class:`ConstantLR` warm-up on top of an
    :class:`~minitorch_accel.optim.lr_scheduler.ExponentialLR` decay).

    Parameters
    ----------
    schedulers : sequence of LRScheduler
        At least one, all of the same optimizer; not :class:`ReduceLROnPlateau
        <minitorch_accel.optim.lr_scheduler.ReduceLROnPlateau>` (its step needs the loss).
    optimizer : Optimizer, optional
        The schedulers' optimizer (default: that of the first scheduler).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.optim import SGD
    >>> from minitorch_accel.optim.lr_scheduler import ExponentialLR
    >>> opt = SGD([mta.zeros(2, requires_grad=True)], lr=1.0)
    >>> warmup = ConstantLR(opt, factor=0.1, total_iters=2)
    >>> decay = ExponentialLR(opt, gamma=0.5)
    >>> sched = ChainedScheduler([warmup, decay])
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [0.1, 0.05, 0.25, 0.125]
    """

    def __init__(
        self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None
    ) -> None:
        # Like PyTorch's, it does not call LRScheduler.__init__: it has no epoch of its own.
        if len(schedulers) < 1:
            raise ValueError(
                "ChainedScheduler expects at least one scheduler to be chained, but got no "
                "scheduler."
            )
        optimizer = optimizer or schedulers[0].optimizer
        for i, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(
                    f"ChainedScheduler at index {i} should have `optimizer` as its attribute."
                )
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(
                    "ChainedScheduler does not support `ReduceLROnPlateau` scheduler as it "
                    "requires additional kwargs to be specified when calling `step`, but got "
                    f"one at index {i} in the given schedulers sequence."
                )
            if scheduler.optimizer is not optimizer:
                raise ValueError(
                    "ChainedScheduler expects all schedulers to belong to the same optimizer, "
                    f"but got scheduler {type(scheduler).__name__} at index {i} with another one"
                )
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = self._current_lrs()

    def step(self) -> None:
        """Step every scheduler, in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = self._current_lrs()

    def get_lr(self) -> list[float]:
        """Not defined: a chain has no rate of its own at a given epoch, so a
        :class:`~minitorch_accel.optim.lr_scheduler.SequentialLR` cannot restart it at a
        milestone (PyTorch raises ``NotImplementedError`` there too).
        """
        raise NotImplementedError(
            "ChainedScheduler has no learning rate of its own at a given epoch, so "
            "SequentialLR cannot restart it at a milestone: put the ChainedScheduler first "
            "in SequentialLR's schedulers, or chain a SequentialLR instead"
        )

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


def _saved_attributes(fn: Any) -> dict[str, Any] | None:
    """What a state dict keeps of a user's function: a callable object's attributes;
    nothing of a plain function or lambda (code is never saved).
    """
    if fn is None or isinstance(fn, types.FunctionType) or not hasattr(fn, "__dict__"):
        return None
    return dict(fn.__dict__)
