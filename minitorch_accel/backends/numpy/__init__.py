"""The NumPy backend (``"cpu"`` and the virtual ``"cpu:N"`` devices), in one folder.

:mod:`.backend` is the :class:`~minitorch_accel.backends.base.Backend` itself and
:mod:`.threads` the intra-op thread pool; the fast paths it registers live beside them.
:func:`register` plugs it in.
"""

from __future__ import annotations

from ..base import Backend


def _make() -> Backend:
    from .backend import NumpyBackend

    return NumpyBackend()


def register() -> None:
    """Register the backend as ``"cpu"`` (built on first use)."""
    from ..registry import register as register_backend
    from .fast_optim import register_fast_optim

    register_backend("cpu", _make)
    register_fast_optim("cpu")
