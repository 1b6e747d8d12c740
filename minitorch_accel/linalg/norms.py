"""Vector and matrix norms as ``torch.linalg`` has them: ``vector_norm``,
``matrix_norm`` and ``norm``.

The vector norm is :class:`~minitorch_accel.ops.scan.VectorNorm` (PyTorch's gradient,
0 at a zero vector); the matrix norms are compositions: ``'fro'`` the vector 2-norm of
all entries, ``1``/``inf`` the largest column/row sum of ``|A|`` (``-1``/``-inf`` the
smallest), ``2``/``-2`` the largest/smallest singular value, ``'nuc'`` their sum.
"""

# ruff: noqa: N803, N806  (PyTorch's argument names: A)
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.tensor import Tensor
from ..ops.reduce import amax, amin, normalize_dims
from ..ops.scan import VectorNorm
from .decompositions import svdvals


def _float_input(op: str, x: Any, dtype: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    if x.dtype.kind != "f":
        raise TypeError(
            f"{op}: expected a floating point tensor as input, got {x.dtype}; use .float()"
        )
    return x if dtype is None else x.to(dtype=dtype)


def vector_norm(
    x: Tensor, ord: float = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """``(sum |x|**ord) ** (1/ord)`` over ``dim`` (all dims by default), as
    ``torch.linalg.vector_norm``: ``ord`` any real number, ``inf``/``-inf`` the
    largest/smallest ``|x|``, 0 the count of non-zeros; ``dtype`` converts first.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.linalg.vector_norm(mta.tensor([[3.0, 4.0], [0.0, 0.0]]), dim=1)
    tensor([5., 0.])
    """
    x = _float_input("linalg.vector_norm", x, dtype)
    if isinstance(ord, bool) or not isinstance(ord, (int, float, np.integer, np.floating)):
        raise TypeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    dims = normalize_dims(dim, x.ndim) if x.ndim else ()
    if x.numel() == 0 and (ord < 0 or math.isinf(ord)) and any(x.shape[d] == 0 for d in dims):
        raise ValueError(f"linalg.vector_norm: cannot compute the {ord} norm of an empty dim")
    out = VectorNorm.apply(x, p=float(ord), dims=dims, keepdim=keepdim)
    return out


def _row_col(op: str, A: Tensor, dim: Any) -> tuple[int, int]:
    if A.ndim < 2:
        raise ValueError(f"{op}: A must have at least 2 dims, got shape {tuple(A.shape)}")
    try:
        rows, cols = (int(d) for d in dim)
    except (TypeError, ValueError):
        raise ValueError(f"{op}: dim must be a pair of dims, got {dim!r}") from None
    rows, cols = (normalize_dims(d, A.ndim)[0] for d in (rows, cols))
    if rows == cols:
        raise ValueError(f"{op}: dims must be different, got {dim!r}")
    return rows, cols


def matrix_norm(
    A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """A matrix norm over the two dims ``dim``, as ``torch.linalg.matrix_norm``:
    ``ord`` is ``'fro'``, ``'nuc'``, ``inf``, ``-inf``, ``1``, ``-1``, ``2`` or ``-2``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> a = mta.tensor([[1.0, -2.0], [3.0, 4.0]])
    >>> mta.linalg.matrix_norm(a, 1), mta.linalg.matrix_norm(a, float("inf"))
    (tensor(6.), tensor(7.))
    """
    A = _float_input("linalg.matrix_norm", A, dtype)
    rows, cols = _row_col("linalg.matrix_norm", A, dim)
    if ord == "fro":
        return VectorNorm.apply(A, p=2.0, dims=tuple(sorted((rows, cols))), keepdim=keepdim)
    if ord in ("nuc", 2, -2):
        moved = A.permute(*[d for d in range(A.ndim) if d not in (rows, cols)], rows, cols)
        s = svdvals(moved)
        out = s.sum(-1) if ord == "nuc" else (amax if ord == 2 else amin)(s, -1)
        if keepdim:
            for d in sorted((rows, cols)):
                out = out.unsqueeze(d)
        return out
    if ord in (1, -1, math.inf, -math.inf):
        summed, reduced = (rows, cols) if abs(ord) == 1 else (cols, rows)
        sums = A.abs().sum(summed, keepdim=True)
        pick = amax if ord > 0 else amin
        out = pick(sums, reduced, keepdim=True)
        return out if keepdim else out.squeeze((rows, cols))
    raise ValueError(
        f"linalg.matrix_norm: ord must be 'fro', 'nuc', inf, -inf, 1, -1, 2 or -2, got {ord!r}"
    )


def norm(
    A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """A vector or a matrix norm, as ``torch.linalg.norm``: a matrix norm when ``dim``
    is a pair or (with ``dim=None`` and an ``ord``) ``A`` is 2-D; a vector norm when
    ``dim`` is an int or ``A`` is 1-D; with neither ``ord`` nor ``dim``, the 2-norm of
    all entries.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.linalg.norm(mta.tensor([[3.0, 0.0], [0.0, 4.0]]))
    tensor(5.)
    >>> mta.linalg.norm(mta.tensor([[3.0, 0.0], [0.0, 4.0]]), ord=2)
    tensor(4.)
    """
    if dim is not None and not isinstance(dim, (int, np.integer)):
        dim = tuple(dim)
        if len(dim) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
        if len(dim) != 1:
            raise ValueError(f"linalg.norm: dim must be an int or a pair of dims, got {dim!r}")
    if dim is None and ord is not None:
        if not isinstance(A, Tensor) or A.ndim not in (1, 2):
            raise ValueError(
                "linalg.norm: with ord given and dim=None, the input must be 1-D or 2-D, got "
                f"shape {tuple(getattr(A, 'shape', ()))}"
            )
        if A.ndim == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise ValueError(f"linalg.norm: ord {ord!r} is a matrix norm; give a pair of dims")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


__all__ = ["matrix_norm", "norm", "vector_norm"]
