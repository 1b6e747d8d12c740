"""RAdam: Adam whose adaptive step is switched on gradually, as its variance settles."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..core.factories import zeros_like
from .optimizer import ParamsLike
from .per_param import PerParameterOptimizer, check_betas, check_common

if TYPE_CHECKING:
    from ..core.tensor import Tensor


def radam_update(
    xp: Any,
    param: Any,
    grad: Any,
    exp_avg: Any,
    exp_avg_sq: Any,
    step: int,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    decoupled_weight_decay: bool,
    maximize: bool,
) -> None:
    """One RAdam step on raw arrays; ``param`` and the buffers change in place.

    With ``g`` as in :func:`~minitorch_accel.optim.adam_update`, the moments updated as
    Adam's, ``m = exp_avg / (1 - beta1**step)``, ``rho_inf = 2 / (1 - beta2) - 1`` and
    ``rho_t = rho_inf - 2 * step * beta2**step / (1 - beta2**step)``::

        param -= lr * m                                             if rho_t <= 5
        param -= lr * m * r * sqrt(1 - beta2**step) / (sqrt(exp_avg_sq) + eps)  otherwise

    where ``r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))``
    rectifies the variance of the adaptive rate.
    """
    g = -grad if maximize else grad
    if weight_decay != 0:
        if decoupled_weight_decay:
            param *= 1 - lr * weight_decay
        else:
            g = g + weight_decay * param
    exp_avg += (1 - beta1) * (g - exp_avg)
    exp_avg_sq *= beta2
    exp_avg_sq += (1 - beta2) * g * g
    bias_correction2 = 1 - beta2**step
    corrected = exp_avg / (1 - beta1**step)
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * beta2**step / bias_correction2
    if rho_t <= 5.0:
        param -= corrected * lr
        return
    rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
    adaptive = math.sqrt(bias_correction2) / (xp.sqrt(exp_avg_sq) + eps)
    param -= corrected * lr * adaptive * rect


class RAdam(PerParameterOptimizer):
    """RAdam (Liu et al., 2020), with PyTorch's update rule (see :func:`radam_update`).

    Parameters
    ----------
    params : iterable of Tensor or of dict
        Tensors to optimize, or parameter groups (see :class:`Optimizer`).
    lr : float, default 1e-3
        Learning rate.
    betas : (float, float), default (0.9, 0.999)
        Decay rates of the running averages of the gradient and of its square.
    eps : float, default 1e-8
        Added to the denominator, for numerical stability.
    weight_decay : float, default 0
        L2 penalty added to the gradient (or, decoupled, the fraction
        ``lr * weight_decay`` of each weight removed at every step).
    decoupled_weight_decay : bool, default False
        Decay the weights directly instead of through the gradient (RAdamW).
    maximize : bool, default False
        Ascend the objective instead of descending it.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = RAdam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()  # the first steps are plain momentum steps: lr * m
    >>> w
    tensor([ 0.8, -1.6], requires_grad=True)
    """

    per_element_state = ("exp_avg", "exp_avg_sq")

    def __init__(
        self,
        params: ParamsLike,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        check_common(lr, eps, weight_decay)
        defaults = {
            "lr": lr,
            "betas": check_betas(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def init_state(self, p: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        """``step``, ``exp_avg`` and ``exp_avg_sq``, zero."""
        return {"step": 0, "exp_avg": zeros_like(p), "exp_avg_sq": zeros_like(p)}

    def update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> None:
        """One :func:`radam_update` of ``p``."""
        beta1, beta2 = group["betas"]
        radam_update(
            p.xp,
            p.array,
            grad,
            state["exp_avg"].array,
            state["exp_avg_sq"].array,
            state["step"],
            group["lr"],
            beta1,
            beta2,
            group["eps"],
            group["weight_decay"],
            group["decoupled_weight_decay"],
            group["maximize"],
        )
