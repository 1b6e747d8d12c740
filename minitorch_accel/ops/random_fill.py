"""The random in-place fills of a Tensor, as PyTorch's: ``uniform_``, ``normal_``,
``bernoulli_``, ``random_``, ``exponential_``, ``cauchy_``, ``log_normal_`` and
``geometric_``.

Each draws uniform or standard normal samples in float64 with :func:`~minitorch_accel.rand`
or :func:`~minitorch_accel.randn` (integers with the same generator's ``integers``): from
the tensor's device generator, seeded by :func:`~minitorch_accel.manual_seed`, or from the
``generator=`` given. It transforms them into the distribution (inverse CDFs), rounds
them to the tensor's dtype and writes them with ``copy_``, so the version counter and the
autograd checks apply: as in PyTorch, a leaf that requires grad is refused outside
``no_grad``, and on a tensor in a graph the fill is recorded with gradient 0.

The values differ from PyTorch's for the same seed (another generator); their
distribution is the same.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.factories import device_generator, rand, randn
from ..core.tensor import Tensor
from .math_more import replaced


def _fill(tensor: Tensor, values: Any) -> Tensor:
    """Write the raw array ``values`` into ``tensor`` (recorded with gradient 0)."""
    sample = Tensor._make(values, tensor.device, False, None)
    return tensor.copy_(replaced(tensor, sample))


def _uniform(tensor: Tensor, generator: Any) -> Any:
    """Float64 samples of U[0, 1) of ``tensor``'s shape, on its device."""
    return rand(tensor.shape, dtype=np.float64, device=tensor.device, generator=generator).array


def _normal(tensor: Tensor, generator: Any) -> Any:
    """Float64 standard normal samples of ``tensor``'s shape, on its device."""
    return randn(tensor.shape, dtype=np.float64, device=tensor.device, generator=generator).array


def _floats_only(tensor: Tensor, name: str) -> None:
    if tensor.dtype.kind != "f":
        raise TypeError(
            f"{name}: not implemented for {tensor.dtype} tensors (as in PyTorch); it fills "
            "floating-point tensors"
        )


def _rounded(tensor: Tensor, values: Any) -> Any:
    with np.errstate(over="ignore", invalid="ignore"):
        return values.astype(tensor.dtype)


def uniform_(
    tensor: Tensor, from_: float = 0.0, to: float = 1.0, *, generator: Any = None
) -> Tensor:
    """Fill ``tensor`` with samples of ``U[from_, to)``: ``from_ + (to - from_) u``.

    A value that rounds to ``to`` in the tensor's dtype becomes ``from_``, as in
    PyTorch's GPU kernel, so every value lies in ``[from_, to)`` (``from_ == to`` fills
    with ``from_``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.empty(1000).uniform_(-2, 3)
    >>> bool(x.min() >= -2 and x.max() < 3)
    True
    """
    _floats_only(tensor, "uniform_")
    if not from_ <= to:
        raise ValueError(
            f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}"
        )
    values = _rounded(tensor, from_ + (to - from_) * _uniform(tensor, generator))
    xp = tensor.xp
    if from_ < to:
        with tensor.device.guard():
            values = xp.where(values >= values.dtype.type(to), values.dtype.type(from_), values)
    return _fill(tensor, values)


def normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None
) -> Tensor:
    """Fill ``tensor`` with samples of N(mean, std**2): ``mean + std z``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.empty(3).normal_(5.0, 0.0)
    tensor([5., 5., 5.])
    """
    _floats_only(tensor, "normal_")
    if not std >= 0:
        raise ValueError(f"normal expects std >= 0.0, but found std {std}")
    return _fill(tensor, _rounded(tensor, mean + std * _normal(tensor, generator)))


def bernoulli_(tensor: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """Fill ``tensor`` with 1 (probability ``p``) or 0: ``u < p``. ``p`` is a number or
    a tensor broadcastable to ``tensor`` (one probability per element); any dtype.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.zeros(4, dtype=mta.int64).bernoulli_(mta.tensor([0.0, 1.0, 0.0, 1.0]))
    tensor([0, 1, 0, 1])
    """
    u = _uniform(tensor, generator)
    if isinstance(p, Tensor):
        with p.device.guard():
            probabilities = p.to(tensor.device).array.astype(np.float64)
        if not bool(tensor.xp.all((probabilities >= 0) & (probabilities <= 1))):
            raise ValueError("bernoulli_ expects all the probabilities p to be in [0, 1]")
        try:
            probabilities = tensor.xp.broadcast_to(probabilities, tensor.shape)
        except ValueError:
            raise ValueError(
                f"bernoulli_: p of shape {p.shape} does not broadcast to {tensor.shape}"
            ) from None
    else:
        if not 0 <= p <= 1:
            raise ValueError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        probabilities = p
    return _fill(tensor, (u < probabilities).astype(tensor.dtype))


UNSET: Any = object()  # random_ tells random_(to) from random_(from_, to) by it


def _dtype_range(dtype: np.dtype[Any]) -> tuple[int, int]:
    """The whole numbers ``random_`` may draw for ``dtype``: every integer of an
    integer dtype, ``[-2**digits, 2**digits]`` for a float (each exactly representable).
    """
    if dtype.kind == "b":
        return 0, 1
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min), int(info.max)
    digits = int(np.finfo(dtype).nmant) + 1
    return -(2**digits), 2**digits


def random_(
    tensor: Tensor, from_: Any = UNSET, to: Any = UNSET, *, generator: Any = None
) -> Tensor:
    """Fill ``tensor`` with whole numbers drawn uniformly, as PyTorch's three forms:
    ``random_()`` from ``[0, high]`` (``high`` the dtype's largest integer, or
    ``2**mantissa_digits`` for floats, so that every value is exact), ``random_(to)``
    from ``[0, to)``, ``random_(from_, to)`` from ``[from_, to)`` (``to=None``: up to
    ``high``). Any dtype, bool included. PyTorch spells the keyword ``from``, a Python
    keyword: pass it by position, or as ``from_``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> sorted(set(mta.zeros(200, dtype=mta.int64).random_(3, 6).tolist()))
    [3, 4, 5]
    """
    low_limit, high_limit = _dtype_range(tensor.dtype)
    if from_ is UNSET and to is UNSET:
        low, high = 0, high_limit
    elif to is UNSET:  # random_(to)
        low, high = 0, int(from_) - 1
        if high < 0:
            raise ValueError(
                f"random_ expects 'from' to be less than 'to', but got from=0 >= to={from_}"
            )
    else:
        low = 0 if from_ is UNSET else int(from_)
        if to is not None and not low < to:
            raise ValueError(
                f"random_ expects 'from' to be less than 'to', but got from={low} >= to={to}"
            )
        high = high_limit if to is None else int(to) - 1
    for name, value in (("from", low), ("to - 1", high)):
        if not low_limit <= value <= high_limit:
            raise ValueError(
                f"random_: {name}={value} is out of bounds for {tensor.dtype} "
                f"([{low_limit}, {high_limit}])"
            )
    gen = device_generator(tensor.device, generator)
    with tensor.device.guard():
        values = gen.integers(low, high, size=tensor.shape, dtype=np.int64, endpoint=True)
    return _fill(tensor, values.astype(tensor.dtype))


def exponential_(tensor: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill ``tensor`` with samples of the exponential distribution of rate ``lambd``
    (mean ``1 / lambd``): ``-log(1 - u) / lambd``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> bool((mta.empty(100).exponential_(2.0) >= 0).all())
    True
    """
    _floats_only(tensor, "exponential_")
    if not lambd > 0:
        raise ValueError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    u = _uniform(tensor, generator)
    return _fill(tensor, _rounded(tensor, -tensor.xp.log1p(-u) / lambd))


def cauchy_(
    tensor: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None
) -> Tensor:
    """Fill ``tensor`` with samples of the Cauchy distribution:
    ``median + sigma tan(pi (u - 1/2))``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.empty(2).cauchy_(3.0, 1e-30)
    tensor([3., 3.])
    """
    _floats_only(tensor, "cauchy_")
    if not sigma > 0:
        raise ValueError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    u = _uniform(tensor, generator)
    return _fill(tensor, _rounded(tensor, median + sigma * tensor.xp.tan(math.pi * (u - 0.5))))


def log_normal_(
    tensor: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Any = None
) -> Tensor:
    """Fill ``tensor`` with ``exp(N(mean, std**2))`` samples (``mean`` and ``std`` are
    those of the underlying normal, as in PyTorch).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> bool((mta.empty(100).log_normal_() > 0).all())
    True
    """
    _floats_only(tensor, "log_normal_")
    if not std > 0:
        raise ValueError(f"log_normal_ expects std > 0.0, but found std={std}")
    z = _normal(tensor, generator)
    with np.errstate(over="ignore"):
        return _fill(tensor, _rounded(tensor, tensor.xp.exp(mean + std * z)))


def geometric_(tensor: Tensor, p: float, *, generator: Any = None) -> Tensor:
    """Fill ``tensor`` with the number of Bernoulli(``p``) trials up to the first
    success (1, 2, ...): ``floor(log(1 - u) / log(1 - p)) + 1``. Any dtype but bool.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> bool((mta.zeros(100, dtype=mta.int64).geometric_(0.3) >= 1).all())
    True
    """
    if tensor.dtype.kind == "b":
        raise TypeError("geometric_: not implemented for bool tensors (as in PyTorch)")
    if not 0 < p < 1:
        raise ValueError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    u = _uniform(tensor, generator)
    trials = tensor.xp.floor(tensor.xp.log1p(-u) / math.log1p(-p)) + 1
    return _fill(tensor, _rounded(tensor, trials))
