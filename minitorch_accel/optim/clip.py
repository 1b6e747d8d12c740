"""Gradient clipping: bound the norm, or the values, of the gradients before a step.

Both functions *replace* each ``p.grad`` by a clipped copy and never change a gradient
in place: one gradient tensor may be shared by several parameters (the two inputs of an
``add`` receive the same object), and scaling it in place would scale it twice.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..backends import Device
from ..core.convert import move_array
from ..core.tensor import Tensor


def _with_grads(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return [p for p in params if p.grad is not None]


def _partial_norm(xp: Any, arrays: list[Any], norm_type: float) -> Any:
    """sum(|g|**p) over ``arrays`` (max(|g|) for p = inf), as a 0-d array, in float32+."""
    parts = []
    for a in arrays:
        if a.size == 0:
            continue
        if a.dtype.itemsize < 4:
            a = a.astype(np.float32)
        if norm_type == math.inf:
            parts.append(xp.max(xp.abs(a)))
        elif norm_type == 2.0:
            flat = a.ravel()
            parts.append(xp.vdot(flat, flat))
        elif norm_type == 1.0:
            parts.append(xp.sum(xp.abs(a)))
        else:
            parts.append(xp.sum(xp.abs(a) ** norm_type))
    if not parts:
        return xp.zeros((), dtype=np.float32)
    stacked = xp.stack(parts)
    return stacked.max() if norm_type == math.inf else stacked.sum()


def clip_grad_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
) -> Tensor:
    """Scale the gradients so that their total norm is at most ``max_norm``.

    The total norm is that of all gradients concatenated into one vector. Every
    ``p.grad`` is replaced by ``p.grad * min(1, max_norm / (total_norm + 1e-6))`` (a new
    tensor: no gradient is modified in place). The coefficient stays on the device, so
    clipping never waits for the GPU.

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        Parameters whose gradients to clip (those without a gradient are skipped).
    max_norm : float
        The largest allowed total norm.
    norm_type : float
        The order of the norm: a positive number, or ``math.inf`` for the largest
        absolute value.
    error_if_nonfinite : bool
        Raise instead of clipping when the total norm is NaN or infinite.

    Returns
    -------
    Tensor
        The total norm before clipping (0-d, float32 or wider, on the device of the
        first gradient).

    Raises
    ------
    ValueError
        For a norm order that is not positive.
    RuntimeError
        With ``error_if_nonfinite=True``, when the total norm is not finite.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.zeros(2, requires_grad=True)
    >>> w.grad = mta.tensor([3.0, 4.0])
    >>> clip_grad_norm_([w], max_norm=1.0)
    tensor(5.)
    >>> w.grad
    tensor([0.6, 0.8])
    """
    norm_type = float(norm_type)
    if not norm_type > 0:
        raise ValueError(f"norm_type must be positive (or math.inf), got {norm_type}")
    params = _with_grads(parameters)
    if not params:
        return Tensor(np.zeros((), dtype=np.float32))
    by_device: dict[Device, list[Any]] = {}
    for p in params:
        g = p.grad
        assert g is not None
        if g.dtype.kind != "f":
            raise TypeError(f"clip_grad_norm_ needs floating-point gradients, got {g.dtype}")
        by_device.setdefault(g.device, []).append(g.array)
    first = params[0].grad.device  # type: ignore[union-attr]
    xp = first.xp
    partials = []
    for device, arrays in by_device.items():
        with device.guard():
            part = _partial_norm(device.xp, arrays, norm_type)
        partials.append(part if device is first else move_array(part, device, first))
    with first.guard():
        total = _total_norm(xp, partials, norm_type, error_if_nonfinite)
        coef = xp.minimum(max_norm / (total + 1e-6), 1.0)
        total = xp.asarray(total)
    coefs: dict[tuple[Device, Any], Any] = {}
    clipped: dict[int, Tensor] = {}
    for p in params:
        g = p.grad
        assert g is not None
        if id(g) not in clipped:  # a shared gradient is scaled once, and stays shared
            key = (g.device, g.dtype)
            with g.device.guard():
                if key not in coefs:
                    c = coef if g.device is first else move_array(coef, first, g.device)
                    coefs[key] = c.astype(g.dtype)
                clipped[id(g)] = Tensor._make(g.array * coefs[key], g.device, False, None)
        p.grad = clipped[id(g)]
    return Tensor._make(total, first, False, None)


def _total_norm(xp: Any, partials: list[Any], norm_type: float, error_if_nonfinite: bool) -> Any:
    """The norm of order ``norm_type`` from the per-device ``partials`` (0-d arrays)."""
    dtype = np.result_type(np.float32, *(p.dtype for p in partials))
    stacked = xp.stack([xp.asarray(p, dtype=dtype) for p in partials])
    total = stacked.max() if norm_type == math.inf else stacked.sum() ** (1.0 / norm_type)
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float) -> None:
    """Clamp every gradient element into ``[-clip_value, clip_value]``.

    Each ``p.grad`` is replaced by a clamped copy (never modified in place).

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        Parameters whose gradients to clip (those without a gradient are skipped).
    clip_value : float
        The largest allowed absolute value (non-negative).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.zeros(3, requires_grad=True)
    >>> w.grad = mta.tensor([-5.0, 0.5, 2.0])
    >>> clip_grad_value_([w], 1.0)
    >>> w.grad
    tensor([-1. ,  0.5,  1. ])
    """
    clip_value = float(clip_value)
    if not clip_value >= 0:
        raise ValueError(f"clip_value must be non-negative, got {clip_value}")
    clipped: dict[int, Tensor] = {}
    for p in _with_grads(parameters):
        g = p.grad
        assert g is not None
        if id(g) not in clipped:
            with g.device.guard():
                data = g.xp.clip(g.array, -clip_value, clip_value)
            clipped[id(g)] = Tensor._make(data, g.device, False, None)
        p.grad = clipped[id(g)]
