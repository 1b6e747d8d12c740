"""Callbacks: code that :func:`~minitorch_accel.train.fit` runs at fixed points of training.

Subclass :class:`Callback` and override the hooks you need. Before training starts,
``fit`` sets ``callback.state`` to the live :class:`~minitorch_accel.train.TrainingState`
(model, optimizer, history, position). Raising ``KeyboardInterrupt`` from a hook stops
training cleanly at that point, exactly as Ctrl-C does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from .checkpoint import TrainingState

__all__ = ["Callback", "CallbackList", "ModelCheckpoint"]

Logs = Mapping[str, float]


class Callback:
    """Base class of training callbacks; every hook does nothing by default.

    Attributes
    ----------
    state : TrainingState or None
        Set by ``fit`` before :meth:`on_train_begin`.

    Examples
    --------
    >>> class PrintLoss(Callback):
    ...     def on_epoch_end(self, epoch, logs):
    ...         print(f"epoch {epoch}: loss {logs['train_loss']:.3f}")
    """

    state: TrainingState | None = None

    def set_state(self, state: TrainingState) -> None:
        """Give the callback the run it belongs to (called by ``fit``)."""
        self.state = state

    def on_train_begin(self, logs: Logs) -> None:
        """Before the first epoch (also when resuming)."""

    def on_epoch_begin(self, epoch: int, logs: Logs) -> None:
        """At the start of epoch ``epoch`` (counted from 0)."""

    def on_batch_end(self, batch: int, logs: Logs) -> None:
        """After batch ``batch`` of the epoch (from 0) has updated the model.

        ``logs`` holds ``"loss"`` (that batch's loss) and ``"batch_size"``.
        """

    def on_epoch_end(self, epoch: int, logs: Logs) -> None:
        """After epoch ``epoch`` has been validated and recorded in the history.

        ``logs`` is the epoch's row of the history (``train_loss``, ``val_accuracy``...).
        """

    def on_train_end(self, logs: Logs) -> None:
        """After the last epoch, or after training was interrupted."""


class CallbackList:
    """Several callbacks called in order (used by ``fit``)."""

    def __init__(self, callbacks: Sequence[Callback]) -> None:
        self.callbacks = list(callbacks)
        for cb in self.callbacks:
            if not isinstance(cb, Callback):
                raise TypeError(f"callbacks must be Callback instances, got {type(cb).__name__}")
        # Reading the batch loss forces a device sync: only do it when someone listens.
        self.wants_batch_logs = any(
            type(cb).on_batch_end is not Callback.on_batch_end for cb in self.callbacks
        )

    def set_state(self, state: TrainingState) -> None:
        """Give every callback the live state."""
        for cb in self.callbacks:
            cb.set_state(state)

    def on_train_begin(self, logs: Logs) -> None:
        """Call every callback's :meth:`Callback.on_train_begin`."""
        for cb in self.callbacks:
            cb.on_train_begin(logs)

    def on_epoch_begin(self, epoch: int, logs: Logs) -> None:
        """Call every callback's :meth:`Callback.on_epoch_begin`."""
        for cb in self.callbacks:
            cb.on_epoch_begin(epoch, logs)

    def on_batch_end(self, batch: int, logs: Logs) -> None:
        """Call every callback's :meth:`Callback.on_batch_end`."""
        for cb in self.callbacks:
            cb.on_batch_end(batch, logs)

    def on_epoch_end(self, epoch: int, logs: Logs) -> None:
        """Call every callback's :meth:`Callback.on_epoch_end`."""
        for cb in self.callbacks:
            cb.on_epoch_end(epoch, logs)

    def on_train_end(self, logs: Logs) -> None:
        """Call every callback's :meth:`Callback.on_train_end`."""
        for cb in self.callbacks:
            cb.on_train_end(logs)


class ModelCheckpoint(Callback):
    """Save a full training checkpoint at the end of every ``every`` epochs.

    The file holds the model, optimizer, scheduler, history, position and random
    states; ``fit(..., FitConfig(..., resume=path))`` continues from it.

    Parameters
    ----------
    path : str or os.PathLike
        Where to write. May contain ``{epoch}`` (the number of completed epochs), e.g.
        ``"ckpt/epoch{epoch:02d}.npz"``, to keep one file per epoch; otherwise the file
        is overwritten (atomically) each time.
    every : int, default 1
        Save after every ``every``-th epoch, and always after the last one.

    Attributes
    ----------
    last_path : pathlib.Path or None
        The file written most recently.

    Examples
    --------
    >>> cb = ModelCheckpoint("runs/lenet-{epoch}.npz", every=2)
    >>> cb.format_path(3)
    PosixPath('runs/lenet-3.npz')
    """

    def __init__(self, path: str | os.PathLike[str], every: int = 1) -> None:
        if isinstance(every, bool) or int(every) != every or every < 1:
            raise ValueError(f"ModelCheckpoint every must be an integer >= 1, got {every!r}")
        self.path = os.fspath(path)
        self.every = int(every)
        self.last_path: Path | None = None
        self.total_epochs: int | None = None

    def format_path(self, epochs_done: int) -> Path:
        """The file name for a checkpoint taken after ``epochs_done`` epochs."""
        return Path(self.path.format(epoch=epochs_done))

    def on_epoch_end(self, epoch: int, logs: Logs) -> None:
        """Save when ``epoch + 1`` is a multiple of ``every`` or the last epoch."""
        if self.state is None:
            raise RuntimeError("ModelCheckpoint is used outside fit(): it has no state")
        done = epoch + 1
        last = self.total_epochs is not None and done >= self.total_epochs
        if done % self.every == 0 or last:
            self.last_path = self.state.save(self.format_path(done))

    def __repr__(self) -> str:
        return f"ModelCheckpoint({self.path!r}, every={self.every})"


def bind(callbacks: Sequence[Callback], state: TrainingState, epochs: int) -> CallbackList:
    """A :class:`CallbackList` wired to ``state`` (internal helper of ``fit``)."""
    listed = CallbackList(callbacks)
    listed.set_state(state)
    for cb in listed.callbacks:
        if isinstance(cb, ModelCheckpoint):
            cb.total_epochs = epochs
    return listed
