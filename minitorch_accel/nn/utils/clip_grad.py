"""Gradient clipping, as ``torch.nn.utils.clip_grad``.

The implementation lives in :mod:`minitorch_accel.optim.clip` (one implementation,
reachable both as ``optim.clip_grad_norm_`` and as ``nn.utils.clip_grad_norm_``).

Examples
--------
>>> import minitorch_accel as mta
>>> from minitorch_accel import nn
>>> model = nn.Linear(3, 2)
>>> model(mta.ones(4, 3)).sum().backward()
>>> total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
>>> bool(nn.utils.get_total_norm([p.grad for p in model.parameters()]) <= 1.0)
True
"""

from __future__ import annotations

from ...optim.clip import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]
