"""Matrix decompositions as ``torch.linalg`` has them: ``qr``, ``eigh``, ``eigvalsh``,
``svd``, ``svdvals`` and ``matrix_rank``, with PyTorch's gradients.

A decomposition has several outputs but a :class:`~minitorch_accel.Function` one, so
each op packs its outputs side by side in one flat array (:class:`Packed`); slicing
them out again is differentiable, so the gradients of unused outputs arrive as zeros,
the value PyTorch gives an undefined one. Each backward is written with tensor ops on
the (differentiable) outputs, so second derivatives work too.
"""

# ruff: noqa: N803  (PyTorch's argument names: A, UPLO)
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..core.function import Function
from ..core.tensor import Tensor
from ..ops.linalg import check_matrix, constant, diag_embed, eye_like, singular_tolerance, solve


class Packed(Function):
    """Outputs of one decomposition flattened and joined along the last dim."""

    saves_output = True

    def forward(self, a: Any, *, parts: Any, grad_fn: Any, shapes: Any) -> Any:
        self.grad_fn, self.shapes = grad_fn, shapes
        batch = a.shape[:-2]
        return self.xp.concatenate([p.reshape(*batch, -1) for p in parts(self.xp, a)], axis=-1)

    def backward(self, grad: Tensor) -> Tensor:
        outputs = unpack(self.output(), self.shapes)
        return self.grad_fn(self.inputs[0], outputs, unpack(grad, self.shapes))  # type: ignore[no-any-return]


def unpack(packed: Tensor, shapes: list[tuple[int, ...]]) -> list[Tensor]:
    """The tensors of ``shapes`` (without batch dims) that :class:`Packed` joined."""
    out, start, batch = [], 0, packed.shape[:-1]
    for shape in shapes:
        size = int(np.prod(shape))
        out.append(packed[..., start : start + size].reshape(*batch, *shape))
        start += size
    return out


def apply_packed(
    a: Tensor, parts: Any, grad_fn: Any, shapes: list[tuple[int, ...]]
) -> list[Tensor]:
    """Run :class:`Packed` and return its outputs, one tensor each."""
    return unpack(Packed.apply(a, parts=parts, grad_fn=grad_fn, shapes=shapes), shapes)


def _triangle(t: Tensor, upper: bool) -> Tensor:
    n = t.shape[-1]
    with t.device.guard():
        ones = t.xp.ones((n, n))
        mask = t.xp.triu(ones) if upper else t.xp.tril(ones)
    return t * constant(t, mask)


# ---------------------------------------------------------------- QR


class QRResult(NamedTuple):
    """``(Q, R)`` of :func:`qr`."""

    Q: Tensor
    R: Tensor


def _qr_grad(mode: str) -> Any:
    def grad_fn(a: Tensor, outputs: list[Tensor], grads: list[Tensor]) -> Tensor:
        if mode == "r":
            raise RuntimeError(
                "The derivative of linalg.qr depends on Q, which is not computed when "
                "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                "differentiate through linalg.qr."
            )
        q, r = outputs
        g_q, g_r = grads
        m, n = a.shape[-2], a.shape[-1]
        if mode == "complete" and m > n:
            raise NotImplementedError(
                "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
            )
        if m < n:
            raise NotImplementedError(
                "linalg.qr: the gradient for wide matrices (m < n) is not implemented"
            )
        # PyTorch's formula: gA = [gQ + Q syminv(triu(gR R^T - Q^T gQ))] R^-T
        x = _triangle(g_r @ r.transpose(-1, -2) - q.transpose(-1, -2) @ g_q, upper=True)
        sym = x + x.transpose(-1, -2) - x * eye_like(x)
        g_a = g_q + q @ sym
        return solve(r, g_a.transpose(-1, -2)).transpose(-1, -2)

    return grad_fn


def qr(A: Tensor, mode: str = "reduced") -> QRResult:
    """``A = Q R`` with orthonormal columns in ``Q`` and upper-triangular ``R``, as
    ``torch.linalg.qr``; ``mode`` is ``'reduced'``, ``'complete'`` or ``'r'`` (``Q``
    empty). The gradient is PyTorch's for ``m >= n``; for ``m < n`` backward raises
    NotImplementedError.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> q, r = mta.linalg.qr(mta.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> bool(((q @ r) - mta.tensor([[3.0, 1.0], [4.0, 2.0]])).abs().max() < 1e-6)
    True
    """
    check_matrix("linalg.qr", A, square=False)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    m, n = A.shape[-2:]
    k = min(m, n)
    q_cols = m if mode == "complete" else k

    def parts(xp: Any, a: Any) -> list[Any]:
        q, r = xp.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
        return [q, r]

    q, r = apply_packed(A, parts, _qr_grad(mode), [(m, q_cols), (q_cols, n)])
    if mode == "r":
        return QRResult(A[..., :0, :0].reshape(0), r)
    return QRResult(q, r)


# ---------------------------------------------------------------- eigh


class EighResult(NamedTuple):
    """``(eigenvalues, eigenvectors)`` of :func:`eigh`."""

    eigenvalues: Tensor
    eigenvectors: Tensor


def _eigh_grad(a: Tensor, outputs: list[Tensor], grads: list[Tensor]) -> Tensor:
    # PyTorch's linalg_eig_backward for symmetric A:
    # gA = V (skew(V^T gV) / E + diag(gL)) V^T, E[i, j] = L[j] - L[i] (1 on the diagonal)
    w, v = outputs
    g_w, g_v = grads
    vt_gv = v.transpose(-1, -2) @ g_v
    skew = (vt_gv - vt_gv.transpose(-1, -2)) * 0.5
    gaps = w.unsqueeze(-2) - w.unsqueeze(-1) + eye_like(vt_gv)
    inner = skew / gaps + diag_embed(g_w)
    return v @ inner @ v.transpose(-1, -2)


def eigh(A: Tensor, UPLO: str = "L") -> EighResult:
    """Eigenvalues (ascending) and orthonormal eigenvectors (columns) of a symmetric
    matrix, as ``torch.linalg.eigh``: only the triangle ``UPLO`` names is read. The
    gradient is PyTorch's; eigenvectors are defined up to sign, and their gradient is
    infinite or NaN where eigenvalues repeat.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.linalg.eigh(mta.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues
    tensor([1., 2.])
    """
    check_matrix("linalg.eigh", A)
    if UPLO not in ("L", "U"):
        raise ValueError(f"linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    n = A.shape[-1]

    def parts(xp: Any, a: Any) -> list[Any]:
        w, v = xp.linalg.eigh(a, UPLO=UPLO)
        return [w, v]

    w, v = apply_packed(A, parts, _eigh_grad, [(n,), (n, n)])
    return EighResult(w, v)


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues (ascending) of a symmetric matrix, as ``torch.linalg.eigvalsh``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.linalg.eigvalsh(mta.tensor([[2.0, 1.0], [1.0, 2.0]]))
    tensor([1., 3.])
    """
    return eigh(A, UPLO).eigenvalues


# ---------------------------------------------------------------- SVD


class SVDResult(NamedTuple):
    """``(U, S, Vh)`` of :func:`svd`."""

    U: Tensor
    S: Tensor
    Vh: Tensor


def _svd_grad(a: Tensor, outputs: list[Tensor], grads: list[Tensor]) -> Tensor:
    # PyTorch's svd_backward (real case), on the reduced factors:
    # gA = U [(skew(U^T gU) S + S skew(V^T gV)) / E + diag(gS)] Vh + the parts of gU, gV
    # outside the spans of U and V; E[i, j] = S_j^2 - S_i^2 (1 on the diagonal).
    u, s, vh = outputs
    g_u, g_s, g_vh = grads
    m, n = a.shape[-2], a.shape[-1]
    k = s.shape[-1]
    u, g_u, vh, g_vh = u[..., :k], g_u[..., :k], vh[..., :k, :], g_vh[..., :k, :]
    v, g_v = vh.transpose(-1, -2), g_vh.transpose(-1, -2)
    ut_gu, vt_gv = u.transpose(-1, -2) @ g_u, v.transpose(-1, -2) @ g_v
    skew_u, skew_v = ut_gu - ut_gu.transpose(-1, -2), vt_gv - vt_gv.transpose(-1, -2)
    s2 = s * s
    gaps = s2.unsqueeze(-2) - s2.unsqueeze(-1) + eye_like(ut_gu)
    g_a = (skew_u * s.unsqueeze(-2) + s.unsqueeze(-1) * skew_v) / gaps + diag_embed(g_s)
    if m > n:
        g_u_s_inv = g_u / s.unsqueeze(-2)
        g_a = u @ g_a + g_u_s_inv - u @ (u.transpose(-1, -2) @ g_u_s_inv)
        return g_a @ vh
    if m < n:
        g_v_s_inv = (g_v / s.unsqueeze(-2)).transpose(-1, -2)
        return u @ (g_a @ vh + g_v_s_inv - (g_v_s_inv @ v) @ vh)
    return u @ g_a @ vh


def svd(A: Tensor, full_matrices: bool = True) -> SVDResult:
    """``A = U diag(S) Vh``, singular values descending, as ``torch.linalg.svd``
    (``full_matrices=True`` by default, as there). The gradient is PyTorch's; with
    ``full_matrices=True`` it ignores the extra columns of ``U`` and rows of ``Vh``,
    as PyTorch does. Singular vectors are defined up to sign.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.linalg.svd(mta.tensor([[3.0, 0.0], [0.0, -4.0]])).S
    tensor([4., 3.])
    """
    check_matrix("linalg.svd", A, square=False)
    m, n = A.shape[-2:]
    k = min(m, n)
    u_cols, vh_rows = (m, n) if full_matrices else (k, k)

    def parts(xp: Any, a: Any) -> list[Any]:
        u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
        return [u, s, vh]

    u, s, vh = apply_packed(A, parts, _svd_grad, [(m, u_cols), (k,), (vh_rows, n)])
    return SVDResult(u, s, vh)


def svdvals(A: Tensor) -> Tensor:
    """The singular values of ``A``, descending, as ``torch.linalg.svdvals``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.linalg.svdvals(mta.tensor([[3.0, 0.0], [0.0, -4.0]]))
    tensor([4., 3.])
    """
    return svd(A, full_matrices=False).S


def matrix_rank(
    A: Tensor, *, atol: float | None = None, rtol: float | None = None, hermitian: bool = False
) -> Tensor:
    """The number of singular values above ``max(atol, rtol * largest)`` (int64), as
    ``torch.linalg.matrix_rank``; ``rtol`` defaults to ``eps * max(m, n)``.
    ``hermitian`` is accepted; the SVD is used either way.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.linalg.matrix_rank(mta.tensor([[1.0, 2.0], [2.0, 4.0]]))
    tensor(1)
    """
    check_matrix("linalg.matrix_rank", A, square=False)
    xp = A.xp
    with A.device.guard():
        s = xp.linalg.svd(A.array, compute_uv=False)
        largest = s.max(axis=-1, keepdims=True) if s.shape[-1] else xp.zeros(s.shape[:-1] + (1,))
        tol = singular_tolerance(xp, largest, A.shape, atol, rtol)
        rank = (s > tol).sum(axis=-1).astype(np.int64)
    return Tensor._make(rank, A.device, False, None)


__all__ = ["eigh", "eigvalsh", "matrix_rank", "qr", "svd", "svdvals"]
