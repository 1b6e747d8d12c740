"""``minitorch_accel.autograd.function``: PyTorch's ``torch.autograd.function`` names.

Subclass :class:`Function` with ``forward`` and ``backward`` as staticmethods taking a
``ctx``, as in PyTorch, and call ``MyFunction.apply(...)`` (see
:mod:`minitorch_accel.core.custom_function`).

Examples
--------
>>> import minitorch_accel as mta
>>> class MyReLU(mta.autograd.Function):
...     @staticmethod
...     def forward(ctx, input):
...         ctx.save_for_backward(input)
...         return input.clamp(min=0)
...     @staticmethod
...     def backward(ctx, grad_output):
...         (input,) = ctx.saved_tensors
...         grad_input = grad_output.clone()
...         grad_input[input < 0] = 0
...         return grad_input
>>> x = mta.tensor([-1.0, 2.0], requires_grad=True)
>>> y = MyReLU.apply(x)
>>> y.grad_fn.name()
'MyReLUBackward'
>>> y.sum().backward()
>>> x.grad
tensor([0., 1.])
"""

from __future__ import annotations

from ..core.custom_function import BackwardCFunction, FunctionCtx, once_differentiable
from ..core.function import Function

__all__ = ["BackwardCFunction", "Function", "FunctionCtx", "once_differentiable"]
