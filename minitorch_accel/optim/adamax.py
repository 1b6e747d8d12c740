"""Adamax: Adam with the infinity norm of past gradients in place of their RMS."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.factories import zeros_like
from .optimizer import ParamsLike
from .per_param import PerParameterOptimizer, check_betas, check_common

if TYPE_CHECKING:
    from ..core.tensor import Tensor


def adamax_update(
    xp: Any,
    param: Any,
    grad: Any,
    exp_avg: Any,
    exp_inf: Any,
    step: int,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    """One Adamax step on raw arrays; ``param`` and the buffers change in place.

    With ``g = grad + weight_decay * param`` (``-grad`` when maximizing)::

        exp_avg = beta1 * exp_avg + (1 - beta1) * g
        exp_inf = max(beta2 * exp_inf, |g| + eps)
        param -= lr / (1 - beta1**step) * exp_avg / exp_inf
    """
    g = -grad if maximize else grad
    if weight_decay != 0:
        g = g + weight_decay * param
    exp_avg += (1 - beta1) * (g - exp_avg)
    exp_inf *= beta2
    xp.maximum(exp_inf, xp.abs(g) + eps, out=exp_inf)
    param -= lr / (1 - beta1**step) * (exp_avg / exp_inf)


class Adamax(PerParameterOptimizer):
    """Adamax (Kingma and Ba, 2015, section 7), PyTorch's rule (see :func:`adamax_update`).

    Parameters
    ----------
    params : iterable of Tensor or of dict
        Tensors to optimize, or parameter groups (see :class:`Optimizer`).
    lr : float, default 2e-3
        Learning rate.
    betas : (float, float), default (0.9, 0.999)
        Decay rates of the running average of the gradient and of the running maximum.
    eps : float, default 1e-8
        Added to ``|g|``, for numerical stability.
    weight_decay : float, default 0
        L2 penalty added to the gradient.
    maximize : bool, default False
        Ascend the objective instead of descending it.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Adamax([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.9, -1.9], requires_grad=True)
    """

    per_element_state = ("exp_avg", "exp_inf")

    def __init__(
        self,
        params: ParamsLike,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        maximize: bool = False,
    ) -> None:
        check_common(lr, eps, weight_decay)
        defaults = {
            "lr": lr,
            "betas": check_betas(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def init_state(self, p: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        """``step``, ``exp_avg`` and ``exp_inf``, zero."""
        return {"step": 0, "exp_avg": zeros_like(p), "exp_inf": zeros_like(p)}

    def update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> None:
        """One :func:`adamax_update` of ``p``."""
        beta1, beta2 = group["betas"]
        adamax_update(
            p.xp,
            p.array,
            grad,
            state["exp_avg"].array,
            state["exp_inf"].array,
            state["step"],
            group["lr"],
            beta1,
            beta2,
            group["eps"],
            group["weight_decay"],
            group["maximize"],
        )
