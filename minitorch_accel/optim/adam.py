"""Adam and AdamW: adaptive moment estimation, with L2 or decoupled weight decay."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..core.grad_mode import no_grad
from .optimizer import Optimizer, ParamsLike, check_non_negative


def adam_update(
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
    """The rule of :meth:`Adam.step` for one parameter, on raw arrays: ``param`` and the
    moment buffers change in place, ``grad`` is only read.

    The backends' fast Adam steps (fused kernels, threaded updates) are tested against it.

    Parameters
    ----------
    xp : module
        ``numpy`` or ``cupy``.
    param, grad : array
        The parameter (updated in place) and its gradient (read only).
    exp_avg, exp_avg_sq : array
        First and second moment estimates, updated in place.
    max_exp_avg_sq : array or None
        The running maximum of ``exp_avg_sq`` (AMSGrad); None otherwise.
    step : int
        The number of this step, starting at 1 (for the bias corrections).
    lr, beta1, beta2, eps, weight_decay : float
    decoupled_weight_decay, amsgrad, maximize : bool

    Examples
    --------
    >>> import numpy as np
    >>> p, m, v = np.array([1.0, -2.0]), np.zeros(2), np.zeros(2)
    >>> adam_update(np, p, 2 * p, m, v, None, 1, 0.1, 0.9, 0.999, 1e-8, 0, False, False, False)
    >>> p
    array([ 0.9, -1.9])
    """
    g = -grad if maximize else grad
    if weight_decay != 0 and decoupled_weight_decay:
        param *= 1 - lr * weight_decay
    elif weight_decay != 0:
        g = g + weight_decay * param
    exp_avg[...] = beta1 * exp_avg + (1 - beta1) * g
    exp_avg_sq[...] = beta2 * exp_avg_sq + (1 - beta2) * (g * g)
    v = exp_avg_sq
    if amsgrad:
        v = max_exp_avg_sq
        xp.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
    denominator = xp.sqrt(v) / math.sqrt(1 - beta2**step) + eps
    param -= exp_avg / denominator * (lr / (1 - beta1**step))


class Adam(Optimizer):
    """Adam (Kingma and Ba, 2015), with PyTorch's update rule.

    Parameters
    ----------
    params : iterable of Tensor or of dict
        Tensors to optimize, or parameter groups (see :class:`Optimizer`).
    lr : float
        Learning rate.
    betas : (float, float)
        Decay rates of the running averages of the gradient and of its square.
    eps : float
        Added to the denominator, for numerical stability.
    weight_decay : float
        L2 penalty added to the gradient (or, with ``decoupled_weight_decay``, the
        fraction ``lr * weight_decay`` of each weight removed at every step: AdamW).
    amsgrad : bool
        Use the running maximum of the second moment (AMSGrad).
    maximize : bool
        Ascend the objective instead of descending it.
    decoupled_weight_decay : bool
        Decay the weights directly instead of through the gradient (AdamW).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Adam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.9, -1.9], requires_grad=True)
    """

    per_element_state = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")

    def __init__(
        self,
        params: ParamsLike,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        maximize: bool = False,
        decoupled_weight_decay: bool = False,
    ) -> None:
        check_non_negative("learning rate", lr)
        check_non_negative("epsilon value", eps)
        if len(betas) != 2:
            raise ValueError(f"betas is a pair (beta1, beta2), got {betas!r}")
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        check_non_negative("weight_decay value", weight_decay)
        defaults = {
            "lr": lr,
            "betas": tuple(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, once.

        With ``g = grad`` (``-grad`` when maximizing; plus ``weight_decay * param`` for
        Adam, while AdamW first shrinks ``param *= 1 - lr * weight_decay``), at step ``t``::

            exp_avg    = beta1 * exp_avg    + (1 - beta1) * g
            exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g * g
            v = max(max_exp_avg_sq, exp_avg_sq)  if amsgrad  else  exp_avg_sq
            param -= exp_avg / (sqrt(v) / sqrt(1 - beta2**t) + eps) * lr / (1 - beta1**t)

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
                (beta1, beta2), lr, decay = group["betas"], group["lr"], group["weight_decay"]
                for p, g in self.params_with_grad(group):
                    state = self.count_step(p, "exp_avg", "exp_avg_sq", *AMSGRAD[group["amsgrad"]])
                    m, v = state["exp_avg"].array, state["exp_avg_sq"].array
                    g = -g if group["maximize"] else g
                    if decay != 0 and group["decoupled_weight_decay"]:
                        p.array *= 1 - lr * decay
                    elif decay != 0:
                        g = g + decay * p.array
                    m[...] = beta1 * m + (1 - beta1) * g
                    v[...] = beta2 * v + (1 - beta2) * (g * g)
                    if group["amsgrad"]:
                        vmax = state["max_exp_avg_sq"].array
                        v = p.xp.maximum(vmax, v, out=vmax)
                    denom = p.xp.sqrt(v) / math.sqrt(1 - beta2 ** state["step"]) + group["eps"]
                    p.array -= m / denom * (lr / (1 - beta1 ** state["step"]))
        return loss


#: The extra state buffer of AMSGrad, by ``group["amsgrad"]``.
AMSGRAD: dict[bool, tuple[str, ...]] = {False: (), True: ("max_exp_avg_sq",)}


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter, 2019).

    Each step first shrinks every weight by the fraction ``lr * weight_decay``, then
    applies the Adam update computed from the gradient alone. Parameters as
    :class:`Adam`, with ``weight_decay=1e-2`` by default.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = AdamW([w], lr=0.1, weight_decay=0.5)
    >>> opt.param_groups[0]["decoupled_weight_decay"]
    True
    """

    def __init__(
        self,
        params: ParamsLike,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        maximize: bool = False,
    ) -> None:
        super().__init__(
            params,
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            decoupled_weight_decay=True,
        )
