"""Comparisons: ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=`` and logical not.

Each gives a bool tensor that carries no gradient (a comparison is not differentiable),
so they are plain functions on the arrays, not autograd Functions. The two sides are
compared in their :func:`~minitorch_accel.ops.operands.result_type`, as in PyTorch
(int64 against float32 compares in float32; a Python int out of an integer tensor's
range wraps around first).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.tensor import Tensor
from .operands import Operand, common_operands, is_number


def comparable(value: Any) -> bool:
    """Whether a Tensor's comparison operators take ``value`` elementwise: a Tensor, a
    number or a NumPy array. For anything else (a list, None, a string) they return
    ``NotImplemented``, so that Python falls back to identity, as PyTorch:
    ``tensor == [1, 2]`` is ``False`` and ``tensor < [1, 2]`` a TypeError.
    """
    return isinstance(value, (Tensor, np.ndarray)) or is_number(value)


def _compare(ufunc: str, a: Operand, b: Operand) -> Tensor:
    for value in (a, b):
        if not comparable(value):
            raise TypeError(
                f"{ufunc}: expected a Tensor or a number, got {type(value).__name__}; "
                "wrap it with minitorch_accel.tensor(...)"
            )
    like = a if isinstance(a, Tensor) else b
    a = a if isinstance(a, Tensor) or is_number(a) else Tensor._from_data(a, device=like.device)
    b = b if isinstance(b, Tensor) or is_number(b) else Tensor._from_data(b, device=like.device)
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.device is not b.device:
        raise RuntimeError(
            f"comparison: expected both tensors on one device, got {a.device} and {b.device}"
        )
    a, b = common_operands(ufunc, (a, b))
    try:
        with a.device.guard():
            result = getattr(a.xp, ufunc)(a.array, b.array)
    except ValueError:
        raise ValueError(f"{ufunc}: shapes {a.shape} and {b.shape} do not broadcast") from None
    return Tensor._make(result, a.device, False, None)


def eq(a: Operand, b: Operand) -> Tensor:
    """``a == b`` elementwise (a bool tensor, no gradient).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.eq(mta.tensor([16777217]), mta.tensor([16777216.0]))  # compared in float32
    tensor([ True])
    """
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
