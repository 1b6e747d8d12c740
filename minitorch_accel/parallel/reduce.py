"""Flat buffers and the averaging of tower gradients, on the host or between devices.

Moving many small tensors costs one transfer (and one launch, one synchronization)
each; moving one flat buffer costs one. :class:`~minitorch_accel.ops.flat.FlatLayout`
records where each tensor of a list sits in a 1-D buffer, packs them into it and
unpacks views out of it.
:class:`HostLink` moves such a buffer between the host and one device (through pinned
host memory on a GPU) and counts the bytes in
:data:`minitorch_accel.backends.transfer_stats`. :func:`weighted_sum` averages the
towers' buffers, and :class:`DeviceReducer` does the same between devices: an NCCL
all-reduce when the devices are distinct GPUs and CuPy has NCCL, otherwise copies into
tower 0, the average there, and copies back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..backends import Device, transfer_stats
from ..core.convert import HOST, move_array


def weighted_sum(
    flats: Sequence[Any], weights: Sequence[float], out: Any = None, xp: Any = np
) -> Any:
    """``sum_i weights[i] * flats[i]``, summed in tower order, into ``out`` if given.

    With ``weights[i] = shard_i / batch`` and a mean-reduced loss this is exactly the
    gradient of the whole batch: the weighted average of the towers' gradients, never
    their plain sum. ``xp`` is the array module of the buffers.
    """
    total = xp.multiply(flats[0], weights[0], out=out)
    scratch = None
    for flat, weight in zip(flats[1:], weights[1:], strict=True):
        scratch = xp.multiply(flat, weight, out=scratch)
        total += scratch
    return total


def private_copy(array: Any, src: Device, dst: Device) -> Any:
    """``array`` on ``dst``, never sharing memory with the original.

    A real transfer (counted) between two devices; a local copy (not counted) when
    both are the same device, so two towers on one device never share a buffer.
    """
    if src is dst:
        with dst.backend.device_context(dst):
            return array.copy()
    return move_array(array, src, dst)


class HostLink:
    """Moves flat buffers between the host and one device, one transfer each way.

    Both directions copy into buffers allocated once and reused every step (fresh
    memory costs page faults on the host and allocations on the GPU). On a GPU the host
    side is pinned (page-locked): the copy engine reads and writes it directly, at full
    PCIe speed, and the host-to-device copy runs asynchronously. The bytes are counted
    in :data:`minitorch_accel.backends.transfer_stats` (not when the "device" is the
    host itself).

    Parameters
    ----------
    device : Device
        The tower's device.
    """

    def __init__(self, device: Device) -> None:
        self.device = device
        self._on_device: Any = None
        self._on_host: np.ndarray | None = None

    def to_device(self, host_flat: np.ndarray) -> Any:
        """``host_flat``'s values in this link's buffer on the device (overwritten by
        the next call).
        """
        device, buffer = self.device, self._on_device
        with device.backend.device_context(device):
            if buffer is None or buffer.shape != host_flat.shape or buffer.dtype != host_flat.dtype:
                buffer = self._on_device = device.xp.empty(host_flat.shape, host_flat.dtype)
            if device.type == "cpu":
                np.copyto(buffer, host_flat)
            else:  # asynchronous on the current stream (CuPy): host_flat is pinned
                buffer.set(host_flat)
        if not device.is_host:
            transfer_stats.record(HOST, device, int(host_flat.nbytes))
        return buffer

    def to_host(self, flat: Any) -> np.ndarray:
        """``flat``'s values in this link's host buffer (overwritten by the next call)."""
        device, buffer = self.device, self._on_host
        if buffer is None or buffer.shape != flat.shape or buffer.dtype != flat.dtype:
            make = pinned_empty if device.type == "cuda" else np.empty
            buffer = self._on_host = make(int(flat.size), flat.dtype)
        if device.type == "cpu":
            np.copyto(buffer, flat)
        else:
            with device.backend.device_context(device):
                flat.get(out=buffer)
        if not device.is_host:
            transfer_stats.record(device, HOST, int(flat.nbytes))
        return buffer


def pinned_empty(numel: int, dtype: np.dtype[Any]) -> np.ndarray:
    """A NumPy array in pinned host memory when CuPy is usable, else an ordinary one."""
    try:
        import cupy

        memory = cupy.cuda.alloc_pinned_memory(max(numel, 1) * np.dtype(dtype).itemsize)
    except Exception:  # no CuPy or no driver: pageable memory does the same job, slower
        return np.empty(numel, dtype=dtype)
    return np.frombuffer(memory, dtype=dtype, count=numel)


def nccl_unavailable_reason(devices: Sequence[Device]) -> str | None:
    """Why an NCCL all-reduce cannot serve ``devices``, or None when it can."""
    if len(devices) < 2:
        return "a single tower has nothing to all-reduce"
    if any(d.type != "cuda" for d in devices):
        return "NCCL needs CUDA devices"
    if len({d.index for d in devices}) != len(devices):
        return "a GPU appears twice (NCCL needs one rank per GPU)"
    try:
        from cupy.cuda import nccl

        if not nccl.available:
            return "CuPy was built without NCCL"
    except Exception as exc:
        return f"cupy.cuda.nccl cannot be imported ({type(exc).__name__}: {exc})"
    return None


class DeviceReducer:
    """Averages one flat buffer per tower between devices, leaving the average on each.

    Parameters
    ----------
    devices : sequence of Device
        One per tower, repeats allowed.
    use_nccl : bool, optional
        Force the choice; by default NCCL is used when :func:`nccl_unavailable_reason`
        finds nothing against it.

    Attributes
    ----------
    method : str
        ``"nccl"`` or ``"copy"``.
    reason : str or None
        Why NCCL is not used.
    """

    def __init__(self, devices: Sequence[Device], use_nccl: bool | None = None) -> None:
        self.devices = list(devices)
        self.reason = nccl_unavailable_reason(self.devices)
        self._comms: list[Any] = []
        if use_nccl is False:
            self.reason = self.reason or "NCCL turned off by the caller"
        elif use_nccl is True and self.reason is not None:
            raise RuntimeError(f"cannot all-reduce with NCCL: {self.reason}")
        if self.reason is None:
            from cupy.cuda import nccl

            self._comms = list(nccl.NcclCommunicator.initAll([d.index for d in self.devices]))
        self.method = "nccl" if self._comms else "copy"

    def all_reduce(
        self, flats: Sequence[Any], weights: Sequence[float]
    ) -> tuple[list[Any], dict[str, float]]:
        """Replace the towers' buffers by their weighted sum, on every device.

        Returns
        -------
        averaged : list
            One buffer per tower holding ``sum_i weights[i] * flats[i]``.
        seconds : dict
            Time spent in ``gather``, ``average`` and ``broadcast``.
        """
        if self.method == "nccl":
            return self._nccl(flats, weights)
        return self._through_tower0(flats, weights)

    def _through_tower0(
        self, flats: Sequence[Any], weights: Sequence[float]
    ) -> tuple[list[Any], dict[str, float]]:
        from time import perf_counter

        root = self.devices[0]
        t0 = perf_counter()
        gathered = [flats[0]]
        for flat, device in zip(flats[1:], self.devices[1:], strict=True):
            gathered.append(flat if device is root else move_array(flat, device, root))
        _synchronize(root)
        t1 = perf_counter()
        with root.backend.device_context(root):
            total = weighted_sum(gathered, weights, xp=root.xp)
        _synchronize(root)
        t2 = perf_counter()
        averaged = [total] + [private_copy(total, root, d) for d in self.devices[1:]]
        for device in set(self.devices):
            _synchronize(device)
        t3 = perf_counter()
        return averaged, {"gather": t1 - t0, "average": t2 - t1, "broadcast": t3 - t2}

    def _nccl(
        self, flats: Sequence[Any], weights: Sequence[float]
    ) -> tuple[list[Any], dict[str, float]]:
        from time import perf_counter

        import cupy
        from cupy.cuda import nccl

        kinds = {
            np.dtype("float16"): nccl.NCCL_FLOAT16,
            np.dtype("float32"): nccl.NCCL_FLOAT32,
            np.dtype("float64"): nccl.NCCL_FLOAT64,
        }
        t0 = perf_counter()
        for flat, weight, device in zip(flats, weights, self.devices, strict=True):
            with cupy.cuda.Device(device.index):
                flat *= weight  # pre-scaled, so the all-reduce's sum is the weighted average
        nccl.groupStart()
        for comm, flat, device in zip(self._comms, flats, self.devices, strict=True):
            with cupy.cuda.Device(device.index):
                stream = cupy.cuda.get_current_stream().ptr
                comm.allReduce(
                    flat.data.ptr,
                    flat.data.ptr,
                    flat.size,
                    kinds[flat.dtype],
                    nccl.NCCL_SUM,
                    stream,
                )
        nccl.groupEnd()
        for device in self.devices:
            _synchronize(device)
        elapsed = perf_counter() - t0
        # A ring all-reduce sends and receives 2 (n - 1) / n of the buffer per device.
        n = len(self.devices)
        for i, flat in enumerate(flats):
            nbytes = int(flat.nbytes) * 2 * (n - 1) // n
            transfer_stats.record(self.devices[i], self.devices[(i + 1) % n], nbytes)
        return list(flats), {"gather": 0.0, "average": elapsed, "broadcast": 0.0}


def _synchronize(device: Device) -> None:
    device.backend.synchronize(device)
