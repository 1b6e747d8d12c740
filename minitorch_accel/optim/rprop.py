"""Rprop: a step size per weight, grown while its gradient keeps its sign, shrunk when
the sign flips; only the sign of the gradient moves the weight.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.factories import full_like, zeros_like
from .optimizer import ParamsLike, check_non_negative
from .per_param import PerParameterOptimizer

if TYPE_CHECKING:
    from ..core.tensor import Tensor


def rprop_update(
    xp: Any,
    param: Any,
    grad: Any,
    prev: Any,
    step_size: Any,
    etaminus: float,
    etaplus: float,
    step_size_min: float,
    step_size_max: float,
    maximize: bool,
) -> None:
    """One Rprop step on raw arrays; ``param``, ``prev`` and ``step_size`` change in place.

    With ``g = grad`` (``-grad`` when maximizing), elementwise::

        factor = etaplus if g * prev > 0, etaminus if g * prev < 0, else 1
        step_size = clip(step_size * factor, step_size_min, step_size_max)
        g = 0 where the sign flipped (g * prev < 0)
        param -= sign(g) * step_size
        prev = g

    ``sign`` is PyTorch's: 0 for NaN, so a NaN gradient leaves the weight and its step
    size as they are (and an infinite one moves the weight by one step).
    """
    g = -grad if maximize else grad
    agreement = g * prev  # > 0: the same sign as last step, < 0: it flipped
    flipped = agreement < 0
    factor = xp.where(agreement > 0, etaplus, xp.where(flipped, etaminus, 1.0))
    step_size *= factor.astype(param.dtype, copy=False)
    xp.clip(step_size, step_size_min, step_size_max, out=step_size)
    g = xp.where(flipped, 0, g).astype(param.dtype, copy=False)
    param -= _sign(g) * step_size
    prev[...] = g


def _sign(x: Any) -> Any:
    """-1, 0 or 1 by the sign of ``x``, and 0 for NaN (``torch.sign``'s rule)."""
    return (x > 0).astype(x.dtype) - (x < 0)


class Rprop(PerParameterOptimizer):
    """Resilient backpropagation (Riedmiller and Braun, 1993), with PyTorch's update rule
    (see :func:`rprop_update`). Meant for full-batch training: it ignores the size of
    the gradient and trusts its sign.

    Parameters
    ----------
    params : iterable of Tensor or of dict
        Tensors to optimize, or parameter groups (see :class:`Optimizer`).
    lr : float, default 1e-2
        The initial step size of every weight (read at a parameter's first step).
    etas : (float, float), default (0.5, 1.2)
        ``(etaminus, etaplus)``, with ``0 < etaminus < 1 < etaplus``: the factors that
        shrink and grow a step size.
    step_sizes : (float, float), default (1e-6, 50)
        The least and the largest step size.
    maximize : bool, default False
        Ascend the objective instead of descending it.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> w = mta.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Rprop([w], lr=0.1)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.78, -1.78], requires_grad=True)
    """

    per_element_state = ("prev", "step_size")

    def __init__(
        self,
        params: ParamsLike,
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        maximize: bool = False,
    ) -> None:
        check_non_negative("learning rate", lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(
                f"Invalid eta values: {etas[0]}, {etas[1]} (need 0 < etaminus < 1 < etaplus)"
            )
        defaults = {
            "lr": lr,
            "etas": (float(etas[0]), float(etas[1])),
            "step_sizes": (float(step_sizes[0]), float(step_sizes[1])),
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def init_state(self, p: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        """``step``, ``prev`` (zeros) and ``step_size`` (filled with the group's ``lr``)."""
        return {"step": 0, "prev": zeros_like(p), "step_size": full_like(p, group["lr"])}

    def update(self, p: Tensor, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> None:
        """One :func:`rprop_update` of ``p``."""
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        rprop_update(
            p.xp,
            p.array,
            grad,
            state["prev"].array,
            state["step_size"].array,
            etaminus,
            etaplus,
            step_size_min,
            step_size_max,
            group["maximize"],
        )
