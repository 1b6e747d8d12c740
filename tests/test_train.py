"""The training loop (fit/evaluate), History, callbacks, checkpoints, resume, plots."""

from __future__ import annotations

import math
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn, optim, train
from minitorch_accel.data import DataLoader, Subset, TensorDataset
from minitorch_accel.datasets import MNIST
from minitorch_accel.serialization import save
from minitorch_accel.train import (
    Callback,
    FitConfig,
    History,
    ModelCheckpoint,
    evaluate,
    fit,
    load_checkpoint,
    plot_history,
)
from minitorch_accel.train.history import COLUMNS
from minitorch_accel.train.interrupt import InterruptGuard

TRAIN_N, TEST_N, BATCH = 1000, 500, 50


@pytest.fixture(scope="module")
def mnist() -> tuple[Any, Any]:
    train = Subset(MNIST(sample=True, normalize=True), np.arange(TRAIN_N))
    test = Subset(MNIST(sample=True, train=False, normalize=True), np.arange(TEST_N))
    return train, test


def mlp(seed: int, dropout: float = 0.0) -> nn.Module:
    mta.manual_seed(seed)
    return nn.Sequential(
        nn.Flatten(), nn.Linear(784, 48), nn.ReLU(), nn.Dropout(dropout), nn.Linear(48, 10)
    )


class Setup:
    """A model, optimizer, one-cycle schedule and seeded loaders, built the same way twice."""

    def __init__(
        self,
        data: tuple[Any, Any],
        epochs: int,
        init_seed: int = 0,
        loader_seed: int = 7,
        dropout: float = 0.0,
    ) -> None:
        train, test = data
        self.model = mlp(init_seed, dropout)
        self.loader = DataLoader(train, batch_size=BATCH, shuffle=True, seed=loader_seed)
        self.val = DataLoader(test, batch_size=250)
        self.opt = optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
        self.sched = optim.lr_scheduler.OneCycleLR(
            self.opt, max_lr=0.1, epochs=epochs, steps_per_epoch=len(self.loader)
        )
        self.epochs = epochs

    def fit(self, callbacks: Sequence[Callback] = (), **settings: Any) -> History:
        """``fit`` with this setup; ``settings`` are fields of its FitConfig."""
        settings.setdefault("progress", False)
        config = FitConfig(epochs=self.epochs, scheduler=self.sched, **settings)
        return fit(
            self.model,
            self.loader,
            self.opt,
            nn.CrossEntropyLoss(),
            config,
            val_loader=self.val,
            callbacks=callbacks,
        )

    def params(self) -> list[np.ndarray]:
        return [p.detach().numpy().copy() for p in self.model.parameters()]


class StopAt(Callback):
    """Raise KeyboardInterrupt after batch ``batch`` of epoch ``epoch`` (or at its end)."""

    def __init__(
        self, epoch: int, batch: int | None, action: Callable[[], None] | None = None
    ) -> None:
        self.epoch, self.batch, self.action = epoch, batch, action
        self.current = -1

    def on_epoch_begin(self, epoch: int, logs: Any) -> None:
        self.current = epoch

    def on_batch_end(self, batch: int, logs: Any) -> None:
        if self.current == self.epoch and batch == self.batch:
            (self.action or _raise_interrupt)()

    def on_epoch_end(self, epoch: int, logs: Any) -> None:
        if epoch == self.epoch and self.batch is None:
            _raise_interrupt()


def _raise_interrupt() -> None:
    raise KeyboardInterrupt


# ------------------------------------------------------------------------- fit


def test_fit_learns_mnist_slice(mnist: tuple[Any, Any]) -> None:
    setup = Setup(mnist, epochs=3)
    history = setup.fit()
    assert history.epoch == [0, 1, 2]
    assert history.train_loss[0] > history.train_loss[-1]
    assert history.train_loss[-1] < 0.35
    # 1,000 training digits, an MLP, 3 epochs: at least 85% of 500 unseen digits.
    assert history.val_accuracy[-1] >= 0.85
    # the per-epoch validation numbers are those of evaluate() on the final model
    final = evaluate(setup.model, setup.val, nn.CrossEntropyLoss())
    assert final["accuracy"] == history.val_accuracy[-1]
    assert final["loss"] == pytest.approx(history.val_loss[-1], rel=1e-12)
    batches = TRAIN_N // BATCH
    for t, s, rate in zip(
        history.epoch_time, history.step_time, history.samples_per_s, strict=True
    ):
        assert s == pytest.approx(t / batches) and rate == pytest.approx(TRAIN_N / t)
    assert history.lr[-1] < 1e-3  # the one-cycle schedule ran to its end, batch by batch


def test_train_metrics_match_a_manual_loop(mnist: tuple[Any, Any]) -> None:
    """fit's epoch loss/accuracy are the sample-weighted means of the batches it trained on."""
    setup = Setup(mnist, epochs=1)
    ref = Setup(mnist, epochs=1)
    losses, correct = [], 0
    loss_fn = nn.CrossEntropyLoss()
    for x, y in ref.loader:
        ref.opt.zero_grad()
        out = ref.model(x)
        loss = loss_fn(out, y)
        loss.backward()
        ref.opt.step()
        ref.sched.step()
        losses.append(float(loss.item()) * len(y))
        correct += int((out.detach().numpy().argmax(1) == y.numpy()).sum())
    history = setup.fit()
    assert history.train_loss[0] == pytest.approx(sum(losses) / TRAIN_N, rel=1e-12)
    assert history.train_accuracy[0] == correct / TRAIN_N
    for pa, pb in zip(setup.params(), ref.params(), strict=True):
        np.testing.assert_array_equal(pa, pb)


def test_evaluate_against_numpy(mnist: tuple[Any, Any]) -> None:
    model = mlp(3)
    _, test = mnist
    loader = DataLoader(test, batch_size=128)
    model.train()
    result = evaluate(model, loader, nn.CrossEntropyLoss())
    assert model.training  # mode restored
    images, labels = test.dataset.arrays
    x, y = images[test.indices], labels[test.indices]
    with mta.no_grad():
        logits = model(mta.tensor(x)).numpy().astype(np.float64)
    shifted = logits - logits.max(1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    assert result["loss"] == pytest.approx(-log_probs[np.arange(len(y)), y].mean(), rel=1e-5)
    assert result["accuracy"] == (logits.argmax(1) == y).mean()
    assert result["samples"] == TEST_N and result["samples_per_s"] > 0
    assert math.isnan(evaluate(model, loader)["loss"])


def test_epoch_scheduler_and_start_epoch() -> None:
    ds = TensorDataset(np.eye(4, dtype=np.float32), np.arange(4))
    model = nn.Sequential(nn.Linear(4, 4))
    opt = optim.SGD(model.parameters(), lr=1.0)
    sched = optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    loader = DataLoader(ds, batch_size=2)
    config = FitConfig(
        epochs=4, scheduler=sched, scheduler_interval="epoch", start_epoch=1, progress=False
    )
    history = fit(model, loader, opt, nn.CrossEntropyLoss(), config)
    assert history.epoch == [1, 2, 3]
    assert history.lr == [0.5, 0.25, 0.125]
    more = fit(
        model, loader, opt, nn.CrossEntropyLoss(), FitConfig(5, history=history, progress=False)
    )  # continues after the epochs already in the history
    assert more is history and more.epoch == [1, 2, 3, 4]


def test_fit_argument_errors(mnist: tuple[Any, Any]) -> None:
    setup = Setup(mnist, epochs=1)
    with pytest.raises(TypeError, match=r"fit: config must be a FitConfig, got int; write "):
        fit(setup.model, setup.loader, setup.opt, nn.CrossEntropyLoss(), 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unexpected keyword argument 'epochs'"):
        fit(setup.model, setup.loader, setup.opt, nn.CrossEntropyLoss(), epochs=3)  # type: ignore[call-arg]
    triples = DataLoader(
        TensorDataset(np.zeros((4, 784), np.float32), np.arange(4), np.arange(4)), batch_size=2
    )
    with pytest.raises(ValueError, match=r"expects \(inputs, targets\) batches, got 3 fields"):
        fit(setup.model, triples, setup.opt, nn.CrossEntropyLoss(), FitConfig(1, progress=False))
    with pytest.raises(TypeError, match="callbacks must be Callback instances"):
        setup.fit(callbacks=[print])  # type: ignore[list-item]


def test_amp_is_reported_when_unavailable(
    mnist: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import minitorch_accel.amp as amp

    monkeypatch.delattr(amp, "autocast", raising=False)
    with pytest.raises(RuntimeError, match="mixed precision .* not available yet"):
        Setup(mnist, epochs=1).fit(amp=True)


def test_amp_trains_and_resumes(mnist: tuple[Any, Any], tmp_path: Path) -> None:
    amp = pytest.importorskip("minitorch_accel.amp")
    if not hasattr(amp, "GradScaler"):
        pytest.skip("minitorch_accel.amp has no GradScaler")
    full = Setup(mnist, epochs=2)
    reference = full.fit(amp=True)
    assert reference.train_loss[1] < reference.train_loss[0] < 2.5
    first = Setup(mnist, epochs=2)
    first.fit(amp=True, callbacks=[StopAt(0, 9)], interrupt_checkpoint=tmp_path / "a.npz")
    assert "scaler" in load_checkpoint(tmp_path / "a.npz")
    second = Setup(mnist, epochs=2, init_seed=1)
    assert second.fit(amp=True, resume=tmp_path / "a.npz").train_loss == reference.train_loss
    for pa, pb in zip(second.params(), full.params(), strict=True):
        np.testing.assert_array_equal(pa, pb)


def test_progress_bar_goes_to_stderr(
    mnist: tuple[Any, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    Setup(mnist, epochs=1).fit(progress=True)
    out, err = capsys.readouterr()
    assert out == ""
    assert "epoch 1/1" in err and "loss=" in err and "samples/s=" in err
    assert "val_acc" in err  # the epoch's summary line
    Setup(mnist, epochs=1).fit(progress=False)
    assert capsys.readouterr() == ("", "")


# --------------------------------------------------------------------- history


def test_history_round_trip(tmp_path: Path) -> None:
    h = History()
    h.append(
        0,
        train_loss=1.5,
        train_accuracy=0.5,
        epoch_time=2.0,
        step_time=0.1,
        samples_per_s=500.0,
        lr=0.1,
    )
    h.append(
        1,
        train_loss=0.5,
        train_accuracy=0.9,
        val_loss=0.6,
        val_accuracy=0.8,
        epoch_time=2.0,
        step_time=0.1,
        samples_per_s=500.0,
        lr=0.05,
    )
    data = h.to_dict()
    assert list(data) == list(COLUMNS)
    assert data["train_loss"] == [1.5, 0.5] and math.isnan(data["val_loss"][0])
    assert History.from_dict(data) == h
    save({"h": data}, tmp_path / "h.npz")
    from minitorch_accel.serialization import load

    assert History.from_dict(load(tmp_path / "h.npz")["h"]) == h
    # arrays (what other formats give back) are accepted too
    assert History.from_dict({k: np.asarray(v) for k, v in data.items()}) == h
    assert h.last()["val_accuracy"] == 0.8 and "val_acc 80.00%" in h.format_row()
    assert math.isnan(History.from_dict({"epoch": [0]}).train_loss[0])  # missing -> NaN
    assert h != History()


def test_history_errors() -> None:
    with pytest.raises(ValueError, match="no 'epoch' column"):
        History.from_dict({"train_loss": [1.0]})
    with pytest.raises(ValueError, match=r"unknown column\(s\) \['bogus'\]"):
        History.from_dict({"epoch": [0], "bogus": [1.0]})
    with pytest.raises(ValueError, match="'train_loss' has 2 values for 1 epochs"):
        History.from_dict({"epoch": [0], "train_loss": [1.0, 2.0]})
    with pytest.raises(TypeError, match=r"unknown metric\(s\) \['acc'\]"):
        History().append(0, acc=1.0)
    with pytest.raises(IndexError, match="History is empty"):
        History().last()


# ------------------------------------------------------- checkpoints and resume


@pytest.mark.parametrize("stop", [(1, 6), (0, None)], ids=["mid-epoch", "epoch-end"])
def test_resume_equals_uninterrupted(
    mnist: tuple[Any, Any],
    tmp_path: Path,
    stop: tuple[int, int | None],
    capsys: pytest.CaptureFixture[str],
) -> None:
    full = Setup(mnist, epochs=3, dropout=0.25)
    reference = full.fit()

    path = tmp_path / "run.npz"
    first = Setup(mnist, epochs=3, dropout=0.25)
    partial = first.fit(
        callbacks=[StopAt(*stop)], checkpoint=tmp_path / "epochs.npz", interrupt_checkpoint=path
    )
    err = capsys.readouterr().err
    assert (
        f"checkpoint saved to {path}" in err and f"fit(..., FitConfig(..., resume='{path}'))" in err
    )
    assert len(partial) == stop[0] + (stop[1] is None)
    ckpt = load_checkpoint(path)
    assert (ckpt["epoch"], ckpt["batch"]) == ((1, 7) if stop[1] == 6 else (1, 0))

    # Another init and another shuffle seed: the checkpoint must override both.
    second = Setup(mnist, epochs=3, init_seed=99, loader_seed=123, dropout=0.25)
    mta.manual_seed(5)
    resumed = second.fit(resume=path)
    assert resumed.train_loss == reference.train_loss
    assert resumed.train_accuracy == reference.train_accuracy
    assert resumed.val_loss == reference.val_loss
    for pa, pb in zip(second.params(), full.params(), strict=True):
        np.testing.assert_array_equal(pa, pb)


def test_ctrl_c_stops_after_the_batch(
    mnist: tuple[Any, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setup = Setup(mnist, epochs=2)
    seen: list[int] = []
    # What fit must put back: Python's default handler, or SIG_IGN where the process was
    # started with SIGINT ignored (a job started in the background by a non-interactive shell).
    handler_before = signal.getsignal(signal.SIGINT)

    class Count(Callback):
        def on_batch_end(self, batch: int, logs: Any) -> None:
            seen.append(batch)

    ctrl_c = StopAt(0, 3, action=lambda: signal.raise_signal(signal.SIGINT))
    history = setup.fit(
        callbacks=[ctrl_c, Count()],
        checkpoint=tmp_path / "c.npz",
        resume_command="python train.py --resume {path}",
    )
    assert seen == [0, 1, 2, 3] and len(history) == 0
    err = capsys.readouterr().err
    assert "stopping after this batch" in err
    assert f"Resume with: python train.py --resume {tmp_path / 'c.npz'}" in err
    assert load_checkpoint(tmp_path / "c.npz")["batch"] == 4
    assert signal.getsignal(signal.SIGINT) is handler_before  # restored


def test_second_ctrl_c_aborts(mnist: tuple[Any, Any], tmp_path: Path) -> None:
    def twice() -> None:
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGINT)

    setup = Setup(mnist, epochs=1)
    with pytest.raises(KeyboardInterrupt):
        setup.fit(callbacks=[StopAt(0, 1, action=twice)], checkpoint=tmp_path / "c.npz")
    assert not (tmp_path / "c.npz").exists()


def test_interrupt_without_path_saves_nothing(
    mnist: tuple[Any, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = Setup(mnist, epochs=2).fit(callbacks=[StopAt(0, None)])
    assert len(history) == 1
    assert "no checkpoint path was given, nothing saved" in capsys.readouterr().err


def test_guard_outside_main_thread_is_inert() -> None:
    import threading

    installed: list[bool] = []

    def work() -> None:
        with InterruptGuard() as guard:
            installed.append(guard._installed)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert installed == [False]


def test_model_checkpoint_every(mnist: tuple[Any, Any], tmp_path: Path) -> None:
    cb = ModelCheckpoint(tmp_path / "ck-{epoch}.npz", every=2)
    Setup(mnist, epochs=3).fit(callbacks=[cb])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck-2.npz", "ck-3.npz"]
    ckpt = load_checkpoint(tmp_path / "ck-2.npz")
    assert (ckpt["epoch"], ckpt["batch"], len(ckpt["history"])) == (2, 0, 2)
    assert cb.last_path == tmp_path / "ck-3.npz"
    with pytest.raises(ValueError, match="every must be an integer >= 1"):
        ModelCheckpoint("x.npz", every=0)
    with pytest.raises(RuntimeError, match="outside fit"):
        ModelCheckpoint("x.npz").on_epoch_end(0, {})


def test_checkpoint_errors(mnist: tuple[Any, Any], tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_checkpoint(tmp_path / "missing.npz")
    save({"w": mta.zeros(2)}, tmp_path / "plain.npz")
    with pytest.raises(ValueError, match="is not a training checkpoint"):
        load_checkpoint(tmp_path / "plain.npz")
    Setup(mnist, epochs=1).fit(checkpoint=tmp_path / "c.npz")
    other = Setup(mnist, epochs=1)
    other.loader = DataLoader(mnist[0], batch_size=100)
    with pytest.raises(ValueError, match="made with 20 batches per epoch, but this loader has 10"):
        other.fit(resume=tmp_path / "c.npz")


def test_backend_rng_state_round_trip(monkeypatch: pytest.MonkeyPatch) -> None:
    from minitorch_accel.backends import Device
    from minitorch_accel.train import rng

    mta.manual_seed(11)
    saved = rng.backend_rng_state(["cpu", "cpu"])  # each device once
    first = mta.rand(5).numpy().copy()
    rng.set_backend_rng_state(saved)
    np.testing.assert_array_equal(mta.rand(5).numpy(), first)
    rng.set_backend_rng_state('{"cuda:7": {"bit_generator": "PCG64"}}')  # no such GPU: skipped

    class NoStateDict:  # as CuPy's generators: ``state`` is no dict of NumPy's form
        class bit_generator:  # noqa: N801
            @staticmethod
            def state() -> int:
                return 0

    monkeypatch.setattr(Device("cpu").backend, "generator", lambda device: NoStateDict())
    assert rng.backend_rng_state(["cpu"]) == "{}"


# ------------------------------------------------------------------------ plot


def test_plot_history(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    h = History()
    for e in range(3):
        h.append(
            e,
            train_loss=1.0 / (e + 1),
            train_accuracy=0.5 + 0.1 * e,
            val_loss=1.2 / (e + 1),
            val_accuracy=0.45 + 0.1 * e,
        )
    out = plot_history(h, tmp_path / "sub" / "curves.png", title="run")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000
    with pytest.raises(ValueError, match="history is empty"):
        plot_history(History(), tmp_path / "empty.png")


def test_plot_without_matplotlib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    h = History()
    h.append(0, train_loss=1.0)
    with pytest.raises(ImportError, match=r"pip install 'minitorch_accel\[plot\]'"):
        plot_history(h, tmp_path / "x.png")


# ------------------------------------------------------------------------- GPU


@pytest.mark.gpu
def test_fit_on_gpu_and_resume_on_cpu(mnist: tuple[Any, Any], tmp_path: Path) -> None:
    full = Setup(mnist, epochs=2)
    full.loader = DataLoader(mnist[0], batch_size=BATCH, shuffle=True, seed=7, device="cuda")
    history = full.fit(device="cuda")
    assert str(next(full.model.parameters()).device) == "cuda:0"
    assert history.val_accuracy[-1] >= 0.85 and history.samples_per_s[-1] > 0
    # stopped on the GPU, continued on the CPU
    gpu = Setup(mnist, epochs=2)
    partial = gpu.fit(
        device="cuda", callbacks=[StopAt(0, 9)], interrupt_checkpoint=tmp_path / "gpu.npz"
    )
    assert len(partial) == 0
    cpu = Setup(mnist, epochs=2, init_seed=5)
    resumed = cpu.fit(resume=load_checkpoint(tmp_path / "gpu.npz", map_location="cpu"))
    assert len(resumed) == 2 and resumed.val_accuracy[-1] >= 0.85
    np.testing.assert_allclose(resumed.train_loss, history.train_loss, rtol=1e-3)


# ------------------------------------------------------------ non-finite losses


class SetLr(Callback):
    """Set the learning rate to ``lr`` after batch ``batch`` (None: at the end) of
    epoch ``epoch``, and keep a copy of the parameters at that point."""

    def __init__(self, epoch: int, batch: int | None, lr: float) -> None:
        self.epoch, self.batch, self.lr = epoch, batch, lr
        self.current = -1
        self.params: list[np.ndarray] = []

    def on_epoch_begin(self, epoch: int, logs: Any) -> None:
        self.current = epoch

    def _set(self) -> None:
        self.params = [p.detach().numpy().copy() for p in self.state.model.parameters()]
        self.state.optimizer.param_groups[0]["lr"] = self.lr

    def on_batch_end(self, batch: int, logs: Any) -> None:
        if self.current == self.epoch and batch == self.batch:
            self._set()

    def on_epoch_end(self, epoch: int, logs: Any) -> None:
        if epoch == self.epoch and self.batch is None:
            self._set()


def plain_fit(data: tuple[Any, Any], callback: Callback, **kwargs: Any) -> History:
    model = mlp(0)
    loader = DataLoader(data[0], batch_size=BATCH, shuffle=True, seed=3)
    opt = optim.SGD(model.parameters(), lr=0.05)
    config = FitConfig(3, progress=False, **kwargs)
    return fit(model, loader, opt, nn.CrossEntropyLoss(), config, callbacks=[callback])


def test_a_diverging_run_stops_and_keeps_the_last_finite_checkpoint(
    mnist: tuple[Any, Any], tmp_path: Path
) -> None:
    # lr = inf from epoch 2 on: its first step has a finite loss and ruins the weights,
    # its second step's loss is NaN. That step must stop the run, the checkpoint of
    # epoch 1 must stay (it used to be overwritten with NaN and the run went on).
    path = tmp_path / "run.npz"
    infinite = SetLr(0, None, math.inf)
    with pytest.raises(train.NonFiniteLossError) as caught:
        plain_fit(mnist, infinite, checkpoint=path)
    error = caught.value
    message = str(error)
    assert "the loss at epoch 2/3, batch 2/20 (step 22 of the run) is nan" in message
    assert f"The last checkpoint with finite values is {path}" in message
    assert "smaller learning rate" in message
    assert math.isnan(error.loss) and (error.epoch, error.batch) == (1, 1)
    assert len(error.history) == 1 and error.checkpoint == path
    saved = load_checkpoint(path)
    assert saved["epoch"] == 1
    for value, expected in zip(saved["model"].values(), infinite.params, strict=True):
        np.testing.assert_array_equal(np.asarray(value), expected)


def test_nonfinite_parameters_are_never_checkpointed(
    mnist: tuple[Any, Any], tmp_path: Path
) -> None:
    # The last step of epoch 1 has a finite loss but leaves the weights infinite.
    path = tmp_path / "run.npz"
    with pytest.raises(train.NonFiniteLossError, match="a parameter after epoch 1 is nan"):
        plain_fit(mnist, SetLr(0, 18, math.inf), checkpoint=path)
    assert not path.exists()


def test_nonfinite_warn_and_ignore_go_on(mnist: tuple[Any, Any]) -> None:
    with pytest.warns(RuntimeWarning, match=r"step 22 of the run\); training goes on"):
        history = plain_fit(mnist, SetLr(0, None, math.inf), on_nonfinite="warn")
    assert len(history) == 3 and math.isnan(history.train_loss[-1])
    history = plain_fit(mnist, SetLr(0, None, math.inf), on_nonfinite="ignore")
    assert len(history) == 3 and math.isnan(history.train_loss[-1])
    with pytest.raises(ValueError, match="on_nonfinite must be one of 'stop', 'warn', 'ignore'"):
        plain_fit(mnist, SetLr(0, None, 1.0), on_nonfinite="skip")


def test_sigterm_saves_then_exits_143(
    mnist: tuple[Any, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from minitorch_accel.train.interrupt import Terminated

    setup = Setup(mnist, epochs=2)
    sigterm = StopAt(0, 3, action=lambda: signal.raise_signal(signal.SIGTERM))
    with pytest.raises(Terminated) as caught:
        setup.fit(callbacks=[sigterm], checkpoint=tmp_path / "c.npz")
    assert caught.value.code == 143
    err = capsys.readouterr().err
    assert "SIGTERM: stopping after this batch" in err
    assert "after batch 4/20 by SIGTERM; checkpoint saved to" in err
    assert load_checkpoint(tmp_path / "c.npz")["batch"] == 4
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # restored
