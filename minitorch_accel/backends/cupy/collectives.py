"""NCCL all-reduces between GPUs for the CuPy backend: between the GPUs of one process
(the towers of :class:`~minitorch_accel.parallel.TowerTrainer`) and between processes
with one GPU each (:mod:`minitorch_accel.distributed`).

``cupy.cuda.nccl`` is imported on first use only: CuPy may be built without it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base import Communicator

if TYPE_CHECKING:
    from ..device import Device


def nccl_unavailable_reason() -> str | None:
    """Why ``cupy.cuda.nccl`` cannot be used here, or None when it can."""
    try:
        from cupy.cuda import nccl

        if not getattr(nccl, "available", True):
            return "CuPy was built without NCCL"
    except Exception as exc:
        return f"cupy.cuda.nccl cannot be imported ({type(exc).__name__}: {exc})"
    return None


def _kind(nccl: Any, dtype: Any) -> Any:
    kinds = {
        np.dtype("float16"): nccl.NCCL_FLOAT16,
        np.dtype("float32"): nccl.NCCL_FLOAT32,
        np.dtype("float64"): nccl.NCCL_FLOAT64,
    }
    found = kinds.get(np.dtype(dtype))
    if found is None:
        raise TypeError(f"NCCL all-reduce takes float16, float32 or float64, got {dtype}")
    return found


class NcclCommunicator(Communicator):
    """NCCL communicators, one per local GPU (``comms[i]`` drives ``indices[i]``).

    Parameters
    ----------
    cupy : module
        The imported ``cupy``.
    comms : list
        ``cupy.cuda.nccl.NcclCommunicator`` objects.
    indices : list of int
        The GPU each communicator drives.
    """

    name = "nccl"

    def __init__(self, cupy: Any, comms: Sequence[Any], indices: Sequence[int]) -> None:
        self._cupy, self.comms, self.indices = cupy, list(comms), list(indices)

    def all_reduce(self, arrays: Sequence[Any]) -> None:
        """Sum ``arrays[i]`` (on GPU ``indices[i]``) over every rank, in place, queued
        on each GPU's current stream.
        """
        from cupy.cuda import nccl

        if len(arrays) != len(self.comms):
            raise ValueError(f"expected {len(self.comms)} arrays (one per GPU), got {len(arrays)}")
        group = len(self.comms) > 1
        if group:
            nccl.groupStart()
        for comm, array, index in zip(self.comms, arrays, self.indices, strict=True):
            with self._cupy.cuda.Device(index):
                stream = self._cupy.cuda.get_current_stream().ptr
                comm.allReduce(
                    array.data.ptr,
                    array.data.ptr,
                    array.size,
                    _kind(nccl, array.dtype),
                    nccl.NCCL_SUM,
                    stream,
                )
        if group:
            nccl.groupEnd()


def local_communicator(cupy: Any, devices: Sequence[Device]) -> NcclCommunicator:
    """One NCCL communicator per GPU of ``devices`` (distinct GPUs of this process)."""
    from cupy.cuda import nccl

    indices = [d.index or 0 for d in devices]
    return NcclCommunicator(cupy, nccl.NcclCommunicator.initAll(indices), indices)


def process_communicator(
    cupy: Any, index: int, rank: int, world_size: int, broadcast_object: Callable[[Any], Any]
) -> NcclCommunicator:
    """The NCCL communicator joining GPU ``index`` of this rank with the other ranks'."""
    from cupy.cuda import nccl

    uid = broadcast_object(nccl.get_unique_id() if rank == 0 else None)
    with cupy.cuda.Device(index):
        comm = nccl.NcclCommunicator(world_size, uid, rank)
    return NcclCommunicator(cupy, [comm], [index])
