"""CUDA fast paths of the CuPy backend, as ``cupy.ElementwiseKernel`` sources.

Each kernel is a :class:`KernelSpec`: the parameter lists and the loop body that CuPy
wraps into a CUDA kernel running one thread per output element ``i``. ``T`` is the
floating-point type of the arrays and ``S`` the label type, both fixed by the arrays
passed at call time; ``raw`` parameters are indexed by hand instead of element by
element. The sources are plain strings, so they can be compiled with ``nvcc`` on a
machine without a GPU (see ``tests/test_kernel_sources.py``).

What the fusion buys: a ReLU backward written with NumPy operators launches two
kernels and makes a boolean temporary (``mask = y > 0``, ``grad * mask``); the fused
kernel reads ``y`` and ``grad`` once and writes the result once. An SGD step with
momentum is seven array passes in NumPy and one here.

Nothing in this module imports CuPy; :mod:`minitorch_accel.backends.cupy_ops` builds
the kernels and the Python functions that call them.
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
    is ``raw`` (indexed by hand) and whether it is an output."""

    name: str
    type_name: str
    raw: bool
    output: bool

    @property
    def c_type(self) -> str:
        """The C type: ``T`` and ``S`` stay type placeholders."""
        return _C_TYPES.get(self.type_name, self.type_name)


RELU_FORWARD = KernelSpec(
    "mta_relu_forward",
    "T x",
    "T y",
    # NaN stays NaN, as torch.relu does (x != x only for NaN)
    "y = (x > (T)0 || x != x) ? x : (T)0;",
)

RELU_BACKWARD = KernelSpec(
    "mta_relu_backward",
    "T y, T gy",
    "T gx",
    # the mask multiply, fused: one read of y and gy, one write, no boolean temporary
    "gx = y > (T)0 ? gy : (T)0;",
)

def _sgd_spec(momentum: bool) -> KernelSpec:
    """SGD with or without a momentum buffer (two kernels: no dummy buffer needed)."""
    buffer = """
    buf = first_step ? d : momentum * buf + ((T)1 - dampening) * d;
    d = nesterov ? d + momentum * buf : buf;"""
    return KernelSpec(
        "mta_sgd_momentum" if momentum else "mta_sgd",
        "T grad, T lr, T momentum, T dampening, T weight_decay, "
        "int32 nesterov, int32 maximize, int32 first_step",
        "T param, T buf" if momentum else "T param",
        f"""
    T d = maximize ? -grad : grad;
    d += weight_decay * param;{buffer if momentum else ""}
    param -= lr * d;
    """,
    )


def _adam_spec(amsgrad: bool) -> KernelSpec:
    """Adam/AdamW with or without the AMSGrad running maximum."""
    second = """
    max_exp_avg_sq = max(max_exp_avg_sq, exp_avg_sq);
    T second = max_exp_avg_sq;""" if amsgrad else """
    T second = exp_avg_sq;"""
    return KernelSpec(
        "mta_adam_amsgrad" if amsgrad else "mta_adam",
        "T grad, T lr, T beta1, T beta2, T eps, T weight_decay, T step_size, "
        "T bias2_sqrt, int32 decoupled, int32 maximize",
        "T param, T exp_avg, T exp_avg_sq" + (", T max_exp_avg_sq" if amsgrad else ""),
        f"""
    T g = maximize ? -grad : grad;
    if (decoupled) {{
        param *= (T)1 - lr * weight_decay;
    }} else {{
        g += weight_decay * param;
    }}
    exp_avg = beta1 * exp_avg + ((T)1 - beta1) * g;
    exp_avg_sq = beta2 * exp_avg_sq + ((T)1 - beta2) * g * g;{second}
    param -= step_size * exp_avg / (sqrt(second) / bias2_sqrt + eps);
    """,
    )


SGD = _sgd_spec(momentum=False)
SGD_MOMENTUM = _sgd_spec(momentum=True)
ADAM = _adam_spec(amsgrad=False)
ADAM_AMSGRAD = _adam_spec(amsgrad=True)

CROSS_ENTROPY_FORWARD = KernelSpec(
    "mta_cross_entropy_forward",
    "raw T logits, S label, S ignore_index, T row_max, T sum_exp, int32 classes",
    "T loss, T lse",
    # lse = log(sum(exp(x - max))) + max; loss = lse - x[label], 0 for ignored rows and
    # for labels out of range (never read: LABEL_COUNT reports them, and the op raises)
    """
    lse = log(sum_exp) + row_max;
    bool counted = label != ignore_index && label >= 0 && label < classes;
    loss = counted ? lse - logits[i * classes + label] : (T)0;
    """,
)

CROSS_ENTROPY_BACKWARD = KernelSpec(
    "mta_cross_entropy_backward",
    "T x, raw S label, S ignore_index, raw T lse, raw T grad_rows, int32 rows_step, "
    "raw T scale, int32 classes",
    "T gx",
    # d loss_r / d x_rc = softmax(x_r)_c - [c == label_r], times the row's gradient:
    # grad_rows[row] (rows_step 1), or one gradient for every row (rows_step 0, the
    # gradient of a summed loss) times scale[0] (1, or 1 / rows for a mean)
    """
    ptrdiff_t row = i / classes;
    int c = i % classes;
    S target = label[row];
    if (target != ignore_index && target >= 0 && target < classes) {
        T p = exp(x - lse[row]);
        gx = (p - (c == target ? (T)1 : (T)0)) * grad_rows[row * rows_step] * scale[0];
    } else {
        gx = (T)0;
    }
    """,
)



@dataclass(frozen=True)
class ReductionSpec:
    """One ``cupy.ReductionKernel``: each element is mapped by ``map_expr``, the mapped
    values are combined by ``reduce_expr`` (``a``, ``b``) from ``identity``, and
    ``post_map_expr`` writes the result (``a``) to the output."""

    name: str
    in_params: str
    out_params: str
    map_expr: str
    reduce_expr: str
    post_map_expr: str
    identity: str

    def args(self) -> tuple[str, ...]:
        """The arguments of ``cupy.ReductionKernel``, in its order."""
        return (self.in_params, self.out_params, self.map_expr, self.reduce_expr,
                self.post_map_expr, self.identity, self.name)

    def map_spec(self) -> KernelSpec:
        """The map step alone as an elementwise kernel (to check it without a GPU)."""
        out_type = self.out_params.split()[0]
        return KernelSpec(f"{self.name}_map", self.in_params, f"{out_type} mapped",
                          f"mapped = {self.map_expr};")


SUM_EXP = ReductionSpec(
    "mta_sum_exp", "T x, T shift", "T y", "exp(x - shift)", "a + b", "y = a", "0"
)

#: ``(labels, classes, ignore_index) -> int64``: the number of counted rows (labels in
#: ``[0, classes)``) plus ``2**32`` times the number of labels out of range: one
#: reduction and one read-back check the labels and count the rows ``mean`` divides by.
LABEL_COUNT = ReductionSpec(
    "mta_label_count",
    "S label, int64 classes, int64 ignore_index",
    "int64 total",
    "label == ignore_index ? 0LL : ((label < 0 || label >= classes) ? (1LL << 32) : 1LL)",
    "a + b",
    "total = a",
    "0",
)

#: ``total`` from LABEL_COUNT -> ``1 / counted rows`` in the loss's type, on the device
#: (no read-back): the scale of a mean. No row counted gives inf, and the mean 0 * inf
#: = NaN, as PyTorch's.
INVERSE_COUNT = KernelSpec(
    "mta_inverse_count",
    "int64 total",
    "T scale",
    "scale = (T)1 / (T)(total & 0xFFFFFFFFLL);",
)

#: Every reduction kernel of the backend.
REDUCTIONS: tuple[ReductionSpec, ...] = (SUM_EXP, LABEL_COUNT)

IM2COL = KernelSpec(
    "mta_im2col",
    "raw T img, int32 batch, int32 channels_per_group, int32 h, int32 w, "
    "int32 out_h, int32 out_w, int32 kh, int32 kw, int32 sy, int32 sx, "
    "int32 ph, int32 pw, int32 dy, int32 dx, int32 channels_last",
    "T col",
    # cols is (groups, M, K) channels-last or (groups, K, M) kernel-major, with
    # M = (n, oy, ox) and K = (ky, kx, c): decode i in that order, read one pixel
    """
    ptrdiff_t rest = i;
    int c, kx, ky, ox, oy, n;
    if (channels_last) {
        c = rest % channels_per_group; rest /= channels_per_group;
        kx = rest % kw; rest /= kw;
        ky = rest % kh; rest /= kh;
        ox = rest % out_w; rest /= out_w;
        oy = rest % out_h; rest /= out_h;
        n = rest % batch; rest /= batch;
    } else {
        ox = rest % out_w; rest /= out_w;
        oy = rest % out_h; rest /= out_h;
        n = rest % batch; rest /= batch;
        c = rest % channels_per_group; rest /= channels_per_group;
        kx = rest % kw; rest /= kw;
        ky = rest % kh; rest /= kh;
    }
    int channel = (int)rest * channels_per_group + c;
    int y = oy * sy + ky * dy - ph;
    int x = ox * sx + kx * dx - pw;
    if (y >= 0 && y < h && x >= 0 && x < w) {
        ptrdiff_t index[] = {n, channel, y, x};
        col = img[index];
    } else {
        col = (T)0;
    }
    """,
)

COL2IM = KernelSpec(
    "mta_col2im",
    "raw T col, int32 batch, int32 channels, int32 channels_per_group, int32 h, "
    "int32 w, int32 out_h, int32 out_w, int32 kh, int32 kw, int32 sy, int32 sx, "
    "int32 ph, int32 pw, int32 dy, int32 dx, int32 channels_last",
    "T img",
    # img is NHWC in memory when channels_last (NCHW otherwise); every pixel sums the
    # column entries that read it: the adjoint of im2col, with no atomics
    """
    ptrdiff_t rest = i;
    int n, channel, y, x;
    if (channels_last) {
        channel = rest % channels; rest /= channels;
        x = rest % w; rest /= w;
        y = rest % h; n = rest / h;
    } else {
        x = rest % w; rest /= w;
        y = rest % h; rest /= h;
        channel = rest % channels; n = rest / channels;
    }
    int g = channel / channels_per_group;
    int c = channel % channels_per_group;
    ptrdiff_t m_total = (ptrdiff_t)batch * out_h * out_w;
    ptrdiff_t k_total = (ptrdiff_t)kh * kw * channels_per_group;
    T sum = (T)0;
    for (int ky = 0; ky < kh; ++ky) {
        int ty = y + ph - ky * dy;
        if (ty < 0 || ty % sy != 0 || ty / sy >= out_h) continue;
        for (int kx = 0; kx < kw; ++kx) {
            int tx = x + pw - kx * dx;
            if (tx < 0 || tx % sx != 0 || tx / sx >= out_w) continue;
            ptrdiff_t m = ((ptrdiff_t)n * out_h + ty / sy) * out_w + tx / sx;
            ptrdiff_t k = ((ptrdiff_t)ky * kw + kx) * channels_per_group + c;
            sum += channels_last ? col[(g * m_total + m) * k_total + k]
                                 : col[(g * k_total + k) * m_total + m];
        }
    }
    img = sum;
    """,
)

# Max pooling. ``neg_inf`` is -infinity in the array type, passed in (NVRTC has no
# INFINITY macro): it stands for the padding, as in the CPU code. Pixel ``(n, c, y, x)``
# is decoded from ``i`` in the memory order of the output (NHWC when channels_last).
_DECODE_NCHW = """
    ptrdiff_t rest = i;
    int n, c, {y}, {x};
    if (channels_last) {{
        c = rest % channels; rest /= channels;
        {x} = rest % {w}; rest /= {w};
        {y} = rest % {h}; n = rest / {h};
    }} else {{
        {x} = rest % {w}; rest /= {w};
        {y} = rest % {h}; rest /= {h};
        c = rest % channels; n = rest / channels;
    }}
"""
_POOL_PARAMS = (
    "int32 channels, int32 h, int32 w, int32 out_h, int32 out_w, int32 kh, int32 kw, "
    "int32 sy, int32 sx, int32 ph, int32 pw, int32 channels_last, T neg_inf"
)

MAX_POOL_FORWARD = KernelSpec(
    "mta_max_pool_forward",
    "raw T x, " + _POOL_PARAMS,
    "T y",
    # one thread per output: the window's maximum (NaN wins, as in NumPy's maximum)
    _DECODE_NCHW.format(y="oy", x="ox", h="out_h", w="out_w") + """
    T best = neg_inf;
    for (int ky = 0; ky < kh; ++ky) {
        int iy = oy * sy - ph + ky;
        if (iy < 0 || iy >= h) continue;
        for (int kx = 0; kx < kw; ++kx) {
            int ix = ox * sx - pw + kx;
            if (ix < 0 || ix >= w) continue;
            ptrdiff_t index[] = {n, c, iy, ix};
            T v = x[index];
            if (v > best || v != v) best = v;
        }
    }
    y = best;
    """,
)

MAX_POOL_BACKWARD = KernelSpec(
    "mta_max_pool_backward",
    "raw T x, raw T y, raw T gy, " + _POOL_PARAMS,
    "T gx",
    # one thread per input pixel, no atomics: for each window holding the pixel, find
    # the window's first maximum in row-major order (padding is -inf; no match, as for
    # NaN, means the last offset) and take the window's gradient if it is this pixel
    _DECODE_NCHW.format(y="iy", x="ix", h="h", w="w") + """
    T sum = (T)0;
    for (int ky = 0; ky < kh; ++ky) {
        int ty = iy + ph - ky;
        if (ty < 0 || ty % sy != 0 || ty / sy >= out_h) continue;
        int oy = ty / sy;
        for (int kx = 0; kx < kw; ++kx) {
            int tx = ix + pw - kx;
            if (tx < 0 || tx % sx != 0 || tx / sx >= out_w) continue;
            int ox = tx / sx;
            ptrdiff_t out_index[] = {n, c, oy, ox};
            T target = y[out_index];
            int first = kh * kw - 1;
            for (int k = 0; k < kh * kw - 1; ++k) {
                int py = oy * sy - ph + k / kw;
                int px = ox * sx - pw + k % kw;
                T v = neg_inf;
                if (py >= 0 && py < h && px >= 0 && px < w) {
                    ptrdiff_t in_index[] = {n, c, py, px};
                    v = x[in_index];
                }
                if (v == target) { first = k; break; }
            }
            if (first == ky * kw + kx) sum += gy[out_index];
        }
    }
    gx = sum;
    """,
)

#: Every kernel source of the backend.
SPECS: tuple[KernelSpec, ...] = (
    RELU_FORWARD,
    RELU_BACKWARD,
    SGD,
    SGD_MOMENTUM,
    ADAM,
    ADAM_AMSGRAD,
    CROSS_ENTROPY_FORWARD,
    CROSS_ENTROPY_BACKWARD,
    IM2COL,
    COL2IM,
    MAX_POOL_FORWARD,
    MAX_POOL_BACKWARD,
    INVERSE_COUNT,
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
