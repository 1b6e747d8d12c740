"""TEST DOUBLE: the CuPy fast paths run on the host, through host-compiled kernels.

Each CUDA loop body of :mod:`minitorch_accel.backends.cupy.kernels` is compiled for the
*host* by a C++ compiler, as one serial loop over the element index ``i``, and called
through ctypes by small stand-ins for ``cupy.ElementwiseKernel``,
``cupy.ReductionKernel`` and ``cupy.RawKernel``.
:class:`~minitorch_accel.backends.cupy.ops.CupyFastPaths` runs on those stand-ins
(:class:`HostFastPaths`), so the kernels' arithmetic and indexing *and* the Python code
that launches them can be compared with the NumPy code paths they replace, on a machine
without a GPU. Nothing here is used outside the tests.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import shutil
import subprocess
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from minitorch_accel.backends.cupy import kernels as K
from minitorch_accel.backends.cupy.ops import CupyFastPaths

CXX = shutil.which("g++") or shutil.which("c++")
NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc (the CUDA compiler) is not installed")
#: The elementwise kernels and the map steps of the reductions.
ALL_SPECS = K.SPECS + tuple(r.map_spec() for r in K.REDUCTIONS)


HOST_PRELUDE = """#include <algorithm>
#include <cmath>
#include <cstddef>
using std::exp; using std::log; using std::max; using std::sqrt;
typedef double T;
typedef long long S;
template <typename V> struct RawArray {
  V* data_;
  const long long* strides_;
  V& operator[](ptrdiff_t k) const { return data_[k]; }  // C-contiguous arrays only
  template <typename I, int N> V& operator[](const I (&idx)[N]) const {
    char* p = reinterpret_cast<char*>(data_);
    for (int d = 0; d < N; ++d) p += strides_[d] * idx[d];
    return *reinterpret_cast<V*>(p);
  }
};
"""

DTYPES = {
    "T": np.float64,
    "S": np.int64,
    "int32": np.int32,
    "int64": np.int64,
    "bool": np.bool_,
    "float32": np.float32,
    "float64": np.float64,
}


def host_source(spec: K.KernelSpec) -> str:
    """``spec`` as a C++ function running its body for i = 0 .. _n - 1."""
    args, raws, binds = [], [], []
    for p in spec.params():
        if p.raw:
            args.append(f"{p.c_type}* _d_{p.name}, const long long* _s_{p.name}")
            raws.append(f"  RawArray<{p.c_type}> {p.name} = {{_d_{p.name}, _s_{p.name}}};")
        else:
            args.append(f"{p.c_type}* _p_{p.name}")
            const = "" if p.output else "const "
            binds.append(f"    {const}{p.c_type}& {p.name} = _p_{p.name}[i];")
    return (
        f'extern "C" void {spec.name}({", ".join(args)}, ptrdiff_t _n) {{\n'
        + "\n".join(raws)
        + "\n  for (ptrdiff_t i = 0; i < _n; ++i) {\n"
        + "\n".join(binds)
        + "\n"
        + spec.operation
        + "\n  }\n}\n"
    )


def nvcc_ptx(source: str, folder: Path) -> str:
    """The PTX that ``nvcc -arch=sm_90 --ptx`` makes of CUDA ``source`` (which must
    compile: the assertion shows nvcc's message otherwise)."""
    assert NVCC is not None, "needs nvcc"
    (folder / "kernel.cu").write_text(source)
    result = subprocess.run(
        [NVCC, "-arch=sm_90", "--ptx", "-o", str(folder / "kernel.ptx"), str(folder / "kernel.cu")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"nvcc failed:\n{result.stderr}"
    return (folder / "kernel.ptx").read_text()


def compile_library(source: str, folder: Path) -> ctypes.CDLL:
    """``source`` (C++) compiled into a shared library in ``folder`` and loaded."""
    assert CXX is not None, "needs a C++ compiler (g++)"
    name = hashlib.sha1(source.encode()).hexdigest()[:12]
    library = folder / f"{name}.so"
    if not library.exists():
        (folder / f"{name}.cpp").write_text(source)
        result = subprocess.run(
            [CXX, "-O1", "-shared", "-fPIC", "-o", str(library), str(folder / f"{name}.cpp")],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr
    return ctypes.CDLL(str(library))


class HostElementwiseKernel:
    """``cupy.ElementwiseKernel`` on the host: broadcasting, output allocation, the call."""

    def __init__(
        self, library: ctypes.CDLL, in_params: str, out_params: str, operation: str, name: str
    ) -> None:
        self.spec = K.KernelSpec(name, in_params, out_params, operation)
        self.function = getattr(library, name)

    def __call__(self, *args: Any) -> Any:
        params = self.spec.params()
        inputs = [p for p in params if not p.output]
        given = list(args[len(inputs) :])
        arrays = [
            a for a, p in zip(args, params, strict=False) if not p.raw and isinstance(a, np.ndarray)
        ]
        shape = np.broadcast_shapes(*(a.shape for a in arrays + given))
        outputs = [g for g in given] + [
            np.empty(shape, DTYPES[p.type_name]) for p in params[len(args) :]
        ]
        c_args: list[Any] = []
        keep: list[np.ndarray] = []
        for p, value in zip(params, list(args[: len(inputs)]) + outputs, strict=True):
            dtype = DTYPES[p.type_name]
            if p.raw:
                assert value.dtype == dtype, f"{p.name}: {value.dtype} is not {dtype}"
                strides = np.asarray(value.strides, dtype=np.int64)
                keep.append(strides)
                c_args += [ctypes.c_void_p(value.ctypes.data), ctypes.c_void_p(strides.ctypes.data)]
                continue
            if p.output:
                assert value.flags.c_contiguous and value.shape == shape and value.dtype == dtype
                element = value
            else:
                if isinstance(value, np.ndarray):
                    assert p.type_name not in ("T", "S") or value.dtype == dtype, p.name
                element = np.ascontiguousarray(np.broadcast_to(np.asarray(value, dtype), shape))
            keep.append(element)
            c_args.append(ctypes.c_void_p(element.ctypes.data))
        self.function(*c_args, ctypes.c_ssize_t(int(np.prod(shape))))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


class HostReductionKernel:
    """``cupy.ReductionKernel`` on the host for ``a + b`` reductions: the map step runs
    as its host-compiled elementwise kernel (:meth:`ReductionSpec.map_spec`), then the
    mapped values are summed."""

    def __init__(
        self,
        library: ctypes.CDLL,
        in_params: str,
        out_params: str,
        map_expr: str,
        reduce_expr: str,
        post_map_expr: str,
        identity: str,
        name: str,
    ) -> None:
        spec = K.ReductionSpec(
            name, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity
        )
        assert (reduce_expr, identity) == ("a + b", "0") and spec in K.REDUCTIONS
        map_spec = spec.map_spec()
        self.map = HostElementwiseKernel(
            library, map_spec.in_params, map_spec.out_params, map_spec.operation, map_spec.name
        )

    def __call__(self, *args: Any, axis: int | None = None) -> np.ndarray:
        return np.asarray(self.map(*args).sum(axis=axis))


RAW_PRELUDE = """#include <algorithm>
#include <cmath>
using std::exp; using std::log; using std::max; using std::sqrt;
#define __global__
#define __shared__ static
#define __syncthreads()
struct HostDim { unsigned x; };
static const HostDim blockIdx = {0}, threadIdx = {0}, blockDim = {1}, gridDim = {1};
"""

_C_SCALARS = {
    np.dtype(np.float32): ctypes.c_float,
    np.dtype(np.float64): ctypes.c_double,
    np.dtype(np.int32): ctypes.c_int,
    np.dtype(np.int64): ctypes.c_longlong,
}


class HostRawKernel:
    """``cupy.RawKernel`` on the host: the CUDA source compiled by g++ with a one-thread
    grid (``blockDim = gridDim = 1``), so its grid-stride loop visits every element."""

    def __init__(self, folder: Path, code: str, name: str) -> None:
        self.function = getattr(compile_library(RAW_PRELUDE + code, folder), name)

    def __call__(
        self, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...]
    ) -> None:
        c_args: list[Any] = []
        for arg in args:
            if isinstance(arg, np.ndarray):
                c_args.append(ctypes.c_void_p(arg.ctypes.data))
            else:  # a NumPy scalar of the C parameter's type
                c_args.append(_C_SCALARS[np.dtype(type(arg))](arg))
        self.function(*c_args)


class HostFastPaths(CupyFastPaths):
    """The CuPy fast paths on NumPy arrays, through the host-compiled kernels."""

    def on(self, array: Any) -> Any:
        return contextlib.nullcontext()

    def gemm(self, a: Any, b: Any, out: Any = None) -> Any:
        return None  # cuBLAS exists only on a GPU: callers fall back to (NumPy's) matmul

    def _read_later(self, scalar: Any) -> Any:
        return lambda: int(scalar)  # no stream to wait for on the host

    def _pointer(self, array: Any) -> int:
        return int(array.ctypes.data)

    def _upload(self, values: list[int]) -> Any:
        return np.array(values, np.int64)  # the host's "device" memory is its own

    def _current_device(self) -> int:
        return 0  # the host is the one "device"

    def _capturing(self) -> bool:
        return False  # the host has no streams to capture


def host_fast_paths(folder: Path) -> HostFastPaths:
    """:class:`HostFastPaths` with every kernel compiled into ``folder``."""
    library = compile_library(HOST_PRELUDE + "\n".join(host_source(s) for s in ALL_SPECS), folder)
    cupy = types.SimpleNamespace(
        ElementwiseKernel=lambda *a: HostElementwiseKernel(library, *a),
        ReductionKernel=lambda *a: HostReductionKernel(library, *a),
        RawKernel=lambda code, name: HostRawKernel(folder, code, name),
        empty=np.empty,
        ndarray=np.ndarray,
        ones=np.ones,
        matmul=np.matmul,
        ascontiguousarray=np.ascontiguousarray,
        broadcast_to=np.broadcast_to,
        asarray=np.asarray,
        dtype=np.dtype,
    )
    return HostFastPaths(cupy)
