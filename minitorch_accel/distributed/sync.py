"""Keeping replicas identical: broadcast parameters, all-reduce gradients.

Gradients travel as ONE flat buffer per step (not one message per tensor): packing
costs a copy, but a single large message runs at full bandwidth while many small ones
pay the latency of each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.grad_mode import no_grad
from ..core.tensor import Tensor
from ..ops.flat import FlatLayout
from . import comm
from .fingerprint import check_same_model


def pack(xp: Any, arrays: Sequence[Any], extra: Sequence[float] = (), dtype: Any = None) -> Any:
    """One contiguous 1-D buffer holding every array (flattened) then ``extra`` values."""
    dtype = np.dtype(dtype or (arrays[0].dtype if arrays else np.float64))
    layout = FlatLayout(
        [a.shape for a in arrays] + [(len(extra),)], [a.dtype for a in arrays] + [dtype], dtype
    )
    return layout.pack([*arrays, xp.asarray(extra, dtype=dtype)], xp)


def unpack(flat: Any, shapes: Sequence[tuple[int, ...]]) -> list[Any]:
    """Views into ``flat`` with the given shapes (the inverse of :func:`pack`; the
    ``extra`` values after them are left out).
    """
    return FlatLayout(shapes, [flat.dtype] * len(shapes), flat.dtype).unpack(flat)


def allreduce_flat(flat: Tensor) -> None:
    """Sum a flat buffer over all ranks, in place: through the backend's communicator
    (:meth:`~minitorch_accel.backends.base.Backend.process_communicator`, NCCL between
    GPUs) where it has one, otherwise staged through host memory and MPI.
    """
    if comm.world_size() == 1:
        return
    device = flat.device
    backend = device.backend
    communicator = backend.process_communicator(
        device, comm.rank(), comm.world_size(), comm.broadcast_object
    )
    if communicator is not None:
        data = flat.array
        comm.guarded(f"{communicator.name} allreduce", lambda: communicator.all_reduce([data]))
        backend.synchronize(device)
        return
    host = np.ascontiguousarray(device.backend.to_host(flat.array))
    comm.allreduce_array(host)
    if device.shares_host_memory:
        flat.array[...] = host
    else:
        flat.array[...] = device.backend.asarray(host, device)


def broadcast_parameters(model: Any, root: int = 0) -> None:
    """Make every rank's parameters and buffers equal to ``root``'s (one message).

    Raises ``ValueError`` on every rank if the ranks' models differ in their tensors'
    names, shapes or dtypes (checked once per model).
    """
    tensors = list(model.parameters()) + list(model.buffers())
    if comm.world_size() == 1:
        return
    check_same_model(model)
    if not tensors:
        return
    by_dtype: dict[Any, list[Tensor]] = {}
    for t in tensors:
        by_dtype.setdefault(t.dtype, []).append(t)
    with no_grad():
        for group in by_dtype.values():
            host = [t.device.backend.to_host(t.array) for t in group]
            flat = pack(np, host)
            comm.broadcast_array(flat, root=root)
            for t, values in zip(group, unpack(flat, [t.shape for t in group]), strict=True):
                device = t.device
                if not device.shares_host_memory:
                    values = device.backend.asarray(values, device)
                t.array[...] = values


def pack_gradients(params: Sequence[Tensor], extra: Sequence[float] = ()) -> Tensor:
    """One flat buffer (on the parameters' device) holding every parameter's gradient
    (zeros where there is none), then ``extra`` values.
    """
    xp, device = params[0].xp, params[0].device
    grads = [p.grad.array if p.grad is not None else xp.zeros(p.shape, p.dtype) for p in params]
    return Tensor._make(pack(xp, grads, extra=extra), device, False, None)


def unpack_gradients(params: Sequence[Tensor], flat: Tensor) -> None:
    """Set each parameter's ``.grad`` to its view of ``flat`` (extra values are ignored)."""
    for p, view in zip(params, unpack(flat.array, [p.shape for p in params]), strict=True):
        p.grad = Tensor._make(view, flat.device, False, None)


def allreduce_gradients(model: Any, weight: float | None = None) -> None:
    """Average the gradients of ``model``'s parameters over all ranks (one message).

    Parameters
    ----------
    weight : float, optional
        This rank's share of the global batch (its samples / all samples); the result
        is then ``sum_r weight_r * grad_r``, which equals the gradient of the whole
        batch even when the ranks' batches differ in size. Default: ``1 / world_size``.

    Raises ``ValueError`` on every rank if the ranks' models differ in their tensors'
    names, shapes or dtypes (checked once per model).
    """
    if comm.world_size() > 1:
        check_same_model(model)
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        return
    flat = pack_gradients(params)
    flat.array *= 1.0 / comm.world_size() if weight is None else float(weight)
    allreduce_flat(flat)
    unpack_gradients(params, flat)
