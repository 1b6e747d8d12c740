"""ASGD: stochastic gradient descent with a decaying step, and a running average of the
weights (Polyak-Ruppert averaging) kept beside them in the state ``ax``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.defaults import get_default_dtype
from ..core.factories import zeros_like
from .optimizer import ParamsLike, check_non_negative
from .per_param import PerParameterOptimizer

if TYPE_CHECKING:
    from ..core.tensor import Tensor


def asgd_update(
    param: Any,
    grad: Any,
    ax: Any,
    eta: float,
    mu: float,
    lambd: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    """One ASGD step on raw arrays; ``param`` and ``ax`` change in place.

    With ``g = grad + weight_decay * param`` (``-grad`` when maximizing)::

        param = param * (1 - lambd * eta) - eta * g
        ax = ax + (param - ax) * mu          # ax = param while mu == 1
    """
    g = -grad if maximize else grad
    if weight_decay != 0:
        g = g + weight_decay * param
    param *= 1 - lambd * eta
    param -= eta * g
    if mu != 1:
        ax += (param - ax) * mu
    else:
        ax[...] = param


class ASGD(PerParameterOptimizer):
    """Averaged stochastic gradient descent (Polyak and Juditsky, 1992), with PyTorch's
    update rule (see :func:`asgd_update`).

    After the step numbered ``t`` of a parameter, its step size and averaging weight
    become::

        eta = lr / (1 + lambd * lr * t) ** alpha
        mu = 1 / max(1, t - t0)

    so averaging starts at step ``t0``: the state ``ax`` is the average of the weights
    since then (use it for evaluation).

    Parameters
    ----------
    params : iterable of Tensor or of dict
        Tensors to optimize, or parameter groups (see :class:`Optimizer`).
    lr : float, default 1e-2
        Learning rate.
    lambd : float, default 1e-4
        The decay term: weights shrink by ``1 - lambd * eta`` each step.
    alpha : float, default 0.75
        The power of the step-size decay.
    t0 : float, default 1e6
        The step at which averaging starts.
    weight_decay : float, default 0
        L2 penalty added to the gradient.
    maximize : bool, default False
        Ascend the objective instead of descending it.

    Notes
    -----
    As PyTorch does, ``eta`` and ``mu`` are stored with the precision of the default
    dtype (:func:`~minitorch_accel.get_default_dtype`: float32 unless set to float64),
    here as Python floats rather than 0-d tensors, so even a float64 model steps with
    ``eta`` rounded to float32 by default.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = ASGD([w], lr=0.1, lambd=0.0)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w, opt.state[w]["ax"]
    (tensor([ 0.8, -1.6], requires_grad=True), tensor([ 0.8, -1.6]))
    """

    per_element_state = ("ax",)

    def __init__(
        self,
        params: ParamsLike,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0.0,
        maximize: bool = False,
    ) -> None:
        check_non_negative("learning rate", lr)
        check_non_negative("weight_decay value", weight_decay)
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
            "weight_decay": weight_decay,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def init_state(self, p: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        """``step``, ``eta`` (the group's ``lr``), ``mu`` (1) and ``ax`` (zeros)."""
        return {"step": 0, "eta": _scalar(group["lr"]), "mu": 1.0, "ax": zeros_like(p)}

    def update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> None:
        """One :func:`asgd_update` of ``p``, then the next ``eta`` and ``mu``."""
        asgd_update(
            p.array,
            grad,
            state["ax"].array,
            float(state["eta"]),
            float(state["mu"]),
            group["lambd"],
            group["weight_decay"],
            group["maximize"],
        )
        lr, lambd, t = group["lr"], group["lambd"], state["step"]
        state["eta"] = _scalar(lr / ((1 + lambd * lr * t) ** group["alpha"]))
        state["mu"] = _scalar(1 / max(1, t - group["t0"]))


def _scalar(value: float) -> float:
    """``value`` rounded to the default dtype's precision (PyTorch's scalar state dtype)."""
    dtype = np.float64 if get_default_dtype() == np.float64 else np.float32
    return float(dtype(value))
