"""Batch normalization as one fused op with a hand-written backward.

For each channel ``c`` (dim 1), over the batch and any spatial dims (``M`` values):

    x_hat = (x - mean) / sqrt(var + eps),    y = weight * x_hat + bias

In training, ``mean`` and ``var`` are the batch's (``var`` biased) and the gradient
flows through them too:

    dx = weight / sqrt(var + eps) * (dy - mean(dy) - x_hat * mean(dy * x_hat))

In evaluation the running statistics are constants and ``dx = weight * dy / sqrt(...)``.
Both gradients are also written with Tensor ops, used when the backward pass is itself
recorded (``create_graph=True``), so second derivatives work.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import autocast_state
from ..core.function import Function
from ..core.grad_mode import is_grad_enabled
from ..core.tensor import Tensor
from .layout import empty_with_layout, physical_order


def _const(array: Any, device: Any) -> Tensor:
    return Tensor._make(array, device, False, None)


def _like(xp: Any, a: Any, dtype: Any) -> Any:
    """An uninitialised array shaped and laid out in memory like ``a``, from the buffer
    cache (fresh pages cost page faults at every step).
    """
    return empty_with_layout(xp, a.shape, dtype, physical_order(a))


def _channel_sum(xp: Any, a: Any, b: Any = None) -> Any:
    """Per-channel (dim 1) ``sum(a)``, or ``sum(a * b)`` without the product in memory.

    ``einsum`` reduces in one pass whatever the memory layout (NCHW or channels-last),
    several times faster than ``a.sum(axis=(0, 2, 3))``.
    """
    dims = "nc" + "hwdefgijk"[: a.ndim - 2]
    if b is None:
        return xp.einsum(f"{dims}->c", a)
    return xp.einsum(f"{dims},{dims}->c", a, b)


class BatchNorm(Function):
    """``y = weight * x_hat + bias`` per channel (``weight``/``bias`` may be None).

    With ``batch_stats`` the batch's mean and biased variance normalize, and the running
    statistics (when given) are updated in place; otherwise the running ones are used.
    """

    def forward(
        self,
        x: Any,
        weight: Any,
        bias: Any,
        *,
        running_mean: Any,
        running_var: Any,
        batch_stats: bool,
        momentum: float,
        eps: float,
    ) -> Any:
        xp, dtype = self.xp, x.dtype
        count = x.size // x.shape[1]
        shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        compute = np.float32 if x.dtype.itemsize < 4 else x.dtype  # float16: stats in float32
        x = x.astype(compute, copy=False)
        x_hat = _like(xp, x, compute)
        if batch_stats:
            mean = _channel_sum(xp, x) / count
            xp.subtract(x, mean.reshape(shape), out=x_hat)
            var = _channel_sum(xp, x_hat, x_hat) / count
            if running_mean is not None:
                running_mean *= 1.0 - momentum
                running_mean += momentum * mean
                running_var *= 1.0 - momentum
                running_var += (momentum * count / max(count - 1, 1)) * var
        else:
            mean, var = running_mean.astype(compute), running_var.astype(compute)
            xp.subtract(x, mean.reshape(shape), out=x_hat)
        invstd = 1.0 / xp.sqrt(var + eps)
        x_hat *= invstd.reshape(shape)
        self.x_hat, self.mean, self.invstd = x_hat, mean, invstd
        self.batch_stats, self.eps, self.count, self.shape = batch_stats, eps, count, shape
        if weight is None and bias is None:
            return x_hat.astype(dtype)
        out = _like(xp, x, compute)
        if weight is not None:
            xp.multiply(x_hat, weight.reshape(shape), out=out)
        else:
            out[...] = x_hat
        if bias is not None:
            out += bias.reshape(shape)
        return out.astype(dtype, copy=False)

    def backward(self, grad_output: Tensor) -> tuple[Tensor | None, ...]:
        if is_grad_enabled():
            return self._backward_graph(grad_output)
        weight = self.inputs[1]
        need_x, need_w, need_b = self.needs_input_grad
        xp, g, x_hat, shape = self.xp, grad_output.array, self.x_hat, self.shape
        g = g.astype(x_hat.dtype, copy=False)  # float16 gradients: sums in float32
        grad_b: Any = None
        grad_w: Any = None
        grad_x: Any = None
        if need_b or (need_x and self.batch_stats):
            grad_b = _channel_sum(xp, g)
        if need_w or (need_x and self.batch_stats):
            grad_w = _channel_sum(xp, g, x_hat)
        if need_x:
            scale = self.invstd if weight is None else self.invstd * weight.array
            grad_x = _like(xp, g, g.dtype)
            if self.batch_stats:  # (g - mean(g) - x_hat * mean(g * x_hat)) * scale
                xp.multiply(x_hat, (-grad_w / self.count).reshape(shape), out=grad_x)
                grad_x += g
                grad_x -= (grad_b / self.count).reshape(shape)
                grad_x *= scale.reshape(shape)
            else:
                xp.multiply(g, scale.reshape(shape), out=grad_x)
        return (
            _const(grad_x, self.device) if need_x else None,
            _const(grad_w, self.device) if need_w else None,
            _const(grad_b, self.device) if need_b else None,
        )

    def _backward_graph(self, grad_output: Tensor) -> tuple[Tensor | None, ...]:
        """The same gradients as Tensor ops of the inputs, so they can be differentiated."""
        x, weight, _ = self.inputs
        axes, shape = (0, *range(2, x.ndim)), self.shape
        if self.batch_stats:
            centered = x - x.mean(axes, keepdim=True)
            invstd = ((centered * centered).mean(axes, keepdim=True) + self.eps) ** -0.5
        else:
            centered = x - _const(self.mean.reshape(shape), self.device)
            invstd = _const(self.invstd.reshape(shape), self.device)
        x_hat = centered * invstd
        scale = invstd if weight is None else invstd * weight.reshape(shape)
        grad_x = None
        if self.needs_input_grad[0]:
            if self.batch_stats:
                mean_g = grad_output.mean(axes, keepdim=True)
                mean_gx = (grad_output * x_hat).mean(axes, keepdim=True)
                grad_x = (grad_output - mean_g - x_hat * mean_gx) * scale
            else:
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
        running_mean=None if running_mean is None else running_mean.array,
        running_var=None if running_var is None else running_var.array,
        batch_stats=batch_stats,
        momentum=float(momentum),
        eps=float(eps),
    )
