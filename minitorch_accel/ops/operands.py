"""Operands of the elementwise ops: scalars made tensors, and the dtype both sides share.

A Python or NumPy scalar next to a tensor becomes a tensor on that tensor's device, with
the dtype PyTorch would give it; two tensors of different dtypes are promoted by
:func:`result_dtype` (PyTorch's rule, not NumPy's) before a binary op runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.function import Function
from ..core.tensor import Tensor

Operand = Any  # a Tensor or a Python/NumPy scalar


def _scalar_dtype(tensor_dtype: np.dtype[Any], value: Any) -> Any:
    """The dtype a Python scalar takes next to a tensor (PyTorch's rule)."""
    if tensor_dtype.kind == "f":
        return tensor_dtype
    if isinstance(value, (float, np.floating)):
        return np.float32
    if tensor_dtype.kind == "b" and not isinstance(value, (bool, np.bool_)):
        return np.int64
    return tensor_dtype


def as_operand(value: Operand, like: Tensor) -> Tensor:
    """``value`` as a Tensor on ``like``'s device (scalars take a matching dtype)."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (int, float, bool, np.number, np.bool_)):
        dtype = _scalar_dtype(like.dtype, value)
        if like.device.shares_host_memory:
            array = like.xp.asarray(value, dtype=dtype)
        else:  # created on the tensor's own GPU
            array = like.device.backend.asarray(value, like.device, dtype)
        return Tensor._make(array, like.device, False, None)
    return Tensor(value, device=like.device)


def result_dtype(*dtypes: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype of an op on tensors of ``dtypes`` (PyTorch's rule, not NumPy's): next to
    a float, integers and bools take that float's dtype (int64 with float32 gives
    float32, not float64); otherwise NumPy's promotion applies.

    Raises
    ------
    TypeError
        For signed and unsigned integers whose only common type is a float (int64 and
        uint64), which would silently lose precision.
    """
    floats = [d for d in dtypes if d.kind == "f"]
    if floats:
        return np.result_type(*floats)
    result = np.result_type(*dtypes)
    if result.kind == "f":
        names = " and ".join(str(d) for d in dtypes)
        raise TypeError(
            f"dtypes {names} cannot be combined without losing precision; convert one of "
            "them first with .to(dtype=...)"
        )
    return result


def _promote(name: str, a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """``a`` and ``b`` converted so that NumPy computes in :func:`result_dtype`."""
    try:
        common = result_dtype(a.dtype, b.dtype)
    except TypeError as exc:
        raise TypeError(f"{name}: {exc}") from None
    if common.kind == "f":  # cast the integer side, which NumPy would widen to float64
        if a.dtype.kind in "iu":
            a = a.to(dtype=common)
        if b.dtype.kind in "iu":
            b = b.to(dtype=common)
    return a, b


def _binary(cls: type[Function], a: Operand, b: Operand) -> Tensor:
    if not isinstance(a, Tensor):
        a = as_operand(a, b)
    elif not isinstance(b, Tensor):
        b = as_operand(b, a)
    if a.array.dtype is not b.array.dtype:  # .array.dtype: no property call on the hot path
        a, b = _promote(cls.__name__.lower(), a, b)
    try:
        return cls.apply(a, b)
    except ValueError:
        if a.device is b.device:
            try:
                np.broadcast_shapes(a.shape, b.shape)
            except ValueError:
                raise ValueError(
                    f"{cls.__name__.lower()}: shapes {a.shape} and {b.shape} do not broadcast"
                ) from None
        raise


def _float_input(name: str, a: Tensor) -> Tensor:
    if not isinstance(a, Tensor):
        raise TypeError(
            f"{name}: expected a Tensor, got {type(a).__name__}; wrap it with "
            "minitorch_accel.tensor(...)"
        )
    if a.dtype.kind != "f":
        return a.to(dtype=np.float32)
    return a
