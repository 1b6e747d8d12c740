"""Process-wide defaults of the factories: the floating-point dtype and the device; and
:class:`inference_mode`.

``set_default_dtype(mta.float64)`` makes ``zeros``, ``randn``, ``tensor([1.0])``...
float64; ``set_default_device("cpu:1")`` puts new tensors made without a ``device`` on
``cpu:1``. Tensors made from existing arrays or tensors keep their own.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..backends import Device, DeviceLike
from .grad_mode import F, GradModeContext, _inference_mode

_float_dtype: np.dtype[Any] = np.dtype(np.float32)
_device: Device | None = None


def set_default_dtype(dtype: Any) -> None:
    """Make ``dtype`` (float16, float32 or float64) the dtype of new floating-point tensors.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.set_default_dtype(mta.float64)
    >>> mta.zeros(2).dtype, mta.tensor([1.5]).dtype
    (dtype('float64'), dtype('float64'))
    >>> mta.set_default_dtype(mta.float32)
    """
    global _float_dtype
    dt = np.dtype(dtype)
    if dt.kind != "f":
        raise TypeError(f"set_default_dtype: expected a floating-point dtype, got {dt}")
    _float_dtype = dt


def get_default_dtype() -> np.dtype[Any]:
    """The dtype of new floating-point tensors (float32 unless changed)."""
    return _float_dtype


def set_default_device(device: DeviceLike | None) -> None:
    """Make ``device`` where new tensors go when no ``device`` is given (None: ``"cpu"``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.set_default_device("cpu:1")
    >>> mta.ones(2).device
    device('cpu:1')
    >>> mta.set_default_device(None)
    """
    global _device
    if device is None:
        _device = None
        return
    dev = Device(device)
    dev.backend  # noqa: B018  (refuses a device that does not exist, now)
    _device = dev


def get_default_device() -> Device:
    """Where new tensors go when no ``device`` is given."""
    return _device if _device is not None else Device("cpu")


def device_or_default(device: DeviceLike | None) -> Device:
    """``device`` as a Device, or the default one for None."""
    if device is not None:
        return Device(device)
    return _device if _device is not None else Device("cpu")


class inference_mode(GradModeContext):
    """Turn gradient recording off (as :class:`~minitorch_accel.no_grad`); PyTorch's
    name for inference. ``inference_mode(False)`` leaves recording on.

    Unlike PyTorch, tensors made inside carry no "inference" mark: they are ordinary
    tensors that did not record a graph.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.ones(2, requires_grad=True)
    >>> with mta.inference_mode():
    ...     (w * 2).requires_grad
    False
    """

    def __init__(self, mode: bool = True) -> None:
        super().__init__(not mode)
        self.inference = bool(mode)
        self._inference_before: list[bool] = []

    def __enter__(self) -> None:
        self._inference_before.append(_inference_mode.enabled)
        _inference_mode.enabled = self.inference  # what is_inference_mode_enabled() says
        super().__enter__()

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        _inference_mode.enabled = self._inference_before.pop()

    def __call__(self, func: F) -> F:
        """Use this context as a decorator: ``func`` runs inside it."""
        inference = self.inference

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(inference):
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]
