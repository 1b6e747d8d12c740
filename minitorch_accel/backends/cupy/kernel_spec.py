"""How the CuPy backend's CUDA kernels are described, and their sources generated.

A :class:`KernelSpec` holds what ``cupy.ElementwiseKernel`` is built from: parameter
lists and the loop body CuPy wraps into a CUDA kernel running one thread per output
element ``i``; a :class:`ReductionSpec` what ``cupy.ReductionKernel`` is built from.
``T`` is the floating-point type of the arrays and ``S`` the label type, both fixed by
the arrays passed at call time; ``raw`` parameters are indexed by hand instead of
element by element. From a spec this module also writes whole CUDA translation units:
:func:`standalone_source` (to check a body with ``nvcc`` on a machine without a GPU) and
:func:`multi_tensor_source` (one launch over many tensors, for the optimizers).

Nothing here imports CuPy.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KernelSpec:
    """One elementwise CUDA kernel: what ``cupy.ElementwiseKernel`` is built from.

    Attributes
    ----------
    name : str
        The kernel's name (it appears in profilers).
    in_params, out_params : str
        Comma-separated ``[raw] TYPE NAME`` declarations, as CuPy expects them.
    operation : str
        The CUDA loop body; ``i`` is the index of the output element.
    """

    name: str
    in_params: str
    out_params: str
    operation: str

    def params(self) -> list[Param]:
        """Every parameter, inputs first, parsed from the declarations."""
        found = []
        for is_output, declarations in ((False, self.in_params), (True, self.out_params)):
            for declaration in declarations.split(","):
                words = declaration.split()
                found.append(Param(words[-1], words[-2], words[0] == "raw", is_output))
        return found


@dataclass(frozen=True)
class Param:
    """One kernel parameter: ``name``, ``type_name`` (``T``, ``int32``...), whether it
    is ``raw`` (indexed by hand) and whether it is an output.
    """

    name: str
    type_name: str
    raw: bool
    output: bool

    @property
    def c_type(self) -> str:
        """The C type: ``T`` and ``S`` stay type placeholders."""
        return _C_TYPES.get(self.type_name, self.type_name)


@dataclass(frozen=True)
class ReductionSpec:
    """One ``cupy.ReductionKernel``: each element is mapped by ``map_expr``, the mapped
    values are combined by ``reduce_expr`` (``a``, ``b``) from ``identity``, and
    ``post_map_expr`` writes the result (``a``) to the output.
    """

    name: str
    in_params: str
    out_params: str
    map_expr: str
    reduce_expr: str
    post_map_expr: str
    identity: str

    def args(self) -> tuple[str, ...]:
        """The arguments of ``cupy.ReductionKernel``, in its order."""
        return (
            self.in_params,
            self.out_params,
            self.map_expr,
            self.reduce_expr,
            self.post_map_expr,
            self.identity,
            self.name,
        )

    def map_spec(self) -> KernelSpec:
        """The map step alone as an elementwise kernel (to check it without a GPU)."""
        out_type = self.out_params.split()[0]
        return KernelSpec(
            f"{self.name}_map", self.in_params, f"{out_type} mapped", f"mapped = {self.map_expr};"
        )


def standalone_source(
    spec: KernelSpec, float_type: str = "float", label_type: str = "long long"
) -> str:
    """A self-contained CUDA translation unit holding ``spec``'s loop body.

    It declares every parameter the way CuPy does (an element reference for array
    parameters, an indexable array for ``raw`` ones) so that ``nvcc`` checks the body's
    syntax and types on a machine without a GPU or CuPy. It is for checking only; CuPy
    generates the kernels that actually run.

    Parameters
    ----------
    spec : KernelSpec
    float_type : str
        The C type standing for ``T``.
    label_type : str
        The C type standing for ``S``.
    """
    args, binds = [], []
    for p in spec.params():
        if p.raw:
            args.append(f"RawArray<{p.c_type}> {p.name}")
        else:
            args.append(f"{p.c_type}* _p_{p.name}")
            const = "" if p.output else "const "
            binds.append(f"    {const}{p.c_type}& {p.name} = _p_{p.name}[i];")
    body = "\n".join(binds) + "\n" + spec.operation
    return (
        _PRELUDE.format(float_type=float_type, label_type=label_type)
        + f'extern "C" __global__ void {spec.name}({", ".join(args)}, ptrdiff_t _n) {{\n'
        + "  for (ptrdiff_t i = blockIdx.x * (ptrdiff_t)blockDim.x + threadIdx.x; i < _n;\n"
        + "       i += (ptrdiff_t)blockDim.x * gridDim.x) {\n"
        + body
        + "\n  }\n}\n"
    )


def multi_tensor_source(spec: KernelSpec, arrays: tuple[str, ...], float_type: str) -> str:
    """CUDA source of a kernel running ``spec``'s loop body over many tensors at once.

    An optimizer step launches one elementwise kernel per parameter: a small model's
    step then pays the launch cost of each of its parameters (PyTorch's "foreach"
    optimizers avoid this the same way). Here the parameters ``arrays`` of ``spec``
    are tables of pointers, one per tensor; ``ends[t]`` is the cumulative element count
    of tensors ``0..t``, and element ``k`` of the concatenation finds its tensor ``t``
    by binary search. Other parameters stay scalars shared by every tensor.

    The kernel is named ``{spec.name}_many_{float_type}`` and takes the parameters of
    ``spec`` in order, then ``ends``, the number of tensors and the total size.
    """
    args, binds = [], []
    for p in spec.params():
        if p.name in arrays:
            const = "" if p.output else "const "
            args.append(f"{const}T* const* {p.name}_of")
            binds.append(f"    {const}T& {p.name} = {p.name}_of[t][i];")
        else:
            args.append(f"{p.c_type} {p.name}")
    args += ["const long long* ends", "int tensors", "long long total"]
    return (
        f"typedef {float_type} T;\n"
        f'extern "C" __global__ void {spec.name}_many_{float_type}({", ".join(args)}) {{\n'
        "  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < total;\n"
        "       k += (long long)blockDim.x * gridDim.x) {\n"
        "    int lo = 0, hi = tensors - 1;\n"
        "    while (lo < hi) {\n"
        "      int mid = (lo + hi) / 2;\n"
        "      if (ends[mid] > k) hi = mid; else lo = mid + 1;\n"
        "    }\n"
        "    int t = lo;\n"
        "    long long i = k - (t > 0 ? ends[t - 1] : 0);\n"
        + "\n".join(binds)
        + "\n"
        + spec.operation
        + "\n  }\n}\n"
    )


_C_TYPES = {
    "int32": "int",
    "int64": "long long",
    "float32": "float",
    "float64": "double",
    "bool": "bool",
}

_PRELUDE = """#include <cstddef>
typedef {float_type} T;
typedef {label_type} S;
// Stand-in for CuPy's CArray: flat indexing, and indexing by one index per dimension.
template <typename V> struct RawArray {{
  V* data_;
  ptrdiff_t strides_[4];
  __device__ V& operator[](ptrdiff_t k) const {{ return data_[k]; }}
  template <typename I, int N> __device__ V& operator[](const I (&idx)[N]) const {{
    char* p = reinterpret_cast<char*>(data_);
    for (int d = 0; d < N; ++d) p += strides_[d] * idx[d];
    return *reinterpret_cast<V*>(p);
  }}
}};
"""
