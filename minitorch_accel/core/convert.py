"""Turning Python data and foreign arrays into backend arrays, and moving arrays between
devices (the one place where transfers are counted).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends import Device, DeviceLike, registry, transfer_stats
from .defaults import get_default_device, get_default_dtype

HOST = Device("cpu")
_SUPPORTED_KINDS = "biuf"
DTypeLike = Any


def as_dtype(dtype: DTypeLike) -> np.dtype[Any]:
    """Normalize a dtype given as a string, a NumPy dtype or a Python type.

    Raises
    ------
    TypeError
        For anything that is not bool, an integer or a floating-point type.
    """
    try:
        result = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"not a dtype: {dtype!r}") from exc
    if result.kind not in _SUPPORTED_KINDS:
        raise TypeError(
            f"unsupported dtype {result}: tensors hold bool, integers or floating point"
        )
    return result


_WIDE_UNSIGNED = ("uint16", "uint32", "uint64")


def promote_types(type1: DTypeLike, type2: DTypeLike) -> np.dtype[Any]:
    """The smallest dtype that both ``type1`` and ``type2`` convert to without losing
    their category (PyTorch's ``torch.promote_types``, not NumPy's rule).

    Bool gives way to anything; a float wins over any integer and keeps its own size
    (int64 with float32 gives float32, where NumPy gives float64); two integers
    combine as in NumPy (int8 with uint8 gives int16).

    Raises
    ------
    TypeError
        For uint16, uint32 or uint64 with another bool or integer dtype (PyTorch does
        not promote them).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.promote_types(mta.int64, mta.float32), mta.promote_types(mta.int8, mta.uint8)
    (dtype('float32'), dtype('int16'))
    """
    a, b = as_dtype(type1), as_dtype(type2)
    if a == b:
        return a
    if a.kind == "f" or b.kind == "f":
        if a.kind == b.kind:
            return np.promote_types(a, b)
        return a if a.kind == "f" else b
    if a.name in _WIDE_UNSIGNED or b.name in _WIDE_UNSIGNED:
        raise TypeError(
            f"dtypes {a} and {b} cannot be combined without losing precision (PyTorch "
            "promotes uint16, uint32 and uint64 with no other integer or bool dtype); "
            "convert one of them first with .to(dtype=...)"
        )
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    return np.promote_types(a, b)


def can_cast(from_: DTypeLike, to: DTypeLike) -> bool:
    """Whether a result of dtype ``from_`` may be written into a tensor of dtype ``to``
    (PyTorch's ``torch.can_cast``): anything but a float into an integer or bool, or
    an integer into bool.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.can_cast(mta.float64, mta.int32), mta.can_cast(mta.int64, mta.float16)
    (False, True)
    """
    source, target = as_dtype(from_), as_dtype(to)
    if source.kind == "f":
        return target.kind == "f"
    return not (source.kind in "iu" and target.kind == "b")


def move_array(array: Any, src: Device, dst: Device, non_blocking: bool = False) -> Any:
    """Copy a backend array from ``src`` to ``dst`` and count the bytes moved.

    Between two backends the data goes through the host: ``download`` from the source,
    ``upload`` to the destination (from pinned memory, asynchronously, where the
    backend can and ``non_blocking`` asks for it).
    """
    src_backend, dst_backend = src.backend, dst.backend
    if src_backend is dst_backend:
        out = src_backend.copy_between(array, src, dst, non_blocking)
    elif src_backend.shares_host_memory:
        out = dst_backend.upload(array, dst, non_blocking)
    else:
        host = src_backend.download(array)
        if not dst_backend.shares_host_memory:
            host = dst_backend.upload(host, dst, non_blocking)
        out = host
    transfer_stats.record(src, dst, int(array.nbytes))
    return out


def to_array(data: Any, dtype: DTypeLike, device: DeviceLike | None) -> tuple[Device, Any]:
    """The device and backend array for ``Tensor(data, dtype, device)``.

    Python data takes PyTorch's dtype (:func:`infer_dtype`); arrays keep their dtype
    unless ``dtype`` is given. A CuPy array stays on its GPU unless ``device`` says
    otherwise (the backend that :meth:`~minitorch_accel.backends.base.Backend.owns`
    an array says where it lives).
    """
    if dtype is not None:
        dtype = as_dtype(dtype)
    source = _device_of_array(data)
    if device is None and source is HOST:
        device = get_default_device()
    dev = source if device is None else Device(device)
    if source is not dev and not source.shares_host_memory:
        data = source.backend.to_host(data)
    if not hasattr(data, "dtype"):  # Python numbers and (nested) sequences
        inferred = infer_dtype(data)
        values = _scalars_of_tensors(data)
        if dtype is None:
            dtype = inferred
            data = np.asarray(values, dtype=dtype)
        elif dtype.kind in "iu":
            # built wide first and range-checked: a negative int then wraps around into
            # an unsigned dtype, as in PyTorch (NumPy would raise)
            data = np.asarray(values, dtype=np.float64 if inferred.kind == "f" else inferred)
            if data.size:
                _check_range(data, dtype)
        else:
            data = np.asarray(values, dtype=dtype)
    array = dev.backend.asarray(data, dev, dtype)
    as_dtype(array.dtype)
    return dev, array


def _check_range(values: np.ndarray, dtype: np.dtype[Any]) -> None:
    """Refuse Python numbers that ``dtype`` cannot hold, as PyTorch's ``tensor()``:
    an unsigned dtype takes negative ints down to minus its maximum (they wrap).
    """
    info = np.iinfo(dtype)
    lowest = -int(info.max) if dtype.kind == "u" else int(info.min)
    if values.min() < lowest or values.max() > info.max:
        raise RuntimeError(
            f"value cannot be converted to type {dtype} without overflow: {dtype} holds "
            f"{info.min}..{info.max}"
        )


_PYTHON_DTYPES = {bool: np.dtype(np.bool_), int: np.dtype(np.int64)}


def infer_dtype(data: Any) -> np.dtype[Any]:
    """The dtype ``tensor(data)`` takes without ``dtype=`` (PyTorch's rule): Python bools
    bool, ints int64, floats the default dtype; NumPy scalars and arrays and tensors
    inside a sequence their own dtype; the items of a sequence are combined by
    :func:`promote_types`. An empty sequence gives the default dtype.

    Examples
    --------
    >>> import numpy as np
    >>> [str(infer_dtype(d)) for d in ([1, 2], [1, 2.5], [np.float64(1.5), 2.0])]
    ['int64', 'float32', 'float64']
    """
    found: list[np.dtype[Any]] = []
    _collect_dtypes(data, found)
    if not found:
        return get_default_dtype()
    result = found[0]
    for dt in found[1:]:
        result = promote_types(result, dt)
    return result


def _collect_dtypes(data: Any, found: list[np.dtype[Any]]) -> None:
    if isinstance(data, (list, tuple)):
        kinds = set(map(type, data))  # one C-level pass: a long flat list costs little
        if kinds <= {bool, int, float}:
            found.extend(_PYTHON_DTYPES.get(k) or get_default_dtype() for k in kinds)
            return
        for item in data:
            _collect_dtypes(item, found)
    elif type(data) in (bool, int, float):
        found.append(_PYTHON_DTYPES.get(type(data)) or get_default_dtype())
    elif hasattr(data, "dtype"):  # NumPy scalars and arrays, tensors
        found.append(as_dtype(data.dtype))
    else:
        found.append(np.asarray(data).dtype)


def _scalars_of_tensors(data: Any) -> Any:
    """``data`` with each tensor inside a sequence replaced by its one value (as
    PyTorch reads them; a tensor of several elements there is an error).
    """
    if isinstance(data, (list, tuple)):
        if set(map(type, data)) <= {bool, int, float}:
            return data
        return [_scalars_of_tensors(item) for item in data]
    if hasattr(data, "requires_grad") and hasattr(data, "item"):  # a Tensor
        if data.numel() != 1:
            raise ValueError(
                "only one element tensors can be converted to Python scalars: a tensor inside "
                f"a list must have one element, this one has shape {tuple(data.shape)}; "
                "use minitorch_accel.stack(...) to join tensors"
            )
        return data.item()
    return data


def _device_of_array(data: Any) -> Device:
    if isinstance(data, (np.ndarray, np.generic, list, tuple, int, float, bool)):
        return HOST
    return registry.device_of_array(data) or HOST
