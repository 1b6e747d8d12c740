"""Keep freed host memory for the next step: the CPU's counterpart of a caching allocator.

A training step allocates the same large arrays every time: activations, their
gradients, temporaries of a few megabytes each. The C library's ``malloc`` serves a
block above 128 KiB with a fresh ``mmap`` and gives it back to the operating system on
``free``. The next step's array of the same size then starts as untouched pages, and the
first write to each 4 KiB page stops the program while the kernel finds and zeroes a
page (a *page fault*): thousands per step, a tenth or more of a small model's step time
spent in the kernel (``benchmarks/threads.py --faults`` counts them). glibc raises that
128 KiB threshold by itself each time it frees a larger mapped block, and hands the top
of its heap back above twice the threshold, so without a setting the number of faults
depends on the order of the allocations: a few per step in one program, thousands in
another.

GPU frameworks avoid the same cost with a caching allocator (CuPy's memory pool,
PyTorch's CUDA allocator): freed blocks are kept for the next request. On the host,
GNU libc can be asked to do the same with ``mallopt``: serve blocks up to 32 MiB from
its heap, and do not hand freed memory back to the system. The process keeps its peak
memory reserved instead of returning it between steps, as a GPU memory pool does.

:func:`keep_freed_memory` is called when the NumPy backend is registered, unless
``MINITORCH_ACCEL_KEEP_HEAP=0``; elsewhere than GNU libc it does nothing.
"""

from __future__ import annotations

import ctypes
import os
import platform

ENV_VAR = "MINITORCH_ACCEL_KEEP_HEAP"

#: ``mallopt`` parameters of GNU libc (``malloc.h``).
M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3

#: Blocks up to this size come from the heap (GNU libc's largest allowed value).
MMAP_THRESHOLD = 32 << 20
#: Free memory at the top of the heap is returned to the system only above this.
TRIM_THRESHOLD = 1 << 30
#: Extra memory taken each time the heap grows (fewer, larger requests to the system).
TOP_PAD = 64 << 20

_kept = False


def keep_freed_memory() -> bool:
    """Have GNU libc keep freed blocks up to 32 MiB for reuse (see the module's text).

    Returns
    -------
    bool
        True if the setting is in effect: GNU libc, and ``MINITORCH_ACCEL_KEEP_HEAP``
        not ``0``.

    Examples
    --------
    >>> import os, platform
    >>> from minitorch_accel.backends.numpy.heap import keep_freed_memory
    >>> wanted = os.environ.get("MINITORCH_ACCEL_KEEP_HEAP") != "0"
    >>> keep_freed_memory() == (wanted and platform.libc_ver()[0] == "glibc")
    True
    """
    global _kept
    if _kept:
        return True
    if os.environ.get(ENV_VAR, "1").strip() == "0" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(None)
        done = all(
            libc.mallopt(param, value) == 1
            for param, value in (
                (M_MMAP_THRESHOLD, MMAP_THRESHOLD),
                (M_TRIM_THRESHOLD, TRIM_THRESHOLD),
                (M_TOP_PAD, TOP_PAD),
            )
        )
    except (OSError, AttributeError):
        return False
    _kept = done
    return done


__all__ = ["ENV_VAR", "keep_freed_memory"]
