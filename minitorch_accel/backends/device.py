"""Device names: ``"cpu"``, ``"cpu:3"``, ``"cuda"``, ``"cuda:1"``.

A :class:`Device` is interned: parsing the same name twice gives the same object, so
the hot path of every op compares devices with ``is``.
"""

from __future__ import annotations

import contextlib
import re
import threading
from typing import TYPE_CHECKING, Any, ClassVar, Union

if TYPE_CHECKING:
    from .base import Backend

_NAME = re.compile(r"^([a-z]+)(?::(\d+))?$")


class Device:
    """A place where arrays live: a backend type and an index.

    ``"cpu"`` is the host. ``"cpu:N"`` are *virtual* CPU devices: the same host memory
    under a separate identity, so that multi-device code runs (and its transfers are
    counted) on a machine with no GPU. ``"cuda"`` means ``"cuda:0"``.

    Parameters
    ----------
    name : str or Device
        For example ``"cpu"``, ``"cpu:2"``, ``"cuda:1"``.

    Examples
    --------
    >>> Device("cpu:2").index
    2
    >>> Device("cpu") is Device("cpu")
    True
    """

    __slots__ = ("type", "index", "_backend", "_xp")
    _interned: ClassVar[dict[str, Device]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    type: str
    index: int | None
    _backend: Backend | None
    _xp: Any

    def __new__(cls, name: DeviceLike) -> Device:
        """The one Device object for ``name`` (devices are interned)."""
        if isinstance(name, Device):
            return name
        found = cls._interned.get(name) if isinstance(name, str) else None
        if found is not None:
            return found
        if not isinstance(name, str):
            raise TypeError(f"a device is a string like 'cpu' or 'cuda:0', got {name!r}")
        match = _NAME.match(name.strip().lower())
        if match is None:
            raise ValueError(
                f"invalid device {name!r}: expected 'cpu', 'cpu:N', 'cuda' or 'cuda:N'"
            )
        dev_type, index_text = match.group(1), match.group(2)
        index = int(index_text) if index_text is not None else None
        if dev_type != "cpu" and index is None:
            index = 0
        canonical = dev_type if index is None else f"{dev_type}:{index}"
        with cls._lock:
            dev = cls._interned.get(canonical)
            if dev is None:
                dev = object.__new__(cls)
                dev.type, dev.index, dev._backend, dev._xp = dev_type, index, None, None
                cls._interned[canonical] = dev
            cls._interned[name] = dev
        return dev

    @property
    def backend(self) -> Backend:
        """The backend that owns this device (resolved, and checked, on first use)."""
        if self._backend is None:
            from . import registry

            backend = registry.get(self.type)
            backend.check_device(self)
            self._backend = backend
            self._xp = backend.xp
        return self._backend

    @property
    def xp(self) -> Any:
        """The array module (``numpy`` or ``cupy``) of this device."""
        xp = self._xp
        return xp if xp is not None else self.backend.xp

    def guard(self) -> contextlib.AbstractContextManager[Any]:
        """A context in which work runs on this device.

        Where the backend has several devices (a machine with two GPUs) this is its
        :meth:`~minitorch_accel.backends.base.Backend.device_context`, so that kernels
        launched and arrays allocated inside run on this GPU, not on CuPy's current
        one; elsewhere a shared no-op.

        Examples
        --------
        >>> with Device("cpu:1").guard():
        ...     pass
        """
        backend = self.backend
        if backend.needs_device_context:
            return backend.device_context(self)
        return _NO_GUARD

    @property
    def is_host(self) -> bool:
        """True for ``"cpu"``, the host itself (not a virtual ``cpu:N`` device)."""
        return self.type == "cpu" and self.index is None

    @property
    def shares_host_memory(self) -> bool:
        """True where arrays are NumPy arrays in host memory (``"cpu"``, ``"cpu:N"``): the
        backend's :attr:`~minitorch_accel.backends.base.Backend.shares_host_memory`.

        Examples
        --------
        >>> Device("cpu:3").shares_host_memory
        True
        """
        return self.backend.shares_host_memory

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        return f"device('{self}')"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = Device(other)
            except (ValueError, TypeError):
                return False
        return self is other

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (Device, (str(self),))


_NO_GUARD = contextlib.nullcontext()

DeviceLike = Union[str, Device]  # noqa: UP007  (a runtime alias; | needs 3.10 objects)
