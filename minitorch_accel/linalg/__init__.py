"""Linear algebra, as ``torch.linalg``: products (``multi_dot``, ``cross``), norms
(``vector_norm``, ``matrix_norm``, ``norm``), determinants (``det``, ``slogdet``),
``inv``, ``pinv``, ``solve``, ``matrix_power``, ``matrix_rank`` and the
decompositions ``cholesky``, ``qr``, ``eigh``/``eigvalsh``, ``svd``/``svdvals``.

Examples
--------
>>> import minitorch_accel as mta
>>> a = mta.tensor([[4.0, 7.0], [2.0, 6.0]])
>>> bool(((a @ mta.linalg.inv(a)) - mta.eye(2)).abs().max() < 1e-6)
True
"""

from __future__ import annotations

from ..core.tensor import Tensor
from ..ops.linalg import cholesky, det, inv, matrix_power, pinv, slogdet, solve
from ..ops.products import cross as _cross
from ..ops.products import multi_dot
from .decompositions import eigh, eigvalsh, matrix_rank, qr, svd, svdvals
from .norms import matrix_norm, norm, vector_norm


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (default -1), shapes broadcast, as
    ``torch.linalg.cross``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.linalg.cross(mta.tensor([[0.0, 1.0, 0.0]]), mta.tensor([[0.0, 0.0, 1.0]]))
    tensor([[1., 0., 0.]])
    """
    return _cross(input, other, dim=dim)


__all__ = [
    "cholesky",
    "cross",
    "det",
    "eigh",
    "eigvalsh",
    "inv",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "vector_norm",
]
