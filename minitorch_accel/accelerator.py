"""``minitorch_accel.accelerator``: the device-agnostic names of ``torch.accelerator``.

Current pytorch/examples pick their device with::

    device = (mta.accelerator.current_accelerator().type
              if mta.accelerator.is_available() else "cpu")

Here the accelerator is a CUDA GPU (through CuPy). The virtual ``cpu:N`` devices are
not accelerators.

Examples
--------
>>> import minitorch_accel as mta
>>> device = mta.accelerator.current_accelerator() or mta.device("cpu")
>>> device.type in ("cpu", "cuda")
True
"""

from __future__ import annotations

from . import cuda
from .backends import Device


def is_available() -> bool:
    """True when a CUDA GPU can run here (CuPy installed and a GPU answering)."""
    return cuda.is_available()


def current_accelerator(check_available: bool = False) -> Device | None:
    """The accelerator device (``device('cuda:0')``), or None when there is none.

    ``check_available`` is accepted for PyTorch's signature: None is returned whenever
    no GPU can run.
    """
    return Device(f"cuda:{cuda.current_device()}") if cuda.is_available() else None


def device_count() -> int:
    """The number of GPUs (0 without one)."""
    return cuda.device_count()


def current_device_index() -> int:
    """The index of the current GPU (-1 when there is none)."""
    return cuda.current_device() if cuda.is_available() else -1


def synchronize(device: Device | str | int | None = None) -> None:
    """Wait for the GPU's queued work to finish (nothing to wait for without one)."""
    if cuda.is_available():
        cuda.synchronize(device)
