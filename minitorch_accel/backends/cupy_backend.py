"""The CuPy backend (``"cuda"``, ``"cuda:N"``), imported lazily.

"CuPy installed" is not "GPU usable": ``import cupy`` succeeds on a machine with no
driver, and only the first device call fails. :func:`load_cupy` probes with a real
device call and turns each failure into one clear error.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import numpy as np

from .base import Backend

if TYPE_CHECKING:
    from .device import Device

INSTALL_HINT = (
    "install CuPy for your CUDA version, e.g. `pip install 'minitorch_accel[gpu]'` "
    "(cupy-cuda12x) or `pip install cupy-cuda13x`"
)


def load_cupy() -> Any:
    """Import CuPy and check that at least one CUDA device answers.

    Raises
    ------
    RuntimeError
        Saying which is missing: CuPy itself, a working CUDA driver, or a CUDA device.
    """
    try:
        import cupy
    except ImportError as exc:
        raise RuntimeError(
            f"device 'cuda' needs CuPy, which is not installed: {INSTALL_HINT}"
        ) from exc
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # CUDARuntimeError: no driver, or a driver too old
        raise RuntimeError(
            "device 'cuda' needs a working CUDA driver and GPU: CuPy is installed but the "
            f"CUDA runtime failed ({type(exc).__name__}: {exc}). On a machine without an "
            "NVIDIA GPU use device='cpu' (or virtual devices 'cpu:N')"
        ) from exc
    if count == 0:
        raise RuntimeError("device 'cuda' needs a CUDA GPU: CuPy is installed but found no device")
    return cupy


class CupyBackend(Backend):
    """Arrays are CuPy arrays on the GPU named by the device index."""

    name = "cuda"

    def __init__(self) -> None:
        self.xp = load_cupy()
        self._count = int(self.xp.cuda.runtime.getDeviceCount())
        self._seed = 0
        self._generators: dict[Device, Any] = {}

    def device_count(self) -> int:
        return self._count

    def device_context(self, device: Device) -> contextlib.AbstractContextManager[Any]:
        return self.xp.cuda.Device(device.index or 0)  # type: ignore[no-any-return]

    def asarray(self, obj: Any, device: Device, dtype: Any = None) -> Any:
        with self.device_context(device):
            return self.xp.asarray(obj, dtype=dtype)

    def to_host(self, array: Any) -> np.ndarray:
        return self.xp.asnumpy(array)  # type: ignore[no-any-return]

    def copy_between(self, array: Any, src: Device, dst: Device, non_blocking: bool) -> Any:
        with self.device_context(dst):
            out = self.xp.array(array, copy=True)
        return out

    def synchronize(self, device: Device | None = None) -> None:
        if device is None:
            self.xp.cuda.Device().synchronize()
        else:
            with self.device_context(device):
                self.xp.cuda.Device().synchronize()

    def generator(self, device: Device) -> Any:
        gen = self._generators.get(device)
        if gen is None:
            with self.device_context(device):
                gen = self.xp.random.default_rng([self._seed, (device.index or 0) + 1])
            self._generators[device] = gen
        return gen

    def manual_seed(self, seed: int) -> None:
        self._seed = int(seed)
        self._generators.clear()

    def memory_stats(self, device: Device) -> dict[str, int]:
        with self.device_context(device):
            pool = self.xp.get_default_memory_pool()
            return {"allocated": int(pool.used_bytes()), "held": int(pool.total_bytes()), "peak": 0}
