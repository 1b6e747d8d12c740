"""Loss functions: cross-entropy (fused with log-softmax), negative log-likelihood, MSE.

Class weights and class-probability targets take the reference path of
:mod:`~minitorch_accel.ops.weighted_loss`.

``cross_entropy`` is one graph node. Its forward is a stable log-softmax and a gather;
its backward is the famous ``(softmax(x) - q) / N``, where ``q`` is the (smoothed)
one-hot target: no log-softmax graph to walk, and no ``N x C`` one-hot kept in memory.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.function import Function, on_input_device
from ..core.tensor import Tensor
from .elementwise import where
from .reduce import softmax
from .weighted_loss import (
    class_weight,
    probability_cross_entropy,
    weighted_cross_entropy,
    weighted_nll,
)

REDUCTIONS = ("mean", "sum", "none")


def check_reduction(name: str, reduction: str) -> None:
    """Raise ``ValueError`` unless ``reduction`` is "mean", "sum" or "none"."""
    if not isinstance(reduction, str):
        raise TypeError(
            f"{name}: reduction must be one of {REDUCTIONS}, got {type(reduction).__name__}"
        )
    if reduction not in REDUCTIONS:
        raise ValueError(f"{name}: reduction must be one of {REDUCTIONS}, got {reduction!r}")


def legacy_reduction(
    name: str, size_average: bool | None, reduce: bool | None, reduction: str
) -> str:
    """``reduction``, or the one PyTorch's deprecated ``size_average`` and ``reduce``
    stand for when either is given (with PyTorch's warning): ``reduce=False`` is
    "none", else ``size_average=False`` is "sum", else "mean".

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     legacy_reduction("nll_loss", False, None, "mean")
    'sum'
    """
    if size_average is None and reduce is None:
        check_reduction(name, reduction)
        return reduction
    warnings.warn(
        f"{name}: size_average and reduce are deprecated; use reduction="
        f"{'none' if reduce is False else 'sum' if size_average is False else 'mean'!r}",
        UserWarning,
        stacklevel=3,
    )
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


def _rows(name: str, input: Tensor, target: Tensor) -> tuple[Tensor, Tensor, tuple[int, ...]]:
    """``input`` as (rows, classes) and ``target`` as (rows,), plus the per-row shape.

    Accepted: input (N, C) with target (N,); input (C,) with a 0-d target; and input
    (N, C, d1, ...) with target (N, d1, ...) as PyTorch.
    """
    if not isinstance(input, Tensor) or not isinstance(target, Tensor):
        raise TypeError(f"{name}: input and target must be tensors")
    if input.dtype.kind != "f":
        raise TypeError(f"{name}: input must be floating point, got {input.dtype}")
    if target.dtype.kind not in "iu":
        raise TypeError(
            f"{name}: class-index targets must be an integer tensor, got {target.dtype}; "
            "convert them with .long()"
        )
    if input.device is not target.device:
        raise RuntimeError(f"{name}: input is on {input.device} but target on {target.device}")
    if input.ndim == 0:
        raise ValueError(f"{name}: input needs a class dimension, got a 0-d tensor")
    expected = input.shape[:1] + input.shape[2:] if input.ndim > 1 else ()
    if target.shape != expected:
        raise ValueError(
            f"{name}: input of shape {input.shape} needs a target of shape {expected}, "
            f"got {target.shape}"
        )
    if input.ndim == 1:
        return input.reshape(1, -1), target.reshape(1), ()
    if input.ndim > 2:  # move the class dim last: (N, d1, ..., C) -> (rows, C)
        order = (0, *range(2, input.ndim), 1)
        input = input.permute(*order).reshape(-1, input.shape[1])
        target = target.reshape(-1)
    return input, target, expected


def _capturing(t: Tensor) -> bool:
    """True while ``t``'s device records a CUDA graph: nothing can be read back then, so
    label checks run only in the eager steps before the capture.
    """
    return t.device.backend.capture_status(t.device)


def _check_labels(
    name: str, labels: Any, classes: int, ignore_index: int, read_back: bool = True
) -> tuple[Any, Any]:
    """Labels as int64 plus a mask of the rows that count; raise on a bad label (unless
    ``read_back`` is False: the verdict would have to be read back from the device).
    """
    labels = labels.astype(np.int64, copy=False)
    valid = labels != ignore_index
    if not read_back:
        return labels, valid
    bad = valid & ((labels < 0) | (labels >= classes))
    if bad.any():
        first = int(labels[bad].reshape(-1)[0])
        raise IndexError(
            f"{name}: target label {first} is out of range for {classes} classes "
            f"(labels must be in [0, {classes - 1}], or ignore_index={ignore_index})"
        )
    return labels, valid


class CrossEntropy(Function):
    """Cross-entropy of logits ``x`` (rows, C) against class indices ``y`` (rows,).

    ``loss_i = -(1 - s) * log p[i, y_i] - (s / C) * sum_c log p[i, c]`` with
    ``p = softmax(x_i)`` and label smoothing ``s``; rows whose label is
    ``ignore_index`` give 0. The output is the per-row losses, or their sum, or their
    mean over the counted rows (``reduction``). ``check()`` raises for a label out of
    range.
    """

    def forward(
        self, x: Any, y: Any, *, smoothing: float, ignore_index: int, reduction: str, check: Any
    ) -> Any:
        check()
        xp, x = self.xp, x.astype(np.float32) if x.itemsize < 4 else x  # float16: float32 sums
        top = x.max(axis=1, keepdims=True)
        log_norm = xp.log(xp.exp(x - top).sum(axis=1, keepdims=True))
        log_probs, self.lse = (x - top) - log_norm, (top + log_norm).reshape(-1)
        valid = y != ignore_index
        loss = -(1.0 - smoothing) * log_probs[xp.arange(len(y)), xp.where(valid, y, 0)]
        if smoothing:
            loss -= (smoothing / x.shape[1]) * log_probs.sum(axis=1)
        loss = xp.where(valid, loss, 0)  # an ignored row's NaN or inf counts for nothing
        self.scale: Any = {"none": None, "sum": 1.0}.get(reduction)
        if reduction == "mean":  # 1 / rows counted (nan for none), kept on the device
            count = valid.sum()
            inverse = xp.where(count > 0, 1.0 / xp.maximum(count, 1), np.nan)
            self.scale = inverse.astype(x.dtype)
        self.smoothing, self.ignore_index, self.check = smoothing, ignore_index, check
        return loss if self.scale is None else xp.asarray(loss.sum() * self.scale, loss.dtype)

    def backward(self, grad_output: Tensor) -> tuple[Tensor, None]:
        return CrossEntropyBackward.apply(*self.inputs, grad_output, forward=self), None

    def targets(self, labels: Any, classes: int) -> tuple[Any, Any]:
        """``q``, the (smoothed) one-hot target (rows, C), and each row's weight (rows, 1):
        0 for an ignored row, else the reduction's scale (1 for per-row losses).
        """
        xp, dtype, valid = self.xp, self.lse.dtype, labels != self.ignore_index
        q = xp.full((len(labels), classes), self.smoothing / classes, dtype=dtype)
        q[xp.arange(len(labels)), xp.where(valid, labels, 0)] += 1.0 - self.smoothing
        weight = valid if self.scale is None else xp.where(valid, self.scale, 0)
        return q, weight.astype(dtype)[:, None]


class CrossEntropyBackward(Function):
    """The gradient of :class:`CrossEntropy` in the logits, as its own node (a backend
    may register a fused kernel for it): ``(softmax(x) - q) * grad * weight``, with the
    target ``q`` and the rows' weights from the :class:`CrossEntropy` node ``forward``.
    Its own backward gives the second derivatives (``create_graph=True``).
    """

    def forward(self, logits: Any, labels: Any, grad: Any, *, forward: CrossEntropy) -> Any:
        forward.check()  # raise for bad labels before any gradient flows
        self.forward_node, (q, weight) = forward, forward.targets(labels, logits.shape[1])
        x = logits.astype(q.dtype, copy=False)  # float16 logits: softmax in float32
        p = self.xp.exp(x - x.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        grad_x = (p - q) * (grad.reshape(-1, 1).astype(q.dtype) * weight)
        # an ignored row gets p * 0, as from PyTorch's log-softmax backward: 0, or NaN
        # where its softmax is NaN (non-finite logits), whatever its incoming gradient
        return self.xp.where(weight != 0, grad_x, p * 0)

    def backward(self, gg: Tensor) -> tuple[Tensor | None, None, Tensor | None]:
        logits, labels, grad = self.inputs
        found = self.forward_node.targets(labels.array, logits.shape[1])
        q, weight = (Tensor._make(a, self.device, False, None) for a in found)
        p = softmax(logits, dim=1)
        u = gg * (grad.reshape(-1, 1) * weight)
        grad_logits = p * (u - (p * u).sum(1, keepdim=True))
        per_row = ((p - q) * gg * weight).sum(1)
        return grad_logits, None, per_row if grad.ndim else per_row.sum()


class _LabelCheck:
    """The label check of one cross-entropy: raises the IndexError of
    :func:`_check_labels` for a label out of range. A backend that counts the bad labels
    on its device sets ``counts`` (read back only when called, the check deferred);
    without it the labels are checked on the host. Runs once; later calls do nothing.
    """

    def __init__(self, name: str, labels: Any, classes: int, ignore_index: int) -> None:
        self.args: tuple[str, Any, int, int] | None = (name, labels, classes, ignore_index)
        self.counts: Callable[[], tuple[int, int]] | None = None

    def __call__(self) -> None:
        args, self.args = self.args, None
        if args is not None and (self.counts is None or self.counts()[1]):
            _check_labels(*args)


def _reduce(loss: Tensor, reduction: str, count: float, out_shape: tuple[int, ...]) -> Tensor:
    if reduction == "none":
        return loss.reshape(out_shape)
    total = loss.sum()
    if reduction == "sum":
        return total
    return total * (1.0 / count if count else float("nan"))  # no row counted: nan, as PyTorch


@on_input_device
def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """The cross-entropy between logits and class indices or class probabilities
    (PyTorch's semantics).

    ``loss_i = -w[y_i] * log softmax(input_i)[y_i]``, computed stably through
    log-softmax (``w`` = 1 without class weights). With label smoothing ``s`` the
    target is ``(1 - s) * one_hot + s / C``, whose smoothing part
    ``-(s / C) * sum_c w[c] * log p[i, c]`` is weighted too. Against class
    probabilities ``q`` (the input's shape): ``loss_i = -sum_c w[c] * q'[i, c] * log
    p[i, c]`` with ``q' = (1 - s) * q + s / C``. See
    :mod:`~minitorch_accel.ops.weighted_loss` for the weighted formulas.

    Parameters
    ----------
    input : Tensor
        Logits (N, C), or (C,), or (N, C, d1, ...) for per-position classes.
    target : Tensor
        Integer class indices in ``[0, C)``: (N,), (), or (N, d1, ...); or float class
        probabilities of the input's shape (a float target of another shape is refused).
    weight : Tensor, optional
        One float weight per class (C,), in the input's dtype. It gets no gradient
        with class-index targets (PyTorch refuses one that requires it); it does with
        probability targets, as in PyTorch.
    size_average, reduce : bool, optional
        PyTorch's deprecated spelling of ``reduction`` (see :func:`legacy_reduction`).
    ignore_index : int
        Rows with this target contribute nothing (and no gradient). Class indices only:
        probability targets refuse any other value than -100, as PyTorch.
    reduction : {"mean", "sum", "none"}
        "mean" divides the sum by the total weight of the rows whose target is not
        ``ignore_index`` (their number without ``weight``; NaN if there is none);
        against probabilities, by the number of rows.
    label_smoothing : float
        In ``[0, 1]``.

    Returns
    -------
    Tensor
        A scalar, or the per-row losses (target's shape without the class dim) for
        ``reduction="none"``.

    Raises
    ------
    IndexError
        If a label is outside ``[0, C)``, naming the label and the number of classes.
        On the CPU it is raised here. On a GPU (without label smoothing or weights)
        the labels are checked on the device and the error is raised at the loss's
        backward or at the next point where the host waits for the GPU (``item()``,
        ``numpy()``, ``cuda.synchronize()``), whichever comes first, as CUDA errors
        are: reading the verdict at once would stall the GPU's queue every step.
    TypeError, ValueError, RuntimeError
        For a target of the wrong dtype or shape, a weight that is not a float tensor
        of C values on the input's device, or a bad argument.

    Notes
    -----
    The arguments are PyTorch's, in its order. Differences from PyTorch: a float
    weight of another dtype than the input's is converted to it (PyTorch refuses it).
    Without weights and with class indices the loss is one fused node (below); with
    either, it is a composition of differentiable ops, as PyTorch's.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.loss import cross_entropy
    >>> logits = mta.tensor([[2.0, 0.0], [0.0, 2.0]])
    >>> round(cross_entropy(logits, mta.tensor([0, 1])).item(), 4)
    0.1269
    >>> w = mta.tensor([1.0, 3.0])
    >>> round(cross_entropy(logits, mta.tensor([0, 1]), weight=w).item(), 4)
    0.1269
    >>> round(cross_entropy(logits, mta.tensor([[0.5, 0.5], [0.0, 1.0]])).item(), 4)
    0.6269
    """
    reduction = legacy_reduction("cross_entropy", size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    probabilities = isinstance(input, Tensor) and isinstance(target, Tensor)
    if probabilities and target.dtype.kind == "f" and target.shape == input.shape:
        return _probability_targets(input, target, reduction, label_smoothing, ignore_index, weight)
    logits, labels, out_shape = _rows("cross_entropy", input, target)
    if weight is not None:
        weight = class_weight("cross_entropy", weight, logits)
        label_array, valid = _check_labels(
            "cross_entropy", labels.array, logits.shape[1], ignore_index, not _capturing(labels)
        )
        loss = weighted_cross_entropy(
            logits, label_array, valid, weight, float(label_smoothing), reduction
        )
        return loss.reshape(out_shape) if reduction == "none" else loss
    label_array = labels.array.astype(np.int64, copy=False)
    label_tensor = Tensor._make(label_array, labels.device, False, None)
    check = _LabelCheck("cross_entropy", label_array, logits.shape[1], ignore_index)
    if _capturing(labels):
        check.args = None  # checked in the eager warm-up; a graph reads nothing back
    loss = CrossEntropy.apply(
        logits,
        label_tensor,
        smoothing=float(label_smoothing),
        ignore_index=ignore_index,
        reduction=reduction,
        check=check,
    )
    return loss.reshape(out_shape) if reduction == "none" else loss


def _probability_targets(
    input: Tensor,
    target: Tensor,
    reduction: str,
    label_smoothing: float,
    ignore_index: int,
    weight: Tensor | None,
) -> Tensor:
    """:func:`cross_entropy` against class probabilities (a float target of the input's
    shape, as PyTorch decides): the checks, then
    :func:`~minitorch_accel.ops.weighted_loss.probability_cross_entropy`.
    """
    name = "cross_entropy"
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}: input and target must be tensors")
    if input.dtype.kind != "f":
        raise TypeError(f"{name}: input must be floating point, got {input.dtype}")
    if input.device is not target.device:
        raise RuntimeError(f"{name}: input is on {input.device} but target on {target.device}")
    if input.ndim == 0:
        raise ValueError(f"{name}: input needs a class dimension, got a 0-d tensor")
    if ignore_index != -100:
        raise ValueError(
            f"{name}: ignore_index is not supported for class-probability targets "
            f"(got {ignore_index}), as in PyTorch"
        )
    if weight is not None:
        weight = class_weight(name, weight, input, 0 if input.ndim == 1 else 1)
    return probability_cross_entropy(input, target, weight, float(label_smoothing), reduction)


@on_input_device
def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The negative log-likelihood: ``loss_i = -w[target_i] * input[i, target_i]``.

    ``input`` holds log-probabilities (e.g. from :func:`log_softmax`); shapes, labels,
    ``weight`` and ``reduction`` are as for :func:`cross_entropy` with class indices:
    "mean" divides by the total weight of the counted rows (NaN if there is none).
    ``weight`` gets no gradient. The arguments are PyTorch's, in its order.

    Raises
    ------
    IndexError
        If a label is outside ``[0, C)``.
    TypeError, ValueError, RuntimeError
        For a target of the wrong dtype or shape, or a weight that is not a float tensor
        of C values on the input's device.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.loss import nll_loss
    >>> log_probs = mta.tensor([[-1.0, -2.0], [-3.0, -4.0]])
    >>> nll_loss(log_probs, mta.tensor([0, 1])).item()  # (1 + 4) / 2
    2.5
    >>> nll_loss(log_probs, mta.tensor([0, 1]), weight=mta.tensor([3.0, 1.0])).item()
    1.75
    """
    reduction = legacy_reduction("nll_loss", size_average, reduce, reduction)
    log_probs, labels, out_shape = _rows("nll_loss", input, target)
    label_array, valid = _check_labels(
        "nll_loss", labels.array, log_probs.shape[1], ignore_index, not _capturing(labels)
    )
    if weight is not None:
        weight = class_weight("nll_loss", weight, log_probs)
        loss, _ = weighted_nll(log_probs, label_array, valid, weight, reduction)
        return loss.reshape(out_shape) if reduction == "none" else loss
    xp = log_probs.xp
    rows = xp.arange(log_probs.shape[0])
    picked = log_probs[rows, xp.where(valid, label_array, 0)]
    counted = Tensor._make(valid, log_probs.device, False, None)
    return _reduce(where(counted, -picked, 0.0), reduction, float(valid.sum()), out_shape)


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """The mean squared error ``(input - target) ** 2``, reduced.

    Raises
    ------
    ValueError
        If the shapes differ (both are named): unlike PyTorch, no silent broadcasting,
        which turns an (N, 1) against (N,) mistake into an (N, N) loss.
    """
    check_reduction("mse_loss", reduction)
    if input.shape != target.shape:
        raise ValueError(
            f"mse_loss: input shape {input.shape} and target shape {target.shape} differ"
        )
    diff = input - target
    return reduce_loss(diff * diff, reduction)


def reduce_loss(term: Tensor, reduction: str) -> Tensor:
    """``term`` itself ("none"), its sum ("sum") or its mean ("mean"; NaN if empty):
    the last step of every loss of a per-element term.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> terms = mta.tensor([1.0, 3.0])
    >>> reduce_loss(terms, "mean").item(), reduce_loss(terms, "sum").item()
    (2.0, 4.0)
    """
    if reduction == "none":
        return term
    return term.sum() if reduction == "sum" else term.mean()
