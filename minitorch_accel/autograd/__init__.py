"""``minitorch_accel.autograd``: PyTorch's ``torch.autograd`` names.

The machinery lives in :mod:`minitorch_accel.core`: the graph's node in
:mod:`~minitorch_accel.core.function`, the backward walk in
:mod:`~minitorch_accel.core.backward`, grad mode in :mod:`~minitorch_accel.core.grad_mode`,
PyTorch-style custom Functions (``forward(ctx, ...)``) in
:mod:`~minitorch_accel.core.custom_function`. :mod:`.functional` has ``jacobian``,
``hessian``, ``vjp``, ``jvp``, ``hvp`` and ``vhp``.

Examples
--------
>>> import minitorch_accel as mta
>>> x = mta.tensor([3.0], requires_grad=True)
>>> mta.autograd.grad((x * x).sum(), x)
(tensor([6.]),)
"""

from __future__ import annotations

from ..core.backward import grad
from ..core.custom_function import FunctionCtx, once_differentiable
from ..core.function import Function
from ..core.grad_mode import (
    detect_anomaly,
    enable_grad,
    is_anomaly_enabled,
    is_grad_enabled,
    no_grad,
    set_detect_anomaly,
    set_grad_enabled,
)
from ..core.versions import RemovableHandle
from . import function, functional

__all__ = [
    "Function",
    "FunctionCtx",
    "RemovableHandle",
    "detect_anomaly",
    "enable_grad",
    "function",
    "functional",
    "grad",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "no_grad",
    "once_differentiable",
    "set_detect_anomaly",
    "set_grad_enabled",
]
