"""Adadelta: steps scaled by the ratio of running RMS of past updates and of gradients."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.factories import zeros_like
from .optimizer import ParamsLike
from .per_param import PerParameterOptimizer, check_common

if TYPE_CHECKING:
    from ..core.tensor import Tensor


def adadelta_update(
    xp: Any,
    param: Any,
    grad: Any,
    square_avg: Any,
    acc_delta: Any,
    lr: float,
    rho: float,
    eps: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    """One Adadelta step on raw arrays; ``param`` and the buffers change in place.

    With ``g = grad + weight_decay * param`` (``-grad`` when maximizing)::

        square_avg = rho * square_avg + (1 - rho) * g * g
        delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g
        acc_delta = rho * acc_delta + (1 - rho) * delta * delta
        param -= lr * delta
    """
    g = -grad if maximize else grad
    if weight_decay != 0:
        g = g + weight_decay * param
    square_avg *= rho
    square_avg += (1 - rho) * g * g
    delta = xp.sqrt(acc_delta + eps) / xp.sqrt(square_avg + eps) * g
    acc_delta *= rho
    acc_delta += (1 - rho) * delta * delta
    param -= lr * delta


class Adadelta(PerParameterOptimizer):
    """Adadelta (Zeiler, 2012), with PyTorch's update rule (see :func:`adadelta_update`).

    Parameters
    ----------
    params : iterable of Tensor or of dict
        Tensors to optimize, or parameter groups (see :class:`Optimizer`).
    lr : float, default 1.0
        Scales the step (the method itself needs no learning rate).
    rho : float, default 0.9
        Decay rate of the running averages.
    eps : float, default 1e-6
        Added inside the square roots, for numerical stability.
    weight_decay : float, default 0
        L2 penalty added to the gradient.
    maximize : bool, default False
        Ascend the objective instead of descending it.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.tensor([1.0, -2.0], requires_grad=True, dtype="float64")
    >>> opt = Adadelta([w], lr=1.0)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w.detach().numpy().round(5)
    array([ 0.99684, -1.99684])
    """

    per_element_state = ("square_avg", "acc_delta")

    def __init__(
        self,
        params: ParamsLike,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        maximize: bool = False,
    ) -> None:
        check_common(lr, eps, weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def init_state(self, p: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        """``step``, ``square_avg`` and ``acc_delta``, zero."""
        return {"step": 0, "square_avg": zeros_like(p), "acc_delta": zeros_like(p)}

    def update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> None:
        """One :func:`adadelta_update` of ``p``."""
        adadelta_update(
            p.xp,
            p.array,
            grad,
            state["square_avg"].array,
            state["acc_delta"].array,
            group["lr"],
            group["rho"],
            group["eps"],
            group["weight_decay"],
            group["maximize"],
        )
