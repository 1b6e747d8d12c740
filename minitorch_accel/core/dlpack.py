"""Exchanging tensors with NumPy, CuPy and PyTorch through DLPack, without copying.

DLPack is a small C struct describing an array (data pointer, device, dtype, shape,
strides) that frameworks hand to each other. The consumer wraps the producer's memory:
no copy, so writes through one are seen by the other.

* :func:`from_dlpack` makes a Tensor from any object with ``__dlpack__`` (a NumPy or
  CuPy array, a PyTorch tensor...). Host memory gives a ``"cpu"`` tensor, GPU ``N``
  memory a ``"cuda:N"`` tensor.
* :func:`to_dlpack` / :func:`export_capsule` / :func:`dlpack_device` are what a
  Tensor's ``__dlpack__`` and ``__dlpack_device__`` call, so ``numpy.from_dlpack``,
  ``cupy.from_dlpack`` and ``torch.from_dlpack`` accept Tensors.

Examples
--------
>>> import numpy as np
>>> from minitorch_accel.core.dlpack import from_dlpack
>>> a = np.arange(3.0)
>>> t = from_dlpack(a)
>>> a[0] = 7.0
>>> t.tolist()
[7.0, 1.0, 2.0]
"""

from __future__ import annotations

from typing import Any

from ..backends import Backend, registry
from .convert import as_dtype
from .tensor import Tensor

__all__ = ["DLDeviceType", "dlpack_device", "export_capsule", "from_dlpack", "to_dlpack"]


class DLDeviceType:
    """The device codes of the DLPack standard (``__dlpack_device__()[0]``)."""

    CPU = 1
    CUDA = 2
    CUDA_HOST = 3  # page-locked host memory
    CUDA_MANAGED = 13


#: The device types of the standard that some backend may serve, when it can run.
_KNOWN = (DLDeviceType.CPU, DLDeviceType.CUDA, DLDeviceType.CUDA_HOST, DLDeviceType.CUDA_MANAGED)


def from_dlpack(obj: Any) -> Tensor:
    """A Tensor sharing memory with ``obj``, any object implementing ``__dlpack__``.

    Parameters
    ----------
    obj : object
        A NumPy or CuPy array, a PyTorch tensor, a Tensor (returned as it is)...

    Returns
    -------
    Tensor
        On ``"cpu"`` for host memory, ``"cuda:N"`` for memory of GPU ``N``; it does
        not require grad.

    Raises
    ------
    TypeError
        If ``obj`` has no ``__dlpack__`` method, or its dtype is not one tensors hold.
    BufferError
        If the producer refuses to export (PyTorch: a tensor that requires grad).
    RuntimeError
        For GPU memory without CuPy or a usable GPU.
    """
    if isinstance(obj, Tensor):
        return obj
    if not hasattr(obj, "__dlpack__") or not hasattr(obj, "__dlpack_device__"):
        raise TypeError(
            f"from_dlpack expects an object with __dlpack__ and __dlpack_device__ (a NumPy "
            f"or CuPy array, a PyTorch tensor...), got {type(obj).__name__}"
        )
    device_type, device_id = (int(v) for v in obj.__dlpack_device__())
    device, array = _importer(device_type).from_dlpack(obj, device_id)
    as_dtype(array.dtype)
    return Tensor._make(array, device, False, None)


def _importer(device_type: int) -> Backend:
    """The backend whose :attr:`~minitorch_accel.backends.base.Backend.dlpack_device_types`
    has ``device_type`` (backends that cannot run here are skipped; if one of them
    could have served, its error, which says what is missing, is raised).
    """
    missing: list[BaseException] = []
    for name in registry.registered():
        try:
            backend = registry.get(name)
        except (RuntimeError, ImportError) as exc:
            missing.append(exc)
            continue
        if device_type in backend.dlpack_device_types:
            return backend
    if device_type in _KNOWN and missing:
        raise missing[0]
    raise BufferError(
        f"from_dlpack: DLPack device type {device_type} is not supported (no backend "
        f"registered here imports it; registered: {registry.registered()})"
    )


def dlpack_device(tensor: Tensor) -> tuple[int, int]:
    """``(device_type, device_id)`` of a Tensor, for ``Tensor.__dlpack_device__``.

    Virtual CPU devices (``"cpu:N"``) live in host memory: ``(1, 0)``.
    """
    device = tensor.device
    return device.backend.dlpack_device(tensor.array, device)


def export_capsule(
    tensor: Tensor,
    *,
    stream: Any = None,
    max_version: tuple[int, int] | None = None,
    dl_device: Any = None,
    copy: bool | None = None,
) -> Any:
    """The DLPack capsule of a Tensor's data, for ``Tensor.__dlpack__``.

    The arguments are those of the array API's ``__dlpack__`` and are passed on to the
    backend array (NumPy or CuPy) only when given, so older versions keep working. On
    a GPU, ``stream`` is the consumer's stream, which the producer makes wait for the
    work already queued.

    Raises
    ------
    RuntimeError
        If the tensor requires grad (export its ``detach()``, as PyTorch asks).
    """
    if tensor.requires_grad:
        raise RuntimeError(
            "can't export a tensor that requires grad through DLPack: the consumer would "
            "bypass autograd; export tensor.detach() instead"
        )
    options = {
        key: value
        for key, value in (
            ("stream", stream),
            ("max_version", max_version),
            ("dl_device", dl_device),
            ("copy", copy),
        )
        if value is not None
    }
    return tensor.array.__dlpack__(**options)


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule of ``tensor`` (the legacy, capsule-passing form).

    Prefer passing the Tensor itself to the consumer's ``from_dlpack``, which lets it
    choose the stream and the DLPack version.
    """
    return export_capsule(tensor)
