"""RMSprop: divide the gradient by a running root mean square of its recent values."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.factories import zeros_like
from .optimizer import ParamsLike, check_non_negative
from .per_param import PerParameterOptimizer, check_common

if TYPE_CHECKING:
    from ..core.tensor import Tensor


def rmsprop_update(
    xp: Any,
    param: Any,
    grad: Any,
    square_avg: Any,
    grad_avg: Any,
    momentum_buffer: Any,
    lr: float,
    alpha: float,
    eps: float,
    weight_decay: float,
    momentum: float,
    centered: bool,
    maximize: bool,
) -> None:
    """One RMSprop step on raw arrays; ``param`` and the buffers change in place.

    With ``g = grad + weight_decay * param`` (``-grad`` when maximizing)::

        square_avg = alpha * square_avg + (1 - alpha) * g * g
        grad_avg   = alpha * grad_avg   + (1 - alpha) * g              if centered
        avg = sqrt(square_avg - grad_avg**2) + eps  if centered  else  sqrt(square_avg) + eps
        buf = momentum * buf + g / avg;  param -= lr * buf              if momentum > 0
        param -= lr * g / avg                                           otherwise

    ``grad_avg`` and ``momentum_buffer`` are None when not used.
    """
    g = -grad if maximize else grad
    if weight_decay != 0:
        g = g + weight_decay * param
    square_avg *= alpha
    square_avg += (1 - alpha) * g * g
    if centered:
        grad_avg += (1 - alpha) * (g - grad_avg)
        avg = xp.sqrt(square_avg - grad_avg * grad_avg) + eps
    else:
        avg = xp.sqrt(square_avg) + eps
    if momentum > 0:
        momentum_buffer *= momentum
        momentum_buffer += g / avg
        param -= lr * momentum_buffer
    else:
        param -= lr * (g / avg)


class RMSprop(PerParameterOptimizer):
    """RMSprop (Hinton's lecture 6e), with PyTorch's update rule (see :func:`rmsprop_update`).

    Parameters
    ----------
    params : iterable of Tensor or of dict
        Tensors to optimize, or parameter groups (see :class:`Optimizer`).
    lr : float, default 1e-2
        Learning rate.
    alpha : float, default 0.99
        Smoothing constant of the running average of the squared gradient.
    eps : float, default 1e-8
        Added to the denominator, for numerical stability.
    weight_decay : float, default 0
        L2 penalty added to the gradient.
    momentum : float, default 0
        Momentum factor.
    centered : bool, default False
        Divide by an estimate of the gradient's variance (the mean square minus the
        squared mean) instead of its mean square.
    maximize : bool, default False
        Ascend the objective instead of descending it.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = RMSprop([w], lr=0.01)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.9, -1.9], requires_grad=True)
    """

    per_element_state = ("square_avg", "grad_avg", "momentum_buffer")

    def __init__(
        self,
        params: ParamsLike,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
        maximize: bool = False,
    ) -> None:
        check_common(lr, eps, weight_decay)
        check_non_negative("momentum value", momentum)
        check_non_negative("alpha value", alpha)
        defaults = {
            "lr": lr,
            "alpha": alpha,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "centered": centered,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def init_state(self, p: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        """``step``, ``square_avg``; ``momentum_buffer`` and ``grad_avg`` when used."""
        state: dict[str, Any] = {"step": 0, "square_avg": zeros_like(p)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = zeros_like(p)
        return state

    def update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> None:
        """One :func:`rmsprop_update` of ``p``."""
        grad_avg = state.get("grad_avg")
        buf = state.get("momentum_buffer")
        rmsprop_update(
            p.xp,
            p.array,
            grad,
            state["square_avg"].array,
            None if grad_avg is None else grad_avg.array,
            None if buf is None else buf.array,
            group["lr"],
            group["alpha"],
            group["eps"],
            group["weight_decay"],
            group["momentum"],
            group["centered"],
            group["maximize"],
        )
