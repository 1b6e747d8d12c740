"""More reductions and scans with PyTorch's names: ``prod``, ``nansum``, ``nanmean``,
``nanmedian``, ``std_mean``, ``var_mean``, ``quantile``, ``nanquantile``,
``count_nonzero``, ``aminmax``, ``cummax``, ``cummin``, ``logcumsumexp`` and ``diff``.

Each keeps PyTorch's argument names, result dtypes and gradients (including its values
at zeros, NaN and inf, noted per function). Most are compositions of differentiable ops;
the scans that need a loop along the dim run it on raw arrays, one step per element of
that dim, every other dim at once.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..core.function import Function, on_input_device
from ..core.grad_mode import is_grad_enabled
from ..core.tensor import Tensor
from . import elementwise, reduce, scan, sort
from .index import Gather
from .shape import cat, normalize_dim


class NanMedian(NamedTuple):
    """``(values, indices)`` of :func:`nanmedian` along a dim."""

    values: Tensor
    indices: Tensor


class CumMax(NamedTuple):
    """``(values, indices)`` of :func:`cummax`."""

    values: Tensor
    indices: Tensor


class CumMin(NamedTuple):
    """``(values, indices)`` of :func:`cummin`."""

    values: Tensor
    indices: Tensor


class AMinMax(NamedTuple):
    """``(min, max)`` of :func:`aminmax`."""

    min: Tensor
    max: Tensor


# the names that PyTorch's torch.return_types print (and our reprs with them)
for _pair, _name in (
    (NanMedian, "nanmedian"),
    (CumMax, "cummax"),
    (CumMin, "cummin"),
    (AMinMax, "aminmax"),
):
    _pair.__name__ = _pair.__qualname__ = _name


def _constant(like: Tensor, array: Any) -> Tensor:
    return Tensor._make(like.xp.asarray(array), like.device, False, None)


def _along(t: Tensor, dim: int, part: slice) -> Tensor:
    """``t[..., part, ...]`` with ``part`` on ``dim`` (a view, differentiable)."""
    return t[(slice(None),) * dim + (part,)]


def _reversed(t: Tensor, dim: int) -> Tensor:
    return _along(t, dim, slice(None, None, -1))


# ------------------------------------------------------------------ prod
class Prod(Function):
    """The product along ``dim`` (kept as size 1). The gradient is PyTorch's
    (``prod_backward``): ``grad * (out / a)`` when no element is 0, else
    ``grad * (product before) * (product after)`` (:func:`_products_without_each`);
    over the whole tensor with two zeros or more, and no graph recorded, zeros.
    """

    saves_output = True

    def forward(self, a: Any, *, dim: int, whole: bool) -> Any:
        self.dim, self.whole = dim, whole
        return self.xp.prod(reduce._wide(self.xp, a), axis=dim, keepdims=True).astype(a.dtype)

    def backward(self, grad: Tensor) -> Tensor:
        a = self.inputs[0]
        zeros = int((a.array == 0).sum())
        if zeros == 0:
            return grad * (self.output() / a)
        if self.whole and zeros > 1 and not is_grad_enabled():
            return _constant(a, a.xp.zeros(a.shape, dtype=a.dtype))  # even for grad = inf
        return grad * _products_without_each(a, self.dim)


def _products_without_each(a: Tensor, dim: int) -> Tensor:
    """``prod_{k != i} a[k]`` along ``dim`` for every ``i``, without dividing: the
    running product before ``i`` times the one after it (PyTorch's
    ``prod_safe_zeros_backward``).
    """
    n = a.shape[dim]
    ones = _constant(a, a.xp.ones(a.shape[:dim] + (1,) + a.shape[dim + 1 :], dtype=a.dtype))
    before = scan.cumprod(cat([ones, _along(a, dim, slice(0, n - 1))], dim), dim)
    after = scan.cumprod(cat([ones, _reversed(_along(a, dim, slice(1, n)), dim)], dim), dim)
    return before * _reversed(after, dim)


def prod(a: Tensor, dim: int | None = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    """The product of all elements, or along ``dim`` (``keepdim`` keeps it as size 1).

    Integer and bool tensors give int64, as :func:`sum`; ``dtype`` converts the input
    first. The gradient is PyTorch's, exact where elements are 0 (:class:`Prod`).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([[2.0, 0.0, 3.0], [1.0, 2.0, 3.0]], requires_grad=True)
    >>> x.prod(1).tolist()
    [0.0, 6.0]
    >>> x.prod(1).sum().backward()
    >>> x.grad.tolist()
    [[0.0, 6.0, 0.0], [6.0, 3.0, 2.0]]
    >>> mta.tensor([True, True]).prod()
    tensor(1)
    """
    a = reduce.sum_input(a, dtype)
    if a.ndim == 0:
        if dim is not None:
            normalize_dim(dim, 0, "prod")
        return a.clone()
    if dim is None:
        return Prod.apply(a.reshape(-1), dim=0, whole=True).reshape(())
    d = normalize_dim(dim, a.ndim, "prod")
    out = Prod.apply(a, dim=d, whole=False)
    return out if keepdim else out.squeeze(d)


# ------------------------------------------------------------------ NaN-skipping
class NanSum(Function):
    """The sum over ``dims`` with NaN read as 0; the gradient is PyTorch's
    ``grad * ~isnan(a)`` (so an infinite ``grad`` gives NaN at the NaNs, as there).
    """

    saves_inputs = False  # backward needs only the mask

    def forward(self, a: Any, *, dims: tuple[int, ...], keepdim: bool) -> Any:
        xp = self.xp
        self.kept_shape = reduce._kept_shape(a.shape, dims)
        self.kept = ~xp.isnan(a) if a.dtype.kind == "f" else xp.ones(a.shape, dtype=bool)
        clean = xp.where(self.kept, reduce._wide(xp, a), 0)
        return xp.asarray(clean.sum(axis=dims, keepdims=keepdim)).astype(a.dtype)

    def backward(self, grad: Tensor) -> Tensor:
        kept = Tensor._make(self.kept.astype(grad.dtype), self.device, False, None)
        return grad.reshape(self.kept_shape) * kept


def nansum(a: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """:func:`sum` with NaN read as 0 (all dims for None or ``()``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([1.0, float("nan"), 2.0]).nansum()
    tensor(3.)
    """
    a = reduce.sum_input(a, dtype)
    dims = reduce._reduction_dims(reduce._all_if_empty(dim), a.ndim)
    return NanSum.apply(a, dims=dims, keepdim=keepdim)


def nanmean(a: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The mean of the elements that are not NaN: ``nansum / count``, NaN where every
    element is NaN, as PyTorch's. It needs a floating-point tensor (or ``dtype``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([[1.0, float("nan"), 2.0]]).nanmean(1)
    tensor([1.5])
    """
    if dtype is not None:
        a = a.to(dtype=dtype)
    reduce._check_float("nanmean", a)
    dims = reduce._reduction_dims(reduce._all_if_empty(dim), a.ndim)
    with a.device.guard():
        count = (~a.xp.isnan(a.array)).sum(axis=dims, keepdims=keepdim).astype(a.dtype)
    total = NanSum.apply(a, dims=dims, keepdim=keepdim)
    with np.errstate(invalid="ignore", divide="ignore"):  # all NaN: 0 / 0 is NaN
        return total / _constant(a, count)


def nanmedian(a: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The median of the elements that are not NaN: of all of them (a tensor), or along
    ``dim`` (a named ``(values, indices)`` pair); NaN where all are NaN. The lower of the
    two middle values for an even count, as :func:`median`, with the same gradients.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([[1.0, float("nan"), 3.0, 2.0], [float("nan")] * 4])
    >>> x.nanmedian(), x.nanmedian(1).values
    (tensor(2.), tensor([ 2., nan]))
    """
    if dim is None:
        return sort.median_all("nanmedian", a, ignore_nan=True)
    return NanMedian(*sort.median_along(a, dim, keepdim, True, "nanmedian"))


# ------------------------------------------------------------------ var / std with mean
def var_mean(
    a: Tensor,
    dim: Any = None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction: float | None = None,
) -> tuple[Tensor, Tensor]:
    """``(var(a, ...), mean(a, ...))`` with :func:`var`'s arguments.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.var_mean(mta.tensor([1.0, 2.0, 3.0]))
    (tensor(1.), tensor(2.))
    """
    variance = reduce.var(a, dim, unbiased, keepdim, correction=correction)
    return variance, reduce.mean(a, _mean_dim(dim), keepdim)


def std_mean(
    a: Tensor,
    dim: Any = None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction: float | None = None,
) -> tuple[Tensor, Tensor]:
    """``(std(a, ...), mean(a, ...))`` with :func:`std`'s arguments.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.std_mean(mta.tensor([[1.0, 3.0]]), 1, unbiased=False)
    (tensor([1.]), tensor([2.]))
    """
    deviation = reduce.std(a, dim, unbiased, keepdim, correction=correction)
    return deviation, reduce.mean(a, _mean_dim(dim), keepdim)


def _mean_dim(dim: Any) -> Any:
    return None if isinstance(dim, bool) else dim  # var(False): unbiased, every dim


# ------------------------------------------------------------------ quantiles
_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def quantile(
    a: Tensor,
    q: float | Tensor,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
) -> Tensor:
    """The ``q``-th quantiles over ``dim`` (of all elements for None), as PyTorch's:
    the sorted values read at rank ``q * (n - 1)``, interpolated by ``interpolation``
    (``linear``, ``lower``, ``higher``, ``midpoint`` or ``nearest``). A slice with a NaN
    gives NaN (see :func:`nanquantile`).

    ``q`` is a number or a 0-d or 1-D tensor of the input's dtype, each in [0, 1]; a 1-D
    ``q`` puts its dim first in the result. The gradient goes to the one or two sorted
    elements read.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([1.0, 5.0, 2.0, 8.0])
    >>> x.quantile(0.5), x.quantile(mta.tensor([0.25, 1.0]), interpolation="lower")
    (tensor(3.5), tensor([1., 8.]))
    """
    return _quantile(a, "quantile", q, dim, keepdim, interpolation, ignore_nan=False)


def nanquantile(
    a: Tensor,
    q: float | Tensor,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
) -> Tensor:
    """:func:`quantile` of the elements that are not NaN (NaN where all are).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([1.0, float("nan"), 2.0]).nanquantile(0.5)
    tensor(1.5)
    """
    return _quantile(a, "nanquantile", q, dim, keepdim, interpolation, ignore_nan=True)


def _quantile_levels(name: str, a: Tensor, q: float | Tensor) -> Any:
    """``q`` as a 1-D array of ``a``'s dtype, checked as PyTorch checks it."""
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise ValueError(f"{name}() q must be a scalar or 1D tensor, got shape {q.shape}")
        if q.dtype != a.dtype:
            raise TypeError(
                f"{name}() q tensor must be same dtype as the input tensor, got {q.dtype} "
                f"and {a.dtype}"
            )
        levels = q.to(a.device).array.reshape(-1)
    else:
        levels = a.xp.asarray([q], dtype=a.dtype)
    values = a.xp.asnumpy(levels) if hasattr(a.xp, "asnumpy") else np.asarray(levels)
    if not ((values >= 0) & (values <= 1)).all():
        raise ValueError(f"{name}() q must be in the range [0, 1] but got {q}")
    return levels


@on_input_device
def _quantile(
    a: Tensor,
    name: str,
    q: float | Tensor,
    dim: int | None,
    keepdim: bool,
    interpolation: str,
    ignore_nan: bool,
) -> Tensor:
    if a.dtype.kind != "f":
        raise TypeError(
            f"{name}() input tensor must be either float or double dtype, got {a.dtype}"
        )
    if interpolation not in _MODES:
        raise ValueError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or "
            f"nearest, but got {interpolation}"
        )
    if a.numel() == 0:
        raise ValueError(f"{name}() input tensor must be non-empty")
    levels = _quantile_levels(name, a, q)
    xp = a.xp
    if dim is None:
        x, d = a.reshape(-1), 0
    else:
        x, d = a, normalize_dim(dim, a.ndim, name)
    x = x.reshape(1) if x.ndim == 0 else x
    others = [i for i in range(x.ndim) if i != d]  # in order, then the dim to reduce
    ordered = sort.sort(x.permute(*others, d), dim=-1).values  # (..., n)
    n = ordered.shape[-1]
    is_nan = xp.isnan(ordered.array)
    if ignore_nan:  # ranks among the valid values; all NaN: rank 0, a NaN
        valid = (n - is_nan.sum(axis=-1, keepdims=True)).astype(a.dtype)
        ranks = xp.maximum(levels * (valid - 1), 0)
    else:  # a NaN anywhere: the last rank, which holds a NaN
        ranks = levels * a.dtype.type(n - 1)
        ranks = xp.where(is_nan.any(axis=-1, keepdims=True), a.dtype.type(n - 1), ranks)
    if interpolation in ("lower", "higher", "nearest"):
        ranks = {"lower": xp.floor, "higher": xp.ceil, "nearest": xp.round}[interpolation](ranks)
    below = ranks.astype(np.int64)
    shape = ordered.shape[:-1] + (levels.shape[0],)
    last = ordered.ndim - 1
    values = Gather.apply(ordered, _constant(a, xp.broadcast_to(below, shape)), dim=last)
    if interpolation in ("linear", "midpoint"):
        weights = xp.full(shape, 0.5, a.dtype) if interpolation == "midpoint" else ranks - below
        weights = xp.ascontiguousarray(xp.broadcast_to(weights.astype(a.dtype), shape))
        above = xp.broadcast_to(xp.ceil(ranks).astype(np.int64), shape)
        values = Lerp.apply(
            values, Gather.apply(ordered, _constant(a, above), dim=last), weight=weights
        )
    if keepdim:  # (..., k) with the reduced dims back as size 1
        kept = tuple(1 if dim is None or i == d else size for i, size in enumerate(a.shape))
        values = values.reshape(kept + (levels.shape[0],))
    if not isinstance(q, Tensor) or q.ndim == 0:
        return values.squeeze(-1)
    return values.permute(values.ndim - 1, *range(values.ndim - 1))


class Lerp(Function):
    """PyTorch's ``lerp(start, end, weight)`` for a constant ``weight``:
    ``start + w * (end - start)`` for ``|w| < 0.5``, else ``end - (end - start) * (1 - w)``
    (exact at both ends). The gradients are ``grad * (1 - w)`` and ``grad * w``.
    """

    saves_inputs = False  # backward needs only the weights

    def forward(self, start: Any, end: Any, *, weight: Any) -> Any:
        self.weight = weight
        step = end - start
        return self.xp.where(
            self.xp.abs(weight) < 0.5, start + weight * step, end - step * (1 - weight)
        )

    def backward(self, grad: Tensor) -> tuple[Tensor, Tensor]:
        w = Tensor._make(self.weight, self.device, False, None)
        return grad * (1 - w), grad * w


# ------------------------------------------------------------------ counts and extremes
@on_input_device
def count_nonzero(a: Tensor, dim: Any = None) -> Tensor:
    """How many elements are not zero over ``dim`` (all dims for None or ``()``): int64.
    NaN counts, as it is not zero.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.count_nonzero(mta.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 0.0]]), dim=1)
    tensor([2, 0])
    """
    dims = reduce._reduction_dims(reduce._all_if_empty(dim), a.ndim)
    out = (a.array != 0).sum(axis=dims)
    return Tensor._make(a.xp.asarray(out, dtype=np.int64), a.device, False, None)


def aminmax(a: Tensor, *, dim: int | None = None, keepdim: bool = False) -> AMinMax:
    """The smallest and the largest values over ``dim`` (every element for None), as a
    named ``(min, max)`` pair; the gradients are :func:`amin`'s and :func:`amax`'s,
    shared evenly among ties. ``dim`` and ``keepdim`` are keyword-only.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([[1.0, 0.0], [4.0, 2.0]]).aminmax(dim=1)
    aminmax(min=tensor([0., 2.]), max=tensor([1., 4.]))
    """
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"aminmax(): dim must be an int or None, got {dim!r}")
    if a.numel() == 0:
        raise ValueError(
            "aminmax(): cannot compute aminmax over an empty dimension as the operation "
            "has no identity"
        )
    return AMinMax(reduce.amin(a, dim, keepdim), reduce.amax(a, dim, keepdim))


# ------------------------------------------------------------------ running extremes
def _running_extreme(xp: Any, x: Any, largest: bool) -> Any:
    """Indices of the running max (min) along the last axis, as PyTorch's CPU loop: a
    NaN, or a value at least as large (small), takes over; a NaN holds it until the
    next NaN.
    """
    best, best_index = x[..., 0], xp.zeros(x.shape[:-1], dtype=np.int64)
    indices = xp.empty(x.shape, dtype=np.int64)
    indices[..., 0] = 0
    for i in range(1, x.shape[-1]):
        value = x[..., i]
        better = value >= best if largest else value <= best
        take = (value != value) | ((best == best) & better)
        best = xp.where(take, value, best)
        best_index = xp.where(take, i, best_index)
        indices[..., i] = best_index
    return indices


@on_input_device
def _cumulative_extreme(a: Tensor, dim: int, largest: bool) -> tuple[Tensor, Tensor]:
    name = "cummax" if largest else "cummin"
    d = normalize_dim(dim, a.ndim, name)
    a1 = a.reshape(1) if a.ndim == 0 else a
    xp = a1.xp
    if a1.numel() == 0:
        index = xp.zeros(a1.shape, dtype=np.int64)
    else:
        x = xp.moveaxis(a1.array, d, -1)
        index = xp.moveaxis(_running_extreme(xp, x, largest), -1, d)
    indices = _constant(a1, xp.ascontiguousarray(index))
    values = Gather.apply(a1, indices, dim=d)
    return values.reshape(a.shape), indices.reshape(a.shape)


def cummax(a: Tensor, dim: int) -> CumMax:
    """The running maximum along ``dim`` and where each came from, as a named
    ``(values, indices)`` pair: among equal values the latest index; after a NaN, NaN
    (at that NaN's index), as PyTorch. The gradient of each value goes to its index.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([1.0, 3.0, 3.0, 2.0]).cummax(0)
    cummax(values=tensor([1., 3., 3., 3.]), indices=tensor([0, 1, 2, 2]))
    """
    return CumMax(*_cumulative_extreme(a, dim, True))


def cummin(a: Tensor, dim: int) -> CumMin:
    """The running minimum along ``dim`` and where each came from; see :func:`cummax`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([3, 1, 2]).cummin(0).indices
    tensor([0, 1, 1])
    """
    return CumMin(*_cumulative_extreme(a, dim, False))


# ------------------------------------------------------------------ logcumsumexp
def _log_add_exp(xp: Any, x: Any, y: Any) -> Any:
    """PyTorch's ``_log_add_exp_helper``: ``log1p(exp(min - max)) + max``, NaN when
    ``y`` is, and ``x`` when both are the same infinity.
    """
    y_nan = y != y
    low = xp.where(y_nan, y, xp.minimum(x, y))  # minimum/maximum pass x's NaN on
    high = xp.where(y_nan, y, xp.maximum(x, y))
    same_infinity = (low == high) & ~xp.isfinite(low)
    with np.errstate(invalid="ignore"):
        combined = xp.log1p(xp.exp(low - high)) + high
    return xp.where(same_infinity, x, combined)


class LogCumSumExp(Function):
    """``out[i] = log(exp(a[0]) + ... + exp(a[i]))`` along ``dim``, step by step as
    PyTorch. Its gradient is PyTorch's (``logcumsumexp_backward``), written with
    logcumsumexp itself, so it differentiates again.
    """

    saves_output = True

    def forward(self, a: Any, *, dim: int) -> Any:
        xp, self.dim = self.xp, dim
        x = xp.moveaxis(a, dim, 0)
        out = xp.empty_like(x)
        if x.shape[0]:
            out[0] = x[0] + 0  # PyTorch starts from log(0): -0.0 becomes 0.0, as there
        for i in range(1, x.shape[0]):
            out[i] = _log_add_exp(xp, out[i - 1], x[i])
        return xp.ascontiguousarray(xp.moveaxis(out, 0, dim))

    def backward(self, grad: Tensor) -> Tensor:
        (a,), out, d = self.inputs, self.output(), self.dim
        if grad.numel() == 0:
            return grad
        lowest = float(np.finfo(a.dtype).min)
        with np.errstate(divide="ignore"):
            log_abs = grad.abs().log()
        positive = elementwise.where(grad > 0, log_abs, lowest)
        negative = elementwise.where(grad < 0, log_abs, lowest)

        def reverse_logcumsumexp(t: Tensor) -> Tensor:
            return _reversed(LogCumSumExp.apply(_reversed(t, d), dim=d), d)

        return (reverse_logcumsumexp(positive - out) + a).exp() - (
            reverse_logcumsumexp(negative - out) + a
        ).exp()


def logcumsumexp(a: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(a)))`` along ``dim``, computed without overflow; floating-point
    tensors only (as PyTorch's). A 0-d tensor keeps its shape.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> [round(v, 4) for v in mta.tensor([0.0, 0.0, 1000.0]).logcumsumexp(0).tolist()]
    [0.0, 0.6931, 1000.0]
    """
    if a.dtype.kind != "f":
        raise TypeError(f"logcumsumexp needs a floating-point tensor, got {a.dtype}; use .float()")
    d = normalize_dim(dim, a.ndim, "logcumsumexp")
    if a.ndim == 0:
        return LogCumSumExp.apply(a.reshape(1), dim=0).reshape(())
    return LogCumSumExp.apply(a, dim=d)


# ------------------------------------------------------------------ diff
def diff(
    a: Tensor,
    n: int = 1,
    dim: int = -1,
    prepend: Tensor | None = None,
    append: Tensor | None = None,
) -> Tensor:
    """The ``n``-th forward difference along ``dim``: ``out[i] = a[i + 1] - a[i]``,
    repeated ``n`` times, after joining ``prepend`` and ``append`` on either side.
    Bool tensors give ``a[i + 1] != a[i]``; integers wrap as their dtype does. ``n``
    larger than the length gives an empty result.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.diff(mta.tensor([1, 3, 7, 2])), mta.diff(mta.tensor([1, 3, 7, 2]), n=2)
    (tensor([ 2,  4, -5]), tensor([ 2, -9]))
    """
    if a.ndim == 0:
        raise ValueError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    d = normalize_dim(dim, a.ndim, "diff")
    for side in (prepend, append):
        if side is not None and side.ndim != a.ndim:
            raise ValueError(
                "diff expects prepend or append to be the same dimension as input, got "
                f"{side.ndim} and {a.ndim}"
            )
    parts = [t for t in (prepend, a, append) if t is not None]
    x = cat(parts, d) if len(parts) > 1 else a
    for _ in range(n):
        later, earlier = _along(x, d, slice(1, None)), _along(x, d, slice(None, -1))
        x = later != earlier if x.dtype == np.bool_ else later - earlier
    return x
