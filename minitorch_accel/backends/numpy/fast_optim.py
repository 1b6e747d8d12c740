"""The CPU's fast optimizer steps: SGD and Adam with one scratch buffer, on several threads.

The reference steps (:meth:`minitorch_accel.optim.SGD.step`,
:meth:`~minitorch_accel.optim.Adam.step`) write the textbook rule with array
arithmetic, which allocates a temporary for almost every operation. The updates here
compute the same operations in the same order into one scratch array (``out=`` and
in-place ufuncs), so the values are equal bit for bit.
They are elementwise: every element of a parameter is updated from the same elements of
its gradient and buffers, so a large parameter is cut into contiguous runs of elements
and each of the pool's threads runs the update on its own runs (:func:`chunked`), with
the same result. Small parameters (most biases) are not worth a thread.

:func:`register_fast_optim` registers :func:`sgd_step` and :func:`adam_step` as the
``"cpu"`` backend's fast steps of ``SGD``, ``Adam`` and ``AdamW`` (see
:mod:`~minitorch_accel.backends.fast_paths`). They work on raw arrays through ``xp``
(``device.xp``), so another backend whose arrays follow NumPy's rules may register them
too.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy

from ..fast_paths import register_fast
from .threads import get_num_threads, parallel_for

#: Fewest elements per thread (2 MiB of float32). An update is a few passes over memory:
#: handing a run to another thread costs tens of microseconds, which smaller runs do
#: not win back (measured with ``benchmarks/optim_step.py`` at 2 threads: runs of 64 Ki
#: elements made LeNet's step slower than the serial update).
ELEMENT_GRAIN = 1 << 19


def sgd_update_scratch(  # noqa: C901  (each branch saves one temporary; the rule is SGD.step's)
    xp: Any,
    param: Any,
    grad: Any,
    momentum_buffer: Any,
    lr: float,
    momentum: float,
    dampening: float,
    nesterov: bool,
    weight_decay: float,
    maximize: bool,
    first_step: bool,
) -> None:
    """:func:`minitorch_accel.optim.sgd_update` (same arguments, same values) with one
    temporary array, reused through ``out=`` and in-place ufuncs.
    """
    scratch = None  # the one temporary array
    d = grad
    if weight_decay != 0:
        scratch = xp.multiply(param, weight_decay)
        (xp.subtract if maximize else xp.add)(scratch, grad, out=scratch)
        d = scratch
    elif maximize:
        d = scratch = xp.negative(grad)
    if momentum != 0:
        buf = momentum_buffer
        if first_step:
            buf[...] = d
        else:
            buf *= momentum
            if dampening == 0:
                buf += d
            else:  # nesterov needs dampening == 0, so d is not needed after this
                if scratch is None:
                    scratch = xp.empty_like(param)
                xp.multiply(d, 1 - dampening, out=scratch)
                buf += scratch
        if nesterov:
            if scratch is None:
                scratch = xp.multiply(buf, momentum)
                scratch += grad
            else:
                scratch += momentum * buf
            d = scratch
        else:
            d = buf
    if d is scratch:
        scratch *= lr
    elif scratch is None:
        scratch = xp.multiply(d, lr)
    else:
        xp.multiply(d, lr, out=scratch)
    param -= scratch


def adam_update_scratch(
    xp: Any,
    param: Any,
    grad: Any,
    exp_avg: Any,
    exp_avg_sq: Any,
    max_exp_avg_sq: Any,
    step: int,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    decoupled_weight_decay: bool,
    amsgrad: bool,
    maximize: bool,
) -> None:
    """:func:`minitorch_accel.optim.adam_update` (same arguments, same values) with one
    temporary array, reused through ``out=`` and in-place ufuncs.
    """
    g = grad
    if weight_decay != 0 and not decoupled_weight_decay:
        g = xp.multiply(param, weight_decay)
        (xp.subtract if maximize else xp.add)(g, grad, out=g)
    elif maximize:
        g = xp.negative(grad)
    if weight_decay != 0 and decoupled_weight_decay:
        param *= 1 - lr * weight_decay
    scratch = xp.empty_like(param)
    exp_avg *= beta1
    xp.multiply(g, 1 - beta1, out=scratch)
    exp_avg += scratch
    exp_avg_sq *= beta2
    xp.multiply(g, g, out=scratch)
    scratch *= 1 - beta2
    exp_avg_sq += scratch
    second = exp_avg_sq
    if amsgrad:
        xp.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        second = max_exp_avg_sq
    step_size = lr / (1 - beta1**step)
    xp.sqrt(second, out=scratch)
    scratch /= math.sqrt(1 - beta2**step)
    scratch += eps
    xp.divide(exp_avg, scratch, out=scratch)
    scratch *= step_size
    param -= scratch


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
sgd_update_threaded = chunked(sgd_update_scratch, 3)
adam_update_threaded = chunked(adam_update_scratch, 5)


def _threaded(xp: Any) -> bool:
    """Whether updates run on the thread pool: NumPy arrays and more than one thread."""
    return xp is numpy and get_num_threads() > 1


def sgd_hyper(group: dict[str, Any]) -> tuple[Any, ...]:
    """The SGD update's arguments after its arrays: lr, momentum, dampening, nesterov,
    weight decay, maximize.
    """
    keys = ("lr", "momentum", "dampening", "nesterov", "weight_decay", "maximize")
    return tuple(group[k] for k in keys)


def adam_hyper(group: dict[str, Any]) -> tuple[Any, ...]:
    """The Adam update's arguments after the step count: lr, beta1, beta2, eps, weight
    decay, decoupled weight decay, amsgrad, maximize.
    """
    keys = ("eps", "weight_decay", "decoupled_weight_decay", "amsgrad", "maximize")
    return (group["lr"], *group["betas"], *(group[k] for k in keys))


def sgd_step(
    device: Any, group: dict[str, Any], params: list[Any], grads: list[Any], states: list[Any]
) -> None:
    """The fast SGD step of the parameters ``params`` of ``group`` (raw arrays, on
    ``device``): :func:`sgd_update_scratch` on each, on the thread pool where it is in use.
    ``states`` holds each parameter's state as raw arrays; a momentum buffer is added
    on the first step.
    """
    xp = device.xp
    update: Callable[..., None] = sgd_update_threaded if _threaded(xp) else sgd_update_scratch
    momentum = group["momentum"]
    hyper = sgd_hyper(group)
    for param, grad, state in zip(params, grads, states, strict=True):
        buf, first = None, False
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:  # filled with the gradient by the first update
                buf = state["momentum_buffer"] = xp.zeros_like(param)
                first = True
        update(xp, param, grad, buf, *hyper, first)


def adam_state(xp: Any, param: Any, state: dict[str, Any], amsgrad: bool) -> int:
    """Make Adam's state in ``state`` on the first step (zero moments), count this step
    and return its number.
    """
    for name in ("exp_avg", "exp_avg_sq", *(("max_exp_avg_sq",) if amsgrad else ())):
        if state.get(name) is None:
            state[name] = xp.zeros_like(param)
    step = state["step"] = int(state.get("step", 0)) + 1
    return step


def adam_step(
    device: Any, group: dict[str, Any], params: list[Any], grads: list[Any], states: list[Any]
) -> None:
    """The fast Adam (and AdamW) step, as :func:`sgd_step`: :func:`adam_update_scratch`
    on each parameter, on the thread pool where it is in use.
    """
    xp = device.xp
    update: Callable[..., None] = adam_update_threaded if _threaded(xp) else adam_update_scratch
    amsgrad = group["amsgrad"]
    hyper = adam_hyper(group)
    for param, grad, state in zip(params, grads, states, strict=True):
        step = adam_state(xp, param, state, amsgrad)
        max_sq = state["max_exp_avg_sq"] if amsgrad else None
        update(xp, param, grad, state["exp_avg"], state["exp_avg_sq"], max_sq, step, *hyper)


def register_fast_optim(backend: str = "cpu") -> None:
    """Register :func:`sgd_step` and :func:`adam_step` as ``backend``'s fast steps of
    ``SGD``, ``Adam`` and ``AdamW``.
    """
    register_fast(backend, "SGD", sgd_step)
    register_fast(backend, "Adam", adam_step)
    register_fast(backend, "AdamW", adam_step)


__all__ = [
    "adam_step",
    "adam_update_scratch",
    "adam_update_threaded",
    "chunked",
    "register_fast_optim",
    "sgd_step",
    "sgd_update_scratch",
    "sgd_update_threaded",
]
