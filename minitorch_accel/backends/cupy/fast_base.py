"""What every group of CuPy fast paths shares: the CuPy module, the device switch, the
kernels compiled on first use, and the direct cuBLAS GEMM (see
:mod:`minitorch_accel.backends.cupy.ops`).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
from collections.abc import Callable
from pathlib import Path
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
        self._direct: DirectBlas | None = None  # loaded at the first GEMM of a capture

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
            if self._capturing():  # CuPy refuses cuBLAS while capturing: call it directly
                if self._direct is None:
                    self._direct = DirectBlas(find_cublas(), self.cp.cuda.runtime.malloc)
                blas: Any = self._direct
                handle = blas.on_stream(
                    self.cp.cuda.runtime.getDevice(),
                    self._math_mode(a.dtype),
                    self.cp.cuda.get_current_stream().ptr,
                )
            else:
                blas, handle = self.cp.cuda.cublas, self._blas_handle(a.dtype)
            self._blas_call(
                blas, handle, a.dtype, (layout_b[0], layout_a[0], n, m, k),
                (b.data.ptr, layout_b[1]), (a.data.ptr, layout_a[1]), (out.data.ptr, n),
            )  # fmt: skip
        return out

    def _math_mode(self, dtype: Any) -> int:
        """The cuBLAS math mode of a GEMM in ``dtype``: TF32 tensor cores for float32 when
        allowed, else the default (0).
        """
        tf32 = dtype.char == "f" and cuda_settings.matmul.allow_tf32
        return _cublas(self.cp.cuda.cublas, "CUBLAS_TF32_TENSOR_OP_MATH") if tf32 else 0

    def _blas_handle(self, dtype: Any) -> int:
        """CuPy's cuBLAS handle, in host pointer mode and the math mode ``dtype`` asks for."""
        cublas = self.cp.cuda.cublas
        handle = int(self.cp.cuda.device.get_cublas_handle())
        # host pointer mode is cuBLAS's default, and CuPy restores it after changes
        if cublas.getPointerMode(handle) != cublas.CUBLAS_POINTER_MODE_HOST:
            cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
        mode = self._math_mode(dtype)
        if self._math_modes.get(handle) != mode:
            cublas.setMathMode(handle, mode)
            self._math_modes[handle] = mode
        return handle

    def _blas_call(
        self,
        blas: Any,
        handle: int,
        dtype: Any,
        shape: tuple[int, int, int, int, int],
        first: tuple[int, int],
        second: tuple[int, int],
        out: tuple[int, int],
    ) -> None:
        """One GEMM through ``blas`` (CuPy's ``cuda.cublas`` or a :class:`DirectBlas`):
        ``shape`` is ``(trans_first, trans_second, rows, cols, inner)``, each operand
        ``(pointer, leading dimension)``.
        """
        if dtype.char in "fd":
            one, zero = self._gemm_pointers[dtype.char]
            call = blas.sgemm if dtype.char == "f" else blas.dgemm
            call(handle, *shape, one, *first, *second, zero, *out)
            return
        cublas = self.cp.cuda.cublas  # for the constants
        one, zero = self._gemm_pointers["f"]  # alpha, beta: float, the compute type's
        kind = _cublas(cublas, HALF_TYPES[dtype.name])
        blas.gemmEx(
            handle, *shape, one, first[0], kind, first[1], second[0], kind, second[1],
            zero, out[0], kind, out[1], _cublas(cublas, "CUBLAS_COMPUTE_32F"),
            _cublas(cublas, "CUBLAS_GEMM_DEFAULT_TENSOR_OP"),
        )  # fmt: skip


class DirectBlas:
    """cuBLAS's GEMMs called straight from the library, for CUDA graph captures.

    cuBLAS records its GEMMs into a capturing stream, but CuPy's wrappers refuse every
    cuBLAS call while one captures ("calling cuBLAS API during stream capture is currently
    unsupported"). During a capture :meth:`FastPathBase.gemm` calls the library through
    ``ctypes`` instead, with CuPy's argument order, on a handle of its own per GPU: the
    graph keeps pointing at the handle's workspace, so the handle must not be one that
    eager work keeps re-pointing. Before each GEMM the handle is set on the capturing
    stream and given a workspace of its own that lives as long as the process (PyTorch
    does the same: ``cublasSetStream`` resets the workspace to cuBLAS's pool, whose
    memory a later call may free). Scalars are host pointers to the constants 1 and 0,
    which the graph bakes in.

    Parameters
    ----------
    library : str or ctypes.CDLL
        The cuBLAS shared library (a path, or a loaded library).
    allocate : callable
        ``allocate(nbytes)`` returns the device address of ``nbytes`` that are never freed
        (``cudaMalloc``), for the workspaces.

    Examples
    --------
    >>> from minitorch_accel.backends.cupy.fast_base import DirectBlas
    >>> class Library:                       # stands in for libcublas here
    ...     def __getattr__(self, name):
    ...         return lambda *args: 0       # CUBLAS_STATUS_SUCCESS
    >>> blas = DirectBlas(Library(), allocate=lambda nbytes: 4096)
    >>> blas.workspaces
    {}
    """

    #: argument types of each call: h handle, i int, p pointer, o pointer to a handle,
    #: z size_t (cublas_api.h)
    SIGNATURES = {
        "create": ("cublasCreate_v2", "o"),
        "setMathMode": ("cublasSetMathMode", "hi"),
        "setStream": ("cublasSetStream_v2", "hp"),
        "setWorkspace": ("cublasSetWorkspace_v2", "hpz"),
        "sgemm": ("cublasSgemm_v2", "hiiiiippipippi"),
        "dgemm": ("cublasDgemm_v2", "hiiiiippipippi"),
        "gemmEx": ("cublasGemmEx", "hiiiiippiipiippiiii"),
    }

    #: bytes of each GPU's workspace (PyTorch's default on Hopper: 32 MiB)
    WORKSPACE_BYTES = 32 << 20

    def __init__(self, library: Any, allocate: Callable[[int], int]) -> None:
        lib = ctypes.CDLL(library) if isinstance(library, str) else library
        kinds = {
            "h": ctypes.c_void_p,
            "i": ctypes.c_int,
            "p": ctypes.c_void_p,
            "o": ctypes.POINTER(ctypes.c_void_p),
            "z": ctypes.c_size_t,
        }
        for name, (symbol, signature) in self.SIGNATURES.items():
            function = getattr(lib, symbol)
            if hasattr(function, "argtypes"):
                function.argtypes = [kinds[c] for c in signature]
                function.restype = ctypes.c_int
            setattr(self, name, _checked(symbol, function))
        self.allocate = allocate
        self.workspaces: dict[int, int] = {}  # GPU -> address of its workspace
        self._handles: dict[int, int] = {}
        self._modes: dict[int, int] = {}

    def on_stream(self, device: int, math_mode: int, stream: int) -> int:
        """This library's handle for GPU ``device`` (made on first use, on the current
        GPU), in ``math_mode``, queueing on ``stream`` with its own workspace.
        """
        handle = self._handles.get(device)
        if handle is None:
            made = ctypes.c_void_p()
            self.create(ctypes.byref(made))  # type: ignore[attr-defined]
            handle = self._handles[device] = int(made.value or 0)
            self.workspaces[device] = self.allocate(self.WORKSPACE_BYTES)
        if self._modes.get(handle) != math_mode:
            self.setMathMode(handle, math_mode)  # type: ignore[attr-defined]
            self._modes[handle] = math_mode
        self.setStream(handle, stream)  # type: ignore[attr-defined]
        workspace = self.workspaces[device]
        self.setWorkspace(handle, workspace, self.WORKSPACE_BYTES)  # type: ignore[attr-defined]
        return handle


def _checked(symbol: str, function: Callable[..., int]) -> Callable[..., None]:
    def call(*args: Any) -> None:
        status = function(*args)
        if status != 0:
            raise RuntimeError(f"{symbol} failed with cuBLAS status {status}")

    return call


def find_cublas() -> str:
    """The path of the cuBLAS library this process loaded (CuPy loads it with its first
    handle), else the one the system's loader finds.
    """
    maps = Path("/proc/self/maps")
    if maps.exists():
        for line in maps.read_text().splitlines():
            path = line.split()[-1] if "/" in line else ""
            if Path(path).name.startswith("libcublas.so"):
                return path
    found = ctypes.util.find_library("cublas")
    if found is None:
        raise RuntimeError("cuBLAS was not found: a captured GEMM needs libcublas")
    return found


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
