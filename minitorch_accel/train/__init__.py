"""Training: the loop, its history, callbacks, checkpoints and curves.

>>> from minitorch_accel.train import fit, evaluate, FitConfig, History, ModelCheckpoint
>>> history = fit(model, train_loader, optimizer, loss_fn,
...               FitConfig(epochs=3, checkpoint="run.npz"),
...               val_loader=test_loader)  # doctest: +SKIP
>>> plot_history(history, "curves.png")  # doctest: +SKIP

``python -m minitorch_accel train`` (see :mod:`.cli`) trains the LeNet CNN on MNIST
with all of it.
"""

from .callbacks import Callback, ModelCheckpoint
from .checkpoint import TrainingState, load_checkpoint, save_checkpoint
from .config import FitConfig
from .history import History
from .loop import NonFiniteLossError, evaluate, fit
from .plot import plot_history

__all__ = [
    "Callback",
    "FitConfig",
    "History",
    "ModelCheckpoint",
    "NonFiniteLossError",
    "TrainingState",
    "evaluate",
    "fit",
    "load_checkpoint",
    "plot_history",
    "save_checkpoint",
]
