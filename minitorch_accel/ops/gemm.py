"""The one matrix-multiply entry point of the ops that call the array library directly.

NumPy has no float16 BLAS: ``numpy.matmul`` on float16 arrays runs a slow generic loop
that also accumulates in float16. For float16 inputs on the CPU this computes the GEMM
in float32 on the (exactly representable) float16 values and rounds the result to
float16: float16 storage with float32 accumulation, which is what GPU tensor cores do.
On a GPU, 2-D float16/float32/float64 products go to the backend's ``gemm`` fast path
(one cuBLAS call, float16 on tensor cores with float32 accumulation, see
:mod:`minitorch_accel.backends.cupy.fast_base`); every other case is ``xp.matmul`` itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..backends import get

#: The fast GEMM of each array module other than NumPy (None: there is none).
_fast_gemm: dict[int, Callable[..., Any] | None] = {}


def _fast_path(xp: Any) -> Callable[..., Any] | None:
    key = id(xp)
    if key not in _fast_gemm:
        is_cupy = getattr(xp, "__name__", "") == "cupy"
        _fast_gemm[key] = get("cuda").kernel("gemm") if is_cupy else None
    return _fast_gemm[key]


def gemm(xp: Any, a: Any, b: Any, out: Any = None) -> Any:
    """``a @ b`` (into ``out`` if given), float16 on the CPU accumulated in float32."""
    if xp is np and a.dtype == np.float16:
        result = np.matmul(a.astype(np.float32), b.astype(np.float32))
        if out is None:
            return result.astype(np.float16)
        out[...] = result
        return out
    fast = _fast_path(xp)
    if fast is not None:
        result = fast(a, b, out)
        if result is not None:
            return result
    if out is None:
        return xp.matmul(a, b)
    return xp.matmul(a, b, out=out)
