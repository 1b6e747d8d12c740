"""Linear algebra ops: the matrix inverse and its gradient."""

from __future__ import annotations

from typing import Any

from ..core.function import Function
from ..core.tensor import Tensor


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
