"""Adam and AdamW: adaptive moment estimation, with L2 or decoupled weight decay."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.factories import zeros_like
from ..core.grad_mode import no_grad
from .optimizer import (
    Optimizer,
    ParamsLike,
    check_non_negative,
    fast_path,
    foreach_kernel,
    grad_array,
)

if TYPE_CHECKING:
    from ..core.tensor import Tensor


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
    """One Adam step on raw arrays; ``param`` and the moment buffers change in place.

    With ``g = grad`` (``-grad`` when maximizing; plus ``weight_decay * param`` for Adam,
    while AdamW first shrinks ``param *= 1 - lr * weight_decay``)::

        exp_avg    = beta1 * exp_avg    + (1 - beta1) * g
        exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g * g
        v = max(max_exp_avg_sq, exp_avg_sq)  if amsgrad  else  exp_avg_sq
        param -= lr / (1 - beta1**step) * exp_avg / (sqrt(v) / sqrt(1 - beta2**step) + eps)

    ``grad`` is only read. A backend may register a fused kernel with this signature
    under the name ``"adam_update"``; it then replaces this function.

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
        """Update every parameter that has a gradient (see :func:`adam_update`).

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
                beta1, beta2 = group["betas"]
                amsgrad = group["amsgrad"]
                batch: list[tuple[Tensor, Any, dict[str, Any]]] = []
                for p in group["params"]:
                    grad = grad_array(p)
                    if grad is None:
                        continue
                    state = self.state.get(p)
                    if state is None:
                        state = self.state[p] = {
                            "step": 0,
                            "exp_avg": zeros_like(p),
                            "exp_avg_sq": zeros_like(p),
                        }
                    if amsgrad and state.get("max_exp_avg_sq") is None:
                        state["max_exp_avg_sq"] = zeros_like(p)
                    state["step"] = int(state["step"]) + 1
                    batch.append((p, grad, state))
                hyper = (
                    group["lr"],
                    beta1,
                    beta2,
                    group["eps"],
                    group["weight_decay"],
                    group["decoupled_weight_decay"],
                    amsgrad,
                    group["maximize"],
                )
                for p, grad, state in _update_many(batch, hyper):
                    update = fast_path(p.device, "adam_update") or adam_update
                    with p.device.guard():
                        update(
                            p.xp,
                            p.array,
                            grad,
                            state["exp_avg"].array,
                            state["exp_avg_sq"].array,
                            state["max_exp_avg_sq"].array if amsgrad else None,
                            state["step"],
                            *hyper,
                        )
        return loss


def _update_many(
    batch: list[tuple[Tensor, Any, dict[str, Any]]], hyper: tuple[Any, ...]
) -> list[tuple[Tensor, Any, dict[str, Any]]]:
    """Update every parameter of ``batch`` (``(p, grad, state)``) in one launch when the
    backend can (see :func:`.optimizer.foreach_kernel`); return what is left to update
    one by one (all of it, or nothing).
    """
    steps = {state["step"] for _, _, state in batch}
    many = foreach_kernel([p for p, _, _ in batch], "adam_update_many", steps)
    if many is None:
        return batch
    amsgrad = hyper[6]
    done = many(
        [p.array for p, _, _ in batch],
        [grad for _, grad, _ in batch],
        [s["exp_avg"].array for _, _, s in batch],
        [s["exp_avg_sq"].array for _, _, s in batch],
        [s["max_exp_avg_sq"].array for _, _, s in batch] if amsgrad else None,
        steps.pop(),
        *hyper,
    )
    return [] if done else batch


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
