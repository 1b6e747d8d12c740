"""Linear algebra, as ``torch.linalg``: :func:`inv`.

Examples
--------
>>> import minitorch_accel as mta
>>> a = mta.tensor([[4.0, 7.0], [2.0, 6.0]])
>>> bool(((a @ mta.linalg.inv(a)) - mta.eye(2)).abs().max() < 1e-6)
True
"""

from __future__ import annotations

from ..ops.linalg import inv

__all__ = ["inv"]
