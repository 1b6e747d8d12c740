"""The base class of the learning-rate schedules (:mod:`minitorch_accel.optim.lr_scheduler`).

A schedule sets every parameter group's ``lr`` to :meth:`LRScheduler.get_lr` at each
``step()``; subclasses only say what the rate is at a given epoch.
"""

from __future__ import annotations

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
        self._initial_step()

    def _initial_step(self) -> None:
        """Step 0: set the rates of the first epoch (``get_lr`` sees ``_is_initial``)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
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

    def _jump_to(self, epoch: int) -> None:
        """Set :attr:`last_epoch` to ``epoch`` and the rates to those of that epoch, from
        :meth:`_closed_form_lr` where the schedule has one (as PyTorch's ``_update_lr``).
        """
        self.last_epoch = epoch
        closed_form = getattr(self, "_closed_form_lr", None)
        values = closed_form() if closed_form is not None else self.get_lr()
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
