"""What ``Tensor(...)`` makes of its arguments: PyTorch's legacy ``torch.Tensor``
constructor, which is not :func:`~minitorch_accel.tensor`.

``torch.Tensor`` takes one of five forms, tried in this order:

- ``Tensor()``: an empty tensor, shape ``(0,)``;
- ``Tensor(tensor)``: an alias of ``tensor``, the same storage, dtype and version
  counter, recorded by autograd;
- ``Tensor(*sizes)``, ``Tensor(Size)``, ``Tensor(size=...)``: a tensor of that shape
  (PyTorch leaves it uninitialized; here it holds zeros);
- ``Tensor(sequence)``, ``Tensor(data=...)``: the values, as the default dtype;
- ``Tensor(ndarray)``: the values, as the default dtype (memory shared when the array
  already has that dtype).

Every form but the alias takes ``device=``; nothing takes ``dtype=`` or
``requires_grad=`` (that is :func:`~minitorch_accel.tensor`'s job).
"""

from __future__ import annotations

import operator
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from ..backends import Device, DeviceLike
from .convert import to_array
from .defaults import device_or_default, get_default_dtype
from .size import Size

if TYPE_CHECKING:
    from .tensor import Tensor

_KEYWORDS = ("data", "size", "other")


def legacy_arguments(
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    device: DeviceLike | None,
    dtype: Any = None,
) -> tuple[Device, Any] | Tensor:
    """The device and backend array ``Tensor(*args, device=device, **kwargs)`` holds,
    or the tensor it aliases. New values take ``dtype``: the default dtype unless given
    (``x.new(...)`` gives ``x``'s).

    Raises
    ------
    TypeError
        For arguments that match none of the forms (``dtype=``, ``requires_grad=``,
        a float size, a Python number as data, ...), saying what to use instead.
    RuntimeError
        For ``Tensor(tensor, device=...)`` and for a negative size, as PyTorch.

    Examples
    --------
    >>> device, array = legacy_arguments((2, 3), {}, None)
    >>> str(device), array.shape, array.dtype
    ('cpu', (2, 3), dtype('float32'))
    >>> legacy_arguments(([1, 2],), {}, "cpu:1")[1].tolist()
    [1.0, 2.0]
    """
    from .tensor import Tensor  # tensor.py imports this module: import on use

    if kwargs:
        args = _keyword_form(args, kwargs)
        if "size" in kwargs:
            return _empty(_sizes(tuple(kwargs["size"])), device, dtype)
        if "data" in kwargs:
            return _from_data(args[0], device, dtype)
    if not args:
        return _empty((0,), device, dtype)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if device is not None:
            raise RuntimeError(
                "Legacy tensor constructor of the form Tensor(tensor, device=device) is not "
                "supported. Use minitorch_accel.tensor(...) or minitorch_accel.as_tensor(...) "
                "instead."
            )
        return first
    if len(args) == 1 and isinstance(first, Size):
        return _empty(_sizes(tuple(first)), device, dtype)
    if len(args) > 1 or _is_size(first):
        return _empty(_sizes(args), device, dtype)
    return _from_data(first, device, dtype)


def _keyword_form(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """``args`` with the one allowed keyword (``data``, ``size`` or ``other``) folded in."""
    unknown = [name for name in kwargs if name not in _KEYWORDS]
    if unknown or len(kwargs) > 1 or args:
        got = ", ".join([*(type(a).__name__ for a in args), *(f"{k}=" for k in kwargs)])
        raise TypeError(
            f"Tensor() received an invalid combination of arguments - got ({got}); the "
            "legacy constructor takes Tensor(), Tensor(*sizes), Tensor(size=...), "
            "Tensor(data) or Tensor(other), each with device= only (other: none). For "
            "dtype= or requires_grad= use minitorch_accel.tensor(data, dtype=..., "
            "requires_grad=...) or minitorch_accel.empty(*sizes, dtype=..., "
            "requires_grad=...)"
        )
    name, value = next(iter(kwargs.items()))
    if name == "other":
        from .tensor import Tensor

        if not isinstance(value, Tensor):
            raise TypeError(f"Tensor(other=...) takes a Tensor, got {type(value).__name__}")
    if name == "size" and not isinstance(value, (tuple, list)):
        raise TypeError(
            f"Tensor(size=...) takes a tuple of ints, got {type(value).__name__}; write "
            "Tensor(n) or Tensor(size=(n,))"
        )
    return (value,)


def _is_size(value: Any) -> bool:
    """Whether ``value``, alone, is read as a size: an int (not a bool), a NumPy integer
    or a 0-d NumPy integer array, as PyTorch reads them.
    """
    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in "iu"
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _index(value: Any) -> int | None:
    try:
        return operator.index(value)
    except TypeError:
        return None


def _sizes(sizes: tuple[Any, ...]) -> tuple[int, ...]:
    """``sizes`` as a shape, refused as PyTorch refuses it."""
    shape = []
    for position, size in enumerate(sizes, start=1):
        n = None if isinstance(size, (bool, np.bool_)) else _index(size)
        if n is None:
            raise TypeError(
                f"Tensor(*sizes): size {position} is a {type(size).__name__}, not an int "
                f"(got {sizes!r}); sizes are ints, or pass the data as one sequence: "
                "Tensor([1.0, 2.0])"
            )
        shape.append(n)
    negative = [n for n in shape if n < 0]
    if negative:
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {negative[0]}: {shape}"
        )
    return tuple(shape)


def _empty(shape: tuple[int, ...], device: DeviceLike | None, dtype: Any) -> tuple[Device, Any]:
    """A tensor of ``shape`` in the default dtype, zero-filled (PyTorch leaves it
    uninitialized: never read it before writing, there or here).
    """
    dev = device_or_default(device)
    with dev.guard():
        array = dev.backend.xp.zeros(
            shape, dtype=dtype if dtype is not None else get_default_dtype()
        )
    return dev, array


def _from_data(data: Any, device: DeviceLike | None, dtype: Any) -> tuple[Device, Any]:
    """The values of a sequence or an array, as the default dtype."""
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    kind = getattr(getattr(data, "dtype", None), "kind", None)
    if kind is None or isinstance(data, np.generic):
        if not _is_sequence(data):
            raise TypeError(
                f"new(): data must be a sequence (got {type(data).__name__}); for a 0-d "
                "tensor use minitorch_accel.tensor(value)"
            )
    elif kind == "c":
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, 2)
        data = data.real
    elif kind not in "biuf":
        raise TypeError(
            f"can't convert an array of dtype {data.dtype}: tensors hold bool, integers or "
            "floating point"
        )
    with np.errstate(over="ignore"):  # 1e40 becomes inf in float32, silently as PyTorch
        return to_array(data, dtype if dtype is not None else get_default_dtype(), device)


def _is_sequence(data: Any) -> bool:
    return hasattr(data, "__len__") and hasattr(data, "__getitem__") and not isinstance(data, dict)
