"""NAdam: Adam with Nesterov momentum and a warming-up momentum schedule."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.factories import zeros_like
from .optimizer import ParamsLike, check_non_negative
from .per_param import PerParameterOptimizer, check_betas, check_common

if TYPE_CHECKING:
    from ..core.tensor import Tensor


def nadam_update(
    xp: Any,
    param: Any,
    grad: Any,
    exp_avg: Any,
    exp_avg_sq: Any,
    mu_product: float,
    step: int,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    momentum_decay: float,
    decoupled_weight_decay: bool,
    maximize: bool,
) -> float:
    """One NAdam step on raw arrays; ``param`` and the buffers change in place.

    With ``g = grad`` (``-grad`` when maximizing; plus ``weight_decay * param``, or with
    ``decoupled_weight_decay`` first ``param *= 1 - lr * weight_decay``) and
    ``mu_t = beta1 * (1 - 0.96 ** (t * momentum_decay) / 2)``::

        mu_product = mu_product * mu_step
        exp_avg    = beta1 * exp_avg    + (1 - beta1) * g
        exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g * g
        denom = sqrt(exp_avg_sq / (1 - beta2**step)) + eps
        param -= lr * (1 - mu_step) / (1 - mu_product) * g / denom
        param -= lr * mu_next / (1 - mu_product * mu_next) * exp_avg / denom

    Returns
    -------
    float
        The new ``mu_product`` (the product of every ``mu_t`` so far).
    """
    g = -grad if maximize else grad
    if weight_decay != 0:
        if decoupled_weight_decay:
            param *= 1 - lr * weight_decay
        else:
            g = g + weight_decay * param
    mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
    mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
    mu_product *= mu
    exp_avg += (1 - beta1) * (g - exp_avg)
    exp_avg_sq *= beta2
    exp_avg_sq += (1 - beta2) * g * g
    denom = xp.sqrt(exp_avg_sq / (1 - beta2**step)) + eps
    param -= lr * (1 - mu) / (1 - mu_product) * (g / denom)
    param -= lr * mu_next / (1 - mu_product * mu_next) * (exp_avg / denom)
    return mu_product


class NAdam(PerParameterOptimizer):
    """NAdam (Dozat, 2016), with PyTorch's update rule (see :func:`nadam_update`).

    Parameters
    ----------
    params : iterable of Tensor or of dict
        Tensors to optimize, or parameter groups (see :class:`Optimizer`).
    lr : float, default 2e-3
        Learning rate.
    betas : (float, float), default (0.9, 0.999)
        Decay rates of the running averages of the gradient and of its square.
    eps : float, default 1e-8
        Added to the denominator, for numerical stability.
    weight_decay : float, default 0
        L2 penalty added to the gradient (or, decoupled, the fraction
        ``lr * weight_decay`` of each weight removed at every step).
    momentum_decay : float, default 4e-3
        Sets how fast the momentum warms up to ``beta1``.
    decoupled_weight_decay : bool, default False
        Decay the weights directly instead of through the gradient (NAdamW).
    maximize : bool, default False
        Ascend the objective instead of descending it.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.tensor([1.0, -2.0], requires_grad=True, dtype="float64")
    >>> opt = NAdam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w.detach().numpy().round(4)
    array([ 0.8944, -1.8944])
    """

    per_element_state = ("exp_avg", "exp_avg_sq")

    def __init__(
        self,
        params: ParamsLike,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        check_common(lr, eps, weight_decay)
        check_non_negative("momentum_decay value", momentum_decay)
        defaults = {
            "lr": lr,
            "betas": check_betas(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def init_state(self, p: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        """``step``, ``mu_product`` (1.0), ``exp_avg`` and ``exp_avg_sq`` (zero)."""
        return {
            "step": 0,
            "mu_product": 1.0,
            "exp_avg": zeros_like(p),
            "exp_avg_sq": zeros_like(p),
        }

    def update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> None:
        """One :func:`nadam_update` of ``p``."""
        beta1, beta2 = group["betas"]
        state["mu_product"] = nadam_update(
            p.xp,
            p.array,
            grad,
            state["exp_avg"].array,
            state["exp_avg_sq"].array,
            float(state["mu_product"]),
            state["step"],
            group["lr"],
            beta1,
            beta2,
            group["eps"],
            group["weight_decay"],
            group["momentum_decay"],
            group["decoupled_weight_decay"],
            group["maximize"],
        )
