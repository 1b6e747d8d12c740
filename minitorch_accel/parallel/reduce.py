"""Flat buffers and the averaging of tower gradients, on the host or between devices.

Moving many small tensors costs one transfer (and one launch, one synchronization)
each; moving one flat buffer costs one. :class:`~minitorch_accel.ops.flat.FlatLayout`
records where each tensor of a list sits in a 1-D buffer, packs them into it and
unpacks views out of it.
:class:`HostLink` moves such a buffer between the host and one device (through pinned
host memory on a GPU) and counts the bytes in
:data:`minitorch_accel.backends.transfer_stats`. :func:`weighted_sum` averages the
towers' buffers, and :class:`DeviceReducer` does the same between devices: the
backend's all-reduce (:meth:`~minitorch_accel.backends.base.Backend.device_communicator`,
NCCL between distinct GPUs) where it has one, otherwise copies into tower 0, the average
there, and copies back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..backends import Communicator, Device, transfer_stats
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
        # asynchronous on a GPU's current stream: host_flat is pinned
        device.backend.upload_into(buffer, host_flat, device)
        if not device.is_host:
            transfer_stats.record(HOST, device, int(host_flat.nbytes))
        return buffer

    def to_host(self, flat: Any) -> np.ndarray:
        """``flat``'s values in this link's host buffer (overwritten by the next call)."""
        device, buffer = self.device, self._on_host
        if buffer is None or buffer.shape != flat.shape or buffer.dtype != flat.dtype:
            buffer = self._on_host = host_buffer([device], int(flat.size), flat.dtype)
        device.backend.download_into(buffer, flat, device)
        if not device.is_host:
            transfer_stats.record(device, HOST, int(flat.nbytes))
        return buffer


def host_buffer(devices: Sequence[Device], numel: int, dtype: Any) -> np.ndarray:
    """An uninitialised 1-D host array of ``numel`` elements that ``devices`` copy to
    and from: pinned (page-locked) by the first of their backends that
    :attr:`~minitorch_accel.backends.base.Backend.has_pinned_memory`, else ordinary.

    Examples
    --------
    >>> from minitorch_accel.backends import Device
    >>> host_buffer([Device("cpu:1")], 4, np.float32).shape
    (4,)
    """
    for device in devices:
        if device.backend.has_pinned_memory:
            return device.backend.pinned_empty((numel,), dtype)
    return np.empty(numel, dtype=dtype)


def nccl_unavailable_reason(devices: Sequence[Device]) -> str | None:
    """Why the backend's all-reduce (NCCL on GPUs) cannot serve ``devices``, or None
    when it can.
    """
    if len(devices) < 2:
        return "a single tower has nothing to all-reduce"
    backend = devices[0].backend
    if any(d.backend is not backend for d in devices):
        return "the devices belong to different backends"
    return backend.collectives_unavailable_reason(devices)


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
        The communicator's name (``"nccl"``) or ``"copy"``.
    reason : str or None
        Why no communicator is used.
    """

    def __init__(self, devices: Sequence[Device], use_nccl: bool | None = None) -> None:
        self.devices = list(devices)
        self.reason = nccl_unavailable_reason(self.devices)
        self._communicator: Communicator | None = None
        if use_nccl is False:
            self.reason = self.reason or "NCCL turned off by the caller"
        elif use_nccl is True and self.reason is not None:
            raise RuntimeError(f"cannot all-reduce with NCCL: {self.reason}")
        if self.reason is None:
            backend = self.devices[0].backend
            self._communicator = backend.device_communicator(self.devices)
        self.method = "copy" if self._communicator is None else self._communicator.name

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
        if self._communicator is not None:
            return self._all_reduce(self._communicator, flats, weights)
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

    def _all_reduce(
        self, communicator: Communicator, flats: Sequence[Any], weights: Sequence[float]
    ) -> tuple[list[Any], dict[str, float]]:
        from time import perf_counter

        t0 = perf_counter()
        for flat, weight, device in zip(flats, weights, self.devices, strict=True):
            with device.backend.device_context(device):
                flat *= weight  # pre-scaled, so the all-reduce's sum is the weighted average
        communicator.all_reduce(flats)
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
