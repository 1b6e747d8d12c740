"""The NumPy backend (``"cpu"`` and the virtual ``"cpu:N"`` devices), in one folder.

:mod:`.backend` is the :class:`~minitorch_accel.backends.base.Backend` itself and
:mod:`.threads` the intra-op thread pool; the fast paths it registers live beside them.
:func:`register` plugs it in.
"""

from __future__ import annotations

import numpy as np

from ..base import Backend


def _make() -> Backend:
    from .backend import NumpyBackend

    return NumpyBackend()


def register() -> None:
    """Register the backend as ``"cpu"`` (built on first use)."""
    from .. import conv_kernels
    from ..registry import register as register_backend
    from .fast_conv import register_fast_conv
    from .fast_gemm import register_fast_gemm, threaded_gemm
    from .fast_nn import register_fast_nn
    from .fast_optim import register_fast_optim
    from .heap import keep_freed_memory

    register_backend("cpu", _make)
    keep_freed_memory()  # freed host memory kept for the next step (no page faults)
    register_fast_conv()  # convolution and pooling
    register_fast_nn()  # elementwise arithmetic, ReLU, batch norm
    register_fast_gemm()  # a Linear layer's two gradient products side by side
    register_fast_optim("cpu")  # SGD, Adam, AdamW steps
    conv_kernels.FAST_GEMM[id(np)] = threaded_gemm  # the convolutions' GEMMs on the pool
