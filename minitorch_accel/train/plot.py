"""Loss and accuracy curves of a :class:`~minitorch_accel.train.History` as a PNG.

matplotlib is an optional extra (``pip install 'minitorch_accel[plot]'``); nothing
else in the package needs it.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from .history import History

__all__ = ["plot_history"]

INSTALL_HINT = "pip install 'minitorch_accel[plot]'"


def _figure_class() -> Any:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator
    except ImportError as exc:
        raise ImportError(
            f"plot_history needs matplotlib, which is not installed: {INSTALL_HINT}"
        ) from exc
    return Figure, FigureCanvasAgg, MaxNLocator


def _has_values(values: list[float]) -> bool:
    return any(not math.isnan(v) for v in values)


def plot_history(history: History, path: str | os.PathLike[str], title: str | None = None) -> Path:
    """Draw the loss and accuracy per epoch, train and validation, into a PNG file.

    Parameters
    ----------
    history : History
        As returned by :func:`~minitorch_accel.train.fit`.
    path : str or os.PathLike
        The image to write (its folder is created if needed).
    title : str, optional
        A title above both panels.

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    ImportError
        When matplotlib is missing (the message says how to install it).
    ValueError
        When the history is empty.
    """
    if len(history) == 0:
        raise ValueError("plot_history: the history is empty, there is nothing to plot")
    figure_cls, canvas_cls, locator_cls = _figure_class()
    # A Figure with its own Agg canvas: no pyplot, no global state, no display needed.
    fig = figure_cls(figsize=(10, 4), layout="constrained")
    canvas_cls(fig)
    epochs = [e + 1 for e in history.epoch]
    panels = (
        ("loss", history.train_loss, history.val_loss, 1.0),
        ("accuracy (%)", history.train_accuracy, history.val_accuracy, 100.0),
    )
    for ax, (label, train, val, scale) in zip(fig.subplots(1, 2), panels, strict=True):
        ax.plot(epochs, [scale * v for v in train], marker="o", label="train")
        if _has_values(val):
            ax.plot(epochs, [scale * v for v in val], marker="s", label="validation")
        ax.set_xlabel("epoch")
        ax.xaxis.set_major_locator(locator_cls(integer=True))
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.legend()
    if title:
        fig.suptitle(title)
    target = Path(path)
    if target.parent != Path():
        target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=100, format="png")
    return target
