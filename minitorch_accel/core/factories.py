"""Making tensors: from data, filled with a value, ranges, random numbers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..backends import Device, DeviceLike, registry
from .convert import HOST, DTypeLike, as_dtype
from .defaults import device_or_default, get_default_dtype
from .tensor import Tensor

ShapeLike = Any


def _shape(size: tuple[Any, ...]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)) or s < 0:
            raise ValueError(f"a shape is made of non-negative ints, got {size}")
    return tuple(int(s) for s in size)


def _place(array: Any, device: Device, requires_grad: bool) -> Tensor:
    t = Tensor._make(array, device, False, None)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _fill(
    size: tuple[Any, ...],
    value: Any,
    dtype: DTypeLike,
    device: DeviceLike | None,
    requires_grad: bool,
) -> Tensor:
    dev = device_or_default(device)
    dt = as_dtype(dtype if dtype is not None else get_default_dtype())
    xp = dev.backend.xp
    with dev.backend.device_context(dev):
        array = xp.full(_shape(size), value, dtype=dt)
    return _place(array, dev, requires_grad)


def tensor(
    data: Any,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Make a tensor from data (see :class:`Tensor`); always copies.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([[1, 2], [3, 4]]).dtype
    dtype('int64')
    """
    if isinstance(data, np.ndarray):
        data = data.copy()
    elif isinstance(data, Tensor):
        data = data.detach().clone()
    return Tensor._from_data(data, dtype=dtype, device=device, requires_grad=requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """A host tensor sharing memory with a NumPy array (its dtype kept)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(array).__name__}")
    as_dtype(array.dtype)
    return Tensor._make(array, HOST, False, None)


def zeros(
    *size: Any,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor of zeros; ``zeros(2, 3)`` or ``zeros((2, 3))``. Default dtype float32."""
    return _fill(size, 0, dtype, device, requires_grad)


def ones(
    *size: Any,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor of ones. Default dtype float32."""
    return _fill(size, 1, dtype, device, requires_grad)


def full(
    size: Sequence[int],
    fill_value: float,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``; without ``dtype``, as
    PyTorch: bool for a bool, int64 for an integer, else the default float dtype.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.full((2,), 7).dtype, mta.full((2,), 7.0).dtype, mta.full((1,), True).dtype
    (dtype('int64'), dtype('float32'), dtype('bool'))
    """
    if dtype is None and isinstance(fill_value, (bool, np.bool_)):
        dtype = np.bool_
    elif dtype is None and isinstance(fill_value, (int, np.integer)):
        dtype = np.int64
    return _fill(tuple(size), fill_value, dtype, device, requires_grad)


def empty(
    *size: Any,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """An uninitialized tensor (its values are whatever the memory held)."""
    dev = device_or_default(device)
    dt = as_dtype(dtype if dtype is not None else get_default_dtype())
    with dev.backend.device_context(dev):
        array = dev.backend.xp.empty(_shape(size), dtype=dt)
    return _place(array, dev, requires_grad)


def _like_options(
    t: Tensor, dtype: DTypeLike, device: DeviceLike | None
) -> tuple[DTypeLike, DeviceLike]:
    """The dtype and device of a ``*_like`` factory: ``t``'s unless given."""
    return (t.dtype if dtype is None else dtype), (t.device if device is None else device)


def zeros_like(
    t: Tensor,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Zeros with the shape (and by default the dtype and device) of ``t``."""
    return _fill(t.shape, 0, *_like_options(t, dtype, device), requires_grad)


def ones_like(
    t: Tensor,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Ones with the shape (and by default the dtype and device) of ``t``."""
    return _fill(t.shape, 1, *_like_options(t, dtype, device), requires_grad)


def full_like(
    t: Tensor,
    fill_value: Any,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """``fill_value`` everywhere, with the shape (and by default the dtype and device)
    of ``t``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.full_like(mta.ones(2), 3.0, requires_grad=True)
    tensor([3., 3.], requires_grad=True)
    """
    return _fill(t.shape, fill_value, *_like_options(t, dtype, device), requires_grad)


def empty_like(
    t: Tensor,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """An uninitialized tensor with the shape (and by default the dtype and device) of
    ``t``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.empty_like(mta.ones(2, 3), dtype=mta.int64).shape
    (2, 3)
    """
    dt, dev = _like_options(t, dtype, device)
    return empty(t.shape, dtype=dt, device=dev, requires_grad=requires_grad)


def rand_like(
    t: Tensor,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
    generator: Any = None,
) -> Tensor:
    """Uniform samples in [0, 1) with the shape (and by default the dtype and device)
    of ``t``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.rand_like(mta.ones(2, dtype=mta.float64)).dtype
    dtype('float64')
    """
    dt, dev = _like_options(t, dtype, device)
    return _random("rand", t.shape, dt, dev, requires_grad, generator)


def randn_like(
    t: Tensor,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
    generator: Any = None,
) -> Tensor:
    """Standard normal samples with the shape (and by default the dtype and device) of
    ``t``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.randn_like(mta.ones(2, 3), requires_grad=True).requires_grad
    True
    """
    dt, dev = _like_options(t, dtype, device)
    return _random("randn", t.shape, dt, dev, requires_grad, generator)


def _number(value: Any) -> Any:
    """A one-element tensor as its Python number (factories take them, as PyTorch)."""
    return value.item() if isinstance(value, Tensor) else value


def arange(
    start: float,
    end: float | None = None,
    step: float = 1,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Values from ``start`` (inclusive) to ``end`` (exclusive) by ``step``.

    Integer arguments give int64, any float the default float dtype, unless ``dtype``
    is set. As in PyTorch, the arguments may be one-element tensors.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.arange(mta.tensor(3))
    tensor([0, 1, 2])
    """
    start, step = _number(start), _number(step)
    end = None if end is None else _number(end)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange: step must not be zero")
    if dtype is None:
        ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = np.int64 if ints else get_default_dtype()
    dev = device_or_default(device)
    with dev.backend.device_context(dev):
        array = dev.backend.xp.arange(start, end, step, dtype=as_dtype(dtype))
    return _place(array, dev, requires_grad)


def eye(
    n: int, m: int | None = None, dtype: DTypeLike = None, device: DeviceLike | None = None
) -> Tensor:
    """The identity matrix (``n`` x ``m``)."""
    dev = device_or_default(device)
    with dev.backend.device_context(dev):
        array = dev.backend.xp.eye(n, m, dtype=as_dtype(dtype or get_default_dtype()))
    return _place(array, dev, False)


def device_generator(device: Device, generator: Any = None) -> Any:
    """The generator a random op on ``device`` draws from: ``generator`` when given (a
    NumPy or CuPy Generator), else the device's own, seeded by
    :func:`~minitorch_accel.manual_seed`.

    Examples
    --------
    >>> import numpy as np
    >>> from minitorch_accel import device
    >>> mine = np.random.default_rng(0)
    >>> device_generator(device("cpu"), mine) is mine
    True
    """
    return generator if generator is not None else device.backend.generator(device)


def _random(
    kind: str,
    size: tuple[Any, ...],
    dtype: DTypeLike,
    device: DeviceLike | None,
    requires_grad: bool,
    generator: Any = None,
) -> Tensor:
    dev = device_or_default(device)
    dt = as_dtype(dtype if dtype is not None else get_default_dtype())
    if dt.kind != "f":
        raise TypeError(f"{kind} makes floating-point tensors, not {dt}")
    gen = device_generator(dev, generator)
    shape = _shape(size)
    with dev.backend.device_context(dev):
        sample_dtype = dt if dt in (np.float32, np.float64) else np.float32
        if kind == "randn":
            array = gen.standard_normal(shape, dtype=sample_dtype)
        else:
            array = gen.random(shape, dtype=sample_dtype)
        array = array.astype(dt, copy=False)
    return _place(array, dev, requires_grad)


def randn(
    *size: Any,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
    generator: Any = None,
) -> Tensor:
    """Samples of the standard normal distribution, from the device's generator
    (seeded by :func:`manual_seed`).
    """
    return _random("randn", size, dtype, device, requires_grad, generator)


def rand(
    *size: Any,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
    generator: Any = None,
) -> Tensor:
    """Uniform samples in [0, 1), from the device's generator."""
    return _random("rand", size, dtype, device, requires_grad, generator)


def randint(
    *args: Any,
    size: Sequence[int] | None = None,
    generator: Any = None,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Random integers in [low, high), uniformly, from the device's generator. Default
    dtype int64.

    Called as PyTorch's: ``randint(high, size)`` (``low`` is 0) or
    ``randint(low, high, size)``, ``size`` positional or by keyword.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.randint(3, 5, (2, 2)).shape, mta.randint(10, size=(4,)).dtype
    ((2, 2), dtype('int64'))
    >>> sorted(set(mta.randint(2, (100,)).tolist()))
    [0, 1]
    """
    if size is None and args and isinstance(args[-1], (tuple, list)):
        *args, size = args  # type: ignore[assignment]
    if size is None or len(args) not in (1, 2):
        raise TypeError(
            "randint takes (high, size) or (low, high, size), as torch.randint; got "
            f"{len(args)} bounds and size={size!r}"
        )
    low, high = (0, args[0]) if len(args) == 1 else args
    if high <= low:
        raise ValueError(f"randint: expects low < high, got low={low} and high={high}")
    dev = device_or_default(device)
    gen = device_generator(dev, generator)
    with dev.backend.device_context(dev):
        array = gen.integers(low, high, size=_shape(tuple(size)))
        array = array.astype(as_dtype(dtype or np.int64))
    return _place(array, dev, requires_grad)


def manual_seed(seed: int) -> None:
    """Seed the random generators of every device of every usable backend."""
    for name in registry.registered():
        try:
            backend = registry.get(name)
        except (RuntimeError, ImportError):
            continue
        backend.manual_seed(seed)


def host_generator() -> np.random.Generator:
    """The host's random generator: the one :func:`manual_seed` seeds, from which initial
    weights, shuffles, splits and random transforms draw.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.manual_seed(0); a = host_generator().random()
    >>> mta.manual_seed(0); b = host_generator().random()
    >>> a == b
    True
    """
    rng: np.random.Generator = HOST.backend.generator(HOST)
    return rng


def linspace(
    start: float,
    end: float,
    steps: int,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """``steps`` values evenly spaced from ``start`` to ``end``, both included.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.linspace(0, 1, 5)
    tensor([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    if steps < 0:
        raise ValueError(f"linspace: steps must be non-negative, got {steps}")
    dev = device_or_default(device)
    dt = as_dtype(dtype if dtype is not None else get_default_dtype())
    with dev.backend.device_context(dev):
        array = dev.backend.xp.linspace(start, end, steps, dtype=np.float64).astype(dt)
    return _place(array, dev, requires_grad)


def logspace(
    start: float,
    end: float,
    steps: int,
    base: float = 10.0,
    dtype: DTypeLike = None,
    device: DeviceLike | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """``steps`` values from ``base ** start`` to ``base ** end``, evenly spaced in log.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    """
    if steps < 0:
        raise ValueError(f"logspace: steps must be non-negative, got {steps}")
    dev = device_or_default(device)
    dt = as_dtype(dtype if dtype is not None else get_default_dtype())
    with dev.backend.device_context(dev):
        exponents = dev.backend.xp.linspace(start, end, steps, dtype=np.float64)
        array = (float(base) ** exponents).astype(dt)
    return _place(array, dev, requires_grad)


def randperm(
    n: int, dtype: DTypeLike = None, device: DeviceLike | None = None, generator: Any = None
) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64), from the device's generator.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> sorted(mta.randperm(4).tolist())
    [0, 1, 2, 3]
    """
    if n < 0:
        raise ValueError(f"randperm: n must be non-negative, got {n}")
    dev = device_or_default(device)
    gen = device_generator(dev, generator)
    with dev.backend.device_context(dev):
        if hasattr(gen, "permutation"):
            order = gen.permutation(n)
        else:  # CuPy's Generator has none: the order that sorts n uniform draws
            order = dev.backend.xp.argsort(gen.random(n))
        array = order.astype(as_dtype(dtype or np.int64))
    return _place(array, dev, False)
