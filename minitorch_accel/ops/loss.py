"""Loss functions: cross-entropy (fused with log-softmax), negative log-likelihood, MSE.

``cross_entropy`` is one graph node. Its forward is a stable log-softmax and a gather;
its backward is the famous ``(softmax(x) - q) / N``, where ``q`` is the (smoothed)
one-hot target: no log-softmax graph to walk, and no ``N x C`` one-hot kept in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.function import Function, on_input_device
from ..core.tensor import Tensor
from .reduce import softmax

REDUCTIONS = ("mean", "sum", "none")


def check_reduction(name: str, reduction: str) -> None:
    """Raise ``ValueError`` unless ``reduction`` is "mean", "sum" or "none"."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"{name}: reduction must be one of {REDUCTIONS}, got {reduction!r}")


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
        loss *= valid
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
        weight = valid if self.scale is None else valid * self.scale
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
        return (p - q) * (grad.reshape(-1, 1).astype(q.dtype) * weight)

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
    reduction: str = "mean",
    label_smoothing: float = 0.0,
    ignore_index: int = -100,
) -> Tensor:
    """The cross-entropy between logits and class indices (PyTorch's semantics).

    ``loss_i = -log softmax(input_i)[target_i]``, computed stably through log-softmax
    as one fused op. With label smoothing ``s`` the target is
    ``(1 - s) * one_hot + s / C``.

    Parameters
    ----------
    input : Tensor
        Logits (N, C), or (C,), or (N, C, d1, ...) for per-position classes.
    target : Tensor
        Integer class indices in ``[0, C)``: (N,), (), or (N, d1, ...).
    reduction : {"mean", "sum", "none"}
        "mean" averages over the rows whose target is not ``ignore_index``.
    label_smoothing : float
        In ``[0, 1]``.
    ignore_index : int
        Rows with this target contribute nothing (and no gradient).

    Returns
    -------
    Tensor
        A scalar, or the per-row losses (target's shape) for ``reduction="none"``.

    Raises
    ------
    IndexError
        If a label is outside ``[0, C)``, naming the label and the number of classes.
        On the CPU it is raised here. On a GPU (without label smoothing) the labels
        are checked on the device and the error is raised at the loss's backward or at
        the next point where the host waits for the GPU (``item()``, ``numpy()``,
        ``cuda.synchronize()``), whichever comes first, as CUDA errors are: reading
        the verdict at once would stall the GPU's queue every step.
    TypeError, ValueError
        For a non-integer target, a target of the wrong shape, or a bad argument.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.loss import cross_entropy
    >>> logits = mta.tensor([[2.0, 0.0], [0.0, 2.0]])
    >>> round(cross_entropy(logits, mta.tensor([0, 1])).item(), 4)
    0.1269
    """
    check_reduction("cross_entropy", reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    logits, labels, out_shape = _rows("cross_entropy", input, target)
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


@on_input_device
def nll_loss(
    input: Tensor, target: Tensor, reduction: str = "mean", ignore_index: int = -100
) -> Tensor:
    """The negative log-likelihood: ``loss_i = -input[i, target_i]``.

    ``input`` holds log-probabilities (e.g. from :func:`log_softmax`); shapes, labels
    and ``reduction`` are as for :func:`cross_entropy`.

    Raises
    ------
    IndexError
        If a label is outside ``[0, C)``.
    """
    check_reduction("nll_loss", reduction)
    log_probs, labels, out_shape = _rows("nll_loss", input, target)
    label_array, valid = _check_labels(
        "nll_loss", labels.array, log_probs.shape[1], ignore_index, not _capturing(labels)
    )
    xp = log_probs.xp
    rows = xp.arange(log_probs.shape[0])
    picked = log_probs[rows, xp.where(valid, label_array, 0)]
    weight = Tensor._make(valid.astype(log_probs.dtype), log_probs.device, False, None)
    return _reduce(-picked * weight, reduction, float(valid.sum()), out_shape)


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
