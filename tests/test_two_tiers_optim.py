"""The optimizers' two tiers: the textbook ``step`` and the backends' fast steps agree.

Every optimizer runs several steps with the fast paths on and off, on ``cpu``, ``cpu:1``
and the ``strict`` stand-in (with no fast table, as a backend without fast steps, and
with the CPU's fast steps registered for it, which must then respect its device
contexts). The fast steps of SGD, Adam and AdamW (``backends/numpy/fast_optim.py``)
compute the reference's operations in the same order into scratch buffers, so in float64
the parameters and the state agree to 1e-10 (they are in fact equal). RMSprop, Adagrad,
Adadelta, Adamax, NAdam and RAdam have no fast step: both runs take the reference, and
the test checks that the switch changes nothing for them.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from support.strict_backend import registered

import minitorch_accel as mta
from minitorch_accel import optim
from minitorch_accel.backends.fast_paths import table
from minitorch_accel.backends.numpy import fast_optim as cpu_fast_optim
from minitorch_accel.core.tensor import Tensor

Make = Callable[[list[Any]], optim.Optimizer]

#: The optimizers, each with two parameter groups: the second has its own lr.
OPTIMIZERS: dict[str, Make] = {
    "sgd": lambda g: optim.SGD(g, lr=0.1),
    "sgd_momentum": lambda g: optim.SGD(g, lr=0.1, momentum=0.9),
    "sgd_dampening_maximize": lambda g: optim.SGD(
        g, lr=0.1, momentum=0.5, dampening=0.3, maximize=True, weight_decay=0.05
    ),
    "sgd_nesterov_decay": lambda g: optim.SGD(
        g, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01
    ),
    "sgd_decay_maximize": lambda g: optim.SGD(g, lr=0.1, weight_decay=0.1, maximize=True),
    "adam": lambda g: optim.Adam(g, lr=0.05),
    "adam_decay_amsgrad": lambda g: optim.Adam(g, lr=0.05, weight_decay=0.1, amsgrad=True),
    "adam_maximize": lambda g: optim.Adam(g, lr=0.05, maximize=True, betas=(0.8, 0.99)),
    "adamw": lambda g: optim.AdamW(g, lr=0.05),
    "adamw_amsgrad_maximize": lambda g: optim.AdamW(
        g, lr=0.05, weight_decay=0.2, amsgrad=True, maximize=True
    ),
    "rmsprop": lambda g: optim.RMSprop(g, lr=0.01, momentum=0.9, centered=True, weight_decay=0.1),
    "adagrad": lambda g: optim.Adagrad(g, lr=0.1, weight_decay=0.1),
    "adadelta": lambda g: optim.Adadelta(g, lr=1.0, weight_decay=0.1),
    "adamax": lambda g: optim.Adamax(g, lr=0.02, weight_decay=0.1),
    "nadam": lambda g: optim.NAdam(g, lr=0.02, weight_decay=0.1),
    "radam": lambda g: optim.RAdam(g, lr=0.02, weight_decay=0.1),
}
#: The optimizers with a fast step on the CPU.
FAST = {"SGD", "Adam", "AdamW"}
SHAPES = [(4, 3), (5,), (2, 2), (3,)]  # the third never gets a gradient
STEPS = 4


@pytest.fixture(scope="module", autouse=True)
def strict_backend() -> Iterator[None]:
    with registered():
        yield


@pytest.fixture
def strict_with_fast_steps() -> Iterator[None]:
    """The CPU's fast steps registered for the ``strict`` stand-in (its arrays follow
    NumPy's rules; its devices refuse work outside their context).
    """
    cpu_fast_optim.register_fast_optim("strict")
    yield
    table("strict").clear()


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the CPU's fast steps called (they are wrapped to count calls)."""
    calls: list[str] = []
    for name in FAST:
        fast = table("cpu")[name]

        def counted(*args: Any, _fast: Any = fast, _name: str = name) -> None:
            calls.append(_name)
            _fast(*args)

        monkeypatch.setitem(table("cpu"), name, counted)
    return calls


def host(t: Any) -> Any:
    return t.detach().to("cpu").numpy() if isinstance(t, Tensor) else t


def train(make: Make, device: str, fast: bool, steps: int = STEPS) -> tuple[Any, Any]:
    """The parameters and the state dict after ``steps`` steps with the fast paths on or off."""
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(s) for s in SHAPES]
    params = [mta.tensor(v, device=device, requires_grad=True) for v in values]
    opt = make([{"params": params[:2]}, {"params": params[2:], "lr": 0.03}])
    with mta.fast_paths(fast):
        for step in range(steps):
            for i, (p, v) in enumerate(zip(params, values, strict=True)):
                p.grad = None if i == 2 else mta.tensor(np.sin(v * (step + 1)), device=device)
            opt.step()
    return [host(p) for p in params], opt.state_dict()


def assert_same_state(found: dict[str, Any], expected: dict[str, Any], rtol: float) -> None:
    assert found["param_groups"] == expected["param_groups"]
    assert sorted(found["state"]) == sorted(expected["state"])
    for index, entries in expected["state"].items():
        mine = found["state"][index]
        assert sorted(mine) == sorted(entries), index
        for name, value in entries.items():
            if isinstance(value, Tensor):
                assert isinstance(mine[name], Tensor), name
                assert mine[name].dtype == value.dtype, name
                np.testing.assert_allclose(host(mine[name]), host(value), rtol=rtol, atol=0)
            else:
                assert mine[name] == value, name
                assert type(mine[name]) is type(value), name


@pytest.mark.parametrize("device", ["cpu", "cpu:1", "strict", "strict:1"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_fast_and_reference_steps_agree(name: str, device: str, spy: list[str]) -> None:
    make = OPTIMIZERS[name]
    fast_params, fast_state = train(make, device, fast=True)
    calls_on = len(spy)
    ref_params, ref_state = train(make, device, fast=False)
    kind = fast_state["optimizer"]
    # the fast step ran on the CPU for SGD, Adam and AdamW, once per group and step
    assert calls_on == (2 * STEPS if kind in FAST and device.startswith("cpu") else 0)
    assert len(spy) == calls_on  # and never with the fast paths off
    # the same operations in the same order: equal to 1e-10 (in fact bit for bit)
    for found, expected in zip(fast_params, ref_params, strict=True):
        np.testing.assert_allclose(found, expected, rtol=1e-10, atol=0)
    assert_same_state(fast_state, ref_state, rtol=1e-10)
    start = np.random.default_rng(0)
    np.testing.assert_array_equal(  # the parameter without a gradient did not move
        fast_params[2], [start.standard_normal(s) for s in SHAPES][2]
    )
    if kind != "Adagrad":  # (Adagrad makes its state when built, as PyTorch's does)
        assert 2 not in fast_state["state"]


@pytest.mark.usefixtures("strict_with_fast_steps")
@pytest.mark.parametrize("device", ["strict", "strict:1"])
@pytest.mark.parametrize("name", [n for n in sorted(OPTIMIZERS) if n.startswith(("sgd", "adam"))])
def test_cpu_fast_steps_on_the_strict_stand_in(name: str, device: str) -> None:
    """On ``strict:1`` the fast step's allocations and arithmetic must run inside the
    device's context (the base enters it), or the stand-in's arrays refuse them.
    """
    assert "SGD" in table("strict")
    fast_params, fast_state = train(OPTIMIZERS[name], device, fast=True)
    ref_params, ref_state = train(OPTIMIZERS[name], "cpu", fast=False)
    for found, expected in zip(fast_params, ref_params, strict=True):
        np.testing.assert_allclose(found, expected, rtol=1e-10, atol=0)
    assert_same_state(fast_state, ref_state, rtol=1e-10)


@pytest.mark.parametrize("name", ["sgd_nesterov_decay", "adam_decay_amsgrad", "adamw"])
@pytest.mark.parametrize("first_fast", [True, False])
def test_state_dict_round_trip_does_not_depend_on_the_tier(name: str, first_fast: bool) -> None:
    """Two steps on one tier, the state dict loaded into a new optimizer, two more on the
    other tier: the same as four steps on either.
    """
    make = OPTIMIZERS[name]
    rng = np.random.default_rng(1)
    values = [rng.standard_normal(s) for s in SHAPES]
    params = [mta.tensor(v, requires_grad=True) for v in values]

    def run(opt: optim.Optimizer, steps: range) -> None:
        for step in steps:
            for p, v in zip(params, values, strict=True):
                p.grad = mta.tensor(np.cos(v * (step + 1)))
            opt.step()

    opt = make([{"params": params[:2]}, {"params": params[2:], "lr": 0.03}])
    with mta.fast_paths(first_fast):
        run(opt, range(2))
    saved = opt.state_dict()
    resumed = make([{"params": params[:2]}, {"params": params[2:], "lr": 0.5}])
    resumed.load_state_dict(saved)
    with mta.fast_paths(not first_fast):
        run(resumed, range(2, 4))
    found, found_state = [host(p) for p in params], resumed.state_dict()
    assert found_state["param_groups"][1]["lr"] == 0.03  # from the state dict
    for fast in (True, False):  # four steps in one go, on either tier
        params[:] = [mta.tensor(v, requires_grad=True) for v in values]
        opt = make([{"params": params[:2]}, {"params": params[2:], "lr": 0.03}])
        with mta.fast_paths(fast):
            run(opt, range(4))
        for f, e in zip(found, params, strict=True):
            np.testing.assert_allclose(f, host(e), rtol=1e-10, atol=0)
        assert_same_state(found_state, opt.state_dict(), rtol=1e-10)


def test_the_closure_runs_before_the_fast_step_looks_for_gradients(spy: list[str]) -> None:
    w = mta.tensor([2.0], dtype=np.float64, requires_grad=True)
    opt = optim.SGD([w], lr=0.25, momentum=0.5)

    def closure() -> Tensor:
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 4.0
    assert spy == ["SGD"]
    assert w.item() == pytest.approx(2.0 - 0.25 * 4.0)


def test_a_device_without_a_fast_step_sends_the_whole_step_to_the_reference(
    spy: list[str],
) -> None:
    a = mta.tensor([1.0, 2.0], requires_grad=True)
    b = mta.tensor([3.0], device="strict", requires_grad=True)
    opt = optim.Adam([a, b], lr=0.1)
    a.grad, b.grad = mta.tensor([1.0, -1.0]), mta.tensor([2.0], device="strict")
    opt.step()
    assert spy == []
    np.testing.assert_allclose(host(a), [0.9, 2.1], rtol=1e-6)
    np.testing.assert_allclose(host(b), [2.9], rtol=1e-6)


def test_subclasses_use_the_fast_step_of_the_step_they_inherit(spy: list[str]) -> None:
    class KeepsStep(optim.SGD):
        pass

    class OwnStep(optim.SGD):
        def step(self, closure: Callable[[], Any] | None = None) -> Any:
            return super().step(closure)

    for cls, expected in ((KeepsStep, ["SGD"]), (OwnStep, [])):
        spy.clear()
        w = mta.tensor([1.0], requires_grad=True)
        w.grad = mta.tensor([1.0])
        cls([w], lr=0.5).step()
        assert spy == expected, cls
        assert w.item() == pytest.approx(0.5)


def body_lines(function: Any) -> list[str]:
    """The lines of ``function``'s source without its docstring, comments and blank lines."""
    source = inspect.getsource(function)
    source = re.sub(r'(?s)"""(.*?)"""', "", source, count=1)
    lines = [line.split("#")[0].rstrip() for line in source.splitlines()]
    return [line for line in lines[1:] if line.strip()]  # without the def line


@pytest.mark.parametrize(
    "step", [optim.SGD.step, optim.Adam.step, optim.AdamW.step], ids=["SGD", "Adam", "AdamW"]
)
def test_the_reference_steps_hold_no_fast_path(step: Any) -> None:
    """(Their length is counted in tests/test_reading_path.py.)"""
    body = "\n".join(body_lines(step))
    for hook in ("cupy", "kernel", "fast", "backend", "_many", "foreach", "threads"):
        assert hook not in body, hook


@pytest.mark.parametrize(
    "function",
    [
        optim.sgd_update,
        optim.adam_update,
        optim.RMSprop.update,
        optim.Adagrad.update,
        optim.Adadelta.update,
        optim.Adamax.update,
        optim.NAdam.update,
        optim.RAdam.update,
        optim.PerParameterOptimizer.step,
    ],
)
def test_the_other_reference_updates_hold_no_fast_path(function: Any) -> None:
    body = "\n".join(body_lines(function))
    for hook in ("cupy", "kernel", "fast", "backend", "_many", "foreach", "threads"):
        assert hook not in body, hook


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4),
        lambda ps: optim.AdamW(ps, lr=1e-3),
        lambda ps: optim.Adam(ps, lr=1e-3, weight_decay=1e-4),
    ],
    ids=["sgd_nesterov", "adamw", "adam_l2"],
)
def test_lenet_trains_alike_on_both_tiers(make: Make) -> None:
    """LeNet, 20 steps in float64: every fast path on (ops and optimizer) against the
    reference code only; the fast ops may sum in another order, hence 1e-9.
    """
    from minitorch_accel import nn
    from minitorch_accel.nn.models import LeNet

    rng = np.random.default_rng(0)
    x = rng.random((8, 1, 28, 28))
    y = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    results = []
    for fast in (True, False):
        mta.manual_seed(0)
        model = LeNet().to(dtype="float64")
        opt = make(list(model.parameters()))
        losses = []
        with mta.fast_paths(fast):
            for _ in range(20):
                opt.zero_grad()
                loss = nn.CrossEntropyLoss()(model(mta.tensor(x)), mta.tensor(y))
                loss.backward()
                opt.step()
                losses.append(loss.item())
        results.append((losses, [host(p) for p in model.parameters()]))
    (fast_losses, fast_params), (ref_losses, ref_params) = results
    assert fast_losses[-1] < fast_losses[0]  # it learned
    np.testing.assert_allclose(fast_losses, ref_losses, rtol=1e-9)
    for found, expected in zip(fast_params, ref_params, strict=True):
        np.testing.assert_allclose(found, expected, rtol=1e-9, atol=1e-12)


def test_a_users_own_sgd_never_takes_the_packages_fast_step() -> None:
    class SGD(optim.Optimizer):  # a user's optimizer that happens to share the name
        def __init__(self, params: Any) -> None:
            super().__init__(params, {"lr": 1.0})

        def step(self, closure: Callable[[], Any] | None = None) -> Any:
            with mta.no_grad():
                for group in self.param_groups:
                    for p in group["params"]:
                        p.array += 10.0  # not a gradient step at all
            return None

    w = mta.tensor([1.0], requires_grad=True)
    w.grad = mta.tensor([1.0])
    SGD([w]).step()
    assert w.item() == 11.0  # its own step ran, not the package's SGD
