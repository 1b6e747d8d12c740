"""Dropout: zero each element with probability ``p`` while training (inverted scaling)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.function import Function
from ..core.tensor import Tensor


class Dropout(Function):
    """``y = x * keep / (1 - p)``: a fixed mask, so the op is linear in ``x`` and its
    gradient (of any order) is the same mask.
    """

    saves_inputs = False  # backward needs no input's values

    def forward(self, x: Any, *, keep: Any, scale: float) -> Any:
        self.keep, self.scale = keep, scale
        out = x * keep
        out *= x.dtype.type(scale)
        return out

    def backward(self, grad_output: Tensor) -> Tensor:
        return Dropout.apply(grad_output, keep=self.keep, scale=self.scale)


def dropout(input: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    The expected value of every element is unchanged, so evaluation
    (``training=False``) is the identity. The mask comes from the random generator of
    ``input``'s device, so :func:`minitorch_accel.manual_seed` makes it repeatable.

    Parameters
    ----------
    input : Tensor
    p : float
        Probability of zeroing an element, in ``[0, 1]``.
    training : bool
        Apply dropout; when False, return ``input`` unchanged.

    Raises
    ------
    ValueError
        If ``p`` is outside ``[0, 1]``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.dropout import dropout
    >>> y = dropout(mta.ones(1000), p=0.5)
    >>> sorted(set(y.tolist()))
    [0.0, 2.0]
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability p must be in [0, 1], got {p}")
    if not training or p == 0.0:
        return input
    if input.dtype.kind != "f":
        raise TypeError(f"dropout: input must be floating point, got {input.dtype}")
    if p == 1.0:
        return input * 0.0
    return drop_with_mask(input, p, input.shape)


def drop_with_mask(input: Tensor, p: float, mask_shape: tuple[int, ...]) -> Tensor:
    """:class:`Dropout` of ``input`` with a keep mask of ``mask_shape`` (broadcast over
    ``input``: one decision per element, or per channel for channel dropout), drawn
    from the generator of ``input``'s device; ``0 <= p < 1``.
    """
    device = input.device
    generator = device.backend.generator(device)
    with device.backend.device_context(device):
        keep = generator.random(mask_shape, dtype=np.float32) >= np.float32(p)
    return Dropout.apply(input, keep=keep, scale=1.0 / (1.0 - p))
