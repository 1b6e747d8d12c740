"""Batch normalization as one op with a hand-written backward.

For each channel ``c`` (dim 1), over the batch and any spatial dims (``M`` values):

    x_hat = (x - mean) / sqrt(var + eps),    y = weight * x_hat + bias

In training, ``mean`` and ``var`` are the batch's (``var`` biased) and the gradient
flows through them too:

    dx = weight / sqrt(var + eps) * (dy - mean(dy) - x_hat * mean(dy * x_hat))

In evaluation the running statistics are constants and ``dx = weight * dy / sqrt(...)``.
These gradients are written with Tensor ops of the inputs (:func:`batch_norm_grad`),
each one a node of its own (:class:`BatchNormGrad`) that a backend may compute in fused
passes; the node's backward differentiates the same formula, so the backward pass can
itself be recorded (``create_graph=True``) and second derivatives work.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import autocast_state
from ..core.backward import grad
from ..core.function import Function
from ..core.grad_mode import enable_grad
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
        return tuple(
            BatchNormGrad.apply(grad_output, x, w, forward=self, wrt=k) if need else None
            for k, need in enumerate(self.needs_input_grad)
        )


def batch_norm_grad(fn: BatchNorm, g: Tensor, x: Tensor, w: Tensor | None, wrt: int) -> Tensor:
    """The gradient of :class:`BatchNorm` (node ``fn``) in ``x`` (``wrt=0``), ``w`` (1) or
    ``b`` (2), given ``g``, that of its output, as Tensor ops of the inputs: in training
    ``x_hat`` is recomputed from ``x``, so that the result can be differentiated again.
    """
    axes, shape = (0, *range(2, x.ndim)), (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if wrt == 2:
        return g.sum(axes)
    if fn.batch:  # x_hat as a function of x: the statistics depend on x too
        centered = x - x.mean(axes, keepdim=True)
        invstd = ((centered * centered).mean(axes, keepdim=True) + fn.eps) ** -0.5
    else:
        centered = x - Tensor._make(fn.mean.reshape(shape), fn.device, False, None)
        invstd = Tensor._make(fn.invstd.reshape(shape), fn.device, False, None)
    x_hat = centered * invstd
    if wrt == 1:
        return (g * x_hat).sum(axes)
    scale = invstd if w is None else invstd * w.reshape(shape)
    if not fn.batch:
        return g * scale
    return (g - g.mean(axes, keepdim=True) - x_hat * (g * x_hat).mean(axes, keepdim=True)) * scale


class BatchNormGrad(Function):
    """One gradient of :class:`BatchNorm` (``wrt``: 0 for ``x``, 1 for ``w``, 2 for ``b``)
    as its own node, so that a backend may compute it in fused passes. Its forward runs
    :func:`batch_norm_grad` on constants; its backward differentiates the same formula.
    """

    def forward(self, g: Any, x: Any, w: Any, *, forward: BatchNorm, wrt: int) -> Any:
        self.forward_node, self.wrt = forward, wrt
        g, x, w = (None if a is None else self._float32(a) for a in (g, x, w))
        return batch_norm_grad(forward, g, x, w, wrt).array

    def _float32(self, a: Any) -> Tensor:
        """``a`` as a constant Tensor, float16 made float32 (sums in float32)."""
        a = a.astype(np.float32) if a.dtype.itemsize < 4 else a
        return Tensor._make(a, self.device, False, None)

    def backward(self, gg: Tensor) -> tuple[Tensor | None, ...]:
        g, x, w = (None if t is None else t.detach().requires_grad_() for t in self.inputs)
        assert g is not None and x is not None
        with enable_grad():
            out = batch_norm_grad(self.forward_node, g, x, w, self.wrt)
        inputs = [t for t in (g, x, w) if t is not None]
        found = iter(grad(out, inputs, gg, create_graph=True, allow_unused=True))
        return tuple(None if t is None else next(found) for t in (g, x, w))


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
