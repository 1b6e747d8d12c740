"""Memory layouts of image arrays and the buffer cache: they live in
:mod:`minitorch_accel.backends.layout` (the fast paths use them); importable from here
as well for the ops that follow their input's layout.
"""

from __future__ import annotations

from ..backends.layout import (
    NCHW,
    NHWC,
    Array,
    BufferCache,
    buffer_cache,
    empty_with_layout,
    padded,
    physical_order,
)

__all__ = [
    "NCHW",
    "NHWC",
    "Array",
    "BufferCache",
    "buffer_cache",
    "empty_with_layout",
    "padded",
    "physical_order",
]
