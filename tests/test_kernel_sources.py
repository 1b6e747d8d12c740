"""The CUDA kernel sources of the CuPy backend, checked without a GPU.

1. Each source is compiled by ``nvcc -arch=sm_90 --ptx`` for float and double
   (skipped where nvcc is absent): syntax and type errors show up here, not on the
   first GPU run.
2. Each loop body is also compiled for the *host* by a C++ compiler, as one serial
   loop over the element index ``i``, and called through ctypes by a small stand-in for
   ``cupy.ElementwiseKernel``. :class:`~minitorch_accel.backends.cupy_ops.CupyFastPaths`
   runs on that stand-in, so the kernels' arithmetic and indexing *and* the Python code
   that launches them are compared with the NumPy code paths they replace.
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

from minitorch_accel.backends import cupy_kernels as K
from minitorch_accel.backends.cupy_ops import FAST_PATHS, CupyFastPaths
from minitorch_accel.ops import conv_kernels as ck
from minitorch_accel.optim.adam import adam_update
from minitorch_accel.optim.sgd import sgd_update

NVCC = shutil.which("nvcc")
CXX = shutil.which("g++") or shutil.which("c++")
needs_cxx = pytest.mark.skipif(CXX is None, reason="needs a C++ compiler (g++)")


@pytest.mark.skipif(NVCC is None, reason="nvcc (the CUDA compiler) is not installed")
@pytest.mark.parametrize("float_type", ["float", "double"])
@pytest.mark.parametrize("spec", K.SPECS, ids=[s.name for s in K.SPECS])
def test_kernel_compiles_with_nvcc(spec: K.KernelSpec, float_type: str, tmp_path: Path) -> None:
    source = tmp_path / f"{spec.name}.cu"
    source.write_text(K.standalone_source(spec, float_type))
    result = subprocess.run(
        [str(NVCC), "-arch=sm_90", "--ptx", "-o", str(tmp_path / "out.ptx"), str(source)],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, f"nvcc failed on {spec.name}:\n{result.stderr}"
    assert f".entry {spec.name}" in (tmp_path / "out.ptx").read_text()


# ------------------------------------------------------------------ the host stand-in
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

DTYPES = {"T": np.float64, "S": np.int64, "int32": np.int32, "int64": np.int64,
          "bool": np.bool_, "float32": np.float32, "float64": np.float64}


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
        + "\n".join(raws) + "\n  for (ptrdiff_t i = 0; i < _n; ++i) {\n"
        + "\n".join(binds) + "\n" + spec.operation + "\n  }\n}\n"
    )


@pytest.fixture(scope="module")
def host_library(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    """Every kernel body compiled for the host into one shared library."""
    if CXX is None:
        pytest.skip("needs a C++ compiler (g++)")
    source = HOST_PRELUDE + "\n".join(host_source(s) for s in K.SPECS)
    folder = tmp_path_factory.mktemp("kernels")
    name = hashlib.sha1(source.encode()).hexdigest()[:12]
    (folder / f"{name}.cpp").write_text(source)
    library = folder / f"{name}.so"
    result = subprocess.run(
        [CXX, "-O1", "-shared", "-fPIC", "-o", str(library), str(folder / f"{name}.cpp")],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return ctypes.CDLL(str(library))


class HostElementwiseKernel:
    """``cupy.ElementwiseKernel`` on the host: broadcasting, output allocation, the call."""

    def __init__(self, library: ctypes.CDLL, in_params: str, out_params: str,
                 operation: str, name: str) -> None:
        self.spec = K.KernelSpec(name, in_params, out_params, operation)
        self.function = getattr(library, name)

    def __call__(self, *args: Any) -> Any:
        params = self.spec.params()
        inputs = [p for p in params if not p.output]
        given = list(args[len(inputs):])
        arrays = [a for a, p in zip(args, params, strict=False) if not p.raw
                  and isinstance(a, np.ndarray)]
        shape = np.broadcast_shapes(*(a.shape for a in arrays + given))
        outputs = [g for g in given] + [
            np.empty(shape, DTYPES[p.type_name]) for p in params[len(args):]
        ]
        c_args: list[Any] = []
        keep: list[np.ndarray] = []
        for p, value in zip(params, list(args[:len(inputs)]) + outputs, strict=True):
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
    """The one ``cupy.ReductionKernel`` the fast paths use: ``sum(exp(x - shift))``."""

    def __init__(self, in_params: str, out_params: str, map_expr: str, reduce_expr: str,
                 post_map_expr: str, identity: str, name: str) -> None:
        assert (map_expr, reduce_expr, post_map_expr) == ("exp(x - shift)", "a + b", "y = a")

    def __call__(self, x: np.ndarray, shift: np.ndarray, axis: int) -> np.ndarray:
        return np.exp(x - shift).sum(axis=axis)  # type: ignore[no-any-return]


class HostFastPaths(CupyFastPaths):
    """The CuPy fast paths on NumPy arrays, through the host-compiled kernels."""

    def on(self, array: Any) -> Any:
        return contextlib.nullcontext()


@pytest.fixture(scope="module")
def fast(host_library: ctypes.CDLL) -> HostFastPaths:
    cupy = types.SimpleNamespace(
        ElementwiseKernel=lambda *a: HostElementwiseKernel(host_library, *a),
        ReductionKernel=HostReductionKernel,
        empty=np.empty, matmul=np.matmul, ascontiguousarray=np.ascontiguousarray,
        broadcast_to=np.broadcast_to, asarray=np.asarray,
    )
    return HostFastPaths(cupy)


# ------------------------------------------------------------------ kernels vs NumPy
def test_every_fast_path_is_reachable(fast: HostFastPaths) -> None:
    assert all(callable(fast.get(name)) for name in FAST_PATHS)
    assert fast.get("no_such_kernel") is None


def test_relu(fast: HostFastPaths) -> None:
    x = np.array([-2.0, -0.0, 0.0, 0.5, np.nan, 3.0])
    y = fast.relu_forward(x)
    np.testing.assert_array_equal(y, [0.0, 0.0, 0.0, 0.5, np.nan, 3.0])
    gy = np.arange(6.0) + 1
    np.testing.assert_array_equal(fast.relu_backward(y, gy), gy * (y > 0))


@pytest.mark.parametrize(
    "momentum, dampening, nesterov, weight_decay, maximize",
    [(0.0, 0.0, False, 0.0, False), (0.0, 0.0, False, 0.1, True), (0.9, 0.0, True, 0.01, False),
     (0.5, 0.3, False, 0.0, True)],
    ids=["plain", "decay_maximize", "nesterov", "dampening"],
)
def test_sgd_update(fast: HostFastPaths, momentum: float, dampening: float, nesterov: bool,
                    weight_decay: float, maximize: bool) -> None:
    rng = np.random.default_rng(0)
    states = [[rng.standard_normal((3, 4)), np.zeros((3, 4))] for _ in range(2)]
    states[1] = [a.copy() for a in states[0]]
    for step in range(3):
        grad = rng.standard_normal((3, 4))
        for update, (param, buf) in zip((sgd_update, fast.sgd_update), states, strict=True):
            update(np, param, grad, buf if momentum else None, 0.1, momentum, dampening,
                   nesterov, weight_decay, maximize, step == 0)
    np.testing.assert_allclose(states[1][0], states[0][0], rtol=1e-13)
    np.testing.assert_allclose(states[1][1], states[0][1], rtol=1e-13)


@pytest.mark.parametrize(
    "weight_decay, decoupled, amsgrad, maximize",
    [(0.0, False, False, False), (0.1, False, True, False), (0.1, True, False, True)],
    ids=["adam", "adam_decay_amsgrad", "adamw_maximize"],
)
def test_adam_update(fast: HostFastPaths, weight_decay: float, decoupled: bool,
                     amsgrad: bool, maximize: bool) -> None:
    rng = np.random.default_rng(1)
    first = [rng.standard_normal(7), np.zeros(7), np.zeros(7), np.zeros(7)]
    states = [first, [a.copy() for a in first]]
    for step in range(1, 4):
        grad = rng.standard_normal(7)
        for update, (p, m, v, vmax) in zip((adam_update, fast.adam_update), states, strict=True):
            update(np, p, grad, m, v, vmax if amsgrad else None, step, 0.01, 0.9, 0.999, 1e-8,
                   weight_decay, decoupled, amsgrad, maximize)
    for found, expected in zip(states[1], states[0], strict=True):
        np.testing.assert_allclose(found, expected, rtol=1e-12)


def test_cross_entropy(fast: HostFastPaths) -> None:
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((5, 4)) * 3
    labels = np.array([0, 3, 1, 1, 2])
    valid = np.array([True, True, False, True, True])
    loss, lse = fast.cross_entropy_forward(logits, labels, valid)
    log_probs = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    np.testing.assert_allclose(loss, -log_probs[np.arange(5), labels] * valid, rtol=1e-12)
    grad_rows = rng.standard_normal(5)
    grad = fast.cross_entropy_backward(logits, labels, valid, lse, grad_rows)
    expected = (np.exp(log_probs) - np.eye(4)[labels]) * (grad_rows * valid)[:, None]
    np.testing.assert_allclose(grad, expected, rtol=1e-12, atol=1e-15)


GEOMETRIES = [
    ((2, 1, 7, 6), (4, 1, 3, 3), 1, 0, 1, 1),
    ((2, 3, 8, 8), (5, 3, 3, 2), (2, 1), (1, 0), 1, 1),
    ((1, 8, 9, 9), (6, 8, 3, 3), 2, 1, 1, 1),
    ((2, 8, 9, 7), (4, 4, 2, 3), 1, (2, 1), (2, 1), 2),
    ((1, 16, 5, 5), (16, 1, 3, 3), 1, 1, 1, 16),
]
GEOMETRY_IDS = ["c1", "stride_pad_mixed", "channels_last", "groups_dilation", "depthwise"]


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("x_shape, w_shape, stride, padding, dilation, groups", GEOMETRIES,
                         ids=GEOMETRY_IDS)
def test_im2col_matches_the_cpu_layout(fast: HostFastPaths, layout: str, x_shape: Any,
                                       w_shape: Any, stride: Any, padding: Any,
                                       dilation: Any, groups: int) -> None:
    geo = ck.conv_geometry(x_shape, w_shape, stride, padding, dilation, groups)
    x = np.random.default_rng(3).standard_normal(x_shape)
    if layout == "nhwc":  # the layout convolution outputs have
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    expected = ck.im2col(np, x, geo).matrix
    found = fast.im2col(x, geo)
    assert found.shape == expected.shape and found.flags.c_contiguous
    np.testing.assert_array_equal(found, expected)


@pytest.mark.parametrize("x_shape, w_shape, stride, padding, dilation, groups", GEOMETRIES,
                         ids=GEOMETRY_IDS)
def test_col2im_and_grad_input(fast: HostFastPaths, x_shape: Any, w_shape: Any, stride: Any,
                               padding: Any, dilation: Any, groups: int) -> None:
    geo = ck.conv_geometry(x_shape, w_shape, stride, padding, dilation, groups)
    rng = np.random.default_rng(4)
    x = rng.standard_normal(x_shape)
    cols = rng.standard_normal(ck.im2col(np, x, geo).matrix.shape)
    # col2im is the adjoint of im2col: <im2col(x), cols> == <x, col2im(cols)>
    lhs = float((fast.im2col(x, geo) * cols).sum())
    rhs = float((x * fast.col2im(cols, geo)).sum())
    assert lhs == pytest.approx(rhs, rel=1e-12)
    w = rng.standard_normal(w_shape)
    grad_y = rng.standard_normal(geo.y_shape)
    expected = ck.conv2d_grad_input(np, grad_y, w, x_shape, stride, padding, dilation, groups)
    found = fast.conv2d_grad_input(grad_y, w, geo)
    assert found.shape == x_shape
    np.testing.assert_allclose(found, expected, rtol=1e-11, atol=1e-12)
    with pytest.raises(ValueError, match=r"grad_output has shape .*, expected"):
        fast.conv2d_grad_input(grad_y[..., :-1], w, geo)


def test_standalone_source_declares_every_parameter() -> None:
    source = K.standalone_source(K.CROSS_ENTROPY_BACKWARD, "double")
    assert "typedef double T;" in source
    assert "RawArray<S> label" in source and "const T& x = _p_x[i];" in source
    assert "T& gx = _p_gx[i];" in source and "const T& gx" not in source
