"""Running sums and products along a dim: ``cumsum``, ``cumprod``; and ``norm``."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..core.function import Function
from ..core.tensor import Tensor
from .shape import normalize_dim


class CumSum(Function):
    """The running sum along ``dim``; the gradient is the reversed running sum."""

    def forward(self, a: Any, *, dim: int) -> Any:
        self.dim = dim
        return self.xp.cumsum(a, axis=dim)

    def backward(self, grad: Tensor) -> Tensor:
        return ReverseCumSum.apply(grad, dim=self.dim)


class ReverseCumSum(Function):
    """``out[i] = sum(a[i:])`` along ``dim``: the gradient of :class:`CumSum`."""

    def forward(self, a: Any, *, dim: int) -> Any:
        self.dim = dim
        xp = self.xp
        return xp.flip(xp.cumsum(xp.flip(a, dim), axis=dim), dim)

    def backward(self, grad: Tensor) -> Tensor:
        return CumSum.apply(grad, dim=self.dim)


class CumProd(Function):
    """The running product along ``dim``; the gradient is exact where ``a`` holds zeros."""

    saves_output = True

    def forward(self, a: Any, *, dim: int) -> Any:
        self.dim = dim
        return self.xp.cumprod(a, axis=dim)

    def backward(self, grad: Tensor) -> Tensor:
        a = self.inputs[0]
        if not bool(self.xp.any(a.array == 0)):
            # d out[j] / d a[i] = out[j] / a[i] for j >= i
            return ReverseCumSum.apply(grad * self.output(), dim=self.dim) / a
        return _cumprod_grad_with_zeros(a, grad, self.dim)


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
    if a.dtype.kind in "bi" and a.dtype != np.int64:
        return a.to(dtype=np.int64)  # as PyTorch: integer sums do not overflow int8
    return a


def cumsum(a: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """Running sum along ``dim``: ``out[i] = a[0] + ... + a[i]``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.cumsum(mta.tensor([1, 2, 3]), 0).tolist()
    [1, 3, 6]
    """
    a = _scan_input(a, dtype)
    return CumSum.apply(a, dim=normalize_dim(dim, a.ndim, "cumsum"))


def cumprod(a: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """Running product along ``dim``: ``out[i] = a[0] * ... * a[i]``; its gradient is
    exact also where ``a`` holds zeros.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.cumprod(mta.tensor([1.0, 2.0, 3.0]), 0).tolist()
    [1.0, 2.0, 6.0]
    """
    a = _scan_input(a, dtype)
    return CumProd.apply(a, dim=normalize_dim(dim, a.ndim, "cumprod"))


def norm(a: Tensor, p: float | str = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
    """The vector ``p``-norm over ``dim`` (all elements by default):
    ``sum(|a|**p) ** (1/p)``; ``p="fro"`` is 2, ``p=inf`` the largest ``|a|``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.tensor([3.0, 4.0]).norm()
    tensor(5.)
    >>> mta.tensor([[3.0, -4.0]]).norm(1, dim=1)
    tensor([7.])
    """
    if a.dtype.kind != "f":
        raise TypeError(f"norm needs a floating-point tensor, got {a.dtype}; use .float()")
    if p == "fro":
        p = 2
    if not isinstance(p, (int, float)) or p <= 0:
        raise ValueError(f"norm: p must be a positive number, 'fro' or inf, got {p!r}")
    if p == float("inf"):
        magnitude = a.abs()
        if dim is None:
            out: Tensor = magnitude.max()
            return out.reshape((1,) * a.ndim) if keepdim else out
        dims = {normalize_dim(d, a.ndim, "norm") for d in ((dim,) if isinstance(dim, int) else dim)}
        for d in dims:
            magnitude = magnitude.max(d, keepdim=True).values
        kept = tuple(s for i, s in enumerate(a.shape) if i not in dims)
        return magnitude if keepdim else magnitude.reshape(kept)
    if p == 2:
        return (a * a).sum(dim, keepdim).sqrt()
    if p == 1:
        return a.abs().sum(dim, keepdim)
    return (a.abs() ** builtins.float(p)).sum(dim, keepdim) ** (1.0 / p)
