"""The CuPy backend's fast optimizer steps: every parameter of a group in one launch.

:func:`sgd_step` and :func:`adam_step` are the ``"cuda"`` backend's fast steps of
``SGD``, ``Adam`` and ``AdamW`` (see :mod:`~minitorch_accel.backends.fast_paths`). They
ask the parameters' backend for its multi-tensor kernel (``sgd_update_many``,
``adam_update_many`` of :class:`~minitorch_accel.backends.cupy.optim_ops.OptimizerFastPaths`):
one launch updates every parameter, when they are several and share one first step or
step count. Where it does not apply (one parameter, mixed dtypes, strided arrays) each
parameter gets its one-kernel update (``sgd_update``, ``adam_update``), or, on a backend
without it, the NumPy backend's scratch-buffer update.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..fast_paths import register_fast
from ..numpy.fast_optim import (
    adam_hyper,
    adam_state,
    adam_update_scratch,
    sgd_hyper,
    sgd_update_scratch,
)


def _kernel(device: Any, name: str, fallback: Callable[..., Any]) -> Callable[..., Any]:
    kernel: Callable[..., Any] | None = device.backend.kernel(name)
    return fallback if kernel is None else kernel


def _many(
    device: Any, name: str, params: list[Any], shared: set[Any]
) -> Callable[..., bool] | None:
    """The multi-tensor kernel ``name`` when the parameters are several and share the one
    value in ``shared`` (a first step, a step count), else None.
    """
    if len(params) < 2 or len(shared) != 1:
        return None
    kernel: Callable[..., bool] | None = device.backend.kernel(name)
    return kernel


def sgd_step(
    device: Any, group: dict[str, Any], params: list[Any], grads: list[Any], states: list[Any]
) -> None:
    """The fast SGD step of ``params`` (raw arrays of ``group`` on ``device``); a
    momentum buffer is added to each state on the first step.
    """
    xp = device.xp
    momentum = group["momentum"]
    hyper = sgd_hyper(group)
    bufs: list[Any] = []
    firsts: list[bool] = []
    for param, state in zip(params, states, strict=True):
        buf, first = None, False
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:  # filled with the gradient by the first update
                buf = state["momentum_buffer"] = xp.zeros_like(param)
                first = True
        bufs.append(buf)
        firsts.append(first)
    many = _many(device, "sgd_update_many", params, set(firsts))
    if many is not None and many(params, grads, bufs if momentum else None, *hyper, firsts[0]):
        return
    update = _kernel(device, "sgd_update", sgd_update_scratch)
    for param, grad, buf, first in zip(params, grads, bufs, firsts, strict=True):
        update(xp, param, grad, buf, *hyper, first)


def adam_step(
    device: Any, group: dict[str, Any], params: list[Any], grads: list[Any], states: list[Any]
) -> None:
    """The fast Adam (and AdamW) step of ``params``, as :func:`sgd_step`."""
    xp = device.xp
    amsgrad = group["amsgrad"]
    hyper = adam_hyper(group)
    steps = [
        adam_state(xp, param, state, amsgrad) for param, state in zip(params, states, strict=True)
    ]
    many = _many(device, "adam_update_many", params, set(steps))
    if many is not None and many(
        params,
        grads,
        [s["exp_avg"] for s in states],
        [s["exp_avg_sq"] for s in states],
        [s["max_exp_avg_sq"] for s in states] if amsgrad else None,
        steps[0],
        *hyper,
    ):
        return
    update = _kernel(device, "adam_update", adam_update_scratch)
    for param, grad, state, step in zip(params, grads, states, steps, strict=True):
        max_sq = state["max_exp_avg_sq"] if amsgrad else None
        update(xp, param, grad, state["exp_avg"], state["exp_avg_sq"], max_sq, step, *hyper)


def register_fast_optim(backend: str = "cuda") -> None:
    """Register :func:`sgd_step` and :func:`adam_step` as ``backend``'s fast steps of
    ``SGD``, ``Adam`` and ``AdamW``.
    """
    register_fast(backend, "SGD", sgd_step)
    register_fast(backend, "Adam", adam_step)
    register_fast(backend, "AdamW", adam_step)


__all__ = ["adam_step", "register_fast_optim", "sgd_step"]
