"""Training checkpoints: everything needed to stop a run and continue it exactly.

A checkpoint records the *position* of a run, ``(epoch, batch)``: the number of
completed epochs and of completed batches of the current one, together with the
model, optimizer, scheduler (and loss scaler) states, the history, the running
totals of the current epoch and the random states (see :mod:`.rng`). Resuming
replays the current epoch's shuffle, skips the batches already done and goes on, so
an interrupted and resumed run computes the same numbers as an uninterrupted one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..backends import Device
from ..core.factories import tensor
from ..core.tensor import Tensor
from .history import History
from .rng import backend_rng_state, loader_rng_state, set_backend_rng_state, set_loader_rng_state

__all__ = ["FORMAT", "ResumeError", "TrainingState", "load_checkpoint", "save_checkpoint"]

#: Written into every checkpoint, checked on load.
FORMAT = "minitorch_accel.train/1"

PathLike = str | os.PathLike[str]


def save_checkpoint(checkpoint: Mapping[str, Any], path: PathLike) -> Path:
    """Write ``checkpoint`` to ``path`` with :func:`minitorch_accel.save` (atomically).

    Returns
    -------
    pathlib.Path
        The path written.
    """
    from ..serialization import save

    target = Path(path)
    if target.parent != Path():
        target.parent.mkdir(parents=True, exist_ok=True)
    save(dict(checkpoint), target)
    return target


def load_checkpoint(path: PathLike, map_location: Any = None) -> dict[str, Any]:
    """Read a checkpoint written during :func:`~minitorch_accel.train.fit`.

    Parameters
    ----------
    path : str or os.PathLike
        The checkpoint file.
    map_location : str or Device, optional
        Where to put its tensors (see :func:`minitorch_accel.load`).

    Returns
    -------
    dict
        With ``model``, ``optimizer``, ``epoch``, ``batch``, ``history`` (a
        :class:`History`) and ``metadata`` (a dict) among others.

    Raises
    ------
    FileNotFoundError
        When ``path`` does not exist.
    ValueError
        When the file is not a training checkpoint, or one with a field missing or of
        the wrong type; the message names the file and the field.
    """
    from ..serialization import load

    name = os.fspath(path)
    if not Path(path).is_file():
        raise FileNotFoundError(f"checkpoint {name!r} does not exist")
    data = load(path, map_location=map_location)
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        raise ValueError(
            f"{name!r} is not a training checkpoint (expected format {FORMAT!r}); "
            "a plain model state dict is loaded with model.load_state_dict(load(path))"
        )
    try:
        return _checked(data)
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as exc:
        reason = f"the field {exc.args[0]!r} is missing" if isinstance(exc, KeyError) else exc
        raise ValueError(
            f"{name!r} is an incomplete or damaged training checkpoint: {reason}"
        ) from None


#: Fields of a training checkpoint and the types they must have.
_FIELDS: dict[str, type | tuple[type, ...]] = {
    "model": Mapping,
    "optimizer": Mapping,
    "epoch": int,
    "batch": int,
    "batches_per_epoch": int,
    "history": Mapping,
    "totals": Mapping,
    "rng": Mapping,
}
_TOTALS = ("loss_sum", "correct", "seen", "elapsed")


def _checked(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with ``history`` and ``metadata`` decoded, or an error saying what is wrong."""
    for key, kind in _FIELDS.items():
        value = data[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise TypeError(f"the field {key!r} is a {type(value).__name__}")
    if not 0 <= data["batch"] <= data["batches_per_epoch"] or data["epoch"] < 0:
        raise ValueError(
            f"the position (epoch {data['epoch']}, batch {data['batch']} of "
            f"{data['batches_per_epoch']}) is impossible"
        )
    for key in _TOTALS:
        float(_scalar(data["totals"][key]))
    for key in ("loader", "backends"):
        str(data["rng"][key])
    out = dict(data)
    out["history"] = History.from_dict(data["history"])
    if not isinstance(data.get("metadata", "{}"), str):
        raise TypeError(f"the field 'metadata' is a {type(data['metadata']).__name__}")
    try:
        metadata = json.loads(data.get("metadata", "{}"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"the field 'metadata' is not JSON ({exc})") from None
    if not isinstance(metadata, dict):
        raise TypeError(f"the field 'metadata' holds a {type(metadata).__name__}, not an object")
    out["metadata"] = metadata
    return out


class ResumeError(ValueError):
    """A checkpoint that does not fit the run resuming from it (another model, optimizer,
    batch size...); the message says what differs.

    Examples
    --------
    >>> issubclass(ResumeError, ValueError)
    True
    """


class TrainingState:
    """The live state of a run inside :func:`~minitorch_accel.train.fit`.

    Callbacks receive it as ``callback.state``; :meth:`save` writes a checkpoint at
    the current position.

    Attributes
    ----------
    model, optimizer, scheduler, scaler, loader
        The objects being trained (scheduler and scaler may be None).
    device : Device
        Where training runs.
    history : History
        The completed epochs.
    epoch, batch : int
        The position: epochs completed, and batches completed in the current epoch.
    batches_per_epoch : int
        ``len(loader)``.
    loss_sum, correct : Tensor
        Running totals of the current epoch on ``device`` (sum of ``loss * batch``,
        number of correct predictions); ``seen`` samples, ``elapsed`` seconds.
    metadata : dict
        Free-form JSON-compatible data stored with every checkpoint.
    """

    def __init__(
        self,
        model: Any,
        optimizer: Any,
        loader: Any,
        device: Device,
        history: History,
        scheduler: Any = None,
        scaler: Any = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self.model, self.optimizer, self.loader = model, optimizer, loader
        self.scheduler, self.scaler = scheduler, scaler
        self.device = device
        self.history = history
        self.metadata = dict(metadata or {})
        self.epoch = len(history)
        self.batch = 0
        self.batches_per_epoch = len(loader)
        self.reset_totals()
        self.loader_rng: str | None = None
        self.backend_rng = backend_rng_state([device, "cpu"])

    def reset_totals(self) -> None:
        """Zero the running totals at the start of an epoch."""
        self.loss_sum = tensor(0.0, dtype="float64", device=self.device)
        self.correct = tensor(0, dtype="int64", device=self.device)
        self.seen = 0
        self.elapsed = 0.0

    def start_epoch(self) -> None:
        """Note the shuffle state just before the epoch's order is drawn."""
        self.loader_rng = loader_rng_state(self.loader)

    def mark_batch_done(self) -> None:
        """Advance the position by one batch, after the update is complete."""
        self.batch += 1
        self.backend_rng = backend_rng_state([self.device, "cpu"])

    def mark_epoch_done(self) -> None:
        """Advance to the start of the next epoch."""
        self.epoch += 1
        self.batch = 0
        self.reset_totals()
        self.loader_rng = loader_rng_state(self.loader)  # the next epoch's start state

    def state_dict(self) -> dict[str, Any]:
        """The checkpoint of the current position (tensors are live, save them at once)."""
        ckpt: dict[str, Any] = {
            "format": FORMAT,
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "epoch": self.epoch,
            "batch": self.batch,
            "batches_per_epoch": self.batches_per_epoch,
            "history": self.history.to_dict(),
            "totals": {
                "loss_sum": float(self.loss_sum.item()),
                "correct": int(self.correct.item()),
                "seen": self.seen,
                "elapsed": self.elapsed,
            },
            "rng": {
                "loader": self.loader_rng or "null",
                "backends": self.backend_rng,
            },
            "device": str(self.device),
            "metadata": json.dumps(self.metadata),
        }
        if self.scheduler is not None:
            ckpt["scheduler"] = self.scheduler.state_dict()
        if self.scaler is not None:
            ckpt["scaler"] = self.scaler.state_dict()
        return ckpt

    def save(self, path: PathLike) -> Path:
        """Write a checkpoint of the current position to ``path``."""
        return save_checkpoint(self.state_dict(), path)

    def load_state_dict(self, ckpt: Mapping[str, Any]) -> None:
        """Restore a checkpoint (from :func:`load_checkpoint`) into the live objects.

        Raises
        ------
        ResumeError
            When the checkpoint was made with a different number of batches per epoch
            (another batch size or dataset), lacks a scheduler state this run needs, or
            holds a model or optimizer state that does not fit this run's.
        """
        try:
            self._load_state_dict(ckpt)
        except ResumeError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, RuntimeError) as exc:
            # RuntimeError: load_state_dict's "Error(s) in loading state_dict", as PyTorch's
            reason = f"no {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)
            raise ResumeError(f"the checkpoint does not fit this run: {reason}") from exc

    def _load_state_dict(self, ckpt: Mapping[str, Any]) -> None:
        saved_batches = int(ckpt["batches_per_epoch"])
        if saved_batches != self.batches_per_epoch:
            raise ResumeError(
                f"the checkpoint was made with {saved_batches} batches per epoch, but this "
                f"loader has {self.batches_per_epoch}: use the same dataset and batch size"
            )
        self.model.load_state_dict(ckpt["model"])
        self.optimizer.load_state_dict(ckpt["optimizer"])
        for name, obj in (("scheduler", self.scheduler), ("scaler", self.scaler)):
            if obj is None:
                continue
            if name not in ckpt:
                raise ResumeError(f"this run has a {name} but the checkpoint holds no {name} state")
            obj.load_state_dict(ckpt[name])
        history = ckpt["history"]
        self.history = history if isinstance(history, History) else History.from_dict(history)
        self.epoch, self.batch = int(ckpt["epoch"]), int(ckpt["batch"])
        totals = ckpt["totals"]
        self.loss_sum = tensor(_scalar(totals["loss_sum"]), dtype="float64", device=self.device)
        self.correct = tensor(int(_scalar(totals["correct"])), dtype="int64", device=self.device)
        self.seen = int(_scalar(totals["seen"]))
        self.elapsed = float(_scalar(totals["elapsed"]))
        rng = ckpt["rng"]
        loader_state = str(rng["loader"])
        self.loader_rng = None if loader_state == "null" else loader_state
        set_loader_rng_state(self.loader, self.loader_rng)
        self.backend_rng = str(rng["backends"])
        set_backend_rng_state(self.backend_rng)


def _scalar(value: Any) -> Any:
    """A Python number from a number, 0-d array or 0-d tensor (as checkpoints give back)."""
    if isinstance(value, Tensor):
        return value.item()
    if hasattr(value, "item"):
        return value.item()
    return value
