"""ExponentialLR, LinearLR, SequentialLR and ReduceLROnPlateau: the learning-rate
sequences of torch.optim.lr_scheduler, closed forms, state dicts, bad arguments, and
``fit`` stepping a ReduceLROnPlateau with the epoch's loss."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn
from minitorch_accel.data import DataLoader, TensorDataset
from minitorch_accel.optim import SGD
from minitorch_accel.optim import lr_scheduler as ours
from minitorch_accel.serialization import load, save

EPOCHS = 30
# A metric that improves, stalls, wobbles, and improves again.
METRICS = [1.0, 0.9, 0.9, 0.95, 0.91, 0.8, 0.8, 0.8, 0.8, 0.8, 0.7] + [
    0.7 + 0.001 * i for i in range(19)
]


def _optimizer(module: Any) -> Any:
    """An SGD of the given module (``minitorch_accel.optim`` or ``torch.optim``) with two
    parameter groups at different rates."""
    if module is None:
        a, b = mta.zeros(2, requires_grad=True), mta.zeros(3, requires_grad=True)
        return SGD([{"params": [a]}, {"params": [b], "lr": 0.3}], lr=1.0)
    a, b = module.zeros(2, requires_grad=True), module.zeros(3, requires_grad=True)
    return module.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.3}], lr=1.0)


def _sequence(opt: Any, sched: Any, metric: bool = False) -> list[list[float]]:
    lrs = []
    for epoch in range(EPOCHS):
        lrs.append([g["lr"] for g in opt.param_groups])
        opt.step()
        if metric:
            sched.step(METRICS[epoch])
        else:
            sched.step()
    return lrs


BUILDERS: dict[str, Callable[[Any, Any], Any]] = {
    "exponential": lambda m, o: m.ExponentialLR(o, gamma=0.9),
    "linear": lambda m, o: m.LinearLR(o),
    "linear-down": lambda m, o: m.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=7),
    "linear-zero": lambda m, o: m.LinearLR(o, start_factor=0.5, end_factor=0.0, total_iters=4),
    "warmup-then-exponential": lambda m, o: m.SequentialLR(
        o, [m.LinearLR(o, start_factor=0.1, total_iters=4), m.ExponentialLR(o, 0.8)], [4]
    ),
    "three-stages": lambda m, o: m.SequentialLR(
        o,
        [
            m.ExponentialLR(o, 0.5),
            m.StepLR(o, step_size=3, gamma=0.5),
            m.CosineAnnealingLR(o, T_max=6, eta_min=0.01),
        ],
        [5, 12],
    ),
    "multistep-then-linear": lambda m, o: m.SequentialLR(
        o, [m.MultiStepLR(o, [2, 4, 4], 0.5), m.LinearLR(o, 0.2, 0.9, 5)], [6]
    ),
    "plateau": lambda m, o: m.ReduceLROnPlateau(o, factor=0.5, patience=2),
    "plateau-max-abs": lambda m, o: m.ReduceLROnPlateau(
        o, mode="max", factor=0.5, patience=1, threshold=0.01, threshold_mode="abs"
    ),
    "plateau-cooldown-minlr": lambda m, o: m.ReduceLROnPlateau(
        o, factor=0.3, patience=0, cooldown=2, min_lr=[0.05, 0.01], threshold=0.0
    ),
    "plateau-eps": lambda m, o: m.ReduceLROnPlateau(o, factor=0.9, patience=0, eps=0.05),
}


@pytest.mark.parametrize("name", list(BUILDERS))
def test_matches_torch_sequence(name: str) -> None:
    torch = pytest.importorskip("torch")
    from torch.optim import lr_scheduler as theirs

    metric = name.startswith("plateau")
    opt = _optimizer(None)
    got = _sequence(opt, BUILDERS[name](ours, opt), metric)
    topt = _optimizer(torch)
    want = _sequence(topt, BUILDERS[name](theirs, topt), metric)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def test_closed_forms_without_torch() -> None:
    opt = _optimizer(None)
    got = _sequence(opt, ours.ExponentialLR(opt, gamma=0.9))
    np.testing.assert_allclose(got, [[0.9**t, 0.3 * 0.9**t] for t in range(EPOCHS)], rtol=1e-12)
    opt = _optimizer(None)
    got = _sequence(opt, ours.LinearLR(opt, start_factor=0.25, end_factor=0.75, total_iters=5))
    factor = [0.25 + 0.5 * min(t, 5) / 5 for t in range(EPOCHS)]
    np.testing.assert_allclose(got, [[f, 0.3 * f] for f in factor], rtol=1e-12)
    opt = _optimizer(None)
    warm = ours.LinearLR(opt, start_factor=0.5, total_iters=2)
    sched = ours.SequentialLR(opt, [warm, ours.ExponentialLR(opt, 0.5)], milestones=[3])
    got = [lr[0] for lr in _sequence(opt, sched)[:6]]  # type: ignore[misc]
    np.testing.assert_allclose(got, [0.5, 0.75, 1.0, 1.0, 0.5, 0.25])


def test_plateau_rule_by_hand() -> None:
    opt = _optimizer(None)
    sched = ours.ReduceLROnPlateau(opt, factor=0.5, patience=1, cooldown=1, min_lr=0.2)
    lrs = []
    for metric in [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5]:
        sched.step(metric)
        lrs.append(sched.get_last_lr()[0])
    # bad epochs 1, 2 -> halve; cooldown 1 epoch; bad 1, 2 -> halve; 0.5 is a new best;
    # bad 1, 2 -> halve, but never below min_lr
    assert lrs == [1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.2]
    assert sched.get_last_lr()[1] == 0.2  # 0.3 * 0.5 = 0.15 is clipped to min_lr
    sched.step(mta.tensor(0.1))  # a one-element tensor is accepted
    assert sched.best == pytest.approx(0.1)


@pytest.mark.parametrize(
    "name", ["warmup-then-exponential", "three-stages", "plateau-cooldown-minlr"]
)
def test_state_dict_resumes_the_same_sequence(name: str, tmp_path: Any) -> None:
    metric = name.startswith("plateau")
    opt = _optimizer(None)
    sched = BUILDERS[name](ours, opt)
    full = _sequence(opt, sched, metric)

    opt = _optimizer(None)
    sched = BUILDERS[name](ours, opt)
    for epoch in range(7):
        opt.step()
        sched.step(METRICS[epoch]) if metric else sched.step()
    save({"opt": opt.state_dict(), "sched": sched.state_dict()}, tmp_path / "ckpt.npz")
    ckpt = load(tmp_path / "ckpt.npz")
    opt2 = _optimizer(None)  # PyTorch's order: build both, then load both
    sched2 = BUILDERS[name](ours, opt2)
    opt2.load_state_dict(ckpt["opt"])
    sched2.load_state_dict(ckpt["sched"])
    rest = []
    for epoch in range(7, EPOCHS):
        rest.append([g["lr"] for g in opt2.param_groups])
        opt2.step()
        sched2.step(METRICS[epoch]) if metric else sched2.step()
    np.testing.assert_allclose(rest, full[7:], rtol=1e-12)


def test_bad_arguments() -> None:
    opt = _optimizer(None)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        ours.LinearLR(opt, start_factor=0.0)
    with pytest.raises(ValueError, match="Ending multiplicative factor"):
        ours.LinearLR(opt, end_factor=1.5)
    with pytest.raises(ValueError, match="factor should be < 1.0"):
        ours.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode must be 'min' or 'max'"):
        ours.ReduceLROnPlateau(opt, mode="lowest")
    with pytest.raises(ValueError, match="expected 2 min_lrs, got 3"):
        ours.ReduceLROnPlateau(opt, min_lr=[0.1, 0.1, 0.1])
    with pytest.raises(TypeError, match=r"scheduler.step\(val_loss\)"):
        ours.ReduceLROnPlateau(opt).step()
    plateau = ours.ReduceLROnPlateau(opt)
    with pytest.raises(ValueError, match="does not support ReduceLROnPlateau"):
        ours.SequentialLR(opt, [ours.ExponentialLR(opt, 0.5), plateau], [2])
    with pytest.raises(ValueError, match="one milestone fewer"):
        ours.SequentialLR(opt, [ours.ExponentialLR(opt, 0.5)], [2])
    other = _optimizer(None)
    with pytest.raises(ValueError, match="same optimizer"):
        ours.SequentialLR(opt, [ours.ExponentialLR(other, 0.5)], [])


# ---------------------------------------------------------------- fit
def _fit_lrs(
    with_val: bool, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[float], list[float], Any]:
    from minitorch_accel.train import FitConfig, fit

    mta.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    model = nn.Linear(4, 2)
    opt = SGD(model.parameters(), lr=0.5)
    sched = ours.ReduceLROnPlateau(opt, factor=0.5, patience=0)
    seen: list[float] = []
    step = sched.step

    def recording_step(metrics: Any = None) -> None:
        seen.append(float(metrics))
        step(metrics)

    monkeypatch.setattr(sched, "step", recording_step)
    loader = DataLoader(TensorDataset(x, y), batch_size=8)
    val = DataLoader(TensorDataset(x[:16], y[:16]), batch_size=8) if with_val else None
    config = FitConfig(epochs=4, scheduler=sched, progress=False)
    history = fit(model, loader, opt, nn.CrossEntropyLoss(), config, val_loader=val)
    return seen, list(history.val_loss if with_val else history.train_loss), history


@pytest.mark.parametrize("with_val", [True, False])
def test_fit_steps_plateau_with_the_epoch_loss(
    with_val: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen, losses, history = _fit_lrs(with_val, monkeypatch)
    assert len(seen) == 4
    np.testing.assert_allclose(seen, losses, rtol=1e-6)
    assert all(math.isfinite(v) for v in seen)
