"""The helpers behind :meth:`Module.load_state_dict` and :meth:`Module.to`.

Loading checks everything first and copies only when every key fits, so a failed load
leaves the module as it was. Moving replaces each tensor's array in place, so the
Parameter objects an optimizer holds stay the same objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from ..backends import Device, DeviceLike
from ..backends.memory_tracker import tracker as _memory
from ..core.convert import DTypeLike, as_dtype
from ..core.grad_mode import no_grad
from ..core.tensor import Tensor
from .parameter import Parameter


class IncompatibleKeys(NamedTuple):
    """What :meth:`Module.load_state_dict` did not match (with ``strict=False``).

    Attributes
    ----------
    missing_keys : list of str
        Keys the module has but the state dict lacks.
    unexpected_keys : list of str
        Keys of the state dict the module does not have.
    """

    missing_keys: list[str]
    unexpected_keys: list[str]


def _shape_of(value: Any) -> tuple[int, ...]:
    if isinstance(value, Tensor):
        return value.shape
    return tuple(np.shape(value))


def _number_kind(value: Any) -> str | None:
    """The dtype kind of a tensor or array of numbers (``"f"``, ``"i"``...), or None for
    anything else (a string, None, an object array).
    """
    if isinstance(value, Tensor) or hasattr(value, "dtype"):
        kind = str(value.dtype.kind)
    elif isinstance(value, (str, bytes)) or value is None:
        return None
    else:
        try:
            kind = np.asarray(value).dtype.kind
        except (TypeError, ValueError):
            return None
    return kind if kind in "biuf" else None


def load_into(  # noqa: C901  (one check per way a state dict can be wrong, each with its message)
    owner: str, targets: Mapping[str, Tensor], state_dict: Mapping[str, Any], strict: bool
) -> IncompatibleKeys:
    """Copy ``state_dict``'s values into the tensors ``targets`` (keyed alike).

    Parameters
    ----------
    owner : str
        The module's class name, for error messages.
    targets : mapping of str to Tensor
        The module's own parameters and persistent buffers, by dotted name.
    state_dict : mapping of str to Tensor or array
        The values to load; NumPy arrays are accepted too.
    strict : bool
        Raise if a key is missing or unexpected. Mis-shaped keys always raise.

    Raises
    ------
    RuntimeError
        Listing every missing, unexpected and mis-shaped key; nothing is copied then.
    TypeError
        If ``state_dict`` is not a mapping.
    """
    if not isinstance(state_dict, Mapping):
        raise TypeError(
            f"load_state_dict expects a mapping of names to tensors, got "
            f"{type(state_dict).__name__}"
        )
    missing = [key for key in targets if key not in state_dict]
    unexpected = [key for key in state_dict if key not in targets]
    problems = []
    if strict and missing:
        problems.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing))
    if strict and unexpected:
        problems.append(
            "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected)
        )
    values: dict[str, Tensor] = {}
    for key, target in targets.items():
        if key not in state_dict:
            continue
        value = state_dict[key]
        kind = _number_kind(value)
        if kind is None:
            problems.append(
                f"{key}: expected a tensor or an array of numbers, got "
                f"{type(value).__name__} {value!r:.60}"
            )
            continue
        try:
            got = _shape_of(value)
        except (TypeError, ValueError):
            problems.append(f"{key}: expected a tensor or an array, got {type(value).__name__}")
            continue
        if got != target.shape:
            problems.append(
                f"size mismatch for {key}: expected shape {target.shape} (the module's), "
                f"got {got} (the state_dict's)"
            )
            continue
        if not isinstance(value, Tensor):
            value = Tensor._from_data(value, device=target.device)
        values[key] = value
    if problems:
        raise RuntimeError(
            f"Error(s) in loading state_dict for {owner}:\n\t" + "\n\t".join(problems)
        )
    with no_grad():
        for key, value in values.items():
            targets[key].copy_(value)
    return IncompatibleKeys(missing, unexpected)


def split_to_args(device: Any, dtype: DTypeLike) -> tuple[Device | None, np.dtype[Any] | None]:
    """Sort out ``module.to(device)``, ``module.to(dtype)`` and ``module.to(device, dtype)``."""
    if device is not None and not isinstance(device, (str, Device)):
        if dtype is not None:
            raise TypeError(f"to(): {device!r} is not a device")
        device, dtype = None, device
    dst = Device(device) if device is not None else None
    new_dtype = as_dtype(dtype) if dtype is not None else None
    if new_dtype is not None and new_dtype.kind != "f":
        raise TypeError(f"Module.to() only accepts floating-point dtypes, got {new_dtype}")
    return dst, new_dtype


def move_in_place(
    t: Tensor, device: DeviceLike | None, dtype: np.dtype[Any] | None, non_blocking: bool
) -> None:
    """Give ``t`` (and its gradient) a new device and, if it is floating point, dtype.

    The tensor object stays the same; only its array and device change.
    """
    cast = dtype if dtype is not None and t.dtype.kind == "f" else None
    moved = t.detach().to(device, dtype=cast, non_blocking=non_blocking)
    t.array, t.device = moved.array, moved.device
    if _memory.enabled and isinstance(t, Parameter):
        _memory.relabel(t.array, t.device, "parameters")
    if t.grad is not None:
        t.grad = t.grad.detach().to(device, dtype=cast, non_blocking=non_blocking)
