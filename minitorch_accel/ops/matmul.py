"""Matrix multiplication, batched and broadcasting like ``numpy.matmul``."""

from __future__ import annotations

from typing import Any

from ..core import autocast_state
from ..core.function import Function
from ..core.tensor import Tensor
from .gemm import gemm


class MatMul(Function):
    """``a @ b`` for inputs of 2 or more dims (1-D inputs are promoted by :func:`matmul`)."""

    def forward(self, a: Any, b: Any) -> Any:
        return gemm(self.xp, a, b)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        grad_a = grad @ b.transpose(-1, -2) if need_a else None
        grad_b = a.transpose(-1, -2) @ grad if need_b else None
        return grad_a, grad_b  # batch dims that were broadcast are summed by the engine


def matmul(a: Tensor, b: Tensor) -> Tensor:  # noqa: C901  (one branch per case of NumPy's matmul rules, read top to bottom)
    """The matrix product ``a @ b``.

    Follows ``numpy.matmul``: 1-D operands act as a row (left) or column (right)
    vector, leading dims are batch dims and broadcast.

    Raises
    ------
    ValueError
        If the inner dimensions differ (the message names both shapes).
    """
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError("matmul: both operands must be tensors")
    if autocast_state.state.dtype is not None:
        a, b = autocast_state.to_compute_dtype(a, b)  # type: ignore[assignment]
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: operands must have at least 1 dim, got {a.shape} and {b.shape}")
    if a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
        raise ValueError(
            f"matmul: shapes {a.shape} and {b.shape} do not match: "
            f"{a.shape[-1]} != {b.shape[-2 if b.ndim > 1 else 0]}"
        )
    if a.dtype is not b.dtype and a.dtype != b.dtype:  # equal dtypes may be two objects
        raise TypeError(
            f"matmul: dtypes {a.dtype} and {b.dtype} differ; convert one with .to(dtype=...)"
        )
    if a.device is not b.device:
        raise RuntimeError(
            f"matmul: expected both tensors on one device, got {a.device} and {b.device}"
        )
    if a.ndim == 1 and b.ndim == 1:
        return MatMul.apply(a.reshape(1, -1), b.reshape(-1, 1)).reshape(())
    if a.ndim == 1:
        return matmul(a.reshape(1, -1), b).squeeze(-2)
    if b.ndim == 1:
        return matmul(a, b.reshape(-1, 1)).squeeze(-1)
    try:
        return MatMul.apply(a, b)
    except ValueError:
        raise ValueError(
            f"matmul: batch dims of {a.shape} and {b.shape} do not broadcast"
        ) from None
