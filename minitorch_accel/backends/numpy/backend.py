"""The NumPy backend: the host (``"cpu"``) and virtual CPU devices (``"cpu:N"``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..base import Backend
from .fast_gemm import threaded_gemm

if TYPE_CHECKING:
    from ..device import Device

#: Virtual CPU devices allowed; more is almost certainly a mistake in the caller.
MAX_VIRTUAL_DEVICES = 64


class NumpyBackend(Backend):
    """Arrays are NumPy arrays. Every ``cpu:N`` shares host memory, but moving a tensor
    between two of them copies it and counts the bytes, as a real transfer would.
    """

    name = "cpu"
    xp = np
    shares_host_memory = True
    keeps_conv_cols = False  # see fast_conv.BlockCols
    dlpack_device_types: tuple[int, ...] = (1, 3)  # kDLCPU, kDLCUDAHost (pinned host memory)

    def __init__(self) -> None:
        self._seed = 0
        self._generators: dict[Device, np.random.Generator] = {}

    def device_count(self) -> int:
        """How many devices this backend has."""
        return MAX_VIRTUAL_DEVICES

    def asarray(self, obj: Any, device: Device, dtype: Any = None) -> Any:
        """``obj`` as an array of this backend on ``device`` (copied only if needed)."""
        return np.asarray(obj, dtype=dtype)

    def to_host(self, array: Any) -> np.ndarray:
        """``array`` as a NumPy array in host memory."""
        return np.asarray(array)

    def copy_between(self, array: Any, src: Device, dst: Device, non_blocking: bool) -> Any:
        """A copy of ``array`` (on ``src``) made on ``dst``."""
        out = np.array(array, copy=True)
        return out

    def owns(self, array: Any) -> bool:
        """True for NumPy arrays."""
        return isinstance(array, np.ndarray)

    def device_of(self, array: Any) -> Device:
        """The host, ``"cpu"``: where every NumPy array lives."""
        from ..device import Device

        return Device("cpu")

    def upload_into(self, out: Any, host: np.ndarray, device: Device) -> Any:
        """Copy ``host`` into ``out``: both are in host memory."""
        np.copyto(out, host)
        return out

    def download_into(self, out: np.ndarray, array: Any, device: Device) -> np.ndarray:
        """Copy ``array`` into ``out``: both are in host memory."""
        np.copyto(out, array)
        return out

    def gemm(self, a: Any, b: Any, out: Any = None) -> Any:
        """``a @ b``; float16 is multiplied in float32 and rounded back.

        NumPy has no float16 BLAS: its float16 ``matmul`` is a slow generic loop that
        also accumulates in float16. The float16 values are exact in float32, so this
        is float16 storage with float32 accumulation, as GPU tensor cores compute.
        With more than one thread (:func:`~minitorch_accel.set_num_threads`), a large
        float32 or float64 product is split over the thread pool
        (:func:`~minitorch_accel.backends.numpy.fast_gemm.threaded_gemm`).
        """
        found = threaded_gemm(a, b, out)
        if found is not None:
            return found
        if a.dtype == np.float16:
            result = np.matmul(a.astype(np.float32), b.astype(np.float32))
            if out is None:
                return result.astype(np.float16)
            out[...] = result
            return out
        if out is None:
            return np.matmul(a, b)
        return np.matmul(a, b, out=out)

    def describe(self) -> str:
        """The host and its virtual devices, and NumPy's version."""
        return (
            f"host 'cpu' and virtual devices 'cpu:0'..'cpu:{MAX_VIRTUAL_DEVICES - 1}' "
            f"(NumPy {np.__version__})"
        )

    def from_dlpack(self, obj: Any, device_id: int) -> tuple[Device, Any]:
        """``("cpu", a NumPy array sharing obj's host memory)``."""
        return self.device_of(None), np.from_dlpack(obj)

    def dlpack_device(self, array: Any, device: Device) -> tuple[int, int]:
        """``(1, 0)``, the host, for ``cpu`` and every virtual ``cpu:N`` alike."""
        return (1, 0)

    def generator(self, device: Device) -> np.random.Generator:
        """The random generator of ``device`` (made on first use from the seed)."""
        gen = self._generators.get(device)
        if gen is None:
            index = -1 if device.index is None else device.index
            gen = np.random.default_rng([self._seed, index + 1])
            self._generators[device] = gen
        return gen

    def manual_seed(self, seed: int) -> None:
        """Seed every device's generator of this backend."""
        self._seed = int(seed)
        self._generators.clear()
