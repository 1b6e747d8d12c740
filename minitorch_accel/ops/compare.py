"""Comparisons: ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=`` and logical not.

Each gives a bool tensor that carries no gradient (a comparison is not differentiable),
so they are plain functions on the arrays, not autograd Functions.
"""

from __future__ import annotations

from ..core.tensor import Tensor
from .operands import Operand, as_operand


def _compare(ufunc: str, a: Operand, b: Operand) -> Tensor:
    if not isinstance(a, Tensor):
        a = as_operand(a, b)
    b = as_operand(b, a)
    if a.device is not b.device:
        raise RuntimeError(
            f"comparison: expected both tensors on one device, got {a.device} and {b.device}"
        )
    try:
        with a.device.guard():
            result = getattr(a.xp, ufunc)(a.array, b.array)
    except ValueError:
        raise ValueError(f"{ufunc}: shapes {a.shape} and {b.shape} do not broadcast") from None
    return Tensor._make(result, a.device, False, None)


def eq(a: Operand, b: Operand) -> Tensor:
    """``a == b`` elementwise (a bool tensor, no gradient)."""
    return _compare("equal", a, b)


def ne(a: Operand, b: Operand) -> Tensor:
    """``a != b`` elementwise."""
    return _compare("not_equal", a, b)


def lt(a: Operand, b: Operand) -> Tensor:
    """``a < b`` elementwise."""
    return _compare("less", a, b)


def le(a: Operand, b: Operand) -> Tensor:
    """``a <= b`` elementwise."""
    return _compare("less_equal", a, b)


def gt(a: Operand, b: Operand) -> Tensor:
    """``a > b`` elementwise."""
    return _compare("greater", a, b)


def ge(a: Operand, b: Operand) -> Tensor:
    """``a >= b`` elementwise."""
    return _compare("greater_equal", a, b)


def logical_not(a: Tensor) -> Tensor:
    """``~a`` for a bool tensor."""
    with a.device.guard():
        return Tensor._make(a.xp.logical_not(a.array), a.device, False, None)
