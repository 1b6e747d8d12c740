"""The fast-path switch and the one place ops look a fast path up (Function.apply).

LeNet trained on both tiers is compared in ``tests/test_two_tiers_optim.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

import minitorch_accel as mta
from minitorch_accel.backends import fast_paths as fp
from minitorch_accel.core.function import Function
from minitorch_accel.core.tensor import Tensor


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
