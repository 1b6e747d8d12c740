"""Stochastic gradient descent, with momentum, Nesterov momentum and weight decay."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.grad_mode import no_grad
from .optimizer import Optimizer, ParamsLike, check_non_negative


def sgd_update(
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
    """The rule of :meth:`SGD.step` for one parameter, on raw arrays: ``param`` and
    ``momentum_buffer`` change in place, ``grad`` is only read.

    The backends' fast SGD steps (fused kernels, threaded updates) are tested against it.

    Parameters
    ----------
    xp : module
        ``numpy`` or ``cupy`` (unused: the arithmetic is the arrays' own).
    param, grad : array
        The parameter (updated in place) and its gradient (read only).
    momentum_buffer : array or None
        Same shape as ``param``; None when ``momentum == 0``. Its contents are
        ignored, and overwritten, when ``first_step`` is True.
    lr, momentum, dampening, weight_decay : float
    nesterov, maximize, first_step : bool

    Examples
    --------
    >>> import numpy as np
    >>> p, buf = np.array([1.0, -2.0]), np.zeros(2)
    >>> sgd_update(np, p, 2 * p, buf, 0.1, 0.9, 0.0, False, 0.0, False, True)
    >>> p, buf
    (array([ 0.8, -1.6]), array([ 2., -4.]))
    """
    d = -grad if maximize else grad
    if weight_decay != 0:
        d = d + weight_decay * param
    if momentum != 0:
        buf = momentum_buffer
        buf[...] = d if first_step else momentum * buf + (1 - dampening) * d
        d = d + momentum * buf if nesterov else buf
    param -= lr * d


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), PyTorch's update rule.

    Parameters
    ----------
    params : iterable of Tensor or of dict
        Tensors to optimize, or parameter groups (see :class:`Optimizer`).
    lr : float
        Learning rate.
    momentum : float
        Momentum factor (0: plain SGD).
    dampening : float
        Dampening for momentum: the new gradient enters the buffer scaled by
        ``1 - dampening``.
    nesterov : bool
        Nesterov momentum (needs ``momentum > 0`` and ``dampening == 0``).
    weight_decay : float
        L2 penalty: ``weight_decay * param`` is added to the gradient.
    maximize : bool
        Ascend the objective instead of descending it.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = SGD([w], lr=0.1, momentum=0.9)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.8, -1.6], requires_grad=True)
    """

    per_element_state = ("momentum_buffer",)

    def __init__(
        self,
        params: ParamsLike,
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        nesterov: bool = False,
        weight_decay: float = 0.0,
        maximize: bool = False,
    ) -> None:
        check_non_negative("learning rate", lr)
        check_non_negative("momentum value", momentum)
        check_non_negative("weight_decay value", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "nesterov": nesterov,
            "weight_decay": weight_decay,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, once.

        With ``d = grad + weight_decay * param`` (``-grad`` when maximizing)::

            buf = d                                       on the first step
            buf = momentum * buf + (1 - dampening) * d    afterwards
            d = d + momentum * buf  if nesterov  else  buf
            param -= lr * d

        Parameters
        ----------
        closure : callable, optional
            Re-evaluates the model and returns the loss.

        Returns
        -------
        The closure's loss, or None.
        """
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
                for p, g in self.params_with_grad(group):
                    d = -g if group["maximize"] else g
                    if group["weight_decay"] != 0:
                        d = d + group["weight_decay"] * p.array
                    if momentum != 0:
                        buf = self.state.get(p, {}).get("momentum_buffer")
                        new = d if buf is None else momentum * buf.array + (1 - dampening) * d
                        buf = self.set_state(p, "momentum_buffer", new)
                        d = d + momentum * buf if group["nesterov"] else buf
                    p.array -= lr * d
        return loss
