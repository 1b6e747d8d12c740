"""cuDNN settings under PyTorch's names (``torch.backends.cudnn``), kept for scripts
that set them; no backend here uses cuDNN.

The GPU convolution is im2col/col2im kernels plus a cuBLAS matrix multiply (CuPy 14
removed its cuDNN bindings), so :func:`is_available` is False, :func:`version` is None,
and the flags change nothing: ``benchmark`` (PyTorch: time several convolution
algorithms and keep the fastest), ``deterministic`` (PyTorch: only deterministic
algorithms; ours are), ``enabled`` and ``allow_tf32`` (see
:data:`minitorch_accel.backends.cuda.matmul` for the TF32 switch that does act here).
They keep PyTorch's defaults.

Examples
--------
>>> import minitorch_accel.backends.cudnn as cudnn
>>> cudnn.benchmark = True      # as the pytorch/examples scripts do; no effect here
>>> cudnn.is_available(), cudnn.version()
(False, None)
>>> cudnn.benchmark = False
"""

from __future__ import annotations

__all__ = ["allow_tf32", "benchmark", "deterministic", "enabled", "is_available", "version"]

enabled = True
"""Whether PyTorch may use cuDNN (no effect here)."""
benchmark = False
"""Whether PyTorch times convolution algorithms and keeps the fastest (no effect here)."""
deterministic = False
"""Whether PyTorch uses only deterministic cuDNN algorithms (no effect here)."""
allow_tf32 = True
"""Whether cuDNN convolutions may use TF32 (no effect here)."""


def is_available() -> bool:
    """False: no backend of minitorch_accel calls cuDNN.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.backends.cudnn.is_available()
    False
    """
    return False


def version() -> int | None:
    """None, as PyTorch's answer where cuDNN is not available.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.backends.cudnn.version() is None
    True
    """
    return None
