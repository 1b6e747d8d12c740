"""The settings of a training run: :class:`FitConfig`, what :func:`~.loop.fit` reads.

``fit(model, loader, optimizer, loss_fn, FitConfig(epochs=3, ...), val_loader=...,
callbacks=[...])``: the data and the model are arguments, every setting of the run
(how long, the learning-rate schedule, accumulation, checkpoints, resuming, mixed
precision, what to do at a NaN loss) is a field here, checked when the config is made.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..backends import Device, DeviceLike
from .history import History
from .runner import NONFINITE_CHOICES

__all__ = ["FitConfig"]

PathLike = str | os.PathLike[str]


def _integer_at_least(name: str, value: Any, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"FitConfig: {name} must be an integer >= {low}, got {value!r}")


def _one_of(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        listed = ", ".join(map(repr, choices))
        raise ValueError(f"FitConfig: {name} must be one of {listed}, got {value!r}")


def _path_or_none(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, (str, os.PathLike)):
        raise TypeError(
            f"FitConfig: {name} must be a file path (str or os.PathLike) or None, "
            f"got {type(value).__name__}"
        )


@dataclass(frozen=True)
class FitConfig:
    """How :func:`~minitorch_accel.train.fit` trains: every setting of a run, checked.

    Parameters
    ----------
    epochs : int
        Train until this many epochs are complete (counting those of ``history`` or of
        the resumed checkpoint). 0 trains nothing.
    device : str or Device, default "cpu"
        Where to train: the model is moved there, and batches not already there.
    scheduler : LRScheduler, optional
        The learning-rate schedule, stepped after every batch (``scheduler_interval=
        "batch"``, as ``OneCycleLR`` expects) or every epoch (``"epoch"``, as
        ``StepLR``). A :class:`~minitorch_accel.optim.lr_scheduler.ReduceLROnPlateau` is
        stepped at the end of every epoch with the validation loss (the training loss
        without a ``val_loader``), whatever ``scheduler_interval`` says.
    scheduler_interval : {"batch", "epoch"}, default "batch"
        When ``scheduler.step()`` is called.
    accumulate : int, default 1
        Gradient accumulation: every batch goes through forward and backward in this
        many micro-batches (each loss weighted by its share of the batch), then the
        optimizer steps once. The gradients are those of the whole batch (equal up to
        rounding; not with batch norm, whose statistics are per micro-batch), while the
        activations need the memory of one micro-batch. See the tutorial "How big a
        model fits".
    amp : bool, default False
        Mixed precision through :mod:`minitorch_accel.amp` (autocast + GradScaler).
    on_nonfinite : {"stop", "warn", "ignore"}, default "stop"
        At a NaN or infinite loss: ``"stop"`` raises
        :class:`~minitorch_accel.train.NonFiniteLossError` before that batch updates
        anything and never writes a checkpoint whose parameters are not finite;
        ``"warn"`` warns once and goes on; ``"ignore"`` skips the check (which reads the
        loss every step: one device synchronization per step on a GPU).
    checkpoint : str or os.PathLike, optional
        Write a full checkpoint there after every epoch (atomically).
    interrupt_checkpoint : str or os.PathLike, optional
        Where to save when interrupted (Ctrl-C, SIGTERM); ``checkpoint`` by default.
        With neither, an interrupted run saves nothing.
    resume : str, os.PathLike or dict, optional
        A checkpoint (path or :func:`~minitorch_accel.train.load_checkpoint` dict) to
        continue from: model, optimizer, scheduler, history, position within the epoch,
        shuffle and random states. On the CPU the continued run computes exactly the
        numbers of one never interrupted. Overrides ``start_epoch`` and ``history``.
    resume_command : str, optional
        How to resume, shown after an interruption (``{path}`` is replaced by the
        checkpoint path). Defaults to ``fit(..., resume='<path>')``.
    metadata : mapping, optional
        JSON-compatible data stored in every checkpoint (e.g. the command line).
    start_epoch : int, default 0
        Number of the first epoch, when continuing by hand; at least the one after the
        last epoch of ``history``.
    history : History, optional
        Appended to (a new one by default).
    progress : bool, default True
        A progress bar per epoch on stderr and a summary line per epoch; False prints
        nothing.

    Raises
    ------
    ValueError
        For a value out of range (``epochs < 0``, ``accumulate < 1``, an unknown
        ``scheduler_interval`` or ``on_nonfinite``, an invalid ``device``); the message
        names the field.
    TypeError
        For a field of the wrong type (``history`` not a History, a path that is not
        one, ``amp`` or ``progress`` not a bool).

    Examples
    --------
    >>> config = FitConfig(epochs=3, accumulate=2, checkpoint="run.npz")
    >>> config.epochs, config.accumulate, config.on_nonfinite
    (3, 2, 'stop')
    >>> FitConfig(epochs=-1)
    Traceback (most recent call last):
        ...
    ValueError: FitConfig: epochs must be an integer >= 0, got -1
    >>> import dataclasses
    >>> dataclasses.replace(config, epochs=5).epochs  # a variant of a config
    5
    """

    epochs: int
    device: DeviceLike = "cpu"
    scheduler: Any = None
    scheduler_interval: str = "batch"
    accumulate: int = 1
    amp: bool = False
    on_nonfinite: str = "stop"
    checkpoint: PathLike | None = None
    interrupt_checkpoint: PathLike | None = None
    resume: PathLike | Mapping[str, Any] | None = None
    resume_command: str | None = None
    metadata: Mapping[str, Any] | None = None
    start_epoch: int = 0
    history: History | None = None
    progress: bool = True

    def __post_init__(self) -> None:
        _integer_at_least("epochs", self.epochs, 0)
        _integer_at_least("accumulate", self.accumulate, 1)
        _integer_at_least("start_epoch", self.start_epoch, 0)
        _one_of("scheduler_interval", self.scheduler_interval, ("batch", "epoch"))
        _one_of("on_nonfinite", self.on_nonfinite, NONFINITE_CHOICES)
        for name in ("amp", "progress"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(
                    f"FitConfig: {name} must be True or False, got {getattr(self, name)!r}"
                )
        for name in ("checkpoint", "interrupt_checkpoint"):
            _path_or_none(name, getattr(self, name))
        if not (self.resume is None or isinstance(self.resume, Mapping)):
            _path_or_none("resume", self.resume)
        if self.history is not None and not isinstance(self.history, History):
            raise TypeError(
                f"FitConfig: history must be a History or None, got {type(self.history).__name__}"
            )
        if self.scheduler is not None and not callable(getattr(self.scheduler, "step", None)):
            raise TypeError(
                "FitConfig: scheduler must have a step() method (an LRScheduler), got "
                f"{type(self.scheduler).__name__}"
            )
        try:
            Device(self.device)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"FitConfig: device {self.device!r} is not valid: {exc}") from None
