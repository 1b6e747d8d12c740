"""Operands of the elementwise ops: the dtype they share, and scalars made tensors.

PyTorch's promotion rule (:func:`result_type`), not NumPy's: operands fall in three
ranks, tensors with dimensions, 0-d tensors and Python numbers, and a lower rank counts
only when its category (bool < integer < floating point) is higher than that of every
operand above it. So ``float32 + 0-d float64`` stays float32 and ``int8 + 300`` int8
(the 300 wraps around), while ``int32 + 0-d float64`` is float64 and ``int32 + 1.5`` the
default float dtype. Each op casts its operands to that dtype before NumPy sees them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.convert import as_dtype, can_cast, promote_types
from ..core.defaults import get_default_dtype
from ..core.function import Function
from ..core.tensor import Tensor

Operand = Any  # a Tensor or a Python/NumPy scalar

__all__ = ["can_cast", "promote_types", "result_type"]

_NUMBERS = (bool, int, float, np.number, np.bool_)


def is_number(value: Any) -> bool:
    """True for a Python or NumPy scalar that an op takes as an operand."""
    return isinstance(value, _NUMBERS)


def _number_dtype(value: Any) -> np.dtype[Any]:
    """The dtype a Python number counts as (PyTorch's "wrapped number"): bool, int64,
    or the default float dtype (NumPy scalars by their category).
    """
    if isinstance(value, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(value, (int, np.integer)):
        return np.dtype(np.int64)
    if isinstance(value, (float, np.floating)):
        return get_default_dtype()
    raise TypeError(
        f"expected a Tensor or a number, got {type(value).__name__}; wrap it with "
        "minitorch_accel.tensor(...)"
    )


def _combine(higher: np.dtype[Any] | None, lower: np.dtype[Any] | None) -> np.dtype[Any] | None:
    """The result of a rank with dtype ``higher`` beside a lower rank of ``lower``: the
    lower one counts only when its category is higher (PyTorch's ``combine_categories``).
    """
    if higher is None:
        return lower
    if lower is None or higher.kind == "f":
        return higher
    if higher.kind == "b" or lower.kind == "f":
        return promote_types(higher, lower)
    return higher


def result_type(*operands: Operand) -> np.dtype[Any]:
    """The dtype of an arithmetic op on ``operands`` (tensors or numbers), as
    ``torch.result_type``.

    Tensors with dimensions decide within their category; a 0-d tensor, then a Python
    number, changes the result only when its category (bool < integer < floating
    point) is higher. A Python float counts as the default float dtype, an int as
    int64, a bool as bool.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.result_type(mta.tensor([1.0]), mta.tensor(1.0, dtype=mta.float64))
    dtype('float32')
    >>> mta.result_type(mta.tensor([1], dtype=mta.int8), 300), mta.result_type(mta.tensor([1]), 1.5)
    (dtype('int8'), dtype('float32'))
    """
    ranks: list[np.dtype[Any] | None] = [None, None, None]  # dimensioned, 0-d, numbers
    for value in operands:
        if isinstance(value, Tensor):
            rank, dtype = (0 if value.ndim else 1), value.dtype
        else:
            rank, dtype = 2, _number_dtype(value)
        found = ranks[rank]
        ranks[rank] = dtype if found is None else promote_types(found, dtype)
    result = _combine(ranks[0], _combine(ranks[1], ranks[2]))
    assert result is not None, "result_type needs at least one operand"
    return result


def _wrapped_int(value: int) -> int:
    """A Python int as the int64 it wraps to (PyTorch reads ints up to 2**64 - 1)."""
    if not -(2**63) <= value < 2**64:
        raise OverflowError(f"int too big to convert: {value}")
    return (value + 2**63) % 2**64 - 2**63


def number_as_tensor(value: Operand, dtype: np.dtype[Any], like: Tensor) -> Tensor:
    """The number ``value`` as a 0-d tensor of ``dtype`` on ``like``'s device; an int
    out of an integer dtype's range wraps around, as in PyTorch.
    """
    if dtype.kind in "iu" and isinstance(value, (int, np.integer)):
        wrapped = np.asarray(_wrapped_int(int(value)), dtype=np.int64).astype(dtype)
        value = wrapped.item()  # the wrapped value, in dtype's range
    if like.device.shares_host_memory:
        array = like.xp.asarray(value, dtype=dtype)
    else:  # filled in on the tensor's own GPU, not copied from the host
        array = like.device.backend.asarray(value, like.device, dtype)
    return Tensor._make(array, like.device, False, None)


def as_operand(value: Operand, like: Tensor) -> Tensor:
    """``value`` as a Tensor on ``like``'s device; a number takes the dtype it would
    share with ``like`` (:func:`result_type`).
    """
    if isinstance(value, Tensor):
        return value
    if is_number(value):
        return number_as_tensor(value, result_type(like, value), like)
    return Tensor._from_data(value, device=like.device)


def common_operands(
    name: str, operands: Sequence[Operand], dtype: np.dtype[Any] | None = None
) -> list[Tensor]:
    """``operands`` (tensors and numbers, at least one tensor) as tensors of their
    :func:`result_type` (or of ``dtype``), numbers on the first tensor's device.
    """
    like = next(v for v in operands if isinstance(v, Tensor))
    if dtype is None:
        try:
            dtype = result_type(*operands)
        except TypeError as exc:
            raise TypeError(f"{name}: {exc}") from None
    return [
        (v if v.dtype == dtype else v.to(dtype=dtype))
        if isinstance(v, Tensor)
        else number_as_tensor(v, dtype, like)
        for v in operands
    ]


def _tensors_or_numbers(a: Operand, b: Operand) -> tuple[Operand, Operand]:
    """``a`` and ``b`` with anything but a Tensor or a number (a list, an array) made a
    Tensor on the other operand's device.
    """
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(
            f"expected a Tensor among the operands, got {type(a).__name__} and {type(b).__name__}"
        )
    like = a if isinstance(a, Tensor) else b
    if not isinstance(a, Tensor) and not is_number(a):
        a = Tensor._from_data(a, device=like.device)
    if not isinstance(b, Tensor) and not is_number(b):
        b = Tensor._from_data(b, device=like.device)
    return a, b


def result_dtype(*dtypes: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype of an op on tensors of ``dtypes``, all of one rank (e.g. the inputs
    of ``cat``): :func:`promote_types` of them all.

    Raises
    ------
    TypeError
        For integer dtypes PyTorch does not promote together (uint64 with int64).
    """
    result = as_dtype(dtypes[0])
    for dt in dtypes[1:]:
        result = promote_types(result, dt)
    return result


def _binary(cls: type[Function], a: Operand, b: Operand) -> Tensor:
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        # .array.dtype: no property call on the hot path
        if a.array.dtype is not b.array.dtype and a.array.dtype != b.array.dtype:
            a, b = common_operands(cls.__name__.lower(), (a, b))
    elif isinstance(a, Tensor) and a.array.dtype.kind == "f" and type(b) in (float, int):
        b = number_as_tensor(b, a.array.dtype, a)  # the common case, x * 2.0: x's dtype
    elif isinstance(b, Tensor) and b.array.dtype.kind == "f" and type(a) in (float, int):
        a = number_as_tensor(a, b.array.dtype, b)
    else:
        a, b = common_operands(cls.__name__.lower(), _tensors_or_numbers(a, b))
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
        return a.to(dtype=get_default_dtype())
    return a
