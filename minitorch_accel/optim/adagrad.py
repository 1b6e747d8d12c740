"""Adagrad: a learning rate per weight, shrinking with the sum of its squared gradients."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.factories import full_like
from .optimizer import ParamsLike, check_non_negative
from .per_param import PerParameterOptimizer, check_common

if TYPE_CHECKING:
    from ..core.tensor import Tensor


def adagrad_update(
    xp: Any,
    param: Any,
    grad: Any,
    state_sum: Any,
    step: int,
    lr: float,
    lr_decay: float,
    weight_decay: float,
    eps: float,
    maximize: bool,
) -> None:
    """One Adagrad step on raw arrays; ``param`` and ``state_sum`` change in place.

    With ``g = grad + weight_decay * param`` (``-grad`` when maximizing)::

        clr = lr / (1 + (step - 1) * lr_decay)
        state_sum += g * g
        param -= clr * g / (sqrt(state_sum) + eps)
    """
    g = -grad if maximize else grad
    if weight_decay != 0:
        g = g + weight_decay * param
    clr = lr / (1 + (step - 1) * lr_decay)
    state_sum += g * g
    param -= clr * (g / (xp.sqrt(state_sum) + eps))


class Adagrad(PerParameterOptimizer):
    """Adagrad (Duchi et al., 2011), with PyTorch's update rule (see :func:`adagrad_update`).

    As in PyTorch, the state of every parameter (``step`` and ``sum``) is created with
    the optimizer, ``sum`` filled with ``initial_accumulator_value``.

    Parameters
    ----------
    params : iterable of Tensor or of dict
        Tensors to optimize, or parameter groups (see :class:`Optimizer`).
    lr : float, default 1e-2
        Learning rate.
    lr_decay : float, default 0
        The rate at step ``t`` is ``lr / (1 + (t - 1) * lr_decay)``.
    weight_decay : float, default 0
        L2 penalty added to the gradient.
    initial_accumulator_value : float, default 0
        The starting value of the sum of squared gradients.
    eps : float, default 1e-10
        Added to the denominator, for numerical stability.
    maximize : bool, default False
        Ascend the objective instead of descending it.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Adagrad([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.9, -1.9], requires_grad=True)
    """

    per_element_state = ("sum",)

    def __init__(
        self,
        params: ParamsLike,
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        maximize: bool = False,
    ) -> None:
        check_common(lr, eps, weight_decay)
        check_non_negative("lr_decay value", lr_decay)
        check_non_negative("initial_accumulator_value value", initial_accumulator_value)
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "eps": eps,
            "maximize": maximize,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p] = self.init_state(p, group)

    def init_state(self, p: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        """``step`` and ``sum`` (filled with ``initial_accumulator_value``)."""
        return {"step": 0, "sum": full_like(p, group["initial_accumulator_value"])}

    def update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> None:
        """One :func:`adagrad_update` of ``p``."""
        adagrad_update(
            p.xp,
            p.array,
            grad,
            state["sum"].array,
            state["step"],
            group["lr"],
            group["lr_decay"],
            group["weight_decay"],
            group["eps"],
            group["maximize"],
        )
