"""The random state a training run needs to be replayed exactly.

Two sources of randomness matter on resume:

* the DataLoader's shuffling generator: the order of epoch ``k`` is drawn from it when
  the epoch starts, so its state *at the start of the epoch* reproduces that order;
* the backend generators (``manual_seed``): dropout masks and random init draw there.

States are NumPy ``bit_generator.state`` dicts. They hold 128-bit integers, so they
travel as JSON text, which any checkpoint format can store.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..backends import Device

__all__ = [
    "backend_rng_state",
    "loader_rng_state",
    "set_backend_rng_state",
    "set_loader_rng_state",
]


def _loader_generator(loader: Any) -> Any:
    """The shuffling generator of ``loader``, or None when it has none we can reach."""
    gen = getattr(loader, "generator", None)
    if gen is None:
        gen = getattr(loader, "_rng", None)
    return gen if hasattr(gen, "bit_generator") else None


def loader_rng_state(loader: Any) -> str | None:
    """The state of ``loader``'s shuffling generator as JSON, or None.

    A loader with ``state_dict()`` is asked for it; otherwise the NumPy generator
    behind the shuffle is read.
    """
    if callable(getattr(loader, "state_dict", None)):
        return json.dumps(loader.state_dict())
    gen = _loader_generator(loader)
    if gen is None:
        return None
    return json.dumps(gen.bit_generator.state)


def set_loader_rng_state(loader: Any, state: str | None) -> None:
    """Restore a state returned by :func:`loader_rng_state` (None: nothing to do).

    Raises
    ------
    ValueError
        When a state is given but ``loader`` has no generator to put it in.
    """
    if state is None:
        return
    value = json.loads(state)
    if callable(getattr(loader, "load_state_dict", None)):
        loader.load_state_dict(value)
        return
    gen = _loader_generator(loader)
    if gen is None:
        raise ValueError(
            f"the checkpoint holds a shuffle state but {type(loader).__name__} has no "
            "NumPy generator to restore it into"
        )
    gen.bit_generator.state = value


def _devices(devices: Iterable[Any]) -> list[Device]:
    unique: list[Device] = []
    for d in devices:
        dev = Device(d)
        if dev not in unique:
            unique.append(dev)
    return unique


def backend_rng_state(devices: Iterable[Any]) -> str:
    """The state of the backend generator of each device in ``devices``, as JSON.

    Devices whose generator state cannot be read (some CuPy generators) are left out:
    their runs resume with fresh randomness rather than failing.
    """
    states: dict[str, Any] = {}
    for dev in _devices(devices):
        try:
            state = dev.backend.generator(dev).bit_generator.state
        except (AttributeError, NotImplementedError, TypeError):
            continue
        if isinstance(state, dict):  # NumPy's; CuPy's generators expose no such dict
            states[str(dev)] = state
    return json.dumps(states)


def set_backend_rng_state(state: str) -> None:
    """Restore the generators saved by :func:`backend_rng_state`."""
    for name, value in json.loads(state).items():
        try:
            dev = Device(name)
            dev.backend.generator(dev).bit_generator.state = value
        except (
            AttributeError,
            ImportError,
            NotImplementedError,
            RuntimeError,
            TypeError,
            ValueError,
        ):
            continue  # e.g. a GPU checkpoint resumed on a machine without that GPU
