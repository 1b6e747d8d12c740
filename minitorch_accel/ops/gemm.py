"""The one matrix-multiply entry point of the ops that call the array library directly.

``gemm(xp, a, b)`` hands the product to the backend whose array module is ``xp``
(:meth:`~minitorch_accel.backends.base.Backend.gemm`): that backend picks the precision.
The NumPy backend multiplies float16 in float32 and rounds the result (NumPy has no
float16 BLAS); the CuPy backend runs 2-D products as one cuBLAS call (float16 on tensor
cores with float32 accumulation, float32 in TF32 when
``backends.cuda.matmul.allow_tf32``); anything else is ``xp.matmul`` itself.
"""

from __future__ import annotations

from typing import Any

from ..backends import registry


def gemm(xp: Any, a: Any, b: Any, out: Any = None) -> Any:
    """``a @ b`` (into ``out`` if given) by the backend of the array module ``xp``.

    Examples
    --------
    >>> import numpy as np
    >>> gemm(np, np.ones((2, 3), np.float16), np.ones((3, 1), np.float16)).tolist()
    [[3.0], [3.0]]
    """
    return registry.for_module(xp).gemm(a, b, out)
