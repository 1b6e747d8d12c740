"""CUDA fast paths of the CuPy backend, as kernel sources: activations, optimizers,
loss; and the lists of every kernel (:data:`SPECS`, :data:`REDUCTIONS`,
:data:`MULTI_TENSOR`).

Each kernel is a :class:`~minitorch_accel.backends.cupy.kernel_spec.KernelSpec` (see
that module); the image kernels live in
:mod:`~minitorch_accel.backends.cupy.image_kernels`. The sources are plain strings, so
they can be compiled with ``nvcc`` on a machine without a GPU (see
``tests/test_kernel_sources.py``).

What the fusion buys: a ReLU backward written with NumPy operators launches two
kernels and makes a boolean temporary (``mask = y <= 0``, ``where(mask, 0, grad)``); the fused
kernel reads ``y`` and ``grad`` once and writes the result once. An SGD step with
momentum is seven array passes in NumPy and one here.

Nothing in this module imports CuPy; :mod:`minitorch_accel.backends.cupy.ops` builds
the kernels and the Python functions that call them.
"""

from __future__ import annotations

from .image_kernels import COL2IM, IM2COL, MAX_POOL_BACKWARD, MAX_POOL_FORWARD
from .kernel_spec import (
    KernelSpec,
    Param,
    ReductionSpec,
    multi_tensor_source,
    standalone_source,
)

__all__ = [
    "ADAM",
    "ADAM_AMSGRAD",
    "COL2IM",
    "CROSS_ENTROPY_BACKWARD",
    "CROSS_ENTROPY_FORWARD",
    "CROSS_ENTROPY_ROWS",
    "ROW_KERNEL_MAX_CLASSES",
    "BLOCK_KERNEL_MAX_ROWS",
    "BLOCK_KERNEL_THREADS",
    "cross_entropy_block_source",
    "IM2COL",
    "LABEL_COUNT",
    "MEAN_OF_COUNTED",
    "MAX_POOL_BACKWARD",
    "MAX_POOL_FORWARD",
    "MULTI_TENSOR",
    "REDUCTIONS",
    "RELU_BACKWARD",
    "RELU_FORWARD",
    "SGD",
    "SGD_MOMENTUM",
    "SPECS",
    "SUM_EXP",
    "KernelSpec",
    "Param",
    "ReductionSpec",
    "multi_tensor_source",
    "standalone_source",
]


RELU_FORWARD = KernelSpec(
    "mta_relu_forward",
    "T x",
    "T y",
    # PyTorch's rule, the reference's: NaN stays NaN (NaN < 0 is false) and -0.0 stays
    # -0.0 (it is not < 0)
    "y = x < (T)0 ? (T)0 : x;",
)

RELU_BACKWARD = KernelSpec(
    "mta_relu_backward",
    "T y, T gy",
    "T gx",
    # the mask, fused: one read of y and gy, one write, no boolean temporary; PyTorch's
    # rule (threshold_backward): a NaN y passes gy, y <= 0 gives exactly 0
    "gx = y <= (T)0 ? (T)0 : gy;",
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
    second = (
        """
    max_exp_avg_sq = max(max_exp_avg_sq, exp_avg_sq);
    T second = max_exp_avg_sq;"""
        if amsgrad
        else """
    T second = exp_avg_sq;"""
    )
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

#: Most classes for which CROSS_ENTROPY_ROWS (one thread per row) is used.
ROW_KERNEL_MAX_CLASSES = 1024

CROSS_ENTROPY_ROWS = KernelSpec(
    "mta_cross_entropy_rows",
    "raw T logits, S label, S ignore_index, int32 classes",
    "T loss, T lse",
    # one thread per row does the row's maximum, sum of exponentials and loss: one
    # launch instead of three, for the few classes of most classifiers
    """
    const ptrdiff_t base = i * classes;
    T row_max = logits[base];
    for (int c = 1; c < classes; ++c) row_max = max(row_max, logits[base + c]);
    T sum_exp = (T)0;
    for (int c = 0; c < classes; ++c) sum_exp += exp(logits[base + c] - row_max);
    lse = log(sum_exp) + row_max;
    bool counted = label != ignore_index && label >= 0 && label < classes;
    loss = counted ? lse - logits[base + label] : (T)0;
    """,
)

#: Most rows (and threads) of the one-block cross-entropy kernel.
BLOCK_KERNEL_MAX_ROWS = 4096
BLOCK_KERNEL_THREADS = 256


def cross_entropy_block_source(float_type: str) -> str:
    """CUDA source of the whole cross-entropy forward of a batch, in one launch.

    One block of :data:`BLOCK_KERNEL_THREADS` threads: each thread takes rows in turn
    and writes their loss and log-sum-exp (as CROSS_ENTROPY_ROWS), and sums its losses
    and label counts (counted rows, plus ``2**32`` per label out of range, as
    LABEL_COUNT); a tree reduction in shared memory then gives thread 0 the totals, from
    which it writes ``out = [loss sum * scale, scale]`` (``scale`` 1, or 1 / counted
    rows for a mean) and ``total``. Four launches (count, loss, sum, mean) become one.
    Named ``mta_cross_entropy_block_{float_type}``.
    """
    return f"""typedef {float_type} T;
extern "C" __global__ void mta_cross_entropy_block_{float_type}(
    const T* logits, const long long* labels, long long ignore_index, int rows, int classes,
    int mean, T* loss_rows, T* lse_rows, T* out, long long* total) {{
  __shared__ T part_loss[{BLOCK_KERNEL_THREADS}];
  __shared__ long long part_count[{BLOCK_KERNEL_THREADS}];
  T my_loss = (T)0;
  long long my_count = 0;
  for (int r = threadIdx.x; r < rows; r += blockDim.x) {{
    const T* x = logits + (long long)r * classes;
    T row_max = x[0];
    for (int c = 1; c < classes; ++c) row_max = max(row_max, x[c]);
    T sum_exp = (T)0;
    for (int c = 0; c < classes; ++c) sum_exp += exp(x[c] - row_max);
    T lse = log(sum_exp) + row_max;
    long long label = labels[r];
    bool ignored = label == ignore_index;
    bool in_range = label >= 0 && label < classes;
    T loss = (!ignored && in_range) ? lse - x[label] : (T)0;
    loss_rows[r] = loss;
    lse_rows[r] = lse;
    my_loss += loss;
    my_count += ignored ? 0LL : (in_range ? 1LL : (1LL << 32));
  }}
  part_loss[threadIdx.x] = my_loss;
  part_count[threadIdx.x] = my_count;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {{
    if (threadIdx.x < s) {{
      part_loss[threadIdx.x] += part_loss[threadIdx.x + s];
      part_count[threadIdx.x] += part_count[threadIdx.x + s];
    }}
    __syncthreads();
  }}
  if (threadIdx.x == 0) {{
    T scale = mean ? (T)1 / (T)(part_count[0] & 0xFFFFFFFFLL) : (T)1;
    out[0] = part_loss[0] * scale;
    out[1] = scale;
    total[0] = part_count[0];
  }}
}}
"""


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

#: ``(sum of the row losses, total from LABEL_COUNT) -> (mean, scale)``, on the device
#: (no read-back): ``scale = 1 / counted rows`` is kept for backward. No row counted
#: gives scale inf and the mean 0 * inf = NaN, as PyTorch's.
MEAN_OF_COUNTED = KernelSpec(
    "mta_mean_of_counted",
    "T total_loss, int64 total",
    "T mean, T scale",
    """
    scale = (T)1 / (T)(total & 0xFFFFFFFFLL);
    mean = total_loss * scale;
    """,
)

#: Every reduction kernel of the backend.
REDUCTIONS: tuple[ReductionSpec, ...] = (SUM_EXP, LABEL_COUNT)

#: Every kernel source of the backend.
SPECS: tuple[KernelSpec, ...] = (
    RELU_FORWARD,
    RELU_BACKWARD,
    SGD,
    SGD_MOMENTUM,
    ADAM,
    ADAM_AMSGRAD,
    CROSS_ENTROPY_FORWARD,
    CROSS_ENTROPY_ROWS,
    CROSS_ENTROPY_BACKWARD,
    IM2COL,
    COL2IM,
    MAX_POOL_FORWARD,
    MAX_POOL_BACKWARD,
    MEAN_OF_COUNTED,
)


#: The optimizer kernels that also exist as multi-tensor kernels, with their arrays.
MULTI_TENSOR: dict[str, tuple[KernelSpec, tuple[str, ...]]] = {
    "sgd": (SGD, ("grad", "param")),
    "sgd_momentum": (SGD_MOMENTUM, ("grad", "param", "buf")),
    "adam": (ADAM, ("grad", "param", "exp_avg", "exp_avg_sq")),
    "adam_amsgrad": (ADAM_AMSGRAD, ("grad", "param", "exp_avg", "exp_avg_sq", "max_exp_avg_sq")),
}
