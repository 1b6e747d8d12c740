"""``minitorch_accel.autograd``: PyTorch's ``torch.autograd`` names.

The machinery lives in :mod:`minitorch_accel.core`: the graph's node in
:mod:`~minitorch_accel.core.function`, the backward walk in
:mod:`~minitorch_accel.core.backward`, grad mode in :mod:`~minitorch_accel.core.grad_mode`.

Examples
--------
>>> import minitorch_accel as mta
>>> x = mta.tensor([3.0], requires_grad=True)
>>> mta.autograd.grad((x * x).sum(), x)
(tensor([6.]),)
"""

from __future__ import annotations

from .core.backward import grad
from .core.function import Function
from .core.grad_mode import (
    detect_anomaly,
    enable_grad,
    is_anomaly_enabled,
    is_grad_enabled,
    no_grad,
    set_detect_anomaly,
    set_grad_enabled,
)
from .core.versions import RemovableHandle

__all__ = [
    "Function",
    "RemovableHandle",
    "detect_anomaly",
    "enable_grad",
    "grad",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "no_grad",
    "set_detect_anomaly",
    "set_grad_enabled",
]
