"""Gradient clipping: bound the norm, or the values, of the gradients before a step.

The one implementation of ``torch.nn.utils``' clipping functions (re-exported there as
:mod:`minitorch_accel.nn.utils.clip_grad`). As in PyTorch, the total norm is the norm of
the per-tensor norms (each in its gradient's dtype, on its gradient's device), gathered
on the device of the first gradient.

Unlike PyTorch, the clipping functions *replace* each ``p.grad`` by a clipped copy and
never change a gradient in place: one gradient tensor may be shared by several
parameters (the two inputs of an ``add`` receive the same object), and scaling it in
place would scale it twice.
"""

from __future__ import annotations

import math
import types
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..backends import Device
from ..core.convert import move_array
from ..core.tensor import Tensor


def _as_list(tensors: Tensor | Iterable[Tensor]) -> list[Tensor]:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _vector_norm(xp: Any, array: Any, norm_type: float) -> Any:
    """``torch.linalg.vector_norm(array, norm_type)``: a 0-d array of ``array``'s dtype
    (half precision accumulates in float32, as PyTorch does).
    """
    if array.size == 0 and norm_type == math.inf:
        raise RuntimeError(
            "linalg.vector_norm cannot compute the inf norm on an empty tensor because "
            "the operation does not have an identity"
        )
    a = array.astype(np.float32) if array.dtype.itemsize < 4 else array
    if norm_type == math.inf:
        norm = xp.max(xp.abs(a))
    elif norm_type == 2.0:
        flat = a.ravel()
        norm = xp.sqrt(xp.vdot(flat, flat))
    elif norm_type == 1.0:
        norm = xp.sum(xp.abs(a))
    else:
        norm = xp.sum(xp.abs(a) ** norm_type) ** (1.0 / norm_type)
    return xp.asarray(norm, dtype=array.dtype)


def get_total_norm(
    tensors: Tensor | Iterable[Tensor],
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The norm of ``tensors`` taken together, as if concatenated into one vector.

    It is the norm of the vector of per-tensor norms: ``(sum_i ||t_i||_p ** p) ** (1/p)``,
    or ``max_i ||t_i||_inf`` for ``p = inf``. Each per-tensor norm is computed on its
    tensor's device and in its dtype; they meet on the device of the first tensor, in
    their promoted dtype.

    Parameters
    ----------
    tensors : Tensor or iterable of Tensor
        The tensors (usually gradients: ``[p.grad for p in params]``).
    norm_type : float
        The order of the norm: a positive number, or ``math.inf`` for the largest
        absolute value. PyTorch also accepts 0 and negative orders, which mean nothing
        for clipping; here they raise ``ValueError``.
    error_if_nonfinite : bool
        Raise ``RuntimeError`` when the total norm is NaN or infinite.
    foreach : bool or None
        Accepted for PyTorch compatibility; one implementation serves every device.

    Returns
    -------
    Tensor
        The total norm (0-d). For no tensors at all, ``tensor(0.)`` (float32).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> get_total_norm([mta.tensor([3.0]), mta.tensor([4.0])])
    tensor(5.)
    """
    del foreach
    norm_type = float(norm_type)
    if not norm_type > 0:
        raise ValueError(f"norm_type must be positive (or math.inf), got {norm_type}")
    arrays_by_device: dict[Device, list[Any]] = {}
    for t in _as_list(tensors):
        if t.dtype.kind != "f":
            raise TypeError(f"the norm of gradients needs floating-point tensors, got {t.dtype}")
        arrays_by_device.setdefault(t.device, []).append(t.array)
    if not arrays_by_device:
        return Tensor._from_data(np.zeros((), dtype=np.float32))
    first = next(iter(arrays_by_device))
    norms = []  # one 1-d array of per-tensor norms per device, moved to ``first``
    for device, arrays in arrays_by_device.items():
        with device.guard():
            xp = device.xp
            dtype = np.result_type(*(a.dtype for a in arrays))
            part = xp.stack([_vector_norm(xp, a, norm_type).astype(dtype) for a in arrays])
        norms.append(part if device is first else move_array(part, device, first))
    with first.guard():
        xp = first.xp
        dtype = np.result_type(*(n.dtype for n in norms))
        total = _vector_norm(xp, xp.concatenate([n.astype(dtype) for n in norms]), norm_type)
        if error_if_nonfinite and not bool(xp.isfinite(total)):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
            )
    return Tensor._make(total, first, False, None)


def clip_grads_with_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    total_norm: Tensor | float,
    foreach: bool | None = None,
) -> None:
    """Scale every gradient by ``min(1, max_norm / (total_norm + 1e-6))``.

    :func:`clip_grad_norm_` is :func:`get_total_norm` followed by this function. The
    coefficient is computed on the device of ``total_norm`` and in its dtype, then cast
    to each gradient's dtype; it is never compared on the host, so clipping never waits
    for the GPU. A NaN norm gives a NaN coefficient (and NaN gradients), as in PyTorch.
    Each ``p.grad`` is replaced by a scaled copy (see the module docstring).

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        Parameters whose gradients to scale (those without a gradient are skipped).
    max_norm : float
        The largest allowed total norm.
    total_norm : Tensor or float
        The total norm of the gradients, from :func:`get_total_norm`.
    foreach : bool or None
        Accepted for PyTorch compatibility; one implementation serves every device.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.zeros(2, requires_grad=True)
    >>> w.grad = mta.tensor([3.0, 4.0])
    >>> clip_grads_with_norm_([w], 1.0, get_total_norm([w.grad]))
    >>> w.grad
    tensor([0.6, 0.8])
    """
    del foreach
    params = [p for p in _as_list(parameters) if p.grad is not None]
    if not params:
        return
    if not isinstance(total_norm, Tensor):
        total_norm = Tensor._from_data(np.asarray(total_norm, dtype=np.float32))
    norm_device, xp = total_norm.device, total_norm.device.xp
    with norm_device.guard():
        total = total_norm.array
        one = xp.asarray(1.0, dtype=total.dtype)
        # ``max_norm / t`` is ``t.reciprocal() * max_norm`` in PyTorch: same rounding here
        coef = xp.reciprocal(total + xp.asarray(1e-6, dtype=total.dtype))
        coef = xp.minimum(coef * xp.asarray(float(max_norm), dtype=total.dtype), one)
    coefs: dict[tuple[Device, Any], Any] = {}
    clipped: dict[int, Tensor] = {}
    for p in params:
        g = p.grad
        assert g is not None
        if id(g) not in clipped:  # a shared gradient is scaled once, and stays shared
            key = (g.device, g.dtype)
            with g.device.guard():
                if key not in coefs:
                    c = coef if g.device is norm_device else move_array(coef, norm_device, g.device)
                    coefs[key] = c.astype(g.dtype)
                clipped[id(g)] = Tensor._make(g.array * coefs[key], g.device, False, None)
        p.grad = clipped[id(g)]


def clip_grad_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale the gradients so that their total norm is at most ``max_norm``.

    The total norm is that of all gradients concatenated into one vector
    (:func:`get_total_norm`). Every ``p.grad`` becomes
    ``p.grad * min(1, max_norm / (total_norm + 1e-6))`` (:func:`clip_grads_with_norm_`).
    An infinite norm gives a coefficient of 0 (so infinite entries become NaN and
    finite ones 0), a NaN norm NaN gradients, as in PyTorch.

    Unlike PyTorch, each gradient is replaced by a new tensor rather than scaled in
    place (a gradient shared by several parameters is scaled once).

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
    foreach : bool or None
        Accepted for PyTorch compatibility; one implementation serves every device.

    Returns
    -------
    Tensor
        The total norm before clipping (0-d, on the device of the first gradient).

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
    is_generator = isinstance(parameters, types.GeneratorType)
    params = _as_list(parameters)
    if is_generator and not params:
        warnings.warn(
            "`parameters` is an empty generator, no gradient clipping will occur.",
            stacklevel=2,
        )
    grads = [p.grad for p in params if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(params, max_norm, total_norm)
    return total_norm


def clip_grad_value_(
    parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp every gradient element into ``[-clip_value, clip_value]`` (NaN stays NaN).

    Each ``p.grad`` is replaced by a clamped copy (never modified in place). PyTorch
    accepts a negative ``clip_value`` (and sets every element to it); here it raises.

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        Parameters whose gradients to clip (those without a gradient are skipped).
    clip_value : float
        The largest allowed absolute value (non-negative).
    foreach : bool or None
        Accepted for PyTorch compatibility; one implementation serves every device.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.zeros(3, requires_grad=True)
    >>> w.grad = mta.tensor([-5.0, 0.5, 2.0])
    >>> clip_grad_value_([w], 1.0)
    >>> w.grad
    tensor([-1. ,  0.5,  1. ])
    """
    del foreach
    clip_value = float(clip_value)
    if not clip_value >= 0:
        raise ValueError(f"clip_value must be non-negative, got {clip_value}")
    clipped: dict[int, Tensor] = {}
    for p in _as_list(parameters):
        g = p.grad
        if g is None:
            continue
        if id(g) not in clipped:
            with g.device.guard():
                data = g.xp.clip(g.array, -clip_value, clip_value)
            clipped[id(g)] = Tensor._make(data, g.device, False, None)
        p.grad = clipped[id(g)]
