"""Stochastic gradient descent, with momentum, Nesterov momentum and weight decay."""

from __future__ import annotations

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


def sgd_update(  # noqa: C901  (the scratch-buffer fast path; the rule is four lines in the docstring)
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
    """One SGD step on raw arrays: ``param`` and ``momentum_buffer`` change in place.

    With ``d = grad + weight_decay * param`` (``-grad`` when maximizing)::

        buf = d                                       on the first step
        buf = momentum * buf + (1 - dampening) * d    afterwards
        d = d + momentum * buf  if nesterov  else  buf
        param -= lr * d

    ``grad`` is only read. A backend may register a fused kernel with this signature
    under the name ``"sgd_update"``; it then replaces this function.

    Parameters
    ----------
    xp : module
        ``numpy`` or ``cupy``.
    param, grad : array
        The parameter (updated in place) and its gradient (read only).
    momentum_buffer : array or None
        Same shape as ``param``; None when ``momentum == 0``. Its contents are
        ignored, and overwritten, when ``first_step`` is True.
    lr, momentum, dampening, weight_decay : float
    nesterov, maximize, first_step : bool
    """
    scratch = None  # the one temporary array, reused through out= / in-place ufuncs
    d = grad
    if weight_decay != 0:
        scratch = xp.multiply(param, weight_decay)
        (xp.subtract if maximize else xp.add)(scratch, grad, out=scratch)
        d = scratch
    elif maximize:
        d = scratch = xp.negative(grad)
    if momentum != 0:
        buf = momentum_buffer
        if first_step:
            buf[...] = d
        else:
            buf *= momentum
            if dampening == 0:
                buf += d
            else:  # nesterov needs dampening == 0, so d is not needed after this
                if scratch is None:
                    scratch = xp.empty_like(param)
                xp.multiply(d, 1 - dampening, out=scratch)
                buf += scratch
        if nesterov:
            if scratch is None:
                scratch = xp.multiply(buf, momentum)
                scratch += grad
            else:
                scratch += momentum * buf
            d = scratch
        else:
            d = buf
    if d is scratch:
        scratch *= lr
    elif scratch is None:
        scratch = xp.multiply(d, lr)
    else:
        xp.multiply(d, lr, out=scratch)
    param -= scratch


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
        """Update every parameter that has a gradient (see :func:`sgd_update`).

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
                momentum = group["momentum"]
                batch: list[tuple[Tensor, Any, Tensor | None, bool]] = []
                for p in group["params"]:
                    grad = grad_array(p)
                    if grad is None:
                        continue
                    buf = None
                    first = False
                    if momentum != 0:
                        state = self.state.setdefault(p, {})
                        buf = state.get("momentum_buffer")
                        if buf is None:  # filled with the gradient by the first update
                            buf = state["momentum_buffer"] = zeros_like(p)
                            first = True
                    batch.append((p, grad, buf, first))
                hyper = (
                    group["lr"],
                    momentum,
                    group["dampening"],
                    group["nesterov"],
                    group["weight_decay"],
                    group["maximize"],
                )
                for p, grad, buf, first in _update_many(batch, hyper):
                    update = fast_path(p.device, "sgd_update") or sgd_update
                    with p.device.guard():
                        update(
                            p.xp, p.array, grad, None if buf is None else buf.array, *hyper, first
                        )
        return loss


def _update_many(
    batch: list[tuple[Tensor, Any, Tensor | None, bool]], hyper: tuple[Any, ...]
) -> list[tuple[Tensor, Any, Tensor | None, bool]]:
    """Update every parameter of ``batch`` (``(p, grad, buf, first)``) in one launch when
    the backend can (see :func:`.optimizer.foreach_kernel`); return what is left to
    update one by one (all of it, or nothing).
    """
    firsts = {first for _, _, _, first in batch}
    many = foreach_kernel([p for p, *_ in batch], "sgd_update_many", firsts)
    if many is None:
        return batch
    bufs = None if batch[0][2] is None else [b.array for _, _, b, _ in batch if b is not None]
    done = many(
        [p.array for p, *_ in batch], [grad for _, grad, _, _ in batch], bufs, *hyper, firsts.pop()
    )
    return [] if done else batch
