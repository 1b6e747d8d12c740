"""What every group of CuPy fast paths shares: the CuPy module, the device switch, the
kernels compiled on first use, and the direct cuBLAS GEMM (see
:mod:`minitorch_accel.backends.cupy.ops`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy

from .. import cuda as cuda_settings
from . import kernels as K

_NO_SWITCH = contextlib.nullcontext()


class FastPathBase:
    """The CuPy module, the device switch and the caches of built kernels.

    Parameters
    ----------
    cupy : module
        The imported ``cupy`` module.
    switch_devices : bool
        Whether to make each call's GPU the current one (needed with several GPUs).
    """

    def __init__(self, cupy: Any, switch_devices: bool = True) -> None:
        self.cp = cupy
        self.switch_devices = switch_devices
        self._kernels: dict[str, Any] = {}
        self._reductions: dict[str, Any] = {}
        # alpha = 1 and beta = 0 for cuBLAS, read from host memory during the call
        self._gemm_scalars = {c: (numpy.ones(1, c), numpy.zeros(1, c)) for c in "fd"}
        self._math_modes: dict[int, int] = {}  # cuBLAS handle -> math mode set on it
        self._gemm_pointers = {
            c: (one.ctypes.data, zero.ctypes.data) for c, (one, zero) in self._gemm_scalars.items()
        }

    def on(self, array: Any) -> Any:
        """The context that makes ``array``'s GPU the current one (``array.device``); a
        no-op context on a single-GPU machine.
        """
        return array.device if self.switch_devices else _NO_SWITCH

    def _capturing(self) -> bool:
        """True while the current stream captures a CUDA graph."""
        return bool(self.cp.cuda.get_current_stream().is_capturing())

    def _reduction(self, spec: K.ReductionSpec) -> Any:
        kernel = self._reductions.get(spec.name)
        if kernel is None:
            kernel = self._reductions[spec.name] = self.cp.ReductionKernel(*spec.args())
        return kernel

    def _kernel(self, spec: K.KernelSpec) -> Any:
        kernel = self._kernels.get(spec.name)
        if kernel is None:
            kernel = self.cp.ElementwiseKernel(
                spec.in_params, spec.out_params, spec.operation, spec.name
            )
            self._kernels[spec.name] = kernel
        return kernel

    def _raw_kernel(self, char: str, name: str, source: Callable[[str], str]) -> Any:
        """The ``cupy.RawKernel`` ``{name}_{float|double}`` for dtype ``char`` ("f" or
        "d"), compiled once from ``source(float_type)``.
        """
        float_type = "float" if char == "f" else "double"
        full = f"{name}_{float_type}"
        kernel = self._kernels.get(full)
        if kernel is None:
            kernel = self._kernels[full] = self.cp.RawKernel(source(float_type), full)
        return kernel

    def gemm(self, a: Any, b: Any, out: Any = None) -> Any:
        """``a @ b`` through one cuBLAS call, or None where it does not apply.

        cuBLAS is column-major: a C-contiguous (r, c) matrix is, to it, the (c, r)
        transpose with leading dimension c. So ``out = a @ b`` (row-major) is computed as
        ``out.T = b.T @ a.T`` (column-major), each operand taken as is or transposed
        according to its layout. ``cupy.matmul`` does the same, but costs about three
        times the host time per call, and a small model makes a dozen calls per step.

        float32 runs ``sgemm`` (in TF32 on tensor cores when
        :data:`minitorch_accel.backends.cuda.matmul.allow_tf32` is set), float64
        ``dgemm``, float16 and bfloat16 ``gemmEx`` on tensor cores with float32
        accumulation (``CUBLAS_COMPUTE_32F``), the result rounded once to the input type.
        """
        if not _gemm_applies(a, b):
            return None
        (m, k), n = a.shape, b.shape[1]
        layout_a, layout_b = _blas_layout(a), _blas_layout(b)
        if layout_a is None or layout_b is None:
            return None
        if out is None:
            out = self.cp.ndarray((m, n), a.dtype)
        elif not (out.shape == (m, n) and out.dtype == a.dtype and _blas_layout(out) == (0, n)):
            return None
        with self.on(a):
            handle = self._blas_handle(a.dtype)
            self._blas_call(
                handle, a.dtype, (layout_b[0], layout_a[0], n, m, k),
                (b.data.ptr, layout_b[1]), (a.data.ptr, layout_a[1]), (out.data.ptr, n),
            )  # fmt: skip
        return out

    def _blas_handle(self, dtype: Any) -> int:
        """The cuBLAS handle, in host pointer mode and the math mode ``dtype`` asks for."""
        cublas = self.cp.cuda.cublas
        handle = int(self.cp.cuda.device.get_cublas_handle())
        # host pointer mode is cuBLAS's default, and CuPy restores it after changes
        if cublas.getPointerMode(handle) != cublas.CUBLAS_POINTER_MODE_HOST:
            cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
        tf32 = dtype.char == "f" and cuda_settings.matmul.allow_tf32
        mode = _cublas(cublas, "CUBLAS_TF32_TENSOR_OP_MATH") if tf32 else 0  # 0: default
        if self._math_modes.get(handle) != mode:
            cublas.setMathMode(handle, mode)
            self._math_modes[handle] = mode
        return handle

    def _blas_call(
        self,
        handle: int,
        dtype: Any,
        shape: tuple[int, int, int, int, int],
        first: tuple[int, int],
        second: tuple[int, int],
        out: tuple[int, int],
    ) -> None:
        """One GEMM: ``shape`` is ``(trans_first, trans_second, rows, cols, inner)``,
        each operand ``(pointer, leading dimension)``.
        """
        cublas = self.cp.cuda.cublas
        if dtype.char in "fd":
            one, zero = self._gemm_pointers[dtype.char]
            call = cublas.sgemm if dtype.char == "f" else cublas.dgemm
            call(handle, *shape, one, *first, *second, zero, *out)
            return
        one, zero = self._gemm_pointers["f"]  # alpha, beta: float, the compute type's
        kind = _cublas(cublas, HALF_TYPES[dtype.name])
        cublas.gemmEx(
            handle, *shape, one, first[0], kind, first[1], second[0], kind, second[1],
            zero, out[0], kind, out[1], _cublas(cublas, "CUBLAS_COMPUTE_32F"),
            _cublas(cublas, "CUBLAS_GEMM_DEFAULT_TENSOR_OP"),
        )  # fmt: skip


#: The cuBLAS data type of each half-precision dtype ``gemm`` takes.
HALF_TYPES = {"float16": "CUDA_R_16F", "bfloat16": "CUDA_R_16BF"}

#: cuBLAS and CUDA constants (cublas_api.h, library_types.h), where CuPy lacks the name.
CUBLAS_CONSTANTS = {
    "CUBLAS_TF32_TENSOR_OP_MATH": 3,
    "CUBLAS_COMPUTE_32F": 68,
    "CUBLAS_GEMM_DEFAULT_TENSOR_OP": 99,
    "CUDA_R_16F": 2,
    "CUDA_R_16BF": 14,
}


def _cublas(cublas: Any, name: str) -> int:
    return int(getattr(cublas, name, CUBLAS_CONSTANTS[name]))


def _gemm_applies(a: Any, b: Any) -> bool:
    """Two non-empty matrices of one dtype that ``gemm`` multiplies."""
    return bool(
        a.ndim == 2
        and b.ndim == 2
        and a.dtype == b.dtype
        and (a.dtype.char in "fd" or a.dtype.name in HALF_TYPES)
        and a.shape[1] == b.shape[0]
        and 0 not in (*a.shape, b.shape[1])
    )


def _blas_layout(x: Any) -> tuple[int, int] | None:
    """``(operation, leading dimension)`` under which cuBLAS reads the 2-D ``x`` as the
    transpose of itself (C-contiguous: 0 = CUBLAS_OP_N) or as itself (F-contiguous:
    1 = CUBLAS_OP_T, so that the product sees ``x.T``); None for other strides.

    Read from the strides (cheaper than ``x.flags``, which builds an object per call).
    """
    (rows, cols), (row_step, col_step), size = x.shape, x.strides, x.itemsize
    if (cols == 1 or col_step == size) and (rows == 1 or row_step == cols * size):
        return 0, max(1, cols)
    if (rows == 1 or row_step == size) and (cols == 1 or col_step == rows * size):
        return 1, max(1, rows)
    return None
