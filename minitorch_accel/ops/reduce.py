"""Reductions: sum, mean, var, max, min, argmax, logsumexp, softmax and log-softmax.

``max``/``min`` along a dim (values and indices) live in :mod:`~minitorch_accel.ops.sort`.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import autocast_state
from ..core.function import Function, on_input_device
from ..core.tensor import Tensor
from . import elementwise, sort

Dim = int | Sequence[int] | None


def normalize_dims(dim: Dim, ndim: int) -> tuple[int, ...]:
    """Dims as a sorted tuple of non-negative ints (all dims for None)."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    out = []
    for d in dims:
        if not -builtins.max(ndim, 1) <= d < builtins.max(ndim, 1):
            raise IndexError(f"dim {d} is out of range for a tensor with {ndim} dimension(s)")
        out.append(int(d) % builtins.max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"dim {dim} names a dimension twice")
    return tuple(sorted(out))


def _reduction_dims(dim: Dim, ndim: int) -> tuple[int, ...]:
    """:func:`normalize_dims` for a reduction: a 0-d tensor accepts dim 0 or -1 (as in
    PyTorch) and has nothing to reduce.
    """
    dims = normalize_dims(dim, ndim)
    return dims if ndim else ()


def _kept_shape(shape: tuple[int, ...], dims: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


class Sum(Function):
    """The sum over ``dim`` (all dimensions by default): the gradient is broadcast back."""

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any, *, dims: tuple[int, ...], keepdim: bool) -> Any:
        self.kept_shape = _kept_shape(a.shape, dims)
        self.in_shape = a.shape
        return a.sum(axis=dims, keepdims=keepdim)

    def backward(self, grad: Tensor) -> Tensor:
        return grad.reshape(self.kept_shape).expand(self.in_shape)


def sum(a: Tensor, dim: Dim = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    """Sum over ``dim`` (all dims by default), keeping them as size 1 if ``keepdim``."""
    a = autocast_state.to_float32(a)
    if dtype is not None:
        a = a.to(dtype=dtype)
    elif a.dtype.kind in "bi" and a.dtype != np.int64:
        a = a.to(dtype=np.int64)
    return Sum.apply(a, dims=_reduction_dims(dim, a.ndim), keepdim=keepdim)


def mean(a: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:
    """The mean over ``dim`` (all dims by default)."""
    a = autocast_state.to_float32(a)
    if a.dtype.kind != "f":
        raise TypeError(f"mean needs a floating-point tensor, got {a.dtype}; use .float()")
    dims = _reduction_dims(dim, a.ndim)
    count = int(np.prod([a.shape[d] for d in dims])) if dims else 1
    scale = 1.0 / count if count > 0 else float("nan")  # the mean of nothing is nan
    return Sum.apply(a, dims=dims, keepdim=keepdim) * scale


def var(a: Tensor, dim: Dim = None, keepdim: bool = False, correction: int = 1) -> Tensor:
    """The variance over ``dim``, divided by ``n - correction`` (1: unbiased, as PyTorch).

    As in PyTorch, it is nan when ``n <= correction`` (one sample has no unbiased
    variance).
    """
    a = autocast_state.to_float32(a)
    dims = _reduction_dims(dim, a.ndim)
    count = int(np.prod([a.shape[d] for d in dims])) if dims else 1
    centered = a - mean(a, dims, keepdim=True)
    scale = 1.0 / (count - correction) if count > correction else float("nan")
    return sum(centered * centered, dims, keepdim) * scale


class MaxMin(Function):
    """max or min of all elements: the gradient is shared evenly by every element equal
    to the result (every NaN when the result is NaN), exactly 0 elsewhere, as PyTorch's
    ``max()`` and ``min()`` without a dim.
    """

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any, *, keepdim: bool, largest: bool) -> Any:
        xp = self.xp
        out = (xp.max if largest else xp.min)(a, keepdims=True)  # NaN wins, as PyTorch
        hits = a == out
        if a.dtype.kind == "f":
            hits |= xp.isnan(a) & xp.isnan(out)
        self.hits, self.count = hits, hits.sum()
        return out if keepdim else out.reshape(())

    def backward(self, grad: Tensor) -> Tensor:
        count = Tensor._make(self.count.astype(grad.dtype), self.device, False, None)
        return elementwise.masked_grad(grad / count, self.hits)


class AmaxAmin(Function):
    """max or min over ``dims``: the gradient of each result is shared evenly by the
    elements equal to it (PyTorch's ``amax``/``amin``: ``grad / count * (x == result)``).
    """

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any, *, dims: tuple[int, ...], keepdim: bool, largest: bool) -> Any:
        xp = self.xp
        out = (xp.amax if largest else xp.amin)(a, axis=dims, keepdims=True)
        hits = a == out
        self.hits, self.count = hits, hits.sum(axis=dims, keepdims=True)
        self.kept_shape = out.shape
        return out if keepdim else out.reshape([s for i, s in enumerate(a.shape) if i not in dims])

    def backward(self, grad: Tensor) -> Tensor:
        def constant(array: Any) -> Tensor:
            return Tensor._make(array.astype(grad.dtype), self.device, False, None)

        return grad.reshape(self.kept_shape) / constant(self.count) * constant(self.hits)


def max(a: Tensor, dim: int | Tensor | None = None, keepdim: bool = False) -> Any:
    """The largest value: of all elements (a tensor), along ``dim`` (a named
    ``(values, indices)`` pair, as PyTorch), or elementwise with another tensor.

    ``max(x)`` returns a 0-d tensor; ``max(x, dim)`` returns
    :class:`~minitorch_accel.core.return_types.max` whose ``indices`` are the first maximal
    position among ties; ``max(x, y)`` is :func:`maximum`. The gradient of ``max(x,
    dim)`` goes to the element at ``indices``; that of ``max(x)`` is shared evenly by all
    the maximal elements (by all the NaNs when there is one), as PyTorch.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([[1.0, 5.0, 5.0], [7.0, 2.0, 0.0]])
    >>> values, indices = x.max(1)
    >>> values.tolist(), indices.tolist()
    ([5.0, 7.0], [1, 0])
    >>> x.max(1, keepdim=True)[1].tolist()
    [[1], [0]]
    >>> x.max()
    tensor(7.)
    """
    if isinstance(dim, Tensor):
        return elementwise.maximum(a, dim)
    if dim is not None:
        return sort.max_dim(a, dim, keepdim)
    if a.numel() == 0:
        raise ValueError("max of an empty tensor")
    return MaxMin.apply(a, keepdim=keepdim, largest=True)


def min(a: Tensor, dim: int | Tensor | None = None, keepdim: bool = False) -> Any:
    """The smallest value: of all elements, along ``dim`` (values and indices), or
    elementwise with another tensor; see :func:`max`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([[3.0, 1.0], [0.0, 0.0]]).min(dim=1).indices.tolist()
    [1, 0]
    """
    if isinstance(dim, Tensor):
        return elementwise.minimum(a, dim)
    if dim is not None:
        return sort.min_dim(a, dim, keepdim)
    if a.numel() == 0:
        raise ValueError("min of an empty tensor")
    return MaxMin.apply(a, keepdim=keepdim, largest=False)


def amax(a: Tensor, dim: Dim = (), keepdim: bool = False) -> Tensor:
    """The largest value over ``dim`` (every dim for ``()``, the default, or None), as
    ``torch.amax``: values only, and the gradient shared evenly among tied elements.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([[1.0, 4.0, 4.0], [2.0, 0.0, 1.0]], requires_grad=True)
    >>> x.amax(dim=1).sum().backward()
    >>> x.grad.tolist()
    [[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]]
    """
    return _extreme(a, dim, keepdim, largest=True)


def amin(a: Tensor, dim: Dim = (), keepdim: bool = False) -> Tensor:
    """The smallest value over ``dim``; see :func:`amax`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([[3.0, 1.0], [0.0, 5.0]]).amin(dim=0).tolist()
    [0.0, 1.0]
    """
    return _extreme(a, dim, keepdim, largest=False)


def _extreme(a: Tensor, dim: Dim, keepdim: bool, largest: bool) -> Tensor:
    name = "amax" if largest else "amin"
    dims = _reduction_dims(None if dim == () else dim, a.ndim)
    if builtins.any(a.shape[d] == 0 for d in dims):
        raise ValueError(f"{name}: cannot reduce over a dim of size 0 (shape {tuple(a.shape)})")
    return AmaxAmin.apply(a, dims=dims, keepdim=keepdim, largest=largest)


@on_input_device
def any(a: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:
    """Whether any element is non-zero over ``dim`` (all dims by default): a bool tensor,
    as PyTorch's (``if t.any():`` reads a one-element tensor as a Python bool; on a GPU
    that waits for the device).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([[0.0, 2.0], [0.0, 0.0]])
    >>> x.any(), x.any(dim=1).tolist(), bool(x.all())
    (tensor(True), [True, False], False)
    """
    out = a.xp.any(a.array, axis=_reduction_dims(dim, a.ndim), keepdims=keepdim)
    return Tensor._make(a.xp.asarray(out), a.device, False, None)


@on_input_device
def all(a: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:
    """Whether every element is non-zero over ``dim``; see :func:`any`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([[1, 2], [0, 3]]).all(dim=0).tolist()
    [False, True]
    """
    out = a.xp.all(a.array, axis=_reduction_dims(dim, a.ndim), keepdims=keepdim)
    return Tensor._make(a.xp.asarray(out), a.device, False, None)


def argmax(a: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the largest value over ``dim`` (of the flattened tensor by default)."""
    return _arg(a, dim, keepdim, "argmax")


def argmin(a: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the smallest value over ``dim`` (of the flattened tensor by default)."""
    return _arg(a, dim, keepdim, "argmin")


@on_input_device
def _arg(a: Tensor, dim: int | None, keepdim: bool, name: str) -> Tensor:
    xp = a.xp
    if dim is None:
        out = getattr(xp, name)(a.array.reshape(-1))
        if keepdim:
            out = out.reshape((1,) * a.ndim)
    else:
        d = normalize_dims(dim, a.ndim)[0]
        out = getattr(xp, name)(a.array, axis=d)
        if keepdim:
            out = xp.expand_dims(out, d)
    return Tensor._make(xp.asarray(out, dtype=np.int64), a.device, False, None)


@on_input_device
def logsumexp(a: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(a)))`` over ``dim``, computed without overflow."""
    a = autocast_state.to_float32(a)
    dims = _reduction_dims(dim, a.ndim)
    shift_data = a.xp.asarray(a.array.max(axis=dims, keepdims=True))  # an array even for 0-d
    shift = Tensor._make(shift_data, a.device, False, None)
    shift.array[~a.xp.isfinite(shift.array)] = 0
    out = (a - shift).exp().sum(dims, keepdim=True).log() + shift
    return (
        out if keepdim else out.reshape(tuple(s for i, s in enumerate(out.shape) if i not in dims))
    )


class LogSoftmax(Function):
    """``a - logsumexp(a, dim)``: ``grad - softmax * grad.sum(dim)``."""

    saves_inputs = False  # backward needs no input's values
    saves_output = True

    def forward(self, a: Any, *, dim: int) -> Any:
        shifted = a - a.max(axis=dim, keepdims=True)
        shifted -= self.xp.log(self.xp.exp(shifted).sum(axis=dim, keepdims=True))
        self.dim = dim
        return shifted

    def backward(self, grad: Tensor) -> Tensor:
        softmax = self.output().exp()
        return grad - softmax * grad.sum(self.dim, keepdim=True)


class Softmax(Function):
    """``exp(a) / exp(a).sum(dim)``: ``s * (grad - (grad * s).sum(dim))``."""

    saves_inputs = False  # backward needs no input's values
    saves_output = True

    def forward(self, a: Any, *, dim: int) -> Any:
        out = self.xp.exp(a - a.max(axis=dim, keepdims=True))
        out /= out.sum(axis=dim, keepdims=True)
        self.dim = dim
        return out

    def backward(self, grad: Tensor) -> Tensor:
        out = self.output()
        return out * (grad - (grad * out).sum(self.dim, keepdim=True))


def log_softmax(a: Tensor, dim: int = -1) -> Tensor:
    """``a - logsumexp(a, dim)``: log-probabilities, computed stably."""
    a = autocast_state.to_float32(a)
    return LogSoftmax.apply(a, dim=normalize_dims(dim, a.ndim)[0])


def softmax(a: Tensor, dim: int = -1) -> Tensor:
    """``exp(a) / sum(exp(a), dim)``, computed stably."""
    a = autocast_state.to_float32(a)
    return Softmax.apply(a, dim=normalize_dims(dim, a.ndim)[0])
