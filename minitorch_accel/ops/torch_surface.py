"""More of PyTorch's top-level names: conversion without copies, predicates, dtype
limits, the random generator's state, global switches, random draws, small numeric
routines (trapezoid, cov, windows) and the ``torch.*`` forms of functional ops.

Each is a short composition of existing ops (so gradients come from theirs) or a plain
function of the backend arrays for what has no gradient.

Examples
--------
>>> import minitorch_accel as mta
>>> mta.is_tensor(mta.zeros(2)), mta.numel(mta.zeros(2, 3))
(True, 6)
"""

from __future__ import annotations

import builtins
import json
import math
import secrets
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..backends import Device, DeviceLike
from ..backends import cuda as _cuda_settings
from ..core.convert import HOST, DTypeLike, as_dtype, to_array
from ..core.defaults import device_or_default, get_default_dtype
from ..core.factories import device_generator
from ..core.factories import tensor as _tensor
from ..core.function import Function
from ..core.legacy_constructor import legacy_arguments
from ..core.tensor import Tensor
from . import elementwise as _E
from . import index as _index
from . import matmul as _M
from . import reduce as _R
from . import reduce_more as _RM
from . import scan as _scan
from . import shape as _S
from . import shape_more as _SM
from . import sort as _sort
from . import split as _split
from .bitwise import isnan
from .shape import normalize_dim

# ------------------------------------------------------------------ conversion


def as_tensor(data: Any, dtype: DTypeLike = None, device: DeviceLike | None = None) -> Tensor:
    """``data`` as a tensor, sharing its memory where it can (``torch.as_tensor``).

    A Tensor of the asked dtype and device comes back itself; a NumPy array (or
    a CuPy one) whose dtype and device already fit becomes a tensor on the same memory,
    so writes to either show in the other. Anything else is copied (converted).

    Examples
    --------
    >>> import numpy as np
    >>> import minitorch_accel as mta
    >>> a = np.array([1.0, 2.0])
    >>> t = mta.as_tensor(a)
    >>> a[0] = 5.0
    >>> t
    tensor([5., 2.], dtype=float64)
    """
    return asarray(data, dtype=dtype, device=device)


def asarray(
    obj: Any,
    *,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    copy: builtins.bool | None = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """``obj`` as a tensor (``torch.asarray``): shares memory with a Tensor or an array
    when dtype and device fit and ``copy`` is not True; ``copy=False`` raises
    ValueError where sharing is impossible; ``copy=True`` always copies.

    Examples
    --------
    >>> import numpy as np
    >>> import minitorch_accel as mta
    >>> a = np.arange(3)
    >>> mta.asarray(a).array is a, mta.asarray(a, copy=True).array is a
    (True, False)
    """
    if isinstance(obj, Tensor):
        want_dtype = obj.dtype if dtype is None else as_dtype(dtype)
        want_device = obj.device if device is None else Device(device)
        if copy is not True and want_dtype == obj.dtype and want_device == obj.device:
            out = obj if not requires_grad else obj.detach().requires_grad_(True)
            return out
        if copy is False:
            raise ValueError(
                f"asarray: copy=False, but a {obj.dtype} tensor on {obj.device} cannot be "
                f"shared as {want_dtype} on {want_device}; allow a copy (copy=None)"
            )
        out = obj.to(device=want_device, dtype=want_dtype)
        out = out.clone() if out is obj else out
        return out.detach().requires_grad_(True) if requires_grad else out
    dev, array = to_array(obj, dtype, device)
    shares = hasattr(obj, "__array_interface__") or hasattr(obj, "__cuda_array_interface__")
    shares = shares and array is obj
    if copy is True and shares:
        array = array.copy()
    elif copy is False and not shares:
        raise ValueError(
            f"asarray: copy=False, but a {type(obj).__name__} cannot be shared as a "
            f"{array.dtype} tensor on {dev}; allow a copy (copy=None)"
        )
    out = Tensor._make(array, dev, False, None)
    return out.requires_grad_(True) if requires_grad else out


def clone(input: Tensor) -> Tensor:
    """A copy of ``input`` that stays in the graph (``input.clone()``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.clone(mta.tensor([1.0, 2.0]))
    tensor([1., 2.])
    """
    return input.clone()


def detach(input: Tensor) -> Tensor:
    """``input.detach()``: the same memory, cut off from the graph.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.detach(mta.ones(2, requires_grad=True)).requires_grad
    False
    """
    return input.detach()


def t(input: Tensor) -> Tensor:
    """``input.t()``: a matrix transposed (0-d and 1-d tensors unchanged).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.t(mta.zeros(2, 3)).shape
    (3, 2)
    """
    return input.t()


def numel(input: Tensor) -> int:
    """The number of elements of ``input``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.numel(mta.zeros(4, 5))
    20
    """
    return input.numel()


# ------------------------------------------------------------------ predicates


def is_tensor(obj: Any) -> builtins.bool:
    """True if ``obj`` is a :class:`~minitorch_accel.Tensor` (or a subclass: Parameter).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.is_tensor(mta.zeros(1)), mta.is_tensor([1.0])
    (True, False)
    """
    return isinstance(obj, Tensor)


def _dtype_of(input: Any, name: str) -> np.dtype[Any]:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be a Tensor, not {type(input).__name__}")
    return input.dtype


def is_floating_point(input: Tensor) -> builtins.bool:
    """True for a floating-point dtype.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.is_floating_point(mta.zeros(1)), mta.is_floating_point(mta.tensor([1]))
    (True, False)
    """
    return _dtype_of(input, "is_floating_point").kind == "f"


def is_complex(input: Tensor) -> builtins.bool:
    """True for a complex dtype.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.is_complex(mta.zeros(1))
    False
    """
    return _dtype_of(input, "is_complex").kind == "c"


def is_signed(input: Tensor) -> builtins.bool:
    """True for a dtype that holds negative numbers (not bool, not unsigned).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.is_signed(mta.tensor([1])), mta.is_signed(mta.tensor([1], dtype=mta.uint8))
    (True, False)
    """
    return _dtype_of(input, "is_signed").kind in "ifc"


def is_nonzero(input: Tensor) -> builtins.bool:
    """Whether the one element of ``input`` is nonzero (``bool(input)``); a tensor with
    no element or with several raises RuntimeError, as in PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.is_nonzero(mta.tensor([0.0])), mta.is_nonzero(mta.tensor(3))
    (False, True)
    """
    n = input.numel()
    if n != 1:
        what = "no values" if n == 0 else "more than one value"
        raise RuntimeError(f"Boolean value of Tensor with {what} is ambiguous")
    return builtins.bool(input.item())


def is_same_size(input: Tensor, other: Tensor) -> builtins.bool:
    """True if the two tensors have the same shape.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.is_same_size(mta.zeros(2, 3), mta.ones(2, 3))
    True
    """
    return tuple(input.shape) == tuple(other.shape)


def typename(obj: Any) -> str:
    """PyTorch's type name: ``"minitorch_accel.FloatTensor"`` for a float32 tensor
    (``torch.FloatTensor`` there), else the module-qualified class name.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.typename(mta.zeros(1)), mta.typename(3)
    ('minitorch_accel.FloatTensor', 'int')
    """
    if isinstance(obj, Tensor):
        return str(obj.type())
    kind = obj if isinstance(obj, type) else type(obj)
    module = kind.__module__
    name = kind.__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


# ------------------------------------------------------------------ dtype limits


class finfo:  # noqa: N801  (PyTorch's name)
    """The limits of a floating-point dtype (``torch.finfo``): ``bits``, ``eps``,
    ``max``, ``min``, ``tiny`` (= ``smallest_normal``), ``resolution`` and ``dtype``
    (its name). Without a dtype, the default float dtype's.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> f = mta.finfo(mta.float16)
    >>> f.bits, f.max, f.eps, f.dtype
    (16, 65504.0, 0.0009765625, 'float16')
    """

    def __init__(self, type: DTypeLike = None) -> None:
        dt = as_dtype(type if type is not None else get_default_dtype())
        if dt.kind != "f":
            raise TypeError(f"finfo: {dt} is not a floating-point dtype; use iinfo")
        info = np.finfo(dt)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = float(info.smallest_normal)
        self.smallest_normal = self.tiny
        self.resolution = 10.0 ** -int(info.precision)  # a Python float, as PyTorch
        self.dtype = dt.name

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
            f"tiny={self.tiny:g}, dtype={self.dtype})"
        )


class iinfo:  # noqa: N801  (PyTorch's name)
    """The limits of an integer dtype (``torch.iinfo``): ``bits``, ``max``,
    ``min``, ``dtype`` (its name).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> i = mta.iinfo(mta.int8)
    >>> i.bits, i.min, i.max, i.dtype
    (8, -128, 127, 'int8')
    """

    def __init__(self, type: DTypeLike) -> None:
        dt = as_dtype(type)
        if dt.kind in "iu":
            info = np.iinfo(dt)
            self.bits, self.min, self.max = int(info.bits), int(info.min), int(info.max)
        else:
            raise TypeError(
                f"{dt} is not supported by iinfo (integer dtypes only; finfo for floats)"
            )
        self.dtype = dt.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


# ------------------------------------------------------------------ the generator


def _host_backend() -> Any:
    return HOST.backend


def initial_seed() -> int:
    """The seed of the CPU generators: the last :func:`~minitorch_accel.manual_seed`
    or :func:`seed` (0 at start).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.manual_seed(7); mta.initial_seed()
    7
    """
    return int(_host_backend()._seed)


def seed() -> int:
    """Seed every generator with a fresh random number and return it.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> s = mta.seed()
    >>> s == mta.initial_seed()
    True
    """
    from ..core.factories import manual_seed

    value = secrets.randbits(63)
    manual_seed(value)
    return value


def get_rng_state() -> Tensor:
    """The state of the CPU generators as a uint8 tensor (``torch.get_rng_state``); give
    it to :func:`set_rng_state` to draw the same numbers again.

    Differs from PyTorch: its bytes are this framework's (the seed and each CPU
    device's NumPy generator state as UTF-8 JSON), not PyTorch's 5056-byte Mersenne
    Twister state.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> state = mta.get_rng_state()
    >>> a = mta.rand(3)
    >>> mta.set_rng_state(state)
    >>> mta.equal(mta.rand(3), a)
    True
    """
    backend = _host_backend()
    generators = {
        str(dev): gen.bit_generator.state for dev, gen in dict(backend._generators).items()
    }
    payload = json.dumps({"seed": int(backend._seed), "generators": generators})
    return Tensor._make(np.frombuffer(payload.encode(), dtype=np.uint8).copy(), HOST, False, None)


def set_rng_state(new_state: Tensor) -> None:
    """Restore the CPU generators from a state :func:`get_rng_state` returned.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.set_rng_state(mta.get_rng_state())
    """
    if not isinstance(new_state, Tensor) or new_state.dtype != np.uint8:
        raise TypeError("set_rng_state: expected the uint8 tensor get_rng_state() returned")
    try:
        payload = json.loads(bytes(np.asarray(new_state).tobytes()).decode())
        seed_value, generators = int(payload["seed"]), dict(payload["generators"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as error:
        raise ValueError(
            "set_rng_state: this is not a state get_rng_state() returned (a PyTorch state "
            "cannot be used here)"
        ) from error
    backend = _host_backend()
    backend.manual_seed(seed_value)
    for name, state in generators.items():
        dev = Device(name)
        backend.generator(dev).bit_generator.state = state


# ------------------------------------------------------------------ global switches

_deterministic = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode: builtins.bool, *, warn_only: builtins.bool = False) -> None:
    """Ask for deterministic algorithms (``torch.use_deterministic_algorithms``).

    Recorded only: every op here is deterministic for a given backend, thread count and
    input (the CPU reductions use a fixed order; the GPU kernels use no float atomics
    whose order varies), so nothing changes and nothing raises.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.use_deterministic_algorithms(True)
    >>> mta.are_deterministic_algorithms_enabled()
    True
    >>> mta.use_deterministic_algorithms(False)
    """
    if not isinstance(mode, builtins.bool):
        raise TypeError(f"use_deterministic_algorithms: mode must be a bool, got {mode!r}")
    _deterministic["mode"] = mode
    _deterministic["warn_only"] = builtins.bool(warn_only)


def are_deterministic_algorithms_enabled() -> builtins.bool:
    """Whether :func:`use_deterministic_algorithms` was turned on.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.are_deterministic_algorithms_enabled()
    False
    """
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled() -> builtins.bool:
    """The ``warn_only`` of the last :func:`use_deterministic_algorithms`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.is_deterministic_algorithms_warn_only_enabled()
    False
    """
    return _deterministic["warn_only"]


_MATMUL_PRECISIONS = ("highest", "high", "medium")
_matmul_precision = {"value": "highest"}


def set_float32_matmul_precision(precision: str) -> None:
    """Set the precision of float32 matrix products (``"highest"``, ``"high"``,
    ``"medium"``), as ``torch.set_float32_matmul_precision``.

    On the CPU nothing changes (NumPy's float32 GEMM has no reduced mode). On CUDA,
    ``"high"`` and ``"medium"`` both mean TF32 tensor cores: they set
    :data:`minitorch_accel.backends.cuda.matmul.allow_tf32` to True, ``"highest"`` to
    False (bfloat16 passes, PyTorch's ``"medium"`` option, are not available).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.set_float32_matmul_precision("high")
    >>> mta.backends.cuda.matmul.allow_tf32
    True
    >>> mta.set_float32_matmul_precision("highest")
    """
    if precision not in _MATMUL_PRECISIONS:
        raise ValueError(
            f"set_float32_matmul_precision: expected one of {list(_MATMUL_PRECISIONS)}, got "
            f"{precision!r}"
        )
    _matmul_precision["value"] = precision
    _cuda_settings.matmul.allow_tf32 = precision != "highest"


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision: ``"highest"`` unless TF32 is allowed
    (:func:`set_float32_matmul_precision` or ``backends.cuda.matmul.allow_tf32``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.get_float32_matmul_precision()
    'highest'
    """
    if not _cuda_settings.matmul.allow_tf32:
        return "highest"
    stored = _matmul_precision["value"]
    return stored if stored != "highest" else "high"


_interop_threads = {"value": 1}


def get_num_interop_threads() -> int:
    """The number of inter-op threads (``torch.get_num_interop_threads``): 1, since ops
    run one after another here; :func:`set_num_interop_threads` records another value.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.get_num_interop_threads() >= 1
    True
    """
    return _interop_threads["value"]


def set_num_interop_threads(num: int) -> None:
    """Record the number of inter-op threads (no effect: this framework runs one op at a
    time; the intra-op threads are :func:`~minitorch_accel.set_num_threads`).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.set_num_interop_threads(1)
    """
    if not isinstance(num, int) or num < 1:
        raise ValueError(f"set_num_interop_threads: expected a positive int, got {num!r}")
    _interop_threads["value"] = num


# ------------------------------------------------------------------ making tensors


def scalar_tensor(
    s: Any,
    *,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """A 0-d tensor holding ``s``, of the default float dtype unless ``dtype`` is given.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.scalar_tensor(3)
    tensor(3.)
    """
    dt = as_dtype(dtype if dtype is not None else get_default_dtype())
    value = s.item() if isinstance(s, Tensor) else s
    return Tensor._from_data(value, dtype=dt, device=device, requires_grad=requires_grad)


def range(
    start: float,
    end: float,
    step: float = 1,
    *,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """Values from ``start`` to ``end`` *inclusive* by ``step`` (deprecated in PyTorch;
    warns as it does: use :func:`~minitorch_accel.arange`, which excludes ``end``).
    The default float dtype unless ``dtype`` is given.

    Examples
    --------
    >>> import warnings
    >>> import minitorch_accel as mta
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     mta.range(1, 4)
    tensor([1., 2., 3., 4.])
    """
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its "
        "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
        "which produces values in [start, end).",
        UserWarning,
        stacklevel=2,
    )
    if step == 0:
        raise ValueError("range: step must be nonzero")
    if (end - start) * step < 0:
        raise ValueError(
            f"range: upper bound and larger bound inconsistent with step sign ({start}, "
            f"{end}, {step})"
        )
    count = int(math.floor((end - start) / step)) + 1
    dev = device_or_default(device)
    dt = as_dtype(dtype if dtype is not None else get_default_dtype())
    xp = dev.backend.xp
    with dev.backend.device_context(dev):
        values = (start + step * xp.arange(count, dtype=np.float64)).astype(dt)
    out = Tensor._make(values, dev, False, None)
    return out.requires_grad_(True) if requires_grad else out


def unravel_index(indices: Tensor, shape: int | Sequence[int]) -> tuple[Tensor, ...]:
    """The coordinates in a tensor of ``shape`` of flat ``indices`` (int64 tensors, one
    per dim; negative indices count from the end). As PyTorch, indices out of range are
    not refused: they wrap around (each coordinate is taken modulo its size).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> [c.tolist() for c in mta.unravel_index(mta.tensor([4, 5]), (2, 3))]
    [[1, 1], [1, 2]]
    """
    if not isinstance(indices, Tensor):
        indices = Tensor._from_data(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    dims = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if builtins.any(s < 0 for s in dims):
        raise ValueError(f"'shape' cannot have negative values, but got {dims}")
    flat = indices.array.astype(np.int64)
    coords = []
    for size in reversed(dims):  # floor division and modulo, as PyTorch: no range check
        coords.append(flat % size if size else flat)
        flat = flat // size if size else flat
    return tuple(Tensor._make(c, indices.device, False, None) for c in reversed(coords))


# ------------------------------------------------------------------ random draws


class _Sampled(Function):
    """A random draw made from its inputs: gradient 0 to each (PyTorch's for
    ``normal``, ``bernoulli`` and ``poisson``: the draw is not reparametrized).
    """

    saves_inputs = False

    def forward(self, *arrays: Any, sample: Any) -> Any:
        return sample

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return tuple(
            Tensor._make(self.xp.zeros(t.shape, dtype=t.dtype), self.device, False, None)
            for t in self.inputs
        )


def normal(
    mean: Any,
    std: Any = 1.0,
    size: Sequence[int] | None = None,
    *,
    generator: Any = None,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """Normal samples of ``mean`` and ``std`` (``torch.normal``'s four forms): a tensor
    mean and/or std (one sample per element, broadcast), or two numbers and a ``size``.

    Drawn from the framework's generator (or ``generator``, a NumPy/CuPy Generator).
    Gradient 0 to ``mean`` and ``std``, as in PyTorch. Negative ``std`` raises.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.normal(mta.zeros(2, 3), 1.0).shape, mta.normal(0.0, 1.0, (4,)).shape
    ((2, 3), (4,))
    """
    tensors = [v for v in (mean, std) if isinstance(v, Tensor)]
    if not tensors:
        if size is None:
            raise TypeError("normal: with a number mean and std, give a size")
        dev = device_or_default(device)
        dt = as_dtype(dtype if dtype is not None else get_default_dtype())
        if std < 0:
            raise ValueError(f"normal expects std >= 0.0, but found std {std}")
        gen = device_generator(dev, generator)
        with dev.backend.device_context(dev):
            draw = gen.standard_normal(tuple(size), dtype=np.float64)
            array = (draw * std + mean).astype(dt)
        out = Tensor._make(array, dev, False, None)
        return out.requires_grad_(True) if requires_grad else out
    if size is not None:
        raise TypeError("normal: size is only for a number mean and std")
    first = tensors[0]
    if first.dtype.kind != "f":
        raise TypeError(f"normal: expected a floating-point mean/std, got {first.dtype}")
    m = mean if isinstance(mean, Tensor) else _tensor(mean, first.dtype, first.device)
    s = std if isinstance(std, Tensor) else _tensor(std, first.dtype, first.device)
    if s.numel() and builtins.bool((s.array < 0).any()):
        raise ValueError("normal expects all elements of std >= 0.0")
    shape = np.broadcast_shapes(tuple(m.shape), tuple(s.shape))
    gen = device_generator(first.device, generator)
    with first.device.guard():
        draw = gen.standard_normal(shape, dtype=np.float64)
        array = (draw * s.array + m.array).astype(first.dtype)
    return _Sampled.apply(m, s, sample=array)


def bernoulli(input: Tensor, p: float | None = None, *, generator: Any = None) -> Tensor:
    """0/1 samples: 1 with probability ``input`` (or ``p``), in ``input``'s dtype;
    probabilities outside [0, 1] raise. Gradient 0, as in PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.bernoulli(mta.tensor([0.0, 1.0]))
    tensor([0., 1.])
    """
    probs = input.array if p is None else input.xp.full(input.shape, p, dtype=np.float64)
    if probs.size and builtins.bool(((probs < 0) | (probs > 1) | (probs != probs)).any()):
        raise ValueError("bernoulli: all probabilities must be in [0, 1]")
    gen = device_generator(input.device, generator)
    with input.device.guard():
        array = (gen.random(tuple(input.shape), dtype=np.float64) < probs).astype(input.dtype)
    if input.dtype.kind != "f":
        return Tensor._make(array, input.device, False, None)
    return _Sampled.apply(input, sample=array)


def poisson(input: Tensor, generator: Any = None) -> Tensor:
    """Poisson samples of rates ``input`` (same dtype); negative rates raise. Gradient 0,
    as in PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.poisson(mta.zeros(3))
    tensor([0., 0., 0.])
    """
    if input.dtype.kind != "f":
        raise TypeError(f"poisson: expected a floating-point tensor, got {input.dtype}")
    if input.numel() and builtins.bool(((input.array < 0) | (input.array != input.array)).any()):
        raise ValueError("poisson: invalid rates (negative or NaN)")
    gen = device_generator(input.device, generator)
    with input.device.guard():
        array = gen.poisson(input.array.astype(np.float64)).astype(input.dtype)
    return _Sampled.apply(input, sample=array)


# ------------------------------------------------------------------ elementwise


def rsub(input: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    """``other - alpha * input`` (subtraction with the operands swapped).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.rsub(mta.tensor([1.0, 2.0]), 10)
    tensor([9., 8.])
    """
    return _E.sub(other, input, alpha=alpha)


def fmax(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise maximum, ignoring NaN: where one side is NaN the other is taken
    (NaN only where both are). The gradient goes to the chosen side (``input`` on ties).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.fmax(mta.tensor([1.0, float("nan"), 3.0]), mta.tensor([2.0, 0.0, float("nan")]))
    tensor([2., 0., 3.])
    """
    return _E.where(isnan(other) | (input >= other), input, other)


def fmin(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise minimum, ignoring NaN (see :func:`fmax`).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.fmin(mta.tensor([1.0, float("nan")]), mta.tensor([2.0, 0.0]))
    tensor([1., 0.])
    """
    return _E.where(isnan(other) | (input <= other), input, other)


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm of ``input - other`` (broadcast), as a 0-d tensor.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.dist(mta.tensor([0.0, 0.0]), mta.tensor([3.0, 4.0]))
    tensor(5.)
    """
    return _scan.norm((input - other).flatten(), p)


# ------------------------------------------------------------------ shapes


def concat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Alias of :func:`~minitorch_accel.cat`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.concat([mta.zeros(1), mta.ones(2)])
    tensor([0., 1., 1.])
    """
    return _S.cat(tensors, dim)


def concatenate(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    """Alias of :func:`~minitorch_accel.cat` (NumPy's argument name ``axis``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.concatenate([mta.zeros(1, 2), mta.ones(1, 2)], axis=1).shape
    (1, 4)
    """
    return _S.cat(tensors, axis)


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice of ``input`` at ``index`` along ``dim``, that dim removed (a view).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.select(mta.arange(6).view(2, 3), 1, -1)
    tensor([2, 5])
    """
    d = normalize_dim(dim, input.ndim, "select")
    n = input.shape[d]
    if not -n <= int(index) < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {n} at dim {d}")
    return input[(slice(None),) * d + (int(index),)]


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """:func:`~minitorch_accel.narrow`, copied (not a view).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.narrow_copy(mta.arange(5), 0, 1, 2)
    tensor([1, 2])
    """
    return _SM.narrow(input, dim, start, length).clone()


def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces of the listed sizes along ``dim`` (they must add up to its size).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> [p.tolist() for p in mta.split_with_sizes(mta.arange(5), [2, 3])]
    [[0, 1], [2, 3, 4]]
    """
    return _split.split(input, [int(s) for s in split_sizes], dim)


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A square matrix with ``input`` flattened on its diagonal ``offset``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.diagflat(mta.tensor([[1, 2]]))
    tensor([[1, 0],
            [0, 2]])
    """
    return _SM.diag(input.flatten(), offset)


def msort(input: Tensor) -> Tensor:
    """``input`` sorted along dim 0 (``sort(input, dim=0).values``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.msort(mta.tensor([[3, 1], [2, 4]]))
    tensor([[2, 1],
            [3, 4]])
    """
    return _sort.sort(input, 0).values


def vander(x: Tensor, N: int | None = None, increasing: builtins.bool = False) -> Tensor:  # noqa: N803
    """The Vandermonde matrix of 1-d ``x``: columns ``x**(N-1), ..., x**0`` (or from
    ``x**0`` up with ``increasing``); ``N`` defaults to ``len(x)``. Powers are running
    products (as PyTorch), so the gradient is finite at 0.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.vander(mta.tensor([1, 2, 3]), 3)
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    """
    if x.ndim != 1:
        raise ValueError(f"vander: x must be a one-dimensional tensor, got shape {x.shape}")
    n = x.shape[0] if N is None else int(N)
    if n < 0:
        raise ValueError(f"vander: N must be non-negative, got {n}")
    dt = x.dtype if x.dtype.kind in "fc" else np.dtype(np.int64)
    x = x.to(dtype=dt)
    ones = Tensor._make(
        x.xp.ones((x.shape[0], builtins.min(n, 1)), dtype=dt), x.device, False, None
    )
    columns = [ones]
    if n > 1:  # N <= 1: constant ones, outside the graph (as PyTorch)
        columns.append(_scan.cumprod(x.unsqueeze(1).expand(x.shape[0], n - 1), 1))
    out = _S.cat(columns, 1)
    return out if increasing else out.flip(1)


# ------------------------------------------------------------------ numerical routines


def _spacing(y: Tensor, x: Tensor | None, dx: Any, d: int) -> Any:
    """The step between samples along dim ``d``: ``dx`` or ``diff(x)``, broadcastable."""
    if x is None:
        return 1 if dx is None else dx
    if x.ndim == 1:
        steps = x[1:] - x[:-1]
        return steps.view(*steps.shape, *([1] * (y.ndim - 1 - d)))
    return _RM.diff(x, dim=d - y.ndim)


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The integral of ``y`` along ``dim`` by the trapezoidal rule, with sample points
    ``x`` (1-d, or broadcastable to ``y``) or an even spacing ``dx`` (default 1).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.trapezoid(mta.tensor([1.0, 2.0, 3.0]))
    tensor(4.)
    >>> mta.trapezoid(mta.tensor([1.0, 2.0, 3.0]), mta.tensor([0.0, 1.0, 3.0]))
    tensor(6.5)
    """
    if x is not None and dx is not None:
        raise TypeError("trapezoid: give x or dx, not both")
    d = normalize_dim(dim, y.ndim, "trapezoid")
    n = y.shape[d]
    if n == 0:
        return _R.sum(y, d) if y.dtype.kind == "f" else _R.sum(y.double(), d)
    left = _SM.narrow(y, d, 0, n - 1)
    right = _SM.narrow(y, d, 1, n - 1)
    return _R.sum((left + right) * _spacing(y, x, dx, d), d) / 2


def trapz(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """Alias of :func:`trapezoid`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.trapz(mta.tensor([0.0, 2.0]), dx=0.5)
    tensor(0.5)
    """
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(
    y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1
) -> Tensor:
    """The running trapezoidal integral of ``y`` along ``dim`` (one element fewer).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.cumulative_trapezoid(mta.tensor([1.0, 2.0, 3.0]))
    tensor([1.5, 4. ])
    """
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid: give x or dx, not both")
    d = normalize_dim(dim, y.ndim, "cumulative_trapezoid")
    n = y.shape[d]
    if n == 0:
        return y.clone()
    left = _SM.narrow(y, d, 0, n - 1)
    right = _SM.narrow(y, d, 1, n - 1)
    return _scan.cumsum((left + right) * _spacing(y, x, dx, d) / 2, d)


def _cov_weights(x: Tensor, fweights: Tensor | None, aweights: Tensor | None) -> Tensor | None:
    """The observation weights of :func:`cov` (``fweights * aweights``), checked."""
    n = x.shape[1]
    for weights, name in ((fweights, "fweights"), (aweights, "aweights")):
        if weights is None:
            continue
        if tuple(weights.shape) != (n,):
            raise ValueError(
                f"cov(): expected {name} to have one dimension of size {n}, got "
                f"{tuple(weights.shape)}"
            )
        if name == "fweights" and weights.dtype.kind not in "iu":
            raise TypeError(f"cov(): expected fweights to have integral dtype, got {weights.dtype}")
        if weights.numel() and builtins.bool((weights.array < 0).any()):
            raise ValueError(f"cov(): {name} cannot be negative")
    w = None if fweights is None else fweights.to(dtype=x.dtype)
    if aweights is not None:
        w = aweights.to(dtype=x.dtype) if w is None else w * aweights.to(dtype=x.dtype)
    return w


def cov(
    input: Tensor,
    *,
    correction: int = 1,
    fweights: Tensor | None = None,
    aweights: Tensor | None = None,
) -> Tensor:
    """The covariance matrix of the variables in the rows of ``input`` (observations in
    the columns; a 1-d input is one variable and gives a 0-d tensor). ``correction`` 1
    is Bessel's; ``fweights`` (integer counts) and ``aweights`` weight the observations.
    One variable (one row) gives a 0-d tensor, as PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.cov(mta.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    if input.ndim > 2:
        raise ValueError(f"cov(): expected input to have two or fewer dimensions, got {input.ndim}")
    x = input if input.ndim == 2 else input.view(1, -1)
    if x.dtype.kind not in "fc":
        x = x.to(dtype=get_default_dtype())
    n = x.shape[1]
    w = _cov_weights(x, fweights, aweights)
    if w is None:
        w_sum = Tensor._from_data(float(n), dtype=x.dtype, device=x.device)
        avg = _R.mean(x, 1, keepdim=True)
        norm_factor = w_sum - correction
    else:
        w_sum = _R.sum(w)
        avg = _R.sum(x * w, 1, keepdim=True) / w_sum
        if aweights is None:
            norm_factor = w_sum - correction
        else:
            norm_factor = w_sum - correction * _R.sum(w * aweights.to(dtype=x.dtype)) / w_sum
    if builtins.bool((norm_factor.array <= 0).all()):
        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "number of observations.",
            UserWarning,
            stacklevel=2,
        )
        norm_factor = norm_factor * 0
    centered = x - avg
    weighted = centered if w is None else centered * w
    out = _M.matmul(weighted, centered.t()) / norm_factor
    return out.view(()) if x.shape[0] == 1 else out  # one variable: 0-d, as PyTorch


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the rows of ``input`` (:func:`cov` scaled by
    the standard deviations, clipped to [-1, 1]).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.corrcoef(mta.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = _E.sqrt(_SM.diagonal(c))
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    return _E.clamp(c, -1, 1)


# ------------------------------------------------------------------ windows


def _window(
    name: str,
    window_length: int,
    periodic: builtins.bool,
    dtype: DTypeLike,
    device: DeviceLike | None,
    requires_grad: builtins.bool,
    formula: Any,
) -> Tensor:
    """A window of ``window_length`` points: ``formula(xp, n, N)`` for ``n`` in
    ``0..window_length-1``, where ``N`` is ``window_length`` (+1 if ``periodic``).
    """
    if window_length < 0:
        raise ValueError(f"{name} requires non-negative window_length, got {window_length}")
    dt = as_dtype(dtype if dtype is not None else get_default_dtype())
    if dt.kind != "f":
        raise TypeError(f"{name} expects floating point dtypes, got {dt}")
    dev = device_or_default(device)
    xp = dev.backend.xp
    with dev.backend.device_context(dev):
        if window_length <= 1:
            values = xp.ones(window_length, dtype=np.float64)
        else:
            size = window_length + 1 if periodic else window_length
            values = formula(xp, xp.arange(window_length, dtype=np.float64), size)
        array = values.astype(dt)
    out = Tensor._make(array, dev, False, None)
    return out.requires_grad_(True) if requires_grad else out


def hann_window(
    window_length: int,
    periodic: builtins.bool = True,
    *,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """The Hann window ``0.5 - 0.5 cos(2 pi n / (N - 1))``; ``periodic`` (default)
    takes ``N = window_length + 1`` (for spectral analysis), else ``window_length``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.hann_window(4)
    tensor([0. , 0.5, 1. , 0.5])
    """
    return _window(
        "hann_window", window_length, periodic, dtype, device, requires_grad,
        lambda xp, n, size: 0.5 - 0.5 * xp.cos(2 * math.pi * n / (size - 1)),
    )  # fmt: skip


def hamming_window(
    window_length: int,
    periodic: builtins.bool = True,
    alpha: float = 0.54,
    beta: float = 0.46,
    *,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """The Hamming window ``alpha - beta cos(2 pi n / (N - 1))`` (``N`` as in
    :func:`hann_window`).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.hamming_window(3, periodic=False)
    tensor([0.08, 1.  , 0.08])
    """
    return _window(
        "hamming_window", window_length, periodic, dtype, device, requires_grad,
        lambda xp, n, size: alpha - beta * xp.cos(2 * math.pi * n / (size - 1)),
    )  # fmt: skip


def blackman_window(
    window_length: int,
    periodic: builtins.bool = True,
    *,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """The Blackman window ``0.42 - 0.5 cos(2 pi n/(N-1)) + 0.08 cos(4 pi n/(N-1))``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.blackman_window(3, periodic=False).round(decimals=6).abs()
    tensor([0., 1., 0.])
    """
    return _window(
        "blackman_window", window_length, periodic, dtype, device, requires_grad,
        lambda xp, n, size: 0.42 - 0.5 * xp.cos(2 * math.pi * n / (size - 1))
        + 0.08 * xp.cos(4 * math.pi * n / (size - 1)),
    )  # fmt: skip


def bartlett_window(
    window_length: int,
    periodic: builtins.bool = True,
    *,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """The Bartlett (triangular) window ``1 - |2n/(N-1) - 1|``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.bartlett_window(5, periodic=False)
    tensor([0. , 0.5, 1. , 0.5, 0. ])
    """
    return _window(
        "bartlett_window", window_length, periodic, dtype, device, requires_grad,
        lambda xp, n, size: 1 - xp.abs(2 * n / (size - 1) - 1),
    )  # fmt: skip


def kaiser_window(
    window_length: int,
    periodic: builtins.bool = True,
    beta: float = 12.0,
    *,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """The Kaiser window ``I0(beta sqrt(1 - (2n/(N-1) - 1)^2)) / I0(beta)`` (``I0`` the
    modified Bessel function of order 0).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.kaiser_window(5, periodic=False)
    >>> w[2].item(), mta.equal(w, w.flip(0))
    (1.0, True)
    """
    return _window(
        "kaiser_window", window_length, periodic, dtype, device, requires_grad,
        lambda xp, n, size: xp.i0(beta * xp.sqrt(
            xp.clip(1 - (2 * n / (size - 1) - 1) ** 2, 0, None))) / xp.i0(xp.asarray(beta)),
    )  # fmt: skip


# ------------------------------------------------------------------ torch.* forms of F ops
# PyTorch exposes these ATen ops at top level with their own signatures: positional
# ``train`` flags, ``reduction`` as an int (0 none, 1 mean, 2 sum), other argument orders.

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(value: int, name: str) -> str:
    if isinstance(value, builtins.bool) or value not in _REDUCTIONS:
        raise ValueError(
            f"torch.{name}: reduction is an int here (0 'none', 1 'mean', 2 'sum'), got "
            f"{value!r}; the string form is nn.functional.{name}'s"
        )
    return _REDUCTIONS[value]


def dropout(input: Tensor, p: float, train: builtins.bool) -> Tensor:
    """``torch.dropout(input, p, train)``: :func:`nn.functional.dropout` with
    ``training=train`` (all three arguments required, as in PyTorch).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.dropout(mta.ones(3), 0.5, False)
    tensor([1., 1., 1.])
    """
    from .dropout import dropout as _dropout

    return _dropout(input, p, train)


def alpha_dropout(input: Tensor, p: float, train: builtins.bool) -> Tensor:
    """``torch.alpha_dropout(input, p, train)`` (:func:`nn.functional.alpha_dropout`).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.alpha_dropout(mta.ones(2), 0.5, False)
    tensor([1., 1.])
    """
    from .misc_layers import alpha_dropout as _alpha

    return _alpha(input, p, train)


def feature_alpha_dropout(input: Tensor, p: float, train: builtins.bool) -> Tensor:
    """``torch.feature_alpha_dropout(input, p, train)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.feature_alpha_dropout(mta.ones(1, 2, 2), 0.5, False).shape
    (1, 2, 2)
    """
    from .misc_layers import feature_alpha_dropout as _fad

    return _fad(input, p, train)


def max_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: builtins.bool = False,
) -> Tensor:
    """``torch.max_pool1d``: :func:`nn.functional.max_pool1d` without
    ``return_indices`` (an empty ``stride`` means ``kernel_size``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.max_pool1d(mta.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    tensor([[3., 2.]])
    """
    from .pool1d import max_pool1d as _pool

    return _pool(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: builtins.bool = False,
) -> Tensor:
    """``torch.max_pool2d``: :func:`nn.functional.max_pool2d` without ``return_indices``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.max_pool2d(mta.arange(16.0).view(1, 4, 4), 2)
    tensor([[[ 5.,  7.],
             [13., 15.]]])
    """
    from .pool import max_pool2d as _pool

    return _pool(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    """``torch.adaptive_max_pool1d``: always ``(values, indices)``, as PyTorch's.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> values, indices = mta.adaptive_max_pool1d(mta.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    >>> values.tolist(), indices.tolist()
    ([[3.0, 2.0]], [[1, 2]])
    """
    from .pool1d import adaptive_max_pool1d_with_indices as _pool

    values, indices = _pool(input, output_size)
    return values, indices


def layer_norm(
    input: Tensor,
    normalized_shape: Any,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
    cudnn_enable: builtins.bool = True,
) -> Tensor:
    """``torch.layer_norm`` (``cudnn_enable`` is ignored).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.layer_norm(mta.tensor([[1.0, 3.0]]), [2])
    tensor([[-1.,  1.]])
    """
    from .layer_norm import layer_norm as _ln

    return _ln(input, normalized_shape, weight, bias, eps)


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
    cudnn_enabled: builtins.bool = True,
) -> Tensor:
    """``torch.group_norm`` (``cudnn_enabled`` is ignored).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.group_norm(mta.tensor([[1.0, 3.0]]), 1)
    tensor([[-1.,  1.]])
    """
    from .layer_norm import group_norm as _gn

    return _gn(input, num_groups, weight, bias, eps)


def batch_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: builtins.bool,
    momentum: float,
    eps: float,
    cudnn_enabled: builtins.bool,
) -> Tensor:
    """``torch.batch_norm``: PyTorch's top-level argument order (weight and bias
    first, every argument required); the same as :func:`nn.functional.batch_norm`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.batch_norm(mta.tensor([[1.0], [3.0]]), None, None, None, None, True, 0.1, 0.0, False)
    tensor([[-1.],
            [ 1.]])
    """
    from .norm import batch_norm as _bn

    return _bn(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    use_input_stats: builtins.bool,
    momentum: float,
    eps: float,
    cudnn_enabled: builtins.bool,
) -> Tensor:
    """``torch.instance_norm``: PyTorch's top-level argument order (see
    :func:`batch_norm`).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([[[1.0, 3.0]]])
    >>> mta.instance_norm(x, None, None, None, None, True, 0.1, 0.0, False)
    tensor([[[-1.,  1.]]])
    """
    from .instance_norm import instance_norm as _in

    return _in(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def embedding(
    weight: Tensor,
    indices: Tensor,
    padding_idx: int = -1,
    scale_grad_by_freq: builtins.bool = False,
    sparse: builtins.bool = False,
) -> Tensor:
    """``torch.embedding(weight, indices, ...)``: the rows of ``weight`` (note the order:
    weight first, unlike :func:`nn.functional.embedding`). ``padding_idx=-1`` means
    none, as in PyTorch; ``scale_grad_by_freq`` and ``sparse`` are not supported here.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.embedding(mta.tensor([[0.0, 1.0], [2.0, 3.0]]), mta.tensor([1, 0]))
    tensor([[2., 3.],
            [0., 1.]])
    """
    from .layer_norm import embedding as _emb

    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: scale_grad_by_freq and sparse are not supported")
    return _emb(indices, weight, None if padding_idx == -1 else padding_idx)


def kl_div(
    input: Tensor, target: Tensor, reduction: int = 1, *, log_target: builtins.bool = False
) -> Tensor:
    """``torch.kl_div``: ``reduction`` an int; 1 (mean) averages over every element, as
    PyTorch's ATen op does.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.kl_div(mta.tensor([0.0]), mta.tensor([1.0]), 2)
    tensor(0.)
    """
    from .pointwise_loss import kl_div as _kl

    mode = _reduction(reduction, "kl_div")
    if mode == "mean":
        return _R.mean(_kl(input, target, "none", log_target))
    return _kl(input, target, mode, log_target)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    pos_weight: Tensor | None = None,
    reduction: int = 1,
) -> Tensor:
    """``torch.binary_cross_entropy_with_logits``: ``pos_weight`` before ``reduction``,
    which is an int.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.binary_cross_entropy_with_logits(mta.tensor([0.0]), mta.tensor([1.0]), reduction=0)
    tensor([0.6931])
    """
    from .pointwise_loss import binary_cross_entropy_with_logits as _bce

    mode = _reduction(reduction, "binary_cross_entropy_with_logits")
    return _bce(input, target, weight, mode, pos_weight)


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: builtins.bool,
    full: builtins.bool,
    eps: float,
    reduction: int,
) -> Tensor:
    """``torch.poisson_nll_loss``: every argument required, ``reduction`` an int.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.poisson_nll_loss(mta.tensor([0.0]), mta.tensor([1.0]), True, False, 1e-8, 1)
    tensor(1.)
    """
    from .pointwise_loss import poisson_nll_loss as _loss

    return _loss(input, target, log_input, full, eps, _reduction(reduction, "poisson_nll_loss"))


def cosine_embedding_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: int = 1
) -> Tensor:
    """``torch.cosine_embedding_loss`` (``reduction`` an int).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([[1.0, 0.0]])
    >>> mta.cosine_embedding_loss(x, x, mta.tensor([1.0]))
    tensor(0.)
    """
    from .pointwise_loss import cosine_embedding_loss as _loss

    return _loss(input1, input2, target, margin, _reduction(reduction, "cosine_embedding_loss"))


def hinge_embedding_loss(
    input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 1
) -> Tensor:
    """``torch.hinge_embedding_loss`` (``reduction`` an int).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.hinge_embedding_loss(mta.tensor([0.3]), mta.tensor([-1.0]))
    tensor(0.7)
    """
    from .pointwise_loss import hinge_embedding_loss as _loss

    return _loss(input, target, margin, _reduction(reduction, "hinge_embedding_loss"))


def margin_ranking_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: int = 1
) -> Tensor:
    """``torch.margin_ranking_loss`` (``reduction`` an int).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.margin_ranking_loss(mta.tensor([1.0]), mta.tensor([2.0]), mta.tensor([1.0]))
    tensor(1.)
    """
    from .pointwise_loss import margin_ranking_loss as _loss

    return _loss(input1, input2, target, margin, _reduction(reduction, "margin_ranking_loss"))


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2.0,
    eps: float = 1e-6,
    swap: builtins.bool = False,
    reduction: int = 1,
) -> Tensor:
    """``torch.triplet_margin_loss`` (``reduction`` an int).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> a = mta.zeros(1, 2)
    >>> mta.triplet_margin_loss(a, a, a + 5.0).item()
    0.0
    """
    from .margin_loss import triplet_margin_loss as _loss

    mode = _reduction(reduction, "triplet_margin_loss")
    return _loss(anchor, positive, negative, margin, p, eps, swap, mode)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The ``p``-norm distances between the rows of the 2-d ``input``, each pair
    ``i < j`` once, in row-major order (the upper triangle of ``cdist(input, input)``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.pdist(mta.tensor([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]]))
    tensor([ 5., 10.,  5.])
    """
    if input.ndim != 2:
        raise ValueError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise ValueError("pdist only supports non-negative p values")
    rows, cols = _SM.triu_indices(input.shape[0], input.shape[0], 1, device=input.device)
    from .distance import pairwise_distance

    return pairwise_distance(input[rows], input[cols], p, 0.0)


# ------------------------------------------------------------------ memory layout


def _interface(array: Any) -> dict[str, Any]:
    """The array's memory description: NumPy's ``__array_interface__`` or, for a GPU
    array, the CUDA array interface (both standard protocols).
    """
    found = getattr(array, "__array_interface__", None)
    if found is None:
        found = array.__cuda_array_interface__
    return found  # type: ignore[no-any-return]


def data_address(array: Any) -> int:
    """The address of the first element of ``array`` (``Tensor.data_ptr``).

    Examples
    --------
    >>> import numpy as np
    >>> a = np.arange(4, dtype=np.int64)
    >>> data_address(a[1:]) - data_address(a)
    8
    """
    return int(_interface(array)["data"][0])


def strides_in_elements(array: Any) -> tuple[int, ...]:
    """``array``'s strides counted in elements, not bytes (``Tensor.stride()``).

    Examples
    --------
    >>> import numpy as np
    >>> strides_in_elements(np.zeros((2, 3)).T)
    (1, 3)
    """
    size = builtins.max(int(array.itemsize), 1)
    return tuple(int(s) // size for s in array.strides)


def storage_offset_of(array: Any) -> int:
    """How many elements ``array`` starts after the start of the memory it views
    (``Tensor.storage_offset()``): 0 for an array that owns its memory.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.arange(6.0).reshape(2, 3)
    >>> storage_offset_of(a[1, 1:])
    4
    """
    root = array
    while getattr(root, "base", None) is not None and type(root.base) is type(array):
        root = root.base
    if root is array:
        return 0
    return (data_address(array) - data_address(root)) // builtins.max(int(array.itemsize), 1)


def sum_to_size(input: Tensor, *size: Any) -> Tensor:
    """``input`` summed over its broadcast dims down to ``size`` (``Tensor.sum_to_size``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> sum_to_size(mta.ones(2, 3), 3)
    tensor([2., 2., 2.])
    """
    shape = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
    target = tuple(int(s) for s in shape)
    lead = input.ndim - len(target)
    mismatch = lead < 0 or builtins.any(
        t != s and t != 1 for t, s in zip(target, input.shape[lead:], strict=True)
    )
    if mismatch:
        raise RuntimeError(
            f"size {list(target)} is not expandable to size {list(input.shape)}; "
            "sum_to_size sums broadcast dims only"
        )
    out = _R.sum(input, tuple(builtins.range(lead))) if lead else input
    dims = tuple(i for i, t in enumerate(target) if t == 1 and out.shape[i] != 1)
    return _R.sum(out, dims, keepdim=True) if dims else out


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Every window of ``size`` along ``dimension``, ``step`` apart (``Tensor.unfold``;
    a copy here, through ``index_select``, so the gradient adds overlapping windows).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> unfold(mta.arange(4), 0, 2, 1).tolist()
    [[0, 1], [1, 2], [2, 3]]
    """
    d = normalize_dim(dimension, builtins.max(input.ndim, 1), "unfold")
    x = input.view(1) if input.ndim == 0 else input
    n = x.shape[d]
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    count = (n - size) // step + 1
    xp = x.xp
    with x.device.guard():
        index = (xp.arange(count)[:, None] * step + xp.arange(size)[None, :]).reshape(-1)
    picked = _index.index_select(x, d, Tensor._make(index, x.device, False, None))
    windows = picked.view(*x.shape[:d], count, size, *x.shape[d + 1 :])
    out = _SM.movedim(windows, d + 1, -1)
    return out.view(size) if input.ndim == 0 else out


def legacy_new(input: Tensor, args: tuple[Any, ...], device: DeviceLike | None) -> Tensor:
    """``input.new(*args)``: PyTorch's legacy constructor with ``input``'s dtype and
    device (see :meth:`~minitorch_accel.Tensor.new`).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> legacy_new(mta.zeros(1, dtype=mta.int32), (2,), None).dtype
    dtype('int32')
    """
    if len(args) == 1 and isinstance(args[0], Tensor):
        if args[0].dtype != input.dtype:
            raise TypeError(
                f"new(): expected a {input.dtype} tensor, got {args[0].dtype}; use .to()"
            )
        return args[0]
    made = legacy_arguments(args, {}, input.device if device is None else device, input.dtype)
    assert not isinstance(made, Tensor)  # a Tensor argument was handled above
    dev, array = made
    return Tensor._make(array, dev, False, None)


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (``Tensor.mH``, ``adjoint()``): the
    transpose, since tensors here are never complex (a view, as PyTorch's).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> adjoint(mta.zeros(4, 2, 3)).shape
    (4, 3, 2)
    """
    if input.ndim < 2:
        raise RuntimeError(
            f"tensor.mH is only supported on matrices or batches of matrices. Got {input.ndim}-D "
            "tensor."
        )
    return input.transpose(-2, -1)


def conj_transpose(input: Tensor) -> Tensor:
    """``Tensor.H``: a matrix's conjugate transpose; a 0-d tensor unchanged (with
    PyTorch's deprecation warning); other ranks raise.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> conj_transpose(mta.zeros(2, 3)).shape
    (3, 2)
    """
    if input.ndim == 0:
        warnings.warn(
            "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
            UserWarning,
            stacklevel=3,
        )
        return input
    if input.ndim != 2:
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {input.ndim}-D tensor."
        )
    return adjoint(input)


_pinned: dict[int, Any] = {}
"""id -> weak reference of each host array :func:`pin_memory` made."""


def is_pinned_array(array: Any) -> builtins.bool:
    """Whether ``array`` is one :func:`pin_memory` made in page-locked memory.

    Examples
    --------
    >>> import numpy as np
    >>> is_pinned_array(np.zeros(2))
    False
    """
    ref = _pinned.get(id(array))
    return ref is not None and ref() is array


def _remember_pinned(array: Any) -> None:
    """Note ``array`` as pinned until it is freed."""
    import weakref

    key = id(array)
    _pinned[key] = weakref.ref(array, lambda _: _pinned.pop(key, None))


def pin_memory(input: Tensor) -> Tensor:
    """A copy of the CPU tensor ``input`` in page-locked host memory, from the first
    backend that pins memory and has a device (a GPU backend); RuntimeError without one
    (PyTorch's behaviour without an accelerator).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> try:
    ...     mta.zeros(2).pin_memory().is_pinned()
    ... except RuntimeError:
    ...     True
    True
    """
    from ..backends import registry

    if not input.is_cpu:
        raise RuntimeError(f"cannot pin '{input.device}' memory: only CPU tensors can be pinned")
    if is_pinned_array(input.array):
        return input
    for name in registry.registered():
        try:
            backend = registry.get(name)
        except (RuntimeError, ImportError):
            continue
        if backend.has_pinned_memory and backend.device_count() > 0:
            array = backend.pinned_empty(tuple(input.shape), input.dtype)
            array[...] = input.array
            _remember_pinned(array)
            return Tensor._make(array, input.device, False, None)
    raise RuntimeError("Cannot access accelerator device when none is available.")


class _PostAccumulateHook:
    """A leaf hook that leaves the gradient alone and runs ``hook(leaf)`` after the
    gradient is accumulated (the backward walk calls :meth:`after`).
    """

    def __init__(self, hook: Any) -> None:
        self.hook = hook

    def __call__(self, grad: Tensor) -> None:
        return None

    def after(self, leaf: Tensor) -> None:
        self.hook(leaf)


def register_post_accumulate_grad_hook(input: Tensor, hook: Any) -> Any:
    """Register ``hook(leaf)`` to run after backward accumulates ``input``'s gradient
    (see :meth:`~minitorch_accel.Tensor.register_post_accumulate_grad_hook`).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.ones(1, requires_grad=True)
    >>> h = register_post_accumulate_grad_hook(w, print)
    >>> h.remove()
    """
    if not input.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if input.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    return input.register_hook(_PostAccumulateHook(hook))


# ------------------------------------------------------------------ random activations


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: builtins.bool = False,
) -> Tensor:
    """Randomized leaky ReLU: ``x`` where ``x > 0``, else ``a * x`` with ``a`` drawn
    uniformly from ``[lower, upper)`` per element while ``training`` (from the
    framework's generator), else ``a = (lower + upper) / 2``. The gradient is ``a``
    where ``x <= 0``, else 1 (PyTorch's).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> rrelu(mta.tensor([-2.0, 3.0]), 0.25, 0.75)
    tensor([-1.,  3.])
    """
    if input.dtype.kind != "f":
        raise TypeError(f"rrelu: expected a floating-point tensor, got {input.dtype}")
    if lower > upper:
        raise ValueError(f"rrelu: lower bound {lower} is above the upper bound {upper}")
    if not training:
        from .activation import leaky_relu

        return leaky_relu(input, (lower + upper) / 2)
    gen = device_generator(input.device, None)
    with input.device.guard():
        slopes = gen.uniform(lower, upper, tuple(input.shape)).astype(input.dtype)
        noise = input.xp.where(input.array <= 0, slopes, input.xp.ones((), dtype=input.dtype))
    return input * Tensor._make(noise, input.device, False, None)


def gumbel_softmax(
    logits: Tensor,
    tau: float = 1.0,
    hard: builtins.bool = False,
    eps: float = 1e-10,
    dim: int = -1,
) -> Tensor:
    """Samples of the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with
    ``g = -log(E)``, ``E`` standard exponential draws from the framework's generator.
    ``hard=True`` returns one-hot vectors (the argmax) whose gradient is the soft
    sample's (the straight-through estimator). ``eps`` is unused, as in PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> y = gumbel_softmax(mta.zeros(2, 5), hard=True)
    >>> y.sum(1).tolist(), sorted(set(y.flatten().tolist()))
    ([1.0, 1.0], [0.0, 1.0])
    """
    if logits.dtype.kind != "f":
        raise TypeError(f"gumbel_softmax: expected floating-point logits, got {logits.dtype}")
    gen = device_generator(logits.device, None)
    with logits.device.guard():
        draws = gen.standard_exponential(tuple(logits.shape), dtype=np.float64)
        gumbels = (-logits.xp.log(draws)).astype(logits.dtype)
    noise = Tensor._make(gumbels, logits.device, False, None)
    y_soft = _R.softmax((logits + noise) / tau, dim)
    if not hard:
        return y_soft
    d = normalize_dim(dim, builtins.max(logits.ndim, 1), "gumbel_softmax")
    index = _R.argmax(y_soft, d, keepdim=True)
    with logits.device.guard():
        positions = logits.xp.arange(logits.shape[d]).reshape((-1,) + (1,) * (logits.ndim - 1 - d))
        one_hot = (positions == index.array).astype(logits.dtype)
    y_hard = Tensor._make(one_hot, logits.device, False, None)
    return y_hard - y_soft.detach() + y_soft
