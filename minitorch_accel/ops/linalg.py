"""Linear algebra ops with their gradients: the inverse, determinants, ``solve``,
``matrix_power``, the Cholesky factor and the pseudo-inverse.

Forwards call ``xp.linalg`` (NumPy's or CuPy's LAPACK); backwards are written with
tensor ops (often these same ops), so derivatives of every order work.
"""

# ruff: noqa: N803, N806  (PyTorch's argument names: A, B)
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..core.function import Function
from ..core.tensor import Tensor
from .elementwise import where
from .products import Scaled


class Inv(Function):
    """``Y = A^-1`` of a square matrix or a batch of them.

    From ``A Y = I``: ``dA Y + A dY = 0``, so ``dY = -Y dA Y`` and the gradient of a loss
    ``L`` is ``dL/dA = -Y^T (dL/dY) Y^T``, written with tensor ops so that it is itself
    differentiable.
    """

    saves_output = True

    def forward(self, a: Any) -> Any:
        xp = self.xp
        try:
            return xp.linalg.inv(a)
        except xp.linalg.LinAlgError as exc:
            raise type(exc)(
                f"inv: the matrix is singular (not invertible): {exc}; check that its rows "
                "are linearly independent, or use a pseudo-inverse"
            ) from exc

    def backward(self, grad: Tensor) -> Tensor:
        y_t = self.output().transpose(-1, -2)
        return -(y_t @ grad @ y_t)


def inv(a: Tensor) -> Tensor:
    """The inverse of a square matrix, or of each matrix of a batch ``(..., n, n)``.

    As ``torch.linalg.inv``. On the CPU a singular matrix raises
    ``numpy.linalg.LinAlgError``; CuPy does not check, and returns infinities or NaNs.

    Raises
    ------
    ValueError
        If ``a`` has fewer than 2 dims or its last two differ.
    TypeError
        If ``a`` is not float32 or float64.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> a = mta.tensor([[2.0, 0.0], [0.0, 4.0]], requires_grad=True)
    >>> mta.linalg.inv(a)
    tensor([[0.5 , 0.  ],
            [0.  , 0.25]], grad_fn=<InvBackward>)
    >>> mta.linalg.inv(a).sum().backward()
    >>> a.grad
    tensor([[-0.25  , -0.125 ],
            [-0.125 , -0.0625]])
    """
    if not isinstance(a, Tensor):
        raise TypeError(f"inv: expected a Tensor, got {type(a).__name__}")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(
            f"inv: expected a square matrix or a batch of them (..., n, n), got shape "
            f"{tuple(a.shape)}"
        )
    if str(a.dtype) not in ("float32", "float64"):
        raise TypeError(f"inv: expected float32 or float64, got {a.dtype}; call .float() first")
    return Inv.apply(a)


# ---------------------------------------------------------------- shared checks and helpers


def check_matrix(op: str, a: Any, square: bool = True) -> None:
    """``a`` is a float32/float64 Tensor of matrices ``(..., m, n)``, square if asked."""
    if not isinstance(a, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(a).__name__}")
    if a.ndim < 2 or (square and a.shape[-1] != a.shape[-2]):
        kind = "square matrices (..., n, n)" if square else "matrices (..., m, n)"
        raise ValueError(f"{op}: A must be a batch of {kind}, got shape {tuple(a.shape)}")
    if str(a.dtype) not in ("float32", "float64"):
        raise TypeError(f"{op}: expected a float32 or float64 tensor, got {a.dtype}; call .float()")


def constant(like: Tensor, array: Any) -> Tensor:
    """A raw array (made with ``like.xp``) as a constant Tensor on ``like``'s device."""
    return Tensor._make(array.astype(like.dtype), like.device, False, None)


def eye_like(a: Tensor) -> Tensor:
    """The identity of ``a``'s last dim, ``a``'s dtype and device (a constant)."""
    return constant(a, a.xp.eye(a.shape[-1]))


def diag_embed(v: Tensor) -> Tensor:
    """Vectors ``(..., n)`` as diagonal matrices ``(..., n, n)`` (differentiable)."""
    return v.unsqueeze(-1) * eye_like(v)


# ---------------------------------------------------------------- determinants


class Det(Function):
    """``det(A)``. Its gradient is ``grad * det(A) * A^-T`` (Jacobi's formula) where
    ``A`` is invertible, written with tensor ops; at a singular ``A`` it is the cofactor
    matrix from the SVD (:class:`SingularDetGrad`), which has no second derivative here.
    PyTorch gives that cofactor matrix only under ``create_graph=True``, and 0 (its
    LU formula) otherwise; here it is the cofactor matrix either way.
    """

    saves_output = True

    def forward(self, a: Any) -> Any:
        return self.xp.linalg.det(a)

    def backward(self, grad: Tensor) -> Tensor:
        (a,) = self.inputs
        det = self.output()
        if bool((det.array == 0).any()):
            return SingularDetGrad.apply(a, grad)
        return (grad * det).unsqueeze(-1).unsqueeze(-1) * inv(a).transpose(-1, -2)


class SingularDetGrad(Function):
    """``grad * cofactor(A)`` from ``A = U diag(S) Vh``: ``cofactor = det(U Vh) U
    diag(prod_{j != i} S_j) Vh``, defined for singular ``A`` too.
    """

    def forward(self, a: Any, grad: Any) -> Any:
        xp = self.xp
        u, s, vh = xp.linalg.svd(a)
        n = s.shape[-1]
        others = (
            xp.stack([xp.prod(xp.delete(s, i, axis=-1), axis=-1) for i in range(n)], axis=-1)
            if n > 1
            else xp.ones_like(s)
        )
        scale = (xp.linalg.det(u) * xp.linalg.det(vh) * grad)[..., None]
        return (u * (scale * others)[..., None, :]) @ vh

    def backward(self, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
        raise NotImplementedError(
            "det: the second derivative at a singular matrix is not implemented"
        )


def det(A: Tensor) -> Tensor:
    """The determinant of a square matrix or of each of a batch ``(..., n, n)``, as
    ``torch.linalg.det`` (and ``torch.det``).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> a = mta.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> mta.linalg.det(a)
    tensor(5., grad_fn=<DetBackward>)
    >>> mta.linalg.det(a).backward()
    >>> a.grad
    tensor([[ 3., -1.],
            [-1.,  2.]])
    """
    check_matrix("linalg.det", A)
    return Det.apply(A)


class LogAbsDet(Function):
    """``log|det(A)|``; its gradient is ``grad * A^-T``."""

    def forward(self, a: Any) -> Any:
        return self.xp.linalg.slogdet(a)[1]

    def backward(self, grad: Tensor) -> Tensor:
        (a,) = self.inputs
        return grad.unsqueeze(-1).unsqueeze(-1) * inv(a).transpose(-1, -2)


class SlogdetResult(NamedTuple):
    """``(sign, logabsdet)`` of :func:`slogdet`."""

    sign: Tensor
    logabsdet: Tensor


def slogdet(A: Tensor) -> SlogdetResult:
    """The sign and the log of the absolute value of the determinant, as
    ``torch.linalg.slogdet``: ``det = sign * exp(logabsdet)`` without overflow. A
    singular matrix gives sign 0 and logabsdet ``-inf``. Only logabsdet has a gradient.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.linalg.slogdet(mta.tensor([[-2.0, 0.0], [0.0, 3.0]]))
    SlogdetResult(sign=tensor(-1.), logabsdet=tensor(1.7918))
    """
    check_matrix("linalg.slogdet", A)
    with A.device.guard():
        sign = A.xp.linalg.slogdet(A.array)[0]
    return SlogdetResult(Tensor._make(sign, A.device, False, None), LogAbsDet.apply(A))


def logdet(A: Tensor) -> Tensor:
    """``log(det(A))``, as ``torch.logdet``: NaN where the determinant is negative,
    ``-inf`` where it is 0.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.logdet(mta.tensor([[2.0, 0.0], [0.0, 3.0]]))
    tensor(1.7918)
    """
    check_matrix("logdet", A)
    sign, logabs = slogdet(A)
    return where(sign < 0, float("nan"), logabs)


# ---------------------------------------------------------------- solving and powers


class Solve(Function):
    """``X = A^-1 B`` for matrices ``B`` ``(..., n, k)`` (batch dims broadcast). With
    ``A X = B``: ``grad_B = A^-T grad`` and ``grad_A = -grad_B X^T``.
    """

    saves_output = True

    def forward(self, a: Any, b: Any) -> Any:
        xp = self.xp
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = xp.broadcast_to(a, (*batch, *a.shape[-2:]))
        b = xp.broadcast_to(b, (*batch, *b.shape[-2:]))
        try:
            return xp.linalg.solve(a, b)
        except xp.linalg.LinAlgError as exc:
            raise type(exc)(
                "linalg.solve: the solver failed because the input matrix is singular"
            ) from exc

    def backward(self, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, _ = self.inputs
        grad_b = solve(a.transpose(-1, -2), grad)
        need_a, need_b = self.needs_input_grad
        grad_a = -(grad_b @ self.output().transpose(-1, -2)) if need_a else None
        return grad_a, grad_b if need_b else None


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """The solution ``X`` of ``A X = B`` (``X A = B`` with ``left=False``), as
    ``torch.linalg.solve``. ``B`` is a batch of vectors when it is 1-D or has the shape
    ``A.shape[:-1]``, of matrices otherwise; batch dims broadcast.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.linalg.solve(mta.tensor([[2.0, 0.0], [0.0, 4.0]]), mta.tensor([2.0, 2.0]))
    tensor([1. , 0.5])
    """
    check_matrix("linalg.solve", A)
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.solve: expected B to be a Tensor, got {type(B).__name__}")
    if A.dtype != B.dtype:
        raise TypeError(f"linalg.solve: A and B must have one dtype, got {A.dtype} and {B.dtype}")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    if not left:
        if vector:
            raise ValueError("linalg.solve: with left=False, B must be a batch of matrices")
        return solve(A.transpose(-1, -2), B.transpose(-1, -2)).transpose(-1, -2)
    b = B.unsqueeze(-1) if vector else B
    if b.ndim < 2 or b.shape[-2] != A.shape[-1]:
        raise ValueError(
            f"linalg.solve: incompatible shapes of A {tuple(A.shape)} and B {tuple(B.shape)}"
        )
    try:
        np.broadcast_shapes(A.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(
            f"linalg.solve: the batch dims of A {tuple(A.shape)} and B {tuple(B.shape)} "
            "do not broadcast"
        ) from None
    x = Solve.apply(A, b)
    return x.squeeze(-1) if vector else x


def matrix_power(A: Tensor, n: int) -> Tensor:
    """``A`` multiplied by itself ``n`` times, by repeated squaring, as
    ``torch.linalg.matrix_power``: ``n = 0`` gives the identity, ``n < 0`` powers of
    the inverse (float only). Integer matrices are allowed for ``n >= 0``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.linalg.matrix_power(mta.tensor([[1, 1], [0, 1]]), 3)
    tensor([[1, 3],
            [0, 1]])
    """
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg.matrix_power: expected a Tensor, got {type(A).__name__}")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(
            f"linalg.matrix_power: A must be a batch of square matrices, got {tuple(A.shape)}"
        )
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"linalg.matrix_power: n must be an int, got {n!r}")
    if n == 0:  # the identity; A's gradient is 0 (A's NaNs do not reach the value)
        with A.device.guard():
            identity = A.xp.eye(A.shape[-1], dtype=A.dtype)
        return Scaled.apply(A, factor=0) + Tensor._make(identity, A.device, False, None)
    if n < 0:
        A, n = inv(A), -n
    result: Tensor | None = None
    square = A
    while True:
        if n & 1:
            result = square if result is None else result @ square
        n >>= 1
        if not n:
            return result  # type: ignore[return-value]
        square = square @ square


# ---------------------------------------------------------------- Cholesky and pinv


class Cholesky(Function):
    """The lower factor ``L`` of ``A = L L^T``. PyTorch's gradient
    (``cholesky_backward``): with ``phi(X)`` the lower triangle of ``X`` and half its
    diagonal, ``G = L^-T phi(L^T grad_L) L^-1``, symmetrized ``(G + G^T) / 2``.
    """

    saves_output = True

    def forward(self, a: Any) -> Any:
        xp = self.xp
        try:
            out = xp.linalg.cholesky(a)
        except xp.linalg.LinAlgError as exc:
            raise type(exc)(
                "linalg.cholesky: the factorization could not be completed because the "
                "input is not positive-definite"
            ) from exc
        if bool(xp.isnan(out).any()) and not bool(xp.isnan(a).any()):
            raise np.linalg.LinAlgError(  # CuPy returns NaN instead of raising
                "linalg.cholesky: the input is not positive-definite"
            )
        return out

    def backward(self, grad: Tensor) -> Tensor:
        low = self.output()
        n = low.shape[-1]
        with low.device.guard():
            half_lower = low.xp.tril(low.xp.ones((n, n))) - 0.5 * low.xp.eye(n)
        phi = (low.transpose(-1, -2) @ grad) * constant(low, half_lower)
        low_inv = inv(low)
        g = low_inv.transpose(-1, -2) @ phi @ low_inv
        return (g + g.transpose(-1, -2)) * 0.5


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor of a symmetric positive-definite matrix, as
    ``torch.linalg.cholesky``: lower ``L`` with ``A = L L^T`` (upper ``L^T`` with
    ``upper=True``). Only the lower triangle of ``A`` is read.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.linalg.cholesky(mta.tensor([[4.0, 2.0], [2.0, 2.0]]))
    tensor([[2., 0.],
            [1., 1.]])
    """
    check_matrix("linalg.cholesky", A)
    low = Cholesky.apply(A)
    return low.transpose(-1, -2) if upper else low


class Pinv(Function):
    """The pseudo-inverse from the SVD, singular values at or below ``tol`` dropped;
    PyTorch's gradient (``pinv_backward``), written with tensor ops.
    """

    saves_output = True

    def forward(self, a: Any, *, atol: float | None, rtol: float | None) -> Any:
        xp = self.xp
        u, s, vh = xp.linalg.svd(a, full_matrices=False)
        largest = s.max(axis=-1, keepdims=True) if s.shape[-1] else s[..., :1]
        tol = singular_tolerance(xp, largest, a.shape, atol, rtol)
        s_inv = xp.where(s > tol, 1 / xp.where(s > tol, s, 1), 0).astype(a.dtype)
        return xp.swapaxes(vh, -1, -2) @ (s_inv[..., None] * xp.swapaxes(u, -1, -2))

    def backward(self, grad: Tensor) -> Tensor:
        (a,) = self.inputs
        p, m, n = self.output(), a.shape[-2], a.shape[-1]
        p_t, g_t = p.transpose(-1, -2), grad.transpose(-1, -2)
        if m <= n:
            k = g_t @ p
            k_p_t = k @ p_t
            return -(p @ k).transpose(-1, -2) + k_p_t - (a @ p) @ k_p_t + (p_t @ p) @ (g_t - k @ a)
        k = p @ g_t
        p_t_k = p_t @ k
        return -(k @ p).transpose(-1, -2) + (g_t - a @ k) @ p @ p_t + p_t_k - p_t_k @ p @ a


def singular_tolerance(
    xp: Any, largest: Any, shape: tuple[int, ...], atol: float | None, rtol: float | None
) -> Any:
    """PyTorch's cut-off ``max(atol, rtol * largest)``: ``rtol`` defaults to
    ``eps * max(m, n)`` when neither is given, to 0 when only ``atol`` is.
    """
    if rtol is None:
        rtol = float(xp.finfo(largest.dtype).eps) * max(shape[-2:]) if not atol else 0.0
    return xp.maximum(atol or 0.0, rtol * largest)


def pinv(
    A: Tensor, *, atol: float | None = None, rtol: float | None = None, hermitian: bool = False
) -> Tensor:
    """The Moore-Penrose pseudo-inverse, as ``torch.linalg.pinv``: singular values at
    or below ``max(atol, rtol * largest)`` count as 0 (``rtol`` defaults to
    ``eps * max(m, n)``). ``hermitian`` is accepted and the SVD used either way.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.linalg.pinv(mta.tensor([[2.0, 0.0], [0.0, 0.0]]))
    tensor([[0.5, 0. ],
            [0. , 0. ]])
    """
    check_matrix("linalg.pinv", A, square=False)
    return Pinv.apply(A, atol=atol, rtol=rtol)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """The pseudo-inverse, as ``torch.pinverse``: :func:`pinv` with ``rtol=rcond``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.pinverse(mta.tensor([[2.0, 0.0], [0.0, 0.0]]))
    tensor([[0.5, 0. ],
            [0. , 0. ]])
    """
    return pinv(input, rtol=rcond)
