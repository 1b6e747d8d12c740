"""Batch normalization as one op with a hand-written backward.

For each channel ``c`` (dim 1), over the batch and any spatial dims (``M`` values):

    x_hat = (x - mean) / sqrt(var + eps),    y = weight * x_hat + bias

In training, ``mean`` and ``var`` are the batch's (``var`` biased) and the gradient
flows through them too:

    dx = weight / sqrt(var + eps) * (dy - mean(dy) - x_hat * mean(dy * x_hat))

In evaluation the running statistics are constants and ``dx = weight * dy / sqrt(...)``.
The backward is written with Tensor ops of the inputs, so the backward pass can itself
be recorded (``create_graph=True``) and second derivatives work.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import autocast_state
from ..core.function import Function
from ..core.tensor import Tensor


class BatchNorm(Function):
    """``y = w * x_hat + b`` per channel (the weight ``w`` and bias ``b`` may be None).

    With ``batch`` the batch's mean and biased variance normalize, and the running
    statistics ``running = (mean, var)`` (when given) are updated in place; otherwise
    the running ones are used.
    """

    def forward(
        self, x: Any, w: Any, b: Any, *, running: Any, batch: bool, momentum: float, eps: float
    ) -> Any:
        axes, shape = (0, *range(2, x.ndim)), (1, x.shape[1]) + (1,) * (x.ndim - 2)
        xc = x.astype(np.float32) if x.dtype.itemsize < 4 else x  # float16: stats in float32
        if batch:
            mean, var = xc.mean(axis=axes), xc.var(axis=axes)
            if running is not None:  # running = (1 - momentum) * running + momentum * batch
                count = x.size // x.shape[1]
                running[0][...] = (1.0 - momentum) * running[0] + momentum * mean
                unbiased = var * (count / max(count - 1, 1))
                running[1][...] = (1.0 - momentum) * running[1] + momentum * unbiased
        else:
            mean, var = running[0].astype(xc.dtype), running[1].astype(xc.dtype)
        invstd = 1.0 / self.xp.sqrt(var + eps)
        self.mean, self.invstd, self.batch, self.eps = mean, invstd, batch, eps
        out = (xc - mean.reshape(shape)) * invstd.reshape(shape)
        out = out if w is None else out * w.reshape(shape)
        out = out if b is None else out + b.reshape(shape)
        return out.astype(x.dtype, copy=False)

    def backward(self, grad_output: Tensor) -> tuple[Tensor | None, ...]:
        x, w, _ = self.inputs
        axes, shape = (0, *range(2, x.ndim)), (1, x.shape[1]) + (1,) * (x.ndim - 2)
        if self.batch:  # x_hat as a function of x: the statistics depend on x too
            centered = x - x.mean(axes, keepdim=True)
            invstd = ((centered * centered).mean(axes, keepdim=True) + self.eps) ** -0.5
        else:
            centered = x - Tensor._make(self.mean.reshape(shape), self.device, False, None)
            invstd = Tensor._make(self.invstd.reshape(shape), self.device, False, None)
        x_hat = centered * invstd
        scale = invstd if w is None else invstd * w.reshape(shape)
        grad_x = None
        if self.needs_input_grad[0] and self.batch:
            mean_g = grad_output.mean(axes, keepdim=True)
            mean_gx = (grad_output * x_hat).mean(axes, keepdim=True)
            grad_x = (grad_output - mean_g - x_hat * mean_gx) * scale
        elif self.needs_input_grad[0]:
            grad_x = grad_output * scale
        grad_w = (grad_output * x_hat).sum(axes) if self.needs_input_grad[1] else None
        grad_b = grad_output.sum(axes) if self.needs_input_grad[2] else None
        return grad_x, grad_w, grad_b


def _check_stat(name: str, stat: Tensor | None, x: Tensor) -> None:
    if stat is None:
        return
    if stat.shape != (x.shape[1],):
        raise ValueError(
            f"batch_norm: {name} must have shape ({x.shape[1]},) for an input of shape "
            f"{x.shape}, got {stat.shape}"
        )
    if stat.device is not x.device:
        raise RuntimeError(f"batch_norm: input is on {x.device} but {name} on {stat.device}")


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each channel (dim 1) of ``input``, then scale and shift it.

    ``y = weight * (x - mean) / sqrt(var + eps) + bias``, over (N, C) or (N, C, ...)
    inputs (e.g. (N, C, H, W)). In training (or when there are no running statistics)
    ``mean`` and ``var`` are the batch's, the variance biased; the running statistics,
    if given, are then updated in place as PyTorch does:
    ``running = (1 - momentum) * running + momentum * batch``, using the *unbiased*
    batch variance for ``running_var``. In evaluation the running statistics are used.

    Parameters
    ----------
    input : Tensor
        (N, C) or (N, C, d1, ...).
    running_mean, running_var : Tensor or None
        (C,) buffers; both or neither. Updated in place in training.
    weight, bias : Tensor, optional
        (C,) scale and shift.
    training : bool
        Use batch statistics (and update the running ones).
    momentum : float
        Weight of the new batch in the running statistics.
    eps : float
        Added to the variance for stability.

    Raises
    ------
    ValueError
        For an input of fewer than 2 dims, statistics of the wrong shape, or a training
        batch with a single value per channel.
    """
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected an input of shape (N, C, ...), got {input.shape}")
    if input.dtype.kind != "f":
        raise TypeError(f"batch_norm: input must be floating point, got {input.dtype}")
    input = autocast_state.to_float32(input)  # under autocast: statistics in float32
    if (running_mean is None) != (running_var is None):
        raise ValueError("batch_norm: give both running_mean and running_var, or neither")
    for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
        _check_stat(name, stat, input)
    for name, stat in (("weight", weight), ("bias", bias)):
        _check_stat(name, stat, input)
    batch_stats = training or running_mean is None
    if batch_stats and input.numel() // max(input.shape[1], 1) <= 1:
        raise ValueError(
            f"batch_norm: expected more than 1 value per channel when training, got input "
            f"of shape {input.shape}"
        )
    return BatchNorm.apply(
        input,
        weight,
        bias,
        running=None
        if running_mean is None or running_var is None
        else (running_mean.array, running_var.array),
        batch=batch_stats,
        momentum=float(momentum),
        eps=float(eps),
    )
