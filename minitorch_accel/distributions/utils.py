"""Helpers shared by the distributions, as ``torch.distributions.utils``."""

from __future__ import annotations

from numbers import Number
from typing import Any

import numpy as np

from ..core import factories
from ..core.defaults import get_default_dtype
from ..core.tensor import Tensor
from ..ops.elementwise import clamp, log
from ..ops.reduce import softmax


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """Tensors and numbers broadcast to one shape; numbers become tensors of the first
    tensor's dtype and device (the default dtype when all are numbers).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> loc, scale = broadcast_all(mta.zeros(3), 2.0)
    >>> scale
    tensor([2., 2., 2.])
    """
    tensors = [v for v in values if isinstance(v, Tensor)]
    for v in values:
        if not isinstance(v, (Tensor, Number)):
            raise ValueError(
                f"Input arguments must all be instances of numbers.Number or Tensor, got {type(v)}"
            )
    like = tensors[0] if tensors else None
    made = [
        v
        if isinstance(v, Tensor)
        else factories.tensor(
            v,
            dtype=like.dtype if like is not None else get_default_dtype(),
            device=like.device if like is not None else None,
        )
        for v in values
    ]
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in made))
    return tuple(t.expand(*shape) if tuple(t.shape) != shape else t for t in made)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` clamped to ``[eps, 1 - eps]`` (``eps`` of its dtype), so that logs stay
    finite.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> clamp_probs(mta.tensor([0.0, 1.0], dtype=mta.float64)).tolist()
    [2.220446049250313e-16, 0.9999999999999998]
    """
    eps = float(np.finfo(probs.dtype).eps)
    return clamp(probs, min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor) -> Tensor:
    """Log-probabilities of a categorical distribution from its probabilities
    (clamped first, see :func:`clamp_probs`).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> probs_to_logits(mta.tensor([0.5, 0.5], dtype=mta.float64)).exp().tolist()
    [0.5, 0.5]
    """
    return log(clamp_probs(probs))


def logits_to_probs(logits: Tensor) -> Tensor:
    """Probabilities of a categorical distribution from its logits: a softmax over
    the last dim.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> logits_to_probs(mta.tensor([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """
    return softmax(logits, dim=-1)


__all__ = ["broadcast_all", "clamp_probs", "logits_to_probs", "probs_to_logits"]
