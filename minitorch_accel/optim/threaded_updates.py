"""The CPU's threaded optimizer updates: the reference rule run on runs of elements.

:func:`~.sgd.sgd_update` and :func:`~.adam.adam_update` are elementwise: every element
of a parameter is updated from the same elements of its gradient and buffers. So a
large parameter is cut into contiguous runs of elements, and each thread runs the
reference rule on its own runs, with the same operations in the same order: the
result is equal bit for bit. Small parameters (most biases) are not worth a thread.
The NumPy backend hands these out as the kernels ``"sgd_update"`` and
``"adam_update"`` when more than one thread is in use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..backends.numpy.threads import parallel_for, register_kernel
from .adam import adam_update
from .sgd import sgd_update

#: Fewest elements per thread (256 KiB of float32).
ELEMENT_GRAIN = 1 << 16


def chunked(rule: Callable[..., None], arrays: int) -> Callable[..., None]:
    """``rule(xp, *args)`` run on element runs of its first ``arrays`` array arguments
    (None allowed) in parallel, when they are all C-contiguous and of one shape.
    """

    def update(xp: Any, *args: Any) -> None:
        operands, rest = args[:arrays], args[arrays:]
        present = [a for a in operands if a is not None]
        shape = present[0].shape
        if any(not a.flags.c_contiguous or a.shape != shape for a in present):
            rule(xp, *args)
            return
        flat = [None if a is None else a.reshape(-1) for a in operands]

        def chunk(s: int, e: int) -> None:
            rule(xp, *(None if a is None else a[s:e] for a in flat), *rest)

        parallel_for(present[0].size, chunk, grain=ELEMENT_GRAIN)

    update.__doc__ = f"``{rule.__name__}`` over runs of elements on several threads."
    return update


#: SGD: param, grad, momentum_buffer; Adam: param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq.
sgd_update_threaded = chunked(sgd_update, 3)
adam_update_threaded = chunked(adam_update, 5)
register_kernel("sgd_update", sgd_update_threaded)
register_kernel("adam_update", adam_update_threaded)

__all__ = ["adam_update_threaded", "chunked", "sgd_update_threaded"]
