"""The step loop shared by the optimizers whose rule updates each parameter on its own.

RMSprop, Adagrad, Adadelta, Adamax, NAdam and RAdam differ only in the state they keep
per parameter and in one update function on raw arrays (``rmsprop_update``...); this
base runs the loop around it: skip parameters without a gradient, create the state on
the first step, count the steps, and call :meth:`PerParameterOptimizer.update` inside
the parameter's device context, without recording anything for autograd.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.grad_mode import no_grad
from ..core.tensor import Tensor
from .optimizer import Optimizer, check_non_negative


class PerParameterOptimizer(Optimizer):
    """Base of optimizers whose update of a parameter reads only that parameter, its
    gradient and its own state.

    Subclasses implement :meth:`init_state` and :meth:`update`.
    """

    def init_state(self, p: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        """The state of ``p`` before its first step: ``"step": 0`` and its buffers."""
        raise NotImplementedError

    def update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> None:
        """Update ``p.array`` in place from the raw gradient ``grad`` (read only); the
        buffers of ``state`` change in place, ``state["step"]`` is already counted.
        """
        raise NotImplementedError

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, once.

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
                for p in group["params"]:
                    grad = _grad_of(p)
                    if grad is None:
                        continue
                    state = self.state.get(p)
                    if state is None:
                        state = self.state[p] = self.init_state(p, group)
                    state["step"] = int(state["step"]) + 1
                    with p.device.guard():
                        self.update(p, grad, state, group)
        return loss


def _grad_of(p: Tensor) -> Any:
    """The raw gradient array of ``p``, or None; checks its device and shape."""
    g = p.grad
    if g is None:
        return None
    if g.device is not p.device:
        raise RuntimeError(
            f"a parameter on {p.device} has its gradient on {g.device}; move the gradient "
            "to the parameter's device"
        )
    if g.shape != p.shape:
        raise RuntimeError(f"a parameter of shape {p.shape} has a gradient of shape {g.shape}")
    return g.array


def check_betas(betas: tuple[float, float]) -> tuple[float, float]:
    """``betas`` as a tuple, or ``ValueError`` unless it is two numbers in [0, 1)."""
    if len(betas) != 2:
        raise ValueError(f"betas is a pair (beta1, beta2), got {betas!r}")
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
    return (float(betas[0]), float(betas[1]))


def check_common(lr: float, eps: float, weight_decay: float) -> None:
    """``ValueError`` for a negative learning rate, epsilon or weight decay."""
    check_non_negative("learning rate", lr)
    check_non_negative("epsilon value", eps)
    check_non_negative("weight_decay value", weight_decay)
