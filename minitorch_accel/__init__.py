"""minitorch_accel: a deep-learning framework from scratch on NumPy and CuPy.

The names most programs need are here: tensors and how to make them, the math ops,
autograd switches, devices, checkpoints.

Examples
--------
>>> import minitorch_accel as mta
>>> x = mta.tensor([1.0, 2.0], requires_grad=True)
>>> y = (x * x).sum()
>>> y.backward()
>>> x.grad
tensor([2., 4.])
"""

from __future__ import annotations

import numpy as _np

from . import backends
from .backends import Device
from .core.backward import grad
from .core.factories import (
    arange,
    empty,
    eye,
    from_numpy,
    full,
    full_like,
    manual_seed,
    ones,
    ones_like,
    rand,
    randint,
    randn,
    tensor,
    zeros,
    zeros_like,
)
from .core.function import Function
from .core.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .ops.elementwise import (
    abs,
    add,
    clamp,
    div,
    eq,
    exp,
    ge,
    gt,
    le,
    log,
    lt,
    maximum,
    minimum,
    mul,
    ne,
    neg,
    pow,
    relu,
    sigmoid,
    sqrt,
    sub,
    tanh,
    where,
)
from .ops.matmul import matmul
from .ops.reduce import (
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    log_softmax,
    logsumexp,
    max,
    mean,
    min,
    softmax,
    sum,
    var,
)
from .ops.shape import (
    cat,
    expand,
    flatten,
    pad,
    permute,
    reshape,
    squeeze,
    stack,
    transpose,
    unsqueeze,
)
from .serialization import load, save

__version__ = "0.1.0"

# Subpackages, so that ``mta.nn``, ``mta.optim``, ``mta.cuda`` ... work after one import.
# (transforms: torchvision-like per-sample transforms)
from . import (
    amp,
    autograd,
    cuda,
    data,
    datasets,
    linalg,
    memory,
    nn,
    optim,
    parallel,
    transforms,
    utils,
)

# Intra-op threads on the CPU (``torch.set_num_threads``).
from .backends.numpy.threads import get_num_threads, set_num_threads
from .nn import models

float16 = _np.dtype("float16")
float32 = _np.dtype("float32")
float64 = _np.dtype("float64")
int32 = _np.dtype("int32")
int64 = _np.dtype("int64")
uint8 = _np.dtype("uint8")
bool_ = _np.dtype("bool")
float = float32
long = int64
int8 = _np.dtype("int8")
int16 = _np.dtype("int16")
short = int16
int = int32
bool = bool_
double = float64
half = float16

device = Device

# The PyTorch surface: selection with named (values, indices), more math and shape ops,
# defaults; listed with their status in docs/pytorch_names.py.
from . import accelerator  # noqa: E402
from .backends.fast_paths import fast_paths, is_fast_paths_enabled  # noqa: E402
from .core import return_types  # noqa: E402
from .core.defaults import (  # noqa: E402
    get_default_device,
    get_default_dtype,
    inference_mode,
    set_default_device,
    set_default_dtype,
)
from .core.factories import linspace, logspace, randperm  # noqa: E402
from .core.size import Size  # noqa: E402
from .core.tensor import Tensor  # noqa: E402
from .ops.activation import erf  # noqa: E402
from .ops.einsum import einsum  # noqa: E402
from .ops.elementwise import clamp as clip  # noqa: E402
from .ops.index import gather, index_select, masked_fill, scatter  # noqa: E402
from .ops.scan import cumprod, cumsum, norm  # noqa: E402
from .ops.sort import argsort, kthvalue, median, mode, sort, topk  # noqa: E402
from .ops.split import chunk, repeat, split, unflatten  # noqa: E402
from .ops.unary import cos, log1p, rsqrt, sign, sin, tan  # noqa: E402

__all__ = [
    "get_num_threads",
    "set_num_threads",
    "load",
    "save",
    "amp",
    "autograd",
    "fast_paths",
    "is_fast_paths_enabled",
    "cuda",
    "memory",
    "data",
    "datasets",
    "linalg",
    "models",
    "nn",
    "optim",
    "parallel",
    "utils",
    "transforms",
    "Device",
    "Function",
    "Tensor",
    "abs",
    "add",
    "arange",
    "argmax",
    "argmin",
    "backends",
    "bool_",
    "cat",
    "clamp",
    "device",
    "div",
    "empty",
    "enable_grad",
    "eq",
    "exp",
    "expand",
    "eye",
    "flatten",
    "float16",
    "float32",
    "float64",
    "from_numpy",
    "full",
    "full_like",
    "ge",
    "grad",
    "gt",
    "int32",
    "int64",
    "is_grad_enabled",
    "le",
    "log",
    "log_softmax",
    "logsumexp",
    "long",
    "lt",
    "manual_seed",
    "matmul",
    "max",
    "amax",
    "amin",
    "any",
    "all",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mul",
    "ne",
    "neg",
    "no_grad",
    "ones",
    "ones_like",
    "pad",
    "permute",
    "pow",
    "rand",
    "randint",
    "randn",
    "relu",
    "reshape",
    "set_grad_enabled",
    "sigmoid",
    "softmax",
    "sqrt",
    "squeeze",
    "stack",
    "sub",
    "sum",
    "tanh",
    "tensor",
    "transpose",
    "uint8",
    "unsqueeze",
    "var",
    "where",
    "zeros",
    "zeros_like",
    "accelerator",
    "return_types",
    "get_default_device",
    "get_default_dtype",
    "inference_mode",
    "set_default_device",
    "set_default_dtype",
    "linspace",
    "logspace",
    "randperm",
    "einsum",
    "clip",
    "gather",
    "index_select",
    "masked_fill",
    "scatter",
    "cumprod",
    "cumsum",
    "norm",
    "argsort",
    "kthvalue",
    "median",
    "mode",
    "sort",
    "topk",
    "chunk",
    "repeat",
    "split",
    "unflatten",
    "cos",
    "log1p",
    "rsqrt",
    "sign",
    "sin",
    "tan",
    "Size",
    "int8",
    "int16",
    "short",
    "double",
    "half",
    "erf",
]
