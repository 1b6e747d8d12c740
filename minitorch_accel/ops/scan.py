"""Running sums and products along a dim: ``cumsum``, ``cumprod``; and ``norm``."""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from ..core.function import Function
from ..core.grad_mode import is_grad_enabled
from ..core.tensor import Tensor
from . import elementwise
from .shape import normalize_dim


class CumSum(Function):
    """The running sum along ``dim``; the gradient is the reversed running sum."""

    def forward(self, a: Any, *, dim: int) -> Any:
        self.dim = dim
        return running_sum(self.xp, a, dim)

    def backward(self, grad: Tensor) -> Tensor:
        return ReverseCumSum.apply(grad, dim=self.dim)


class ReverseCumSum(Function):
    """``out[i] = sum(a[i:])`` along ``dim``: the gradient of :class:`CumSum`."""

    def forward(self, a: Any, *, dim: int) -> Any:
        self.dim = dim
        xp = self.xp
        return xp.flip(running_sum(xp, xp.flip(a, dim), dim), dim)

    def backward(self, grad: Tensor) -> Tensor:
        return CumSum.apply(grad, dim=self.dim)


def running_sum(xp: Any, a: Any, dim: int) -> Any:
    """``xp.cumsum`` along ``dim`` started from ``+0.0``, as PyTorch's: where NumPy's
    running sum is ``-0.0`` (``cumsum([-0.0])``, the first one starts from the first
    element) PyTorch's is ``0.0``; every other value is the same.

    Examples
    --------
    >>> import numpy as np
    >>> np.signbit(running_sum(np, np.array([-0.0, -0.0, 1.0]), 0)).tolist()
    [False, False, False]
    """
    out = xp.cumsum(a, axis=dim)
    if out.dtype.kind in "fc":
        out += 0  # -0.0 + 0 is 0.0; any other value is unchanged
    return out


class CumProd(Function):
    """The running product along ``dim``. The gradient is PyTorch's
    (``cumprod_backward``): ``reverse_cumsum(grad * out) / a`` when ``a`` has no zero;
    otherwise exact products that skip the zero (:func:`_cumprod_grad_first_order`, or
    the differentiable :func:`_cumprod_grad_with_zeros` when recording a graph).
    """

    saves_output = True

    def forward(self, a: Any, *, dim: int) -> Any:
        self.dim = dim
        return self.xp.cumprod(a, axis=dim)

    def backward(self, grad: Tensor) -> Tensor:
        a = self.inputs[0]
        if a.numel() <= 1 or a.shape[self.dim] == 1:
            return grad  # d out / d a is 1 (PyTorch's shortcut, also for a = inf)
        if not bool(self.xp.any(a.array == 0)):
            # d out[j] / d a[i] = out[j] / a[i] for j >= i
            return ReverseCumSum.apply(grad * self.output(), dim=self.dim) / a
        if is_grad_enabled():  # a second derivative asked for: the O(n^2) products
            return _cumprod_grad_with_zeros(a, grad, self.dim)
        with a.device.guard(), np.errstate(invalid="ignore"):  # inf * 0: NaN, as PyTorch
            xp, d = a.xp, self.dim
            last = (xp.moveaxis(t.array, d, -1) for t in (a, grad, self.output()))
            out = xp.moveaxis(_cumprod_grad_first_order(xp, *last), -1, d)
        return Tensor._make(xp.ascontiguousarray(out), a.device, False, None)


def _cumprod_grad_first_order(xp: Any, x: Any, grad: Any, out: Any) -> Any:
    """PyTorch's O(n) gradient of a cumprod (along the last axis) whose input holds a
    zero: before the first zero ``z1`` the usual ``reverse_cumsum(grad * out) / x``; at
    ``z1`` the product before it times ``sum_{k in [z1, z2)} grad[k] * prod(x[z1+1..k])``
    (``z2`` the second zero); 0 after it.
    """
    is_zero = x == 0
    zeros_so_far = xp.cumsum(is_zero, axis=-1)
    before = zeros_so_far == 0
    weighted = xp.where(before, out * grad, 0)
    suffix = xp.flip(xp.cumsum(xp.flip(weighted, -1), axis=-1), -1)
    result = xp.where(before, suffix / xp.where(before, x, 1), 0).astype(x.dtype)
    first_zero = is_zero & (zeros_so_far == 1)
    between = (zeros_so_far == 1) & ~is_zero  # strictly between the first two zeros
    runs = xp.cumprod(xp.where(between, x, 1), axis=-1) * xp.where(zeros_so_far == 1, grad, 0)
    ones = xp.ones(x.shape[:-1] + (1,), dtype=x.dtype)
    product_before = xp.concatenate([ones, out[..., :-1]], axis=-1)
    return xp.where(first_zero, product_before * runs.sum(axis=-1, keepdims=True), result)


def _cumprod_grad_with_zeros(a: Tensor, grad: Tensor, dim: int) -> Tensor:
    """``grad_a[i] = sum_{j >= i} grad[j] * prod_{k <= j, k != i} a[k]``, without
    dividing by ``a[i]`` (which may be 0): one row of products per ``i``.
    """
    x, g = a.transpose(dim, -1), grad.transpose(dim, -1)  # (..., n)
    n = x.shape[-1]
    with a.device.guard():
        eye = Tensor._make(a.xp.eye(n, dtype=bool), a.device, False, None)
        upper = Tensor._make(a.xp.triu(a.xp.ones((n, n), a.dtype)), a.device, False, None)
    rows = x.unsqueeze(-2).expand(*x.shape[:-1], n, n)  # rows[..., i, k] = a[k]
    without_i = rows.masked_fill(eye, 1.0)  # a with a[i] replaced by 1, per row i
    products = cumprod(without_i, -1) * upper  # [..., i, j]: prod_{k<=j, k!=i} a_k, j >= i
    return (products * g.unsqueeze(-2)).sum(-1).transpose(dim, -1)


def _scan_input(a: Tensor, dtype: Any) -> Tensor:
    if dtype is not None:
        return a.to(dtype=dtype)
    if a.dtype.kind in "biu" and a.dtype != np.int64:
        return a.to(dtype=np.int64)  # as PyTorch: integer sums do not overflow int8
    return a


def _scan(function: type[Function], a: Tensor, dim: int, name: str) -> Tensor:
    """``function`` along ``dim``; a 0-d tensor keeps its shape ``()``, as PyTorch's."""
    d = normalize_dim(dim, a.ndim, name)
    if a.ndim == 0:
        return function.apply(a.reshape(1), dim=0).reshape(())
    return function.apply(a, dim=d)


def cumsum(a: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """Running sum along ``dim``: ``out[i] = a[0] + ... + a[i]``. Integer and bool
    tensors give int64 (``dtype`` converts the input first), as PyTorch's.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.cumsum(mta.tensor([1, 2, 3]), 0).tolist()
    [1, 3, 6]
    """
    return _scan(CumSum, _scan_input(a, dtype), dim, "cumsum")


def cumprod(a: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """Running product along ``dim``: ``out[i] = a[0] * ... * a[i]`` (int64 for integer
    and bool tensors); its gradient is PyTorch's, exact also where ``a`` holds zeros.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.cumprod(mta.tensor([1.0, 2.0, 3.0]), 0).tolist()
    [1.0, 2.0, 6.0]
    """
    return _scan(CumProd, _scan_input(a, dtype), dim, "cumprod")


class VectorNorm(Function):
    """``||a||_p`` over ``dims``: ``sum(|a|**p) ** (1/p)``; ``p=inf`` the largest
    ``|a|``, ``-inf`` the smallest, ``0`` the count of non-zeros. Its gradient is
    PyTorch's (``linalg_vector_norm_backward``): ``a * |a|**(p-2) * grad / norm**(p-1)``,
    ``sign(a) * grad`` for p = 1, shared among the elements at the extreme (and any NaN)
    for ``±inf``, zero for p = 0, and exactly 0 where the norm is 0 (an all-zero vector,
    where the textbook formula divides 0 by 0) and, for p < 1, at zero elements.
    """

    saves_output = True  # the gradient is written with the norm itself

    def forward(self, a: Any, *, p: float, dims: tuple[int, ...], keepdim: bool) -> Any:
        xp, self.p, self.dims = self.xp, p, dims
        magnitude = xp.abs(a)
        if p == 2:
            out = xp.sqrt((a * a).sum(axis=dims, keepdims=True))
        elif math.isinf(p):
            out = (magnitude.max if p > 0 else magnitude.min)(axis=dims, keepdims=True)
        elif p == 0:
            out = (a != 0).sum(axis=dims, keepdims=True).astype(a.dtype)
        elif p == 1:
            out = magnitude.sum(axis=dims, keepdims=True)
        else:
            out = (magnitude**p).sum(axis=dims, keepdims=True) ** (1.0 / p)
        self.kept_shape = out.shape
        return out if keepdim else out.reshape([s for i, s in enumerate(a.shape) if i not in dims])

    def _constant(self, array: Any, dtype: Any) -> Tensor:
        return Tensor._make(array.astype(dtype), self.device, False, None)

    def backward(self, grad: Tensor) -> Tensor:
        (a,) = self.inputs
        p, g = self.p, grad.reshape(self.kept_shape)
        if p == 0:  # a count: flat wherever it is defined
            return elementwise.masked_grad(g, self.xp.zeros(a.shape, dtype=bool))
        if p == 1:
            return a.sign() * g
        n = self.output().reshape(self.kept_shape)
        with self.device.guard():
            if math.isinf(p):
                magnitude = self.xp.abs(a.array)
                hit = (magnitude == n.array) | self.xp.isnan(magnitude)
                count = self._constant(hit.sum(axis=self.dims, keepdims=True), a.dtype)
                return a.sign() * (g / count * self._constant(hit, a.dtype))
            nonzero, norm_nonzero = a.array != 0, n.array != 0
        if p < 1:  # |a|**(p-1) is infinite at a zero element: 0 there (as PyTorch)
            powered = elementwise.masked_grad(_nonzero(a.abs()) ** (p - 1), nonzero)
            return a.sign() * powered * g * n ** (1 - p)
        # 0 where the norm is (p >= 1 makes |a|**(p-1) finite); no 0/0 left to make NaN
        if p == 2:  # PyTorch's order: grad * (a / norm), which places NaN as it does
            return g * elementwise.masked_grad(a / _nonzero(n), norm_nonzero)
        scale = elementwise.masked_grad(g / _nonzero(n) ** (p - 1), norm_nonzero)
        if p < 2:
            return a.sign() * a.abs() ** (p - 1) * scale
        return a * a.abs() ** (p - 2) * scale


def _nonzero(t: Tensor) -> Tensor:
    """``t`` with its zeros made 1 (values a gradient then masks off: no 0/0 in them)."""
    return elementwise.where(t == 0, 1.0, t)


def norm(a: Tensor, p: float | str = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
    """The vector ``p``-norm over ``dim`` (all elements by default):
    ``sum(|a|**p) ** (1/p)``; ``p="fro"`` is 2, ``p=inf`` the largest ``|a|``, ``-inf``
    the smallest, 0 the count of non-zeros. The gradient is PyTorch's
    (:class:`VectorNorm`): 0 for an all-zero vector, and for ``±inf`` shared evenly
    among the tied extremes.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([3.0, 4.0]).norm()
    tensor(5.)
    >>> mta.tensor([[3.0, -4.0]]).norm(1, dim=1)
    tensor([7.])
    >>> x = mta.zeros(3, requires_grad=True)
    >>> x.norm().backward()
    >>> x.grad.tolist()
    [0.0, 0.0, 0.0]
    """
    if a.dtype.kind != "f":
        raise TypeError(f"norm needs a floating-point tensor, got {a.dtype}; use .float()")
    if p == "fro":
        p = 2
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)) or p < 0:
        raise ValueError(f"norm: p must be a number >= 0, 'fro' or inf, got {p!r}")
    if dim is None:
        dims = tuple(range(a.ndim))
    else:
        named = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
        dims = tuple(sorted({normalize_dim(d, a.ndim, "norm") for d in named}))
    return VectorNorm.apply(a, p=builtins.float(p), dims=dims, keepdim=keepdim)
