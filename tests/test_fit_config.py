"""``FitConfig``: the settings of ``fit``, checked field by field; callbacks see every epoch."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn, optim
from minitorch_accel.data import DataLoader, TensorDataset
from minitorch_accel.train import Callback, FitConfig, History, fit

BAD_VALUES = [
    # (field, value, error type, message)
    ("epochs", -1, ValueError, "FitConfig: epochs must be an integer >= 0, got -1"),
    ("epochs", 2.5, ValueError, "FitConfig: epochs must be an integer >= 0, got 2.5"),
    ("epochs", True, ValueError, "FitConfig: epochs must be an integer >= 0, got True"),
    ("accumulate", 0, ValueError, "FitConfig: accumulate must be an integer >= 1, got 0"),
    ("start_epoch", -2, ValueError, "FitConfig: start_epoch must be an integer >= 0, got -2"),
    (
        "scheduler_interval",
        "step",
        ValueError,
        "FitConfig: scheduler_interval must be one of 'batch', 'epoch', got 'step'",
    ),
    (
        "on_nonfinite",
        "skip",
        ValueError,
        "FitConfig: on_nonfinite must be one of 'stop', 'warn', 'ignore', got 'skip'",
    ),
    ("amp", "yes", TypeError, "FitConfig: amp must be True or False, got 'yes'"),
    ("progress", 1, TypeError, "FitConfig: progress must be True or False, got 1"),
    ("checkpoint", 3, TypeError, "FitConfig: checkpoint must be a file path"),
    ("interrupt_checkpoint", [], TypeError, "FitConfig: interrupt_checkpoint must be a file"),
    ("resume", 1.0, TypeError, "FitConfig: resume must be a file path"),
    ("history", [], TypeError, "FitConfig: history must be a History or None, got list"),
    ("scheduler", 0.1, TypeError, "FitConfig: scheduler must have a step() method"),
    ("device", "tpu:x", ValueError, "FitConfig: device 'tpu:x' is not valid: invalid device"),
]


@pytest.mark.parametrize(
    "field, value, error, message", BAD_VALUES, ids=[f"{b[0]}={b[1]!r}" for b in BAD_VALUES]
)
def test_a_bad_value_names_its_field(field: str, value: Any, error: type, message: str) -> None:
    settings: dict[str, Any] = {"epochs": 1, field: value}
    with pytest.raises(error) as caught:
        FitConfig(**settings)
    assert str(caught.value).startswith(message), str(caught.value)


def test_good_values_are_kept() -> None:
    history = History()
    opt = optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1)
    sched = optim.lr_scheduler.StepLR(opt, step_size=1)
    config = FitConfig(
        epochs=0,
        device="cpu:1",
        scheduler=sched,
        scheduler_interval="epoch",
        accumulate=4,
        on_nonfinite="warn",
        checkpoint=Path("run.npz"),
        interrupt_checkpoint="stop.npz",
        resume={"model": {}},
        history=history,
        progress=False,
    )
    assert (config.epochs, config.accumulate, config.history) == (0, 4, history)
    assert config.scheduler is sched and config.device == "cpu:1"
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.epochs = 3  # type: ignore[misc]
    assert dataclasses.replace(config, epochs=7).epochs == 7
    with pytest.raises(ValueError, match="FitConfig: epochs must be an integer >= 0, got -7"):
        dataclasses.replace(config, epochs=-7)  # a variant is checked as well


def test_fit_takes_few_parameters() -> None:
    params = inspect.signature(fit).parameters
    assert list(params) == [
        "model",
        "loader",
        "optimizer",
        "loss_fn",
        "config",
        "val_loader",
        "callbacks",
    ]
    # every setting of a run is a field of FitConfig, none is left on fit
    assert {f.name for f in dataclasses.fields(FitConfig)} >= {
        "epochs", "device", "scheduler", "accumulate", "checkpoint", "resume", "on_nonfinite",
        "amp", "progress",
    }  # fmt: skip


class Recorder(Callback):
    """Records every hook call, with the epoch and the model's first weight at that time."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int | None]] = []
        self.logs: list[dict[str, float]] = []
        self.weights: list[np.ndarray] = []

    def on_train_begin(self, logs: Any) -> None:
        self.calls.append(("train_begin", None))

    def on_epoch_begin(self, epoch: int, logs: Any) -> None:
        self.calls.append(("epoch_begin", epoch))

    def on_epoch_end(self, epoch: int, logs: Any) -> None:
        assert self.state is not None
        self.calls.append(("epoch_end", epoch))
        self.logs.append(dict(logs))
        self.weights.append(next(self.state.model.parameters()).detach().numpy().copy())

    def on_train_end(self, logs: Any) -> None:
        self.calls.append(("train_end", None))


def test_a_callback_sees_each_epoch() -> None:
    rng = np.random.default_rng(0)
    data = TensorDataset(rng.standard_normal((32, 5)), rng.integers(0, 3, 32))
    loader = DataLoader(data, batch_size=8, shuffle=True, seed=1)
    mta.manual_seed(2)
    model = nn.Linear(5, 3).to(dtype=np.float64)
    opt = optim.SGD(model.parameters(), lr=0.1)
    recorder = Recorder()
    config = FitConfig(epochs=3, progress=False)
    history = fit(
        model, loader, opt, nn.CrossEntropyLoss(), config, val_loader=loader, callbacks=[recorder]
    )
    assert recorder.calls == [
        ("train_begin", None),
        ("epoch_begin", 0),
        ("epoch_end", 0),
        ("epoch_begin", 1),
        ("epoch_end", 1),
        ("epoch_begin", 2),
        ("epoch_end", 2),
        ("train_end", None),
    ]
    # each epoch's logs are that epoch's row of the history, as it was at that moment
    assert [row["train_loss"] for row in recorder.logs] == history.train_loss
    assert [row["val_accuracy"] for row in recorder.logs] == history.val_accuracy
    # the weights change between epochs (training happened in between), and the last
    # seen are the final weights
    assert not np.array_equal(recorder.weights[0], recorder.weights[1])
    np.testing.assert_array_equal(recorder.weights[-1], model.weight.detach().numpy())
