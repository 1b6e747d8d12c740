"""Schedules that come back up: cyclical learning rates and cosine annealing with warm
restarts.

:class:`CyclicLR` moves the rate up and down between two bounds (stepped once per
*batch*); :class:`CosineAnnealingWarmRestarts` anneals along a cosine and jumps back
to the initial rate at each restart (SGDR). Both are importable from
:mod:`minitorch_accel.optim.lr_scheduler`; the rules and numbers are PyTorch's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .factor_schedulers import _saved_attributes
from .one_cycle import _per_group
from .optimizer import Optimizer
from .scheduler_base import LRScheduler

_MODES = ("triangular", "triangular2", "exp_range")


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith, 2017): the rate goes from ``base_lr`` up to
    ``max_lr`` in ``step_size_up`` steps and back down in ``step_size_down``, again and
    again. Step it once per batch.

    At step ``t``, with ``cycle = floor(1 + t / total_size)`` and the position in the
    cycle ``x = 1 + t / total_size - cycle`` (``total_size = up + down``)::

        height = x / ratio if x <= ratio else (x - 1) / (ratio - 1)   # ratio = up / total
        lr = base_lr + (max_lr - base_lr) * height * scale_fn(cycle or t)

    with ``scale_fn`` 1 (``"triangular"``), ``1 / 2 ** (cycle - 1)`` (``"triangular2"``:
    the amplitude halves every cycle) or ``gamma ** t`` (``"exp_range"``). When
    ``cycle_momentum`` is on, the momentum (or Adam's ``beta1``) moves the opposite
    way: ``max_momentum - (max_momentum - base_momentum) * height * scale_fn(...)``.

    Parameters
    ----------
    optimizer : Optimizer
        Needs ``momentum`` or ``betas`` when ``cycle_momentum`` is True.
    base_lr, max_lr : float or list of float
        The lower and upper bounds of the rate (one per group, or one for all). When
        ``last_epoch`` is -1, every group's ``lr`` is set to ``base_lr``.
    step_size_up : int, default 2000
        Steps in the rising half of a cycle.
    step_size_down : int, optional
        Steps in the falling half (default: ``step_size_up``).
    mode : {"triangular", "triangular2", "exp_range"}
        Ignored when ``scale_fn`` is given.
    gamma : float, default 1.0
        The base of ``"exp_range"``'s scale.
    scale_fn : callable, optional
        A custom scale in [0, 1], a function of the cycle number or of the step.
    scale_mode : {"cycle", "iterations"}
        What ``scale_fn`` is a function of (set by ``mode`` when ``scale_fn`` is None).
    cycle_momentum : bool, default True
    base_momentum, max_momentum : float or list of float, default 0.8 and 0.9
    last_epoch : int
        The index of the last *batch*.

    Notes
    -----
    :meth:`state_dict` keeps the attributes of a ``scale_fn`` that is a callable
    object, not a plain function or lambda (code is never saved).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.optim import SGD
    >>> opt = SGD([mta.zeros(2, requires_grad=True)], lr=1.0, momentum=0.9)
    >>> sched = CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    >>> lrs, momenta = [], []
    >>> for _ in range(5):
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    ...     momenta.append(round(opt.param_groups[0]["momentum"], 4))
    ...     opt.step()
    ...     sched.step()
    >>> lrs, momenta
    ([0.1, 0.3, 0.5, 0.3, 0.1], [0.9, 0.85, 0.8, 0.85, 0.9])
    """

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | Sequence[float],
        max_lr: float | Sequence[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float | Sequence[float] = 0.8,
        max_momentum: float | Sequence[float] = 0.9,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        groups = optimizer.param_groups
        base_lrs = _per_group("base_lr", groups, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, groups, strict=True):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", groups, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in _MODES and scale_fn is None:
            raise ValueError(
                f"mode is invalid and scale_fn is None: mode must be one of {_MODES}, got {mode!r}"
            )
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group("base_momentum", groups, base_momentum)
            self.max_momentums = _per_group("max_momentum", groups, max_momentum)
            if last_epoch == -1:
                for high, low, group in zip(
                    self.max_momentums, self.base_momentums, groups, strict=True
                ):
                    self._set_momentum(group, high)
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs  # after step 0, which used the groups' "initial_lr"

    def _init_scale_fn(self) -> None:
        """Pick the built-in scale of ``mode`` (and its ``scale_mode``), unless custom."""
        if self._scale_fn_custom is not None:
            return
        if self.mode in ("triangular", "triangular2"):
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self.scale_mode = "iterations"

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at ``x`` (the cycle number, or the step)."""
        if self._scale_fn_custom is not None:
            return float(self._scale_fn_custom(x))
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return float(1 / (2.0 ** (x - 1)))
        return float(self.gamma**x)

    def _set_momentum(self, group: dict[str, Any], value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def get_lr(self) -> list[float]:
        """The rates at step :attr:`last_epoch` (and, as a side effect, the momenta)."""
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        rising = x <= self.step_ratio
        height = x / self.step_ratio if rising else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [
            base + (high - base) * height * scale
            for base, high in zip(self.base_lrs, self.max_lrs, strict=True)
        ]
        if self.cycle_momentum:
            for group, low, high in zip(
                self.optimizer.param_groups, self.base_momentums, self.max_momentums, strict=True
            ):
                self._set_momentum(group, high - (high - low) * height * scale)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """The state; ``_scale_fn_custom`` holds a callable object's ``__dict__``, else None."""
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = _saved_attributes(fn)
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict`; ``scale_fn`` itself stays the current one."""
        state = dict(state_dict)
        attrs = state.pop("_scale_fn_custom", None)
        super().load_state_dict(state)
        if attrs is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(attrs)
        self._init_scale_fn()


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing with warm restarts (SGDR, Loshchilov and Hutter, 2017).

    ``lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2``, where
    ``T_cur`` counts the epochs since the last restart and ``T_i`` is the length of the
    current period: ``T_0`` at first, times ``T_mult`` after each restart.

    ``step()`` advances one epoch; ``step(epoch)`` jumps to ``epoch``, which may be
    fractional (``scheduler.step(epoch + i / batches_per_epoch)`` once per batch).

    Parameters
    ----------
    optimizer : Optimizer
    T_0 : int
        The length of the first period (a positive integer).
    T_mult : int, default 1
        The factor by which each period is longer than the one before (>= 1).
    eta_min : float, default 0
        The lowest learning rate.
    last_epoch : int

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.optim import SGD
    >>> opt = SGD([mta.zeros(2, requires_grad=True)], lr=1.0)
    >>> sched = CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2)
    >>> lrs = []
    >>> for _ in range(7):
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    ...     opt.step()
    ...     sched.step()
    >>> lrs
    [1.0, 0.5, 1.0, 0.8536, 0.5, 0.1464, 1.0]
    >>> sched.step(2.5)
    >>> round(sched.get_last_lr()[0], 4)
    0.9619
    """

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(
                f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}"
            )
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur: float = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The cosine at ``T_cur / T_i`` between each group's ``initial_lr`` and ``eta_min``."""
        cosine = 1 + math.cos(math.pi * self.T_cur / self.T_i)
        return [self.eta_min + (base - self.eta_min) * cosine / 2 for base in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or jump to ``epoch`` (a non-negative number, fractional
        allowed); ``T_cur`` and ``T_i`` follow, and every group's rate is set.
        """
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:  # the restart n before epoch: T_0 * (T_mult**n - 1) / (T_mult - 1) <= epoch
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult**n
        else:
            self.T_i = self.T_0
            self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr(), strict=True):
            group["lr"] = lr
        self._last_lr = self._current_lrs()
