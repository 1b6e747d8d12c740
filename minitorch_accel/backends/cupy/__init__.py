"""The CuPy backend (``"cuda"``, ``"cuda:N"``), in one folder.

:mod:`.backend` is the :class:`~minitorch_accel.backends.base.Backend` itself (CuPy is
imported on first use, so the package imports on a machine without it); the fused
kernels, graph capture and the tracking allocator live beside it. :func:`register`
plugs it in.
"""

from __future__ import annotations

from ..base import Backend


def _make() -> Backend:
    from .backend import CupyBackend

    return CupyBackend()


def register() -> None:
    """Register the backend as ``"cuda"`` (built on first use, where a GPU is usable)."""
    from ..registry import register as register_backend
    from .fast_conv import register_fast_conv
    from .fast_nn import register_fast_nn
    from .fast_optim import register_fast_optim

    register_backend("cuda", _make)
    register_fast_conv()  # convolution and pooling
    register_fast_nn()  # ReLU, cross-entropy, batch norm
    register_fast_optim("cuda")  # SGD, Adam, AdamW steps
