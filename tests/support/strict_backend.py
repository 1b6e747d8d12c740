"""TEST DOUBLE, not a backend users see: the ``strict`` backend (``"strict:N"``, four
devices), NumPy behind CuPy's rules (``strict_xp.py``), for the op suite on the CPU.

Register it with ``minitorch_accel.backends.registry.register("strict", StrictBackend)``.
Its devices behave as several GPUs do: work on ``"strict:1"`` must run inside the
backend's :meth:`~StrictBackend.device_context`, or the arrays refuse it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from minitorch_accel.backends import Backend, Device, registry
from support.strict_devices import StrictDevice, on_device
from support.strict_xp import STRICT, StrictArray, _call


class StrictGenerator:
    """A NumPy ``Generator`` whose samples are StrictArrays."""

    def __init__(self, generator: np.random.Generator) -> None:
        self._g = generator

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._g, name)
        return lambda *args, **kwargs: _call(method, args, kwargs)


class StrictBackend(Backend):
    """The ``strict`` test backend: devices ``"strict"`` and ``"strict:N"`` (4 of them)."""

    name = "strict"
    xp = STRICT
    needs_device_context = True  # four devices: work must run on its tensors' own

    def __init__(self) -> None:
        self._seed = 0
        self._generators: dict[Device, StrictGenerator] = {}

    def device_count(self) -> int:
        return 4

    def device_context(self, device: Device) -> contextlib.AbstractContextManager[Any]:
        return StrictDevice(device.index or 0)

    def asarray(self, obj: Any, device: Device, dtype: Any = None) -> Any:
        with on_device(device.index or 0):
            return STRICT.asarray(obj, dtype=dtype)

    def to_host(self, array: Any) -> np.ndarray:
        return STRICT.asnumpy(array)

    def copy_between(self, array: Any, src: Device, dst: Device, non_blocking: bool) -> Any:
        with on_device(dst.index or 0):
            return array.copy()  # onto the current device, as CuPy copies between GPUs

    def owns(self, array: Any) -> bool:
        return isinstance(array, StrictArray)

    def device_of(self, array: Any) -> Device:
        return Device(f"{self.name}:{array.device.id}")

    def upload_into(self, out: Any, host: np.ndarray, device: Device) -> Any:
        with self.device_context(device):
            out.set(host)  # as the CuPy backend: the explicit copy from the host
        return out

    def download_into(self, out: np.ndarray, array: Any, device: Device) -> np.ndarray:
        with self.device_context(device):
            array.get(out=out)
        return out

    def generator(self, device: Device) -> StrictGenerator:
        gen = self._generators.get(device)
        if gen is None:
            gen = StrictGenerator(np.random.default_rng([self._seed, (device.index or 0) + 1]))
            self._generators[device] = gen
        return gen

    def manual_seed(self, seed: int) -> None:
        self._seed = int(seed)
        self._generators.clear()


@contextlib.contextmanager
def registered() -> Iterator[None]:
    """The ``strict`` backend registered inside the block (a module fixture's body)."""
    registry.register("strict", StrictBackend)
    try:
        yield
    finally:
        registry.unregister("strict")
