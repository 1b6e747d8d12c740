"""History: what happened in each epoch of a training run.

One list per metric, one entry per epoch, so a curve is ``history.train_loss`` and a
row is ``history.row(i)``. Metrics that were not measured (no validation set) are NaN,
which keeps every list the same length and every value a float.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["History"]

#: The per-epoch columns, in the order they are printed and saved.
COLUMNS = (
    "epoch",
    "train_loss",
    "train_accuracy",
    "val_loss",
    "val_accuracy",
    "epoch_time",
    "step_time",
    "samples_per_s",
    "lr",
)


@dataclass
class History:
    """Per-epoch metrics of a training run.

    Attributes
    ----------
    epoch : list of int
        The epoch numbers, counted from 0.
    train_loss, train_accuracy : list of float
        Mean loss and accuracy (a fraction in [0, 1]) over the epoch's training
        batches, measured on the fly with the weights of the moment.
    val_loss, val_accuracy : list of float
        The same on the validation set after the epoch; NaN without one.
    epoch_time : list of float
        Seconds spent in the epoch's training batches (validation not included).
    step_time : list of float
        Seconds per training batch: ``epoch_time`` over the number of batches.
    samples_per_s : list of float
        Training samples per second.
    lr : list of float
        The learning rate of the first parameter group at the end of the epoch.

    Examples
    --------
    >>> import math
    >>> h = History()
    >>> h.append(epoch=0, train_loss=0.5, train_accuracy=0.9, epoch_time=2.0,
    ...          step_time=0.02, samples_per_s=3200.0, lr=0.01)
    >>> len(h), h.train_loss, math.isnan(h.val_loss[0])
    (1, [0.5], True)
    >>> History.from_dict(h.to_dict()) == h
    True
    """

    epoch: list[int] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)
    train_accuracy: list[float] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    val_accuracy: list[float] = field(default_factory=list)
    epoch_time: list[float] = field(default_factory=list)
    step_time: list[float] = field(default_factory=list)
    samples_per_s: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)

    def __len__(self) -> int:
        """Number of epochs recorded."""
        return len(self.epoch)

    def __eq__(self, other: object) -> bool:
        """Equal when every column holds the same values (NaN equal to NaN)."""
        if not isinstance(other, History):
            return NotImplemented
        return all(
            len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
            for a, b in ((getattr(self, c), getattr(other, c)) for c in COLUMNS)
        )

    def append(self, epoch: int, **metrics: float | None) -> None:
        """Record one epoch.

        Parameters
        ----------
        epoch : int
            The epoch number (from 0).
        **metrics : float or None
            Values of the other columns (see the class attributes); a column left out
            or given as None is stored as NaN.

        Raises
        ------
        TypeError
            For a keyword that is not a column.
        """
        unknown = set(metrics) - set(COLUMNS)
        if unknown:
            raise TypeError(
                f"History.append got unknown metric(s) {sorted(unknown)}; "
                f"the columns are {list(COLUMNS[1:])}"
            )
        self.epoch.append(int(epoch))
        for name in COLUMNS[1:]:
            value = metrics.get(name)
            getattr(self, name).append(math.nan if value is None else float(value))

    def row(self, index: int) -> dict[str, float]:
        """The metrics of one recorded epoch, ``{column: value}``."""
        return {name: getattr(self, name)[index] for name in COLUMNS}

    def last(self) -> dict[str, float]:
        """The metrics of the latest epoch.

        Raises
        ------
        IndexError
            When nothing has been recorded yet.
        """
        if not self.epoch:
            raise IndexError("History is empty: no epoch has been recorded")
        return self.row(-1)

    def truncate(self, epochs: int) -> None:
        """Keep only the first ``epochs`` entries of every column."""
        for name in COLUMNS:
            del getattr(self, name)[epochs:]

    def to_dict(self) -> dict[str, list[float]]:
        """Every column as a list of floats, for a checkpoint or JSON.

        Returns
        -------
        dict
            ``{column: [value per epoch]}`` with the columns of :data:`COLUMNS`.
        """
        return {name: [float(v) for v in getattr(self, name)] for name in COLUMNS}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> History:
        """Rebuild a History from :meth:`to_dict`'s output.

        Columns may be lists, NumPy arrays or tensors (what a checkpoint gives back).
        A column missing from ``data`` is filled with NaN.

        Raises
        ------
        ValueError
            When ``data`` has no ``"epoch"`` column, an unknown column, or columns of
            different lengths.
        """
        if "epoch" not in data:
            raise ValueError("not a History dict: it has no 'epoch' column")
        unknown = set(data) - set(COLUMNS)
        if unknown:
            raise ValueError(f"not a History dict: unknown column(s) {sorted(unknown)}")
        epochs = [int(e) for e in _as_list(data["epoch"])]
        history = cls(epoch=epochs)
        for name in COLUMNS[1:]:
            values = [float(v) for v in _as_list(data.get(name, [math.nan] * len(epochs)))]
            if len(values) != len(epochs):
                raise ValueError(
                    f"History column {name!r} has {len(values)} values for {len(epochs)} epochs"
                )
            setattr(history, name, values)
        return history

    def format_row(self, index: int = -1) -> str:
        """One epoch as a line of text, e.g. for a log."""
        row = self.row(index)
        parts = [
            f"epoch {int(row['epoch']) + 1}",
            f"loss {row['train_loss']:.4f}",
            f"acc {100 * row['train_accuracy']:.2f}%",
        ]
        if not math.isnan(row["val_loss"]):
            parts.append(f"val_loss {row['val_loss']:.4f}")
        if not math.isnan(row["val_accuracy"]):
            parts.append(f"val_acc {100 * row['val_accuracy']:.2f}%")
        parts.append(f"{row['epoch_time']:.1f}s ({row['step_time'] * 1000:.1f} ms/batch)")
        return ", ".join(parts)


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _as_list(values: Any) -> list[Any]:
    if hasattr(values, "tolist"):
        out = values.tolist()
        return out if isinstance(out, list) else [out]
    return list(values)


# The dataclass fields and COLUMNS must agree; checked once at import.
assert tuple(f.name for f in fields(History)) == COLUMNS
