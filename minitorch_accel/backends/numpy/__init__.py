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
    from .fast_conv import register_fast_conv
    from .fast_nn import register_fast_nn
    from .fast_optim import register_fast_optim

    register_backend("cpu", _make)
    register_fast_conv()  # convolution and pooling
    register_fast_nn()  # ReLU, cross-entropy, batch norm
    register_fast_optim("cpu")  # SGD, Adam, AdamW steps
