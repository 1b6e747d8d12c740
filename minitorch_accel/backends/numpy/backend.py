"""The NumPy backend: the host (``"cpu"``) and virtual CPU devices (``"cpu:N"``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..base import Backend
from . import threads as cpu_threads

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

    def kernel(self, name: str) -> Any:
        """The threaded CPU kernel ``name`` when several threads are in use, else None
        (see :mod:`~minitorch_accel.backends.numpy.threads`).
        """
        return cpu_threads.threaded_kernel(name)
