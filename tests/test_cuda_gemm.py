"""The CuPy backend's direct cuBLAS GEMM, run on the host through a fake cuBLAS that
computes from raw pointers the way cuBLAS does (column-major, leading dimensions,
transposes): the call's arguments, the math mode (TF32 opt-in) and float16 with float32
accumulation, checked against NumPy.
"""

from __future__ import annotations

import ctypes
import types
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel.backends.cupy import fast_base
from minitorch_accel.backends.cupy.fast_base import DirectBlas, FastPathBase

TYPES = {0: np.float32, 2: np.float16, 14: None}


def _matrix(pointer: int, dtype: Any, rows: int, cols: int, ld: int) -> np.ndarray:
    """The column-major (rows, cols) matrix at ``pointer`` with leading dimension ``ld``."""
    size = np.dtype(dtype).itemsize * ld * cols
    raw = (ctypes.c_char * size).from_address(pointer)
    return np.frombuffer(raw, dtype, ld * cols).reshape(cols, ld).T[:rows]


class FakeCublas:
    """sgemm, dgemm and gemmEx on host memory, and the handle's modes; records calls."""

    CUBLAS_POINTER_MODE_HOST = 0
    CUBLAS_TF32_TENSOR_OP_MATH = 3
    CUBLAS_COMPUTE_32F = 68
    CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99
    CUDA_R_16F = 2

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.math_mode = 0

    def getPointerMode(self, handle: int) -> int:  # noqa: N802  (cuBLAS's name)
        return 0

    def setMathMode(self, handle: int, mode: int) -> None:  # noqa: N802
        self.calls.append(("setMathMode", mode))
        self.math_mode = mode

    def _gemm(self, dtype: Any, acc: Any, args: tuple[Any, ...]) -> None:
        ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc = args
        op_a = _matrix(a, dtype, k, m, lda).T if ta else _matrix(a, dtype, m, k, lda)
        op_b = _matrix(b, dtype, n, k, ldb).T if tb else _matrix(b, dtype, k, n, ldb)
        scale = _matrix(alpha, acc, 1, 1, 1)[0, 0], _matrix(beta, acc, 1, 1, 1)[0, 0]
        out = _matrix(c, dtype, m, n, ldc)
        out[...] = scale[0] * (op_a.astype(acc) @ op_b.astype(acc)) + scale[1] * out

    def sgemm(self, handle: int, *args: Any) -> None:
        self.calls.append(("sgemm", self.math_mode))
        self._gemm(np.float32, np.float32, args)

    def dgemm(self, handle: int, *args: Any) -> None:
        self.calls.append(("dgemm", self.math_mode))
        self._gemm(np.float64, np.float64, args)

    def gemmEx(self, handle: int, *args: Any) -> None:  # noqa: N802
        ta, tb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type, ldc = args[:16]
        compute, algo = args[16:]
        self.calls.append(("gemmEx", a_type, b_type, c_type, compute, algo))
        dtype = TYPES[a_type]
        self._gemm(dtype, np.float32, (ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))


class HostArray:
    """A NumPy array posing as a CuPy one: ``.data.ptr`` is its address."""

    def __init__(self, array: np.ndarray) -> None:
        self.host = array
        self.data = types.SimpleNamespace(ptr=array.ctypes.data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.host, name)


class FakeStream:
    """The current stream: its address, and whether it captures a graph."""

    ptr = 77
    capturing = False

    def is_capturing(self) -> bool:
        return self.capturing


class FakeLibrary:
    """libcublas's C entry points over :class:`FakeCublas`, returning a status."""

    def __init__(self, cublas: FakeCublas, status: int = 0) -> None:
        self.cublas, self.status = cublas, status
        self.arity: dict[str, int] = {}  # C function -> how many arguments it was given

    def __getattribute__(self, name: str) -> Any:
        function = object.__getattribute__(self, name)
        if not name.startswith("cublas") or name == "cublas":  # only the C entry points
            return function

        def counted(*args: Any) -> Any:
            self.arity[name] = len(args)
            return function(*args)

        return counted

    def cublasCreate_v2(self, made: Any) -> int:  # noqa: N802
        made._obj.value = 5  # the handle it makes
        self.cublas.calls.append("direct create")
        return self.status

    def cublasSetMathMode(self, handle: int, mode: int) -> int:  # noqa: N802
        self.cublas.calls.append(("direct setMathMode", handle, mode))
        self.cublas.math_mode = mode
        return self.status

    def cublasSetStream_v2(self, handle: int, stream: int) -> int:  # noqa: N802
        self.cublas.calls.append(("direct setStream", stream))
        return self.status

    def cublasSetWorkspace_v2(self, handle: int, pointer: int, size: int) -> int:  # noqa: N802
        self.cublas.calls.append(("direct setWorkspace", pointer, size))
        return self.status

    def cublasSgemm_v2(self, handle: int, *args: Any) -> int:  # noqa: N802
        self.cublas.calls.append("direct")
        self.cublas.sgemm(handle, *args)
        return self.status

    def cublasDgemm_v2(self, handle: int, *args: Any) -> int:  # noqa: N802
        self.cublas.calls.append("direct")
        self.cublas.dgemm(handle, *args)
        return self.status

    def cublasGemmEx(self, handle: int, *args: Any) -> int:  # noqa: N802
        self.cublas.calls.append("direct")
        self.cublas.gemmEx(handle, *args)
        return self.status


@pytest.fixture
def fast() -> Iterator[tuple[FastPathBase, FakeCublas]]:
    cublas = FakeCublas()
    stream = FakeStream()
    cupy = types.SimpleNamespace(
        cuda=types.SimpleNamespace(
            cublas=cublas,
            device=types.SimpleNamespace(get_cublas_handle=lambda: 1),
            get_current_stream=lambda: stream,
            runtime=types.SimpleNamespace(getDevice=lambda: 0),
        ),
        ndarray=lambda shape, dtype: HostArray(np.zeros(shape, dtype)),
    )
    yield FastPathBase(cupy, switch_devices=False), cublas
    mta.backends.cuda.matmul.allow_tf32 = False


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["NN", "TN", "NT", "TT"])
def test_gemm_matches_numpy_for_every_layout(fast: Any, dtype: str, layout: str) -> None:
    paths, cublas = fast
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 3)).astype(dtype)
    b = rng.standard_normal((3, 4)).astype(dtype)
    a_in = np.asfortranarray(a) if layout[0] == "T" else a  # F-order: cuBLAS's "T" case
    b_in = np.asfortranarray(b) if layout[1] == "T" else b
    out = paths.gemm(HostArray(a_in), HostArray(b_in))
    np.testing.assert_allclose(out.host, a @ b, rtol=1e-6 if dtype == "float32" else 1e-14)
    assert cublas.calls[-1] == ("sgemm" if dtype == "float32" else "dgemm", 0)


def test_tf32_is_an_opt_in_that_sets_the_handle_math_mode_once(fast: Any) -> None:
    paths, cublas = fast
    a = HostArray(np.ones((2, 2), np.float32))
    paths.gemm(a, a)
    paths.gemm(a, a)  # the default mode, set on the handle once
    assert cublas.calls == [("setMathMode", 0), ("sgemm", 0), ("sgemm", 0)]
    mta.backends.cuda.matmul.allow_tf32 = True
    paths.gemm(a, a)
    paths.gemm(a, a)
    assert cublas.calls[3:] == [("setMathMode", 3), ("sgemm", 3), ("sgemm", 3)]
    d = HostArray(np.ones((2, 2), np.float64))
    paths.gemm(d, d)  # TF32 applies to float32 only
    assert cublas.calls[-2:] == [("setMathMode", 0), ("dgemm", 0)]


def test_allow_tf32_takes_only_a_bool() -> None:
    assert mta.backends.cuda.matmul.allow_tf32 is False
    with pytest.raises(TypeError, match="allow_tf32 must be True or False"):
        mta.backends.cuda.matmul.allow_tf32 = 1  # type: ignore[assignment]


def test_float16_gemm_runs_gemm_ex_accumulating_in_float32(fast: Any) -> None:
    paths, cublas = fast
    k = 4096  # float16 accumulation would lose the small terms of this sum
    a = np.full((1, k), 1.0, np.float16)
    b = np.full((k, 1), 1.0, np.float16)
    b[0, 0] = 2048.0
    out = paths.gemm(HostArray(a), HostArray(b))
    assert cublas.calls[-1] == ("gemmEx", 2, 2, 2, 68, 99)
    assert out.dtype == np.float16
    # exact float32 sum 6143, rounded once to float16 (6144); a float16 running sum
    # stops growing at 2048 + 2048 = 4096
    assert out.host[0, 0] == np.float16(6143.0)


def test_gemm_declines_what_it_does_not_cover(fast: Any) -> None:
    paths, _ = fast
    ints = HostArray(np.ones((2, 2), np.int32))
    assert paths.gemm(ints, ints) is None
    f32 = HostArray(np.ones((2, 3), np.float32))
    assert paths.gemm(f32, HostArray(np.ones((3, 2), np.float64))) is None
    assert paths.gemm(HostArray(np.ones((2, 2, 2), np.float32)), f32) is None


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_while_capturing_gemm_calls_cublas_directly_on_the_capturing_stream(
    fast: Any, dtype: str
) -> None:
    paths, cublas = fast
    paths.cp.cuda.get_current_stream().capturing = True
    library = FakeLibrary(cublas)
    paths._direct = DirectBlas(library, allocate=lambda nbytes: 4096)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((6, 5)).astype(dtype)
    b = np.asfortranarray(rng.standard_normal((5, 3)).astype(dtype))
    out = paths.gemm(HostArray(a), HostArray(b))
    expected = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(out.host, expected, rtol=1e-2 if dtype == "float16" else 1e-6)
    kind = {"float32": "sgemm", "float64": "dgemm", "float16": "gemmEx"}[dtype]
    # a handle of the library's own, in the default math mode, on the capturing stream,
    # with a workspace of its own (set again after each setStream, which resets it)
    workspace = ("direct setWorkspace", 4096, DirectBlas.WORKSPACE_BYTES)
    assert cublas.calls[:5] == [
        "direct create",
        ("direct setMathMode", 5, 0),
        ("direct setStream", 77),
        workspace,
        "direct",
    ]
    assert cublas.calls[5][0] == kind
    paths.gemm(HostArray(a), HostArray(b))  # the handle is kept, its mode too
    assert cublas.calls[6:] == [("direct setStream", 77), workspace, "direct", cublas.calls[5]]
    # the ctypes signatures declare as many arguments as the calls pass, pointers where
    # the (fake) library dereferences one
    symbols = dict(DirectBlas.SIGNATURES.values())
    for symbol, count in library.arity.items():
        assert len(symbols[symbol]) == count, symbol
    pointers = {"cublasSgemm_v2": (6, 7, 9, 11, 12), "cublasGemmEx": (6, 7, 10, 13, 14)}
    for symbol, where in pointers.items():
        if symbol in library.arity:
            assert all(symbols[symbol][i] == "p" for i in where), symbol
    paths.cp.cuda.get_current_stream().capturing = False
    paths.gemm(HostArray(a), HostArray(b))  # not capturing: CuPy's wrapper again
    assert cublas.calls[-2:] == [("setMathMode", 0), cublas.calls[5]]


def test_a_capture_gemm_in_tf32_sets_the_mode_on_its_own_handle(fast: Any) -> None:
    paths, cublas = fast
    paths.cp.cuda.get_current_stream().capturing = True
    paths._direct = DirectBlas(FakeLibrary(cublas), allocate=lambda nbytes: 4096)
    mta.backends.cuda.matmul.allow_tf32 = True
    a = HostArray(np.ones((2, 2), np.float32))
    paths.gemm(a, a)
    assert cublas.calls[1] == ("direct setMathMode", 5, 3)
    assert cublas.calls[-1] == ("sgemm", 3)


def test_a_failed_direct_call_names_the_cublas_function_and_status(fast: Any) -> None:
    paths, cublas = fast
    paths.cp.cuda.get_current_stream().capturing = True
    paths._direct = DirectBlas(FakeLibrary(cublas, status=7), allocate=lambda nbytes: 4096)
    a = HostArray(np.ones((2, 2), np.float32))
    with pytest.raises(RuntimeError, match="cublasCreate_v2 failed with cuBLAS status 7"):
        paths.gemm(a, a)


def test_find_cublas_says_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fast_base, "Path", lambda _: types.SimpleNamespace(exists=lambda: False))
    monkeypatch.setattr(fast_base.ctypes.util, "find_library", lambda name: None)
    with pytest.raises(RuntimeError, match="cuBLAS was not found"):
        fast_base.find_cublas()
