"""What every group of CuPy fast paths shares: the CuPy module, the device switch, the
kernels compiled on first use, and the direct cuBLAS GEMM (see
:mod:`minitorch_accel.backends.cupy_ops`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy

from . import cupy_kernels as K

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
        self._gemm_pointers = {
            c: (one.ctypes.data, zero.ctypes.data) for c, (one, zero) in self._gemm_scalars.items()
        }

    def on(self, array: Any) -> Any:
        """The context that makes ``array``'s GPU the current one (``array.device``); a
        no-op context on a single-GPU machine.
        """
        return array.device if self.switch_devices else _NO_SWITCH

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
        """
        if (
            a.ndim != 2
            or b.ndim != 2
            or a.dtype != b.dtype
            or a.dtype.char not in "fd"
            or a.shape[1] != b.shape[0]
            or 0 in (*a.shape, b.shape[1])
        ):
            return None
        (m, k), n = a.shape, b.shape[1]
        layout_a, layout_b = _blas_layout(a), _blas_layout(b)
        if layout_a is None or layout_b is None:
            return None
        if out is None:
            out = self.cp.ndarray((m, n), a.dtype)
        elif not (out.shape == (m, n) and out.dtype == a.dtype and _blas_layout(out) == (0, n)):
            return None
        cublas = self.cp.cuda.cublas
        call = cublas.sgemm if a.dtype.char == "f" else cublas.dgemm
        one, zero = self._gemm_pointers[a.dtype.char]
        with self.on(a):
            handle = self.cp.cuda.device.get_cublas_handle()
            # host pointer mode is cuBLAS's default, and CuPy restores it after changes
            if cublas.getPointerMode(handle) != cublas.CUBLAS_POINTER_MODE_HOST:
                cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
            call(
                handle,
                layout_b[0],
                layout_a[0],
                n,
                m,
                k,
                one,
                b.data.ptr,
                layout_b[1],
                a.data.ptr,
                layout_a[1],
                zero,
                out.data.ptr,
                n,
            )
        return out


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
