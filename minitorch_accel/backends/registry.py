"""The backend registry: backends plug in by name without touching any op."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import fast_paths
from .base import Backend
from .device import Device

_factories: dict[str, Callable[[], Backend]] = {}
_instances: dict[str, Backend] = {}
#: Factories that could not build their backend when :func:`device_of_array` asked.
_failed: dict[str, Callable[[], Backend]] = {}


def register(name: str, factory: Callable[[], Backend]) -> None:
    """Register a backend under ``name`` (the device type, e.g. ``"cuda"``).

    Parameters
    ----------
    name : str
        Device type the backend serves.
    factory : callable
        Called once, on first use, to build the backend. It may raise ``RuntimeError``
        with an explanation when the backend cannot run on this machine.
    """
    _factories[name] = factory
    _forget(name)


def unregister(name: str) -> None:
    """Remove the backend registered as ``name`` (for tests and plug-ins)."""
    _factories.pop(name, None)
    _forget(name)


def _forget(name: str) -> None:
    """Drop the built backend ``name``, and the devices' references to it."""
    _instances.pop(name, None)
    _failed.pop(name, None)
    for device in list(Device._interned.values()):
        if device.type == name:
            device._backend = device._xp = None


def get(name: str) -> Backend:
    """Return the backend registered as ``name``, building it on first use.

    Raises
    ------
    ValueError
        If no backend has that name.
    RuntimeError
        If the backend exists but cannot run here (e.g. CuPy or a GPU is missing).
    """
    backend = _instances.get(name)
    if backend is not None:
        return backend
    factory = _factories.get(name)
    if factory is None:
        raise ValueError(f"unknown backend {name!r}; registered: {sorted(_factories)}")
    backend = factory()
    backend.fast_forwards = fast_paths.table(name)
    _instances[name] = backend
    return backend


def available() -> list[str]:
    """Names of the backends that can run on this machine (e.g. ``['cpu', 'cuda']``)."""
    names = []
    for name in _factories:
        try:
            get(name)
        except (RuntimeError, ImportError):
            continue
        names.append(name)
    return names


def registered() -> list[str]:
    """Names of every registered backend, usable here or not."""
    return list(_factories)


def built() -> list[Backend]:
    """The backends built so far (in the order they were built)."""
    return list(_instances.values())


def for_module(xp: Any) -> Backend:
    """The built backend whose array module is ``xp`` (``numpy`` -> the ``cpu`` one).

    Raises
    ------
    ValueError
        If no built backend uses ``xp``.
    """
    for backend in _instances.values():
        if backend.xp is xp:
            return backend
    for name in available():  # builds the ones that can run here
        backend = _instances[name]
        if backend.xp is xp:
            return backend
    raise ValueError(f"no backend uses the array module {getattr(xp, '__name__', xp)!r}")


def device_of_array(array: Any) -> Device | None:
    """The device of the backend that owns ``array``, or None when none does.

    The backends built so far are asked first; the others are built (where they can
    run) only for an array none of those owns.
    """
    for backend in list(_instances.values()):
        if backend.owns(array):
            return backend.device_of(array)
    for name, factory in list(_factories.items()):
        if name in _instances or _failed.get(name) is factory:
            continue
        try:
            backend = get(name)
        except (RuntimeError, ImportError):
            _failed[name] = factory  # not built again for this until registered anew
            continue
        if backend.owns(array):
            return backend.device_of(array)
    return None
