"""The one matrix-multiply entry point of the ops that call the array library directly.

NumPy has no float16 BLAS: ``numpy.matmul`` on float16 arrays runs a slow generic loop
that also accumulates in float16. For float16 inputs on the CPU this computes the GEMM
in float32 on the (exactly representable) float16 values and rounds the result to
float16: float16 storage with float32 accumulation, which is what GPU tensor cores do.
Every other case is ``xp.matmul`` itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def gemm(xp: Any, a: Any, b: Any, out: Any = None) -> Any:
    """``a @ b`` (into ``out`` if given), float16 on the CPU accumulated in float32."""
    if xp is np and a.dtype == np.float16:
        result = np.matmul(a.astype(np.float32), b.astype(np.float32))
        if out is None:
            return result.astype(np.float16)
        out[...] = result
        return out
    if out is None:
        return xp.matmul(a, b)
    return xp.matmul(a, b, out=out)
