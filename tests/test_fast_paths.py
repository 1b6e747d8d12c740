"""The fast-path switch and the one place ops look a fast path up (Function.apply), and
LeNet trained with the fast paths off equal to LeNet trained with them on.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import nn, optim
from minitorch_accel.backends import fast_paths as fp
from minitorch_accel.core.function import Function
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.nn.models import LeNet


class Triple(Function):
    """``3 * a``: the reference forward of a test op."""

    def forward(self, a: Any) -> Any:
        return a * 3

    def backward(self, grad: Tensor) -> Tensor:
        return grad * 3


@pytest.fixture
def fast_triple() -> Any:
    """A fast path for Triple on the NumPy backend that records its calls."""
    calls: list[int] = []

    def fast(fn: Function, a: Any) -> Any:
        calls.append(a.size)
        return a + a + a

    fp.register_fast("cpu", Triple.op_name, fast)
    yield calls
    del fp.table("cpu")[Triple.op_name]


def test_function_apply_uses_a_registered_fast_forward(fast_triple: list[int]) -> None:
    x = mta.tensor([1.0, 2.0], requires_grad=True)
    y = Triple.apply(x)
    assert fast_triple == [2]
    assert y.tolist() == [3.0, 6.0]
    y.sum().backward()  # the reference backward serves both tiers
    assert x.grad is not None and x.grad.tolist() == [3.0, 3.0]


def test_fast_paths_off_runs_the_reference(fast_triple: list[int]) -> None:
    with mta.fast_paths(False):
        assert not mta.is_fast_paths_enabled()
        assert Triple.apply(mta.tensor([1.0])).tolist() == [3.0]
    assert fast_triple == []
    assert mta.is_fast_paths_enabled()


def test_a_subclass_does_not_inherit_its_parents_fast_path(fast_triple: list[int]) -> None:
    class Triple2(Triple):
        pass

    assert Triple2.op_name.endswith("Triple2") and Triple2.op_name != Triple.op_name
    Triple2.apply(mta.tensor([1.0]))
    assert fast_triple == []


def test_a_users_op_never_shares_a_name_with_the_packages_ops() -> None:
    from minitorch_accel.ops.elementwise import Mul

    users_mul: Any = type("Mul", (Function,), {"forward": lambda self, a, b: a * b * 2})
    assert Mul.op_name == "Mul"
    assert users_mul.op_name == f"{__name__}.Mul"
    x = mta.tensor([1.0, 2.0])
    assert users_mul.apply(x, x).tolist() == [2.0, 8.0]  # its own forward, not Mul's


def test_the_switch_as_a_call_and_as_a_decorator() -> None:
    mta.fast_paths(False)
    try:
        assert not mta.is_fast_paths_enabled()
    finally:
        mta.fast_paths(True)
    assert mta.is_fast_paths_enabled()

    @mta.fast_paths(False)
    def inside() -> bool:
        return mta.is_fast_paths_enabled()

    assert mta.is_fast_paths_enabled()  # decorating changes nothing
    assert inside() is False
    assert mta.is_fast_paths_enabled()


def test_the_switch_comes_back_after_an_error() -> None:
    with pytest.raises(KeyError), mta.fast_paths(False):
        raise KeyError("boom")
    assert mta.is_fast_paths_enabled()


@pytest.mark.parametrize("value, enabled", [("0", False), ("off", False), ("1", True)])
def test_the_environment_variable_sets_the_start(value: str, enabled: bool) -> None:
    env = dict(os.environ, MINITORCH_ACCEL_FAST_PATHS=value)
    code = "import minitorch_accel as m; print(m.is_fast_paths_enabled())"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == str(enabled)


def _train_lenet(steps: int, opt_name: str) -> list[np.ndarray]:
    mta.manual_seed(0)
    model = LeNet().to(dtype=np.float64)
    opt: optim.Optimizer
    if opt_name == "sgd":
        opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    else:
        opt = optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    rng = np.random.default_rng(0)
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(steps):
        x = mta.tensor(rng.random((8, 1, 28, 28)), dtype=np.float64)
        y = mta.tensor(rng.integers(0, 10, 8))
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    return [p.detach().numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("opt_name", ["sgd", "adam"])
def test_lenet_trained_with_fast_paths_off_equals_fast_paths_on(opt_name: str) -> None:
    """20 float64 steps; the tiers may sum in another order, so 1e-9, not equality."""
    on = _train_lenet(20, opt_name)
    with mta.fast_paths(False):
        off = _train_lenet(20, opt_name)
    for a, b in zip(on, off, strict=True):
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-9)
