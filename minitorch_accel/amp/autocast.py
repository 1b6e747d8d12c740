"""``autocast``: run matrix multiplies and convolutions in 16-bit floats."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from ..backends import Device, DeviceLike
from ..core import autocast_state

F = TypeVar("F", bound=Callable[..., Any])


def _resolve(dtype: Any, device: DeviceLike | None) -> Any:
    name = str(dtype).replace("torch.", "")
    if name in ("bfloat16", "bf16"):
        backend = Device(device or "cpu").backend
        bf16 = getattr(backend.xp, "bfloat16", None)
        if bf16 is None:
            raise TypeError(
                f"bfloat16 is not supported by the {backend.name!r} backend "
                f"({backend.xp.__name__} has no bfloat16 dtype); use dtype='float16'"
            )
        return bf16
    resolved = np.dtype(dtype)
    if resolved != np.float16:
        raise ValueError(f"autocast dtype must be float16 or bfloat16, got {resolved}")
    return resolved


class autocast:
    """Mixed precision: inside the block matmul, linear and conv2d compute in
    ``dtype`` (float16 by default), while reductions, softmax, log-softmax, losses and
    batch-norm statistics stay in float32. Outside it nothing changes.

    Parameters stay float32 (the *master weights*); they are cast on the fly, and since
    the casts are recorded, their gradients arrive in float32. On a GPU, CuPy's float16
    matmul runs on tensor cores with float32 accumulation. On the CPU the GEMMs run in
    float32 on the float16 values (NumPy has no float16 BLAS) and float16 elementwise
    ops run in software, several times *slower* than float32: autocast there only
    demonstrates the numerics.

    Parameters
    ----------
    dtype : str or dtype
        ``"float16"`` or ``"bfloat16"`` (where the backend has it).
    enabled : bool
        False makes the block a no-op (handy for a command-line switch).
    device : str, optional
        Used to check bfloat16 support.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.amp import autocast
    >>> a = mta.ones(2, 3)
    >>> with autocast():
    ...     y = a @ mta.ones(3, 2)
    ...     s = y.sum()
    >>> y.dtype, s.dtype
    (dtype('float16'), dtype('float32'))
    """

    def __init__(
        self, dtype: Any = "float16", enabled: bool = True, device: DeviceLike | None = None
    ) -> None:
        self.enabled = bool(enabled)
        self.dtype = _resolve(dtype, device) if enabled else None
        self._previous: list[Any] = []

    def __enter__(self) -> autocast:
        self._previous.append(autocast_state.state.dtype)
        autocast_state.state.dtype = self.dtype  # None when disabled: turns autocast off
        return self

    def __exit__(self, *exc: object) -> None:
        autocast_state.state.dtype = self._previous.pop()

    def __call__(self, func: F) -> F:
        """Use this context as a decorator: ``func`` runs inside it."""

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with autocast(self.dtype if self.enabled else "float16", enabled=self.enabled):
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


def is_autocast_enabled() -> bool:
    """Whether an autocast block is active in this thread."""
    return autocast_state.state.dtype is not None
