"""Teaching simulators of accelerator hardware, in plain NumPy.

They stand apart from the framework's layers: nothing in ``minitorch_accel`` imports them,
and they import nothing from it. :mod:`~minitorch_accel.sim.systolic` is the
weight-stationary systolic array at the heart of a TPU, simulated cycle by cycle.

Examples
--------
>>> import numpy as np
>>> from minitorch_accel.sim import systolic_matmul
>>> a, b = np.arange(6).reshape(2, 3), np.ones((3, 2), dtype=int)
>>> systolic_matmul(a, b, size=2).output
array([[ 3,  3],
       [12, 12]])
"""

from __future__ import annotations

from .systolic import SystolicArray, SystolicResult, cycle_count, systolic_matmul, utilisation

__all__ = ["SystolicArray", "SystolicResult", "cycle_count", "systolic_matmul", "utilisation"]
