"""Sorting and selection along a dim: ``max``/``min`` with a dim, ``sort``, ``topk``,
``kthvalue``, ``median``, ``mode``.

Each finds its indices on the raw array (no gradient), then reads the values through
:class:`~minitorch_accel.ops.index.Gather`, so the gradient goes exactly to the
elements the indices name. Each returns a named ``(values, indices)`` pair from
:mod:`minitorch_accel.core.return_types`. Sorts are stable: among equal values the first
index comes first (max, min, sort and topk return the first index among ties).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import return_types
from ..core.function import Function, on_input_device
from ..core.tensor import Tensor
from . import elementwise
from .index import Gather
from .shape import normalize_dim


def _stable_argsort(xp: Any, a: Any, axis: int, descending: bool) -> Any:
    """Indices that sort ``a`` along ``axis``, equal values keeping their order."""
    if a.dtype == np.bool_:
        a = a.astype(np.int8)
    if not descending:
        return xp.argsort(a, axis=axis, kind="stable")
    # descending and still stable: sort the reversed array, reverse, and map back
    last = a.shape[axis] - 1
    return last - xp.flip(xp.argsort(xp.flip(a, axis), axis=axis, kind="stable"), axis)


def _pick(a: Tensor, index_array: Any, dim: int, keepdim: bool) -> tuple[Tensor, Tensor]:
    """Values of ``a`` at ``index_array`` (kept dim of size k) along ``dim``."""
    indices = Tensor._make(index_array.astype(np.int64, copy=False), a.device, False, None)
    values = Gather.apply(a, indices, dim=dim)
    if not keepdim and indices.shape[dim] == 1:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return values, indices


def _dim_of(op: str, a: Tensor, dim: int) -> int:
    if a.numel() == 0:
        raise ValueError(f"{op}: the tensor of shape {a.shape} is empty")
    return normalize_dim(dim, a.ndim, op)


@on_input_device
def _extreme(a: Tensor, dim: int, keepdim: bool, largest: bool) -> tuple[Tensor, Tensor]:
    d = _dim_of("max" if largest else "min", a, dim)
    a1 = a.reshape(1) if a.ndim == 0 else a
    find = a.xp.argmax if largest else a.xp.argmin  # the first extreme one
    index = a.xp.expand_dims(find(a1.array, axis=d), d)
    values, indices = _pick(a1, index, d, keepdim)
    if a.ndim == 0:
        values, indices = values.reshape(()), indices.reshape(())
    return values, indices


def max_dim(a: Tensor, dim: int, keepdim: bool = False) -> return_types.max:
    """The largest values along ``dim`` and their indices (the first among ties)."""
    return return_types.max(*_extreme(a, dim, keepdim, True))


def min_dim(a: Tensor, dim: int, keepdim: bool = False) -> return_types.min:
    """The smallest values along ``dim`` and their indices (the first among ties)."""
    return return_types.min(*_extreme(a, dim, keepdim, False))


@on_input_device
def sort(
    a: Tensor, dim: int = -1, descending: bool = False, stable: bool = True
) -> return_types.sort:
    """Values sorted along ``dim`` and the indices they came from.

    The sort is always stable: equal values keep their order (``stable`` is accepted
    for PyTorch's signature).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> values, indices = mta.tensor([3.0, 1.0, 3.0, 2.0]).sort(descending=True)
    >>> values.tolist(), indices.tolist()
    ([3.0, 3.0, 2.0, 1.0], [0, 2, 3, 1])
    """
    d = normalize_dim(dim, a.ndim, "sort")
    if a.ndim == 0:
        zero = Tensor._make(a.xp.zeros((), dtype=np.int64), a.device, False, None)
        return return_types.sort(a, zero)
    order = _stable_argsort(a.xp, a.array, d, descending)
    return return_types.sort(*_pick(a, order, d, keepdim=True))


def argsort(a: Tensor, dim: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """The indices that sort ``a`` along ``dim`` (stable)."""
    return sort(a, dim, descending).indices


@on_input_device
def topk(
    a: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
) -> return_types.topk:
    """The ``k`` largest (or smallest) values along ``dim`` and their indices.

    Always sorted, largest first (smallest first when ``largest=False``); among ties the
    first index comes first.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([1.0, 5.0, 3.0, 5.0]).topk(2).indices.tolist()
    [1, 3]
    """
    d = normalize_dim(dim, a.ndim, "topk")
    n = a.shape[d] if a.ndim else 1
    if not 0 <= k <= n:
        raise ValueError(f"topk: k={k} is out of range for dim {dim} of size {n}")
    if a.ndim == 0:
        return return_types.topk(*sort(a))
    order = _stable_argsort(a.xp, a.array, d, descending=largest)
    first_k = order[(slice(None),) * d + (slice(0, k),)]
    return return_types.topk(*_pick(a, first_k, d, keepdim=True))


def _kth(op: str, a: Tensor, k: int, dim: int, keepdim: bool) -> tuple[Tensor, Tensor]:
    """The ``k``-th smallest (1-based) along ``dim``, through a stable sort."""
    d = _dim_of(op, a, dim)
    a1 = a.reshape(1) if a.ndim == 0 else a
    n = a1.shape[d]
    if not 1 <= k <= n:
        raise ValueError(f"{op}: k={k} is out of range for dim {dim} of size {n}")
    with a.device.guard():
        order = _stable_argsort(a1.xp, a1.array, d, descending=False)
        kth = order[(slice(None),) * d + (slice(k - 1, k),)]
        values, indices = _pick(a1, kth, d, keepdim)
    if a.ndim == 0:
        values, indices = values.reshape(()), indices.reshape(())
    return values, indices


def kthvalue(a: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> return_types.kthvalue:
    """The ``k``-th smallest value (``k`` from 1) along ``dim`` and its index.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([4.0, 1.0, 3.0]).kthvalue(2)
    kthvalue(values=tensor(3.), indices=tensor(2))
    """
    _no_bool("kthvalue", a)
    return return_types.kthvalue(*_kth("kthvalue", a, k, dim, keepdim))


def _no_bool(op: str, a: Tensor) -> None:
    if a.dtype == np.bool_:
        raise TypeError(f"{op} is not defined for bool tensors (as in PyTorch); use .int()")


class EvenlyShared(Function):
    """The value of ``a`` at ``flat_index`` (an index found without gradient) as a 0-d
    tensor; its gradient is shared evenly by every element equal to it (every NaN when it
    is NaN): PyTorch's ``evenly_distribute_backward``, the gradient of ``median()`` and
    ``nanmedian()`` without a dim.
    """

    saves_inputs = False  # backward needs only the mask

    def forward(self, a: Any, *, flat_index: int) -> Any:
        value = a.reshape(-1)[flat_index]
        hits = (a == value) | ((a != a) & (value != value))
        self.hits, self.count = hits, hits.sum()
        return self.xp.asarray(value).reshape(()).copy()

    def backward(self, grad: Tensor) -> Tensor:
        count = Tensor._make(self.count.astype(grad.dtype), self.device, False, None)
        return elementwise.masked_grad(grad / count, self.hits)


@on_input_device
def median_along(
    a: Tensor, dim: int, keepdim: bool, ignore_nan: bool, op: str
) -> tuple[Tensor, Tensor]:
    """The lower median along ``dim`` and its index. A slice with a NaN has median NaN
    at its first NaN (``median``), or the NaNs are left out (``nanmedian``; all NaN: NaN).
    """
    _no_bool(op, a)
    d = _dim_of(op, a, dim)
    a1 = a.reshape(1) if a.ndim == 0 else a
    xp, x = a1.xp, a1.array
    order = _stable_argsort(xp, x, d, descending=False)  # NaN last, in their order
    is_nan = x != x
    nans = is_nan.sum(axis=d, keepdims=True)
    valid = x.shape[d] - (nans if ignore_nan else 0 * nans)
    index = xp.take_along_axis(order, xp.maximum((valid - 1) // 2, 0), axis=d)
    if not ignore_nan:
        index = xp.where(nans > 0, xp.argmax(is_nan, axis=d, keepdims=True), index)
    values, indices = _pick(a1, index, d, keepdim)
    if a.ndim == 0:
        values, indices = values.reshape(()), indices.reshape(())
    return values, indices


def median_all(op: str, a: Tensor, ignore_nan: bool) -> Tensor:
    """The lower median of every element, with PyTorch's gradient (:class:`EvenlyShared`);
    nan for an empty tensor.
    """
    _no_bool(op, a)
    if a.numel() == 0:
        with a.device.guard():
            return Tensor._make(a.xp.full((), np.nan, dtype=a.dtype), a.device, False, None)
    index = median_along(a.detach().reshape(-1), 0, False, ignore_nan, op)[1]
    return EvenlyShared.apply(a, flat_index=int(index.item()))


def median(a: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The median: of all elements (a tensor) or along ``dim`` (values and indices).

    For an even count it is the lower of the two middle values, as in PyTorch (not
    their mean, as NumPy's). NaN propagates as in PyTorch: a slice holding a NaN has
    median NaN, at the index of its first NaN (see :func:`nanmedian` to skip them). The
    gradient of ``median()`` is shared evenly by the elements equal to it (by all the
    NaNs), that of ``median(dim)`` goes to ``indices``. Among equal values the index may
    differ from PyTorch's, which does not specify it.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([4.0, 1.0, 3.0, 2.0]).median()
    tensor(2.)
    >>> mta.tensor([[1.0, float("nan"), 3.0], [1.0, 2.0, 3.0]]).median(1)
    median(values=tensor([nan,  2.]), indices=tensor([1, 1]))
    """
    if dim is None:
        return median_all("median", a, ignore_nan=False)
    return return_types.median(*median_along(a, dim, keepdim, False, "median"))


@on_input_device
def mode(a: Tensor, dim: int = -1, keepdim: bool = False) -> return_types.mode:
    """The most frequent value along ``dim`` (the smallest among equally frequent ones)
    and the index of its last occurrence, as PyTorch on the CPU.

    A slice holding a NaN has mode NaN at its first NaN. PyTorch's CPU result there
    depends on where its unstable sort leaves the NaNs (it agrees for ``[nan, nan, 1]``,
    not for ``[2, nan, nan, 1]``, where it returns 1).

    It compares every pair of elements along ``dim``: memory grows with its size squared.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([2, 1, 2, 1, 3]).mode().values
    tensor(1)
    """
    d = _dim_of("mode", a, dim)
    a1 = a.reshape(1) if a.ndim == 0 else a
    xp = a1.xp
    x = xp.moveaxis(a1.array, d, -1)  # (..., n)
    n = x.shape[-1]
    same = x[..., :, None] == x[..., None, :]  # (..., n, n)
    counts = same.sum(axis=-1)
    # rank candidates: more occurrences first, then the smaller value
    order = _stable_argsort(xp, x, x.ndim - 1, descending=False)
    ranked = xp.take_along_axis(counts, order, axis=-1)
    best = xp.take_along_axis(order, xp.argmax(ranked, axis=-1)[..., None], axis=-1)
    value = xp.take_along_axis(x, best, axis=-1)
    positions = xp.arange(n)
    last = xp.where(x == value, positions, -1).max(axis=-1, keepdims=True)
    is_nan = x != x  # a slice with a NaN: NaN at its first one (a rule of our own)
    first_nan = xp.argmax(is_nan, axis=-1, keepdims=True)
    last = xp.where(is_nan.any(axis=-1, keepdims=True), first_nan, last)
    index = xp.moveaxis(last, -1, d)
    values, indices = _pick(a1, index, d, keepdim)
    if a.ndim == 0:
        values, indices = values.reshape(()), indices.reshape(())
    return return_types.mode(values, indices)
