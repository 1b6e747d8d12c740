"""The autocast switch that ops consult (set by :class:`minitorch_accel.amp.autocast`).

It lives below the ops so that they can ask "compute in float16 now?" without
depending on the ``amp`` package above them.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .tensor import Tensor


class _State(threading.local):
    dtype: Any = None  # None: autocast is off


state = _State()


def autocast_dtype() -> Any:
    """The low-precision dtype of the enclosing ``autocast`` block, or None."""
    return state.dtype


def to_compute_dtype(*tensors: Tensor | None) -> tuple[Tensor | None, ...]:
    """For matmul-like ops: float32 inputs cast to the autocast dtype (unchanged when
    autocast is off). The casts are recorded, so gradients come back in float32.
    """
    dtype = state.dtype
    if dtype is None:
        return tensors
    return tuple(
        t.to(dtype=dtype) if t is not None and t.dtype == np.float32 else t for t in tensors
    )


def to_float32(t: Tensor) -> Tensor:
    """For reductions, softmax, losses and normalization statistics: low-precision
    inputs cast up to float32 inside an autocast block.
    """
    if state.dtype is not None and t.dtype.kind == "f" and t.dtype.itemsize < 4:
        return t.to(dtype=np.float32)
    return t
