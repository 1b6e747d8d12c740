"""GPU math settings under PyTorch's names (``torch.backends.cuda``).

``minitorch_accel.backends.cuda.matmul.allow_tf32`` (default False, as in PyTorch since
1.12) lets float32 matrix multiplies on the GPU run on tensor cores in TF32: inputs
rounded to a 10-bit mantissa (float16's precision, float32's range), products summed in
float32. On an A100 or H100 that is several times the float32 throughput, for a relative
error of about 1e-3 instead of 1e-6. It changes the math mode of cuBLAS's handle before
each float32 GEMM of the CuPy backend; float16 and bfloat16 GEMMs always use tensor
cores and accumulate in float32, whatever this says.

This module holds settings only; it imports no CuPy (the CuPy backend reads them).

Examples
--------
>>> import minitorch_accel as mta
>>> mta.backends.cuda.matmul.allow_tf32
False
>>> mta.backends.cuda.matmul.allow_tf32 = True    # faster float32 GEMMs, ~1e-3 error
>>> mta.backends.cuda.matmul.allow_tf32 = False
"""

from __future__ import annotations

__all__ = ["MatmulSettings", "matmul"]


class MatmulSettings:
    """How float32 matrix multiplies run on the GPU (``backends.cuda.matmul``).

    Attributes
    ----------
    allow_tf32 : bool
        Run float32 GEMMs on tensor cores in TF32 (default False).
    """

    def __init__(self) -> None:
        self._allow_tf32 = False

    @property
    def allow_tf32(self) -> bool:
        """Whether float32 GEMMs may use TF32 tensor-core math."""
        return self._allow_tf32

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"allow_tf32 must be True or False, got {value!r}")
        self._allow_tf32 = value

    def __repr__(self) -> str:
        return f"MatmulSettings(allow_tf32={self._allow_tf32})"


matmul = MatmulSettings()
"""The settings object, as ``torch.backends.cuda.matmul``."""
