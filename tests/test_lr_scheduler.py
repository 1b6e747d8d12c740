"""Learning-rate schedulers against hand-computed sequences and torch.optim.lr_scheduler."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.optim import SGD, Adam, Optimizer, lr_scheduler
from minitorch_accel.optim.lr_scheduler import (
    CosineAnnealingLR,
    LambdaLR,
    LRScheduler,
    MultiStepLR,
    OneCycleLR,
    StepLR,
)
from minitorch_accel.serialization import load, save


def two_groups(cls: type = SGD, **kw: Any) -> Optimizer:
    a = mta.zeros(2, requires_grad=True)
    b = mta.zeros(3, requires_grad=True)
    return cls([{"params": [a]}, {"params": [b], "lr": 0.01}], lr=0.1, **kw)  # type: ignore[no-any-return]


def lr_sequence(sched: LRScheduler, steps: int) -> list[list[float]]:
    out = []
    for _ in range(steps):
        out.append(sched.get_last_lr())
        sched.optimizer.step()
        sched.step()
    return out


def momentum_of(group: dict[str, Any]) -> float:
    return float(group["betas"][0] if "betas" in group else group["momentum"])


# ---------------------------------------------------------------- by hand
def test_step_lr_by_hand() -> None:
    opt = two_groups()
    seq = lr_sequence(StepLR(opt, step_size=3, gamma=0.5), 8)
    expected = [[0.1 * 0.5 ** (e // 3), 0.01 * 0.5 ** (e // 3)] for e in range(8)]
    np.testing.assert_allclose(seq, expected, rtol=1e-12)


def test_multistep_lr_by_hand_with_a_repeated_milestone() -> None:
    opt = two_groups()
    seq = [s[0] for s in lr_sequence(MultiStepLR(opt, [2, 5, 5], gamma=0.1), 7)]
    np.testing.assert_allclose(seq, [0.1, 0.1, 0.01, 0.01, 0.01, 1e-4, 1e-4], rtol=1e-12)


def test_cosine_annealing_follows_the_closed_form() -> None:
    opt = two_groups()
    t_max, low = 6, 0.001
    seq = lr_sequence(CosineAnnealingLR(opt, T_max=t_max, eta_min=low), 3 * t_max + 1)
    for t, lrs in enumerate(seq):  # the recurrence keeps to the cosine, also past T_max
        for lr, base in zip(lrs, (0.1, 0.01), strict=True):
            assert lr == pytest.approx(low + (base - low) * (1 + math.cos(math.pi * t / t_max)) / 2)
    assert seq[t_max][0] == pytest.approx(low)


def test_lambda_lr_by_hand_and_per_group() -> None:
    opt = two_groups()
    seq = lr_sequence(LambdaLR(opt, [lambda e: 0.5**e, lambda e: 1.0 + e]), 4)
    np.testing.assert_allclose(seq, [[0.1 * 0.5**e, 0.01 * (1 + e)] for e in range(4)])
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        LambdaLR(two_groups(), [lambda e: 1.0])


def test_one_cycle_linear_by_hand() -> None:
    opt = two_groups(momentum=0.9)
    sched = OneCycleLR(
        opt, 1.0, total_steps=10, anneal_strategy="linear", div_factor=10.0, final_div_factor=100.0
    )
    lrs, moms = [], []
    for _ in range(10):
        lrs.append(sched.get_last_lr()[0])
        moms.append(momentum_of(opt.param_groups[0]))
        opt.step()
        sched.step()
    # warm-up over steps 0..2 (end_step = 0.3 * 10 - 1), then down to 0.1 / 100 at step 9
    up = [0.1, 0.55, 1.0]
    down = [1.0 + (0.001 - 1.0) * (s - 2) / 7 for s in range(3, 10)]
    np.testing.assert_allclose(lrs, up + down, rtol=1e-12)
    np.testing.assert_allclose(moms[:3], [0.95, 0.9, 0.85], rtol=1e-12)
    assert moms[-1] == pytest.approx(0.95)
    with pytest.raises(ValueError, match="Tried to step 11 times"):
        sched.step()


def test_scheduled_lr_is_what_the_optimizer_uses() -> None:
    w = mta.tensor([0.0], dtype=np.float64, requires_grad=True)
    opt = SGD([w], lr=1.0)
    sched = StepLR(opt, step_size=1, gamma=0.5)
    for _ in range(3):
        w.grad = mta.tensor([-1.0], dtype=np.float64)
        opt.step()
        sched.step()
    assert w.item() == pytest.approx(1.0 + 0.5 + 0.25)


# ---------------------------------------------------------------- against PyTorch
SCHEDULES: list[tuple[str, dict[str, Any], Callable[..., Any]]] = [
    ("StepLR", {"step_size": 4, "gamma": 0.3}, SGD),
    ("MultiStepLR", {"milestones": [3, 7, 7, 12], "gamma": 0.5}, SGD),
    ("CosineAnnealingLR", {"T_max": 7, "eta_min": 1e-4}, SGD),
    ("OneCycleLR", {"max_lr": [1.0, 0.3], "total_steps": 20}, SGD),
    ("OneCycleLR", {"max_lr": 0.5, "epochs": 4, "steps_per_epoch": 5, "three_phase": True}, SGD),
    ("OneCycleLR", {"max_lr": 0.5, "total_steps": 20, "anneal_strategy": "linear"}, Adam),
    ("OneCycleLR", {"max_lr": 0.5, "total_steps": 20, "cycle_momentum": False}, Adam),
]


@pytest.mark.parametrize("name, kwargs, opt_cls", SCHEDULES, ids=str)
def test_matches_torch(name: str, kwargs: dict[str, Any], opt_cls: type) -> None:
    torch = pytest.importorskip("torch")
    ours_opt = two_groups(opt_cls)
    ours = getattr(lr_scheduler, name)(ours_opt, **kwargs)
    params = [torch.zeros(2, requires_grad=True), torch.zeros(3, requires_grad=True)]
    torch_opt = getattr(torch.optim, opt_cls.__name__)(
        [{"params": params[:1]}, {"params": params[1:], "lr": 0.01}], lr=0.1
    )
    theirs = getattr(torch.optim.lr_scheduler, name)(torch_opt, **kwargs)
    for _ in range(20 if name == "OneCycleLR" else 25):  # every OneCycleLR here has 20 steps
        np.testing.assert_allclose(ours.get_last_lr(), theirs.get_last_lr(), rtol=1e-12)
        for g, h in zip(ours_opt.param_groups, torch_opt.param_groups, strict=True):
            assert momentum_of(g) == pytest.approx(momentum_of(h), rel=1e-12)
        ours_opt.step()
        torch_opt.step()
        ours.step()
        theirs.step()


# ---------------------------------------------------------------- checkpoints
@pytest.mark.parametrize(
    "make",
    [
        lambda o: StepLR(o, 3, 0.5),
        lambda o: MultiStepLR(o, [2, 4, 4]),
        lambda o: CosineAnnealingLR(o, T_max=5),
        lambda o: OneCycleLR(o, max_lr=1.0, total_steps=12, three_phase=True),
    ],
)
def test_state_dict_resumes_the_same_schedule(
    make: Callable[[Optimizer], LRScheduler], tmp_path: Any
) -> None:
    opt = two_groups(momentum=0.9)
    sched = make(opt)
    lr_sequence(sched, 4)
    save({"opt": opt.state_dict(), "sched": sched.state_dict()}, tmp_path / "ckpt.npz")
    expected = lr_sequence(sched, 6)

    new_opt = two_groups(momentum=0.9)
    new_sched = make(new_opt)
    ckpt = load(tmp_path / "ckpt.npz")
    new_opt.load_state_dict(ckpt["opt"])
    new_sched.load_state_dict(ckpt["sched"])
    assert lr_sequence(new_sched, 6) == expected


def test_lambda_lr_state_dict_keeps_callable_objects_only() -> None:
    class Decay:
        def __init__(self) -> None:
            self.rate = 0.5

        def __call__(self, epoch: int) -> float:
            return float(self.rate**epoch)

    decay = Decay()
    sched = LambdaLR(two_groups(), [decay, lambda e: 1.0])
    state = sched.state_dict()
    assert state["lr_lambdas"] == [{"rate": 0.5}, None]
    decay.rate = 0.9
    sched.load_state_dict(state)
    assert decay.rate == 0.5


def test_resuming_needs_initial_lr_and_argument_checks() -> None:
    with pytest.raises(KeyError, match="initial_lr"):
        StepLR(two_groups(), step_size=2, last_epoch=3)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        StepLR(object(), step_size=2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="step_size must be a positive integer"):
        StepLR(two_groups(), step_size=0)
    with pytest.raises(ValueError, match="either total_steps OR"):
        OneCycleLR(two_groups(), max_lr=1.0)
    with pytest.raises(ValueError, match="positive integer total_steps, but got 0"):
        OneCycleLR(two_groups(), max_lr=1.0, total_steps=0)
    with pytest.raises(ValueError, match="between 0 and 1 pct_start"):
        OneCycleLR(two_groups(), max_lr=1.0, total_steps=5, pct_start=1.5)
    with pytest.raises(ValueError, match="'cos' or 'linear'"):
        OneCycleLR(two_groups(), max_lr=1.0, total_steps=5, anneal_strategy="exp")
    with pytest.raises(ValueError, match="max_lr must have the same length"):
        OneCycleLR(two_groups(), max_lr=[1.0], total_steps=5)
