"""The affine map ``y = x @ weight.T + bias``, as one graph node.

The forward is one matrix product over the last dim of ``x`` (any leading dims are
rows). The backward is the three products of the chain rule, written with Tensor ops
so that it can itself be differentiated (``create_graph=True``)::

    dx = dy @ weight        dweight = dy_rows.T @ x_rows        dbias = dy_rows.sum(0)

where ``*_rows`` flattens the leading dims into one; the input's and the weight's
gradients are their own nodes, :class:`LinearGradInput` and :class:`LinearGradWeight`.
The two products are independent of each other, so a fast path may run them side by
side, one per core (*inter-op parallelism*): the first computes the second too and
leaves it in ``pair`` for it.
"""

from __future__ import annotations

from typing import Any

from ..backends.fast_paths import GradsAhead
from ..core.function import Function
from ..core.tensor import Tensor
from .gemm import gemm


class Linear(Function):
    """``y = x @ weight.T + bias`` over the last dim of ``x`` (``bias`` may be None).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.linear import Linear
    >>> y = Linear.apply(mta.ones(2, 3), mta.ones(4, 3), mta.zeros(4))
    >>> y.tolist()
    [[3.0, 3.0, 3.0, 3.0], [3.0, 3.0, 3.0, 3.0]]
    """

    fresh_grads = True  # products and sums into new arrays

    def forward(self, x: Any, weight: Any, bias: Any) -> Any:
        out = gemm(self.xp, x, weight.T)
        if bias is not None:
            out += bias
        return out

    def backward(self, grad_output: Tensor) -> tuple[Tensor | None, ...]:
        x, weight, _ = self.inputs
        need_x, need_w, need_b = self.needs_input_grad
        pair = GradsAhead()  # what a fast path computes ahead (see the module doc)
        grad_x = None
        if need_x:
            ahead = x.array if need_w else None
            grad_x = LinearGradInput.apply(grad_output, weight, x=ahead, pair=pair)
        grad_w = LinearGradWeight.apply(grad_output, x, pair=pair) if need_w else None
        batch_dims = tuple(range(grad_output.ndim - 1))  # () for a 1-D input: nothing to sum
        grad_b = (grad_output.sum(batch_dims) if batch_dims else grad_output) if need_b else None
        return grad_x, grad_w, grad_b


class LinearGradInput(Function):
    """The input's gradient ``dy @ weight`` (``x`` and ``pair`` are for a fast path
    that computes the weight's gradient beside it; unused here).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> LinearGradInput.apply(mta.ones(2, 4), mta.ones(4, 3)).tolist()
    [[4.0, 4.0, 4.0], [4.0, 4.0, 4.0]]
    """

    fresh_grads = True

    def forward(self, grad: Any, weight: Any, *, x: Any = None, pair: Any = None) -> Any:
        rows = gemm(self.xp, grad.reshape(-1, grad.shape[-1]), weight)
        return rows.reshape(*grad.shape[:-1], weight.shape[1])

    def backward(self, gg: Tensor) -> tuple[Tensor | None, Tensor | None]:
        grad, weight = self.inputs
        need_grad, need_w = self.needs_input_grad
        gg_grad = gg @ weight.transpose(0, 1) if need_grad else None
        return gg_grad, LinearGradWeight.apply(grad, gg) if need_w else None


class LinearGradWeight(Function):
    """The weight's gradient ``dy_rows.T @ x_rows`` (leading dims flattened into rows)
    as one node: one matrix product, no reshapes recorded.
    """

    fresh_grads = True

    def forward(self, grad: Any, x: Any, *, pair: Any = None) -> Any:
        return gemm(self.xp, grad.reshape(-1, grad.shape[-1]).T, x.reshape(-1, x.shape[-1]))

    def backward(self, gg: Tensor) -> tuple[Tensor | None, Tensor | None]:
        grad, x = self.inputs
        return x @ gg.T, grad @ gg


__all__ = ["Linear", "LinearGradInput", "LinearGradWeight"]
