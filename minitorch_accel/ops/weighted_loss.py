"""Cross-entropy and negative log-likelihood with class weights, and cross-entropy
against class probabilities: the reference path, composed of differentiable ops in the
order PyTorch composes them (so values, gradients of every order, and what infinities
and NaNs give are PyTorch's).

With class weights ``w`` and class-index targets ``y`` (rows ``i`` not ignored)::

    nll_i    = -w[y_i] * log p[i, y_i]
    smooth_i = -sum_c w[c] * log p[i, c]            (label smoothing s, C classes)
    loss_i   = (1 - s) * nll_i + (s / C) * smooth_i

and "mean" divides each sum by ``sum_i w[y_i]``, the total weight of the counted rows
(NaN when nothing is counted). Against class probabilities ``q`` (the input's shape)::

    loss_i = -sum_c w[c] * ((1 - s) * q[i, c] + s / C) * log p[i, c]

and "mean" divides by the number of rows, whatever the weights.

:func:`~minitorch_accel.ops.loss.cross_entropy` and
:func:`~minitorch_accel.ops.loss.nll_loss` check their arguments and come here; without
weights and with class indices they keep their fused node.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.tensor import Tensor
from .elementwise import where
from .index import Gather
from .operands import result_dtype
from .reduce import log_softmax


def class_weight(name: str, weight: Any, input: Tensor, class_dim: int = 1) -> Tensor:
    """``weight`` checked: a 1-D float tensor with one value per class, on the input's
    device; returned in the input's dtype.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> class_weight("nll_loss", mta.ones(3, dtype=mta.float64), mta.zeros(2, 3)).dtype
    dtype('float32')
    """
    classes = input.shape[class_dim] if input.ndim > class_dim else 1
    if isinstance(weight, str):  # reduction given in weight's place
        raise TypeError(
            f"{name}: weight must be a Tensor, got the string {weight!r}; the third "
            f"argument is weight, as in PyTorch: pass reduction={weight!r} by name"
        )
    if not isinstance(weight, Tensor):
        raise TypeError(f"{name}: weight must be a Tensor, got {type(weight).__name__}")
    if weight.dtype.kind != "f":
        raise TypeError(
            f"{name}: weight must be floating point, got {weight.dtype}; "
            "convert it with .to(input.dtype)"
        )
    if weight.device is not input.device:
        raise RuntimeError(f"{name}: input is on {input.device} but weight on {weight.device}")
    if weight.shape != (classes,):
        raise ValueError(
            f"{name}: weight must be 1-D with one value for each of the {classes} classes, "
            f"got shape {weight.shape}"
        )
    return weight.to(dtype=input.dtype)


def _constant(array: Any, like: Tensor) -> Tensor:
    return Tensor._make(array, like.device, False, None)


def _inverse(xp: Any, total: Any) -> Any:
    """``1 / total`` on the device, ``inf`` for 0 (so a sum of 0 over it is NaN, as
    PyTorch's ``0 / 0``), without NumPy's division warning.
    """
    nonzero = total != 0
    return xp.where(nonzero, 1.0 / xp.where(nonzero, total, 1.0), np.inf).astype(total.dtype)


def weighted_nll(
    log_probs: Tensor, labels: Any, valid: Any, weight: Tensor, reduction: str
) -> tuple[Tensor, Any]:
    """PyTorch's ``nll_loss`` with class weights, on rows: ``log_probs`` (rows, C), the
    int64 label array (rows,) and its mask of counted rows. Returns the loss (per row,
    summed, or divided by the total weight) and ``1 / total weight`` (an array).
    """
    xp = log_probs.xp
    safe = xp.where(valid, labels, 0)
    picked = Gather.apply(log_probs, _constant(safe[:, None], log_probs), dim=1).reshape(-1)
    row_weight = weight.detach().array[safe]
    scale = _inverse(xp, xp.where(valid, row_weight, 0).sum())
    ignored = _constant(~valid, log_probs)
    term = where(ignored, 0.0, -picked * _constant(row_weight, log_probs))  # exact 0
    return _reduce_rows(term, reduction, scale), scale


def _reduce_rows(term: Tensor, reduction: str, scale: Any) -> Tensor:
    if reduction == "none":
        return term
    total = term.sum()
    return total if reduction == "sum" else total * _constant(scale, term)


def weighted_cross_entropy(
    logits: Tensor, labels: Any, valid: Any, weight: Tensor, smoothing: float, reduction: str
) -> Tensor:
    """Cross-entropy with class weights on rows (``logits`` (rows, C)), as PyTorch:
    ``nll_loss`` of ``log_softmax``, plus the weighted smoothing term when ``smoothing``.
    """
    log_probs = log_softmax(logits, dim=1)
    nll, scale = weighted_nll(log_probs, labels, valid, weight, reduction)
    if not smoothing:
        return nll
    smooth = -(log_probs * weight.detach().reshape(1, -1)).sum(1)
    smooth = where(_constant(~valid, smooth), 0.0, smooth)
    classes = logits.shape[1]
    return (1.0 - smoothing) * nll + _reduce_rows(smooth, reduction, scale) * (smoothing / classes)


def probability_cross_entropy(
    input: Tensor, target: Tensor, weight: Tensor | None, smoothing: float, reduction: str
) -> Tensor:
    """Cross-entropy of logits against class probabilities of the same shape, as
    PyTorch (class dim 1, or 0 for a 1-D input). The target and the weight get
    gradients too.
    """
    class_dim = 0 if input.ndim == 1 else 1
    classes = input.shape[class_dim]
    dtype = result_dtype(input.dtype, target.dtype)
    log_probs = log_softmax(input, dim=class_dim)
    smoothed = target * (1.0 - smoothing) + smoothing / classes if smoothing > 0 else target
    product = (log_probs * smoothed).to(dtype=dtype)
    if weight is not None:
        shape = [1] * input.ndim
        shape[class_dim] = classes
        product = product * weight.to(dtype=dtype).reshape(*shape)
    if reduction == "none":
        return -product.sum(class_dim)
    total = -product.sum()
    if reduction == "sum":
        return total
    rows = input.numel() // classes if classes else 0
    return total / rows if rows else total * float("nan")  # no row: NaN, as PyTorch
