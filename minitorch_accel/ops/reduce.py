"""Reductions: sum, mean, var, max, min, argmax, logsumexp, softmax and log-softmax.

``max``/``min`` along a dim (values and indices) live in :mod:`~minitorch_accel.ops.sort`.
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import autocast_state
from ..core.defaults import get_default_dtype
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


def _all_if_empty(dim: Dim) -> Dim:
    """``dim`` with ``()`` read as every dim, as PyTorch's ``sum``, ``mean`` and ``var``."""
    return None if dim == () else dim


def _count(shape: tuple[int, ...], dims: tuple[int, ...]) -> int:
    """How many elements each result of a reduction over ``dims`` combines."""
    return int(np.prod([shape[d] for d in dims])) if dims else 1


def _wide(xp: Any, a: Any) -> Any:
    """``a`` in float32 when it is float16: PyTorch accumulates half-precision sums (and
    softmax) in float32 and rounds only the result.
    """
    return a.astype(np.float32) if a.dtype == np.float16 else a


def _check_float(name: str, a: Tensor) -> None:
    if a.dtype.kind != "f":
        raise TypeError(
            f"{name} needs a floating-point tensor, got {a.dtype}; use .float() (or dtype=)"
        )


class Sum(Function):
    """The sum over ``dim`` (all dimensions by default): the gradient is broadcast back.
    A float16 sum accumulates in float32, as PyTorch's.
    """

    saves_inputs = False  # backward needs no input's values

    def forward(self, a: Any, *, dims: tuple[int, ...], keepdim: bool) -> Any:
        self.kept_shape = _kept_shape(a.shape, dims)
        self.in_shape = a.shape
        total = _wide(self.xp, a).sum(axis=dims, keepdims=keepdim)
        return self.xp.asarray(total).astype(a.dtype, copy=False)

    def backward(self, grad: Tensor) -> Tensor:
        return grad.reshape(self.kept_shape).expand(self.in_shape)


def sum_input(a: Tensor, dtype: Any) -> Tensor:
    """``a`` as a sum reads it: converted to ``dtype`` if given, else integers and bools
    widened to int64 (PyTorch's rule: sums of int8, uint8 or bool do not overflow).
    """
    a = autocast_state.to_float32(a)
    if dtype is not None:
        return a.to(dtype=dtype)
    if a.dtype.kind in "biu" and a.dtype != np.int64:
        return a.to(dtype=np.int64)
    return a


def sum(a: Tensor, dim: Dim = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    """Sum over ``dim`` (all dims for None or ``()``), keeping them as size 1 if
    ``keepdim``.

    Integer and bool tensors sum to int64, as PyTorch's; ``dtype`` converts the input
    first. A float16 sum accumulates in float32 and rounds once at the end.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([[1, 2], [3, 4]], dtype=mta.uint8)
    >>> x.sum(), x.sum(1).tolist(), x.sum(dtype=mta.float64)
    (tensor(10), [3, 7], tensor(10., dtype=float64))
    """
    a = sum_input(a, dtype)
    return Sum.apply(a, dims=_reduction_dims(_all_if_empty(dim), a.ndim), keepdim=keepdim)


def mean(a: Tensor, dim: Dim = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    """The mean over ``dim`` (all dims for None or ``()``): the sum divided by the count.

    It needs a floating-point tensor (or a floating-point ``dtype``, which converts the
    input first); float16 accumulates in float32, so the mean of large float16 values
    does not overflow, as in PyTorch. The mean of nothing is nan.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([60000.0, 60000.0], dtype=mta.float16).mean().item()
    60000.0
    >>> mta.tensor([1, 2]).mean(dtype=mta.float64)
    tensor(1.5, dtype=float64)
    """
    a = autocast_state.to_float32(a)
    if dtype is not None:
        if np.dtype(dtype).kind != "f":
            raise TypeError(f"mean: dtype must be a floating-point dtype, got {np.dtype(dtype)}")
        a = a.to(dtype=dtype)
    _check_float("mean", a)
    dims = _reduction_dims(_all_if_empty(dim), a.ndim)
    count = _count(a.shape, dims)
    wide = a.to(dtype=np.float32) if a.dtype == np.float16 else a
    total = Sum.apply(wide, dims=dims, keepdim=keepdim)
    out = total * (1.0 / count if count > 0 else float("nan"))  # the mean of nothing is nan
    return out.to(dtype=a.dtype) if wide is not a else out


class Var(Function):
    """The variance over ``dims``: ``sum((a - mean)**2) / max(0, n - correction)`` (inf or
    nan when ``n <= correction``, as PyTorch). Its gradient is PyTorch's
    ``var_backward``: ``2 / (n - correction) * grad * (a - mean)``; reduced over every
    dim with ``n <= correction``, ``grad * inf`` (nan where ``a`` equals the mean).
    """

    def forward(
        self, a: Any, *, dims: tuple[int, ...], keepdim: bool, correction: float, every: bool
    ) -> Any:
        xp, x = self.xp, _wide(self.xp, a)
        self.dims, self.keepdim, self.correction, self.every = dims, keepdim, correction, every
        self.count = _count(a.shape, dims)
        centered = x - x.mean(axis=dims, keepdims=True)
        squares = (centered * centered).sum(axis=dims, keepdims=keepdim)
        dof = builtins.max(0.0, self.count - correction)
        with np.errstate(divide="ignore", invalid="ignore"):  # n <= correction: inf or nan
            out = squares / dof if dof > 0 else squares * float("inf")
        return xp.asarray(out).astype(a.dtype, copy=False)

    def backward(self, grad: Tensor) -> Tensor:
        (a,) = self.inputs
        if not self.keepdim:
            grad = grad.reshape(_kept_shape(a.shape, self.dims))
        centered = a - mean(a, self.dims, keepdim=True)
        dof = self.count - self.correction
        if self.every and dof <= 0:  # 2 / 0 times a - mean: inf, or nan where that is 0
            with a.device.guard():
                scale = a.xp.where(centered.array == 0, float("nan"), float("inf"))
            return grad * Tensor._make(scale.astype(a.dtype), a.device, False, None)
        with np.errstate(divide="ignore"):
            scale = float(np.float64(2.0) / np.float64(dof))
        return grad * scale * centered


def _var_args(
    name: str, a: Tensor, dim: Any, unbiased: Any, correction: Any
) -> tuple[Tensor, tuple[int, ...], float, bool]:
    """PyTorch's two signatures of var and std: ``(dim, unbiased, keepdim)`` and
    ``(dim, *, correction, keepdim)``; also ``var(unbiased)`` with a bool first.
    """
    if isinstance(dim, bool):  # x.var(False): the old (unbiased) signature
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}: pass unbiased or correction, not both")
    if correction is None:
        correction = 0 if unbiased is False else 1
    a = autocast_state.to_float32(a)
    if a.dtype.kind != "f":
        raise TypeError(
            f"{name} needs a floating-point tensor, got {a.dtype}; use .float() "
            "(PyTorch: std and var only support floating point dtypes)"
        )
    dim = _all_if_empty(dim)
    dims = _reduction_dims(dim, a.ndim)
    if _count(a.shape, dims) - correction <= 0:
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than "
            "the reduction factor (input numel divided by output numel).",
            UserWarning,
            stacklevel=3,
        )
    return a, dims, builtins.float(correction), dim is None or a.ndim == 0


def var(
    a: Tensor,
    dim: Dim | bool = None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction: float | None = None,
) -> Tensor:
    """The variance over ``dim`` (all dims for None or ``()``), divided by
    ``n - correction``: ``correction=1`` (the default, ``unbiased=True``) is the sample
    variance, 0 (``unbiased=False``) the population variance. PyTorch's signatures:
    ``var(dim, unbiased, keepdim)`` and ``var(dim, keepdim=, correction=)``.

    When ``n <= correction`` it is inf (nan for a constant sample), with PyTorch's
    warning. The gradient is PyTorch's (:class:`Var`).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([[1.0, 2.0, 4.0], [3.0, 3.0, 9.0]], dtype=mta.float64)
    >>> x.var(1), x.var(1, False), x.var(1, correction=0, keepdim=True).shape
    (tensor([ 2.3333, 12.    ], dtype=float64), tensor([1.5556, 8.    ], dtype=float64), (2, 1))
    """
    a, dims, correction, every = _var_args("var", a, dim, unbiased, correction)
    return Var.apply(a, dims=dims, keepdim=keepdim, correction=correction, every=every)


def std(
    a: Tensor,
    dim: Dim | bool = None,
    unbiased: bool | None = None,
    keepdim: bool = False,
    *,
    correction: float | None = None,
) -> Tensor:
    """The standard deviation, ``sqrt(var(...))``, with :func:`var`'s arguments.

    Its gradient is PyTorch's: ``grad / (2 * std)`` passed to var's, and 0 where the
    standard deviation is 0 (a constant sample), not nan.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([[1.0, 3.0], [2.0, 2.0]], requires_grad=True)
    >>> x.std(1, unbiased=False).tolist()
    [1.0, 0.0]
    >>> x.std(1).sum().backward()
    >>> x.grad.tolist()
    [[-0.7071067690849304, 0.7071067690849304], [0.0, 0.0]]
    """
    a, dims, correction, every = _var_args("std", a, dim, unbiased, correction)
    return Std.apply(a, dims=dims, keepdim=keepdim, correction=correction, every=every)


class Std(Var):
    """``sqrt(var)``: the gradient is var's with ``grad / (2 * std)``, 0 where std is 0."""

    saves_output = True

    def forward(self, a: Any, **params: Any) -> Any:
        return self.xp.sqrt(super().forward(a, **params))

    def backward(self, grad: Tensor) -> Tensor:
        out = self.output()
        with self.device.guard():
            zero = out.array == 0
        with np.errstate(divide="ignore", invalid="ignore"):  # masked off just below
            scaled = grad / (out * 2)
        return super().backward(elementwise.masked_grad(scaled, ~zero))


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
    """Whether any element is non-zero over ``dim`` (all dims by default): a bool tensor
    (uint8 for a uint8 input), as PyTorch's (``if t.any():`` reads a one-element tensor
    as a Python bool; on a GPU that waits for the device).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> x = mta.tensor([[0.0, 2.0], [0.0, 0.0]])
    >>> x.any(), x.any(dim=1).tolist(), bool(x.all())
    (tensor(True), [True, False], False)
    """
    out = a.xp.any(a.array, axis=_reduction_dims(dim, a.ndim), keepdims=keepdim)
    return _truth(a, out)


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
    return _truth(a, out)


def _truth(a: Tensor, out: Any) -> Tensor:
    """The result of ``any``/``all``: bool, but uint8 for a uint8 input (as PyTorch)."""
    dtype = np.uint8 if a.dtype == np.uint8 else np.bool_
    return Tensor._make(a.xp.asarray(out).astype(dtype), a.device, False, None)


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
    """``log(sum(exp(a)))`` over ``dim`` (all dims by default), computed without
    overflow. Integer and bool tensors are read as the default float dtype, as PyTorch's.

    ``dim=()`` raises, as PyTorch (which otherwise requires ``dim``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([[1, 0, 3]], dtype=mta.uint8).logsumexp(1)
    tensor([3.1698])
    """
    if dim == ():
        raise ValueError("logsumexp: dim=() names no dim; pass a dim, a tuple of dims or None")
    a = autocast_state.to_float32(a)
    if a.dtype.kind != "f":
        a = a.to(dtype=get_default_dtype())
    dims = _reduction_dims(dim, a.ndim)
    shift_data = a.xp.asarray(a.array.max(axis=dims, keepdims=True))  # an array even for 0-d
    shift = Tensor._make(shift_data, a.device, False, None)
    shift.array[~a.xp.isfinite(shift.array)] = 0
    out = (a - shift).exp().sum(dims, keepdim=True).log() + shift
    return (
        out if keepdim else out.reshape(tuple(s for i, s in enumerate(out.shape) if i not in dims))
    )


class LogSoftmax(Function):
    """``a - logsumexp(a, dim)``: ``grad - softmax * grad.sum(dim)``. float16 is computed
    in float32 and rounded once, as PyTorch does.
    """

    saves_inputs = False  # backward needs no input's values
    saves_output = True

    def forward(self, a: Any, *, dim: int) -> Any:
        x = _wide(self.xp, a)
        shifted = x - x.max(axis=dim, keepdims=True)
        shifted -= self.xp.log(self.xp.exp(shifted).sum(axis=dim, keepdims=True))
        self.dim = dim
        return shifted.astype(a.dtype, copy=False)

    def backward(self, grad: Tensor) -> Tensor:
        softmax = self.output().exp()
        return grad - softmax * grad.sum(self.dim, keepdim=True)


class Softmax(Function):
    """``exp(a) / exp(a).sum(dim)``: ``s * (grad - (grad * s).sum(dim))``. float16 is
    computed in float32 and rounded once, as PyTorch does.
    """

    saves_inputs = False  # backward needs no input's values
    saves_output = True

    def forward(self, a: Any, *, dim: int) -> Any:
        x = _wide(self.xp, a)
        out = self.xp.exp(x - x.max(axis=dim, keepdims=True))
        out /= out.sum(axis=dim, keepdims=True)
        self.dim = dim
        return out.astype(a.dtype, copy=False)

    def backward(self, grad: Tensor) -> Tensor:
        out = self.output()
        return out * (grad - (grad * out).sum(self.dim, keepdim=True))


def implicit_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    """PyTorch's legacy rule for a softmax called without ``dim`` (0 for 0-, 1- and 3-D
    input, else 1), with its deprecation warning.
    """
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to "
        "include dim=X as an argument.",
        UserWarning,
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_input(name: str, a: Tensor, dim: int | None, stacklevel: int, dtype: Any) -> Any:
    """The input and dim of a softmax: ``dtype`` converts first; integers raise."""
    if dtype is not None:
        a = a.to(dtype=dtype)
    a = autocast_state.to_float32(a)
    if a.dtype.kind != "f":
        raise TypeError(
            f"{name} needs a floating-point tensor, got {a.dtype}; use .float() or pass "
            "dtype=minitorch_accel.float32 (PyTorch: not implemented for integer types)"
        )
    if dim is None:
        dim = implicit_softmax_dim(name, a.ndim, stacklevel + 1)
    return a, normalize_dims(dim, a.ndim)[0]


def log_softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """``a - logsumexp(a, dim)``: log-probabilities, computed stably.

    ``dtype`` converts the input first (integer tensors need it). Without ``dim``,
    PyTorch's legacy choice applies, with its warning: dim 0 for 0-, 1- and 3-D input,
    dim 1 otherwise (``torch.log_softmax`` itself requires ``dim``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([[0, 0]]).log_softmax(1, dtype=mta.float64)
    tensor([[-0.6931, -0.6931]], dtype=float64)
    """
    a, d = _softmax_input("log_softmax", input, dim, _stacklevel, dtype)
    return LogSoftmax.apply(a, dim=d)


def softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """``exp(a) / sum(exp(a), dim)``, computed stably.

    ``dtype`` converts the input first (integer tensors need it); float16 is computed in
    float32. Without ``dim``, PyTorch's legacy choice applies, with its warning: dim 0 for
    0-, 1- and 3-D input, dim 1 otherwise (``torch.softmax`` itself requires ``dim``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.softmax(mta.tensor([[1.0, 1.0], [0.0, 0.0]]), dim=1).tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    a, d = _softmax_input("softmax", input, dim, _stacklevel, dtype)
    return Softmax.apply(a, dim=d)
