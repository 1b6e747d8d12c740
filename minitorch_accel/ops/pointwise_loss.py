"""Losses that reduce a per-element term, as ``torch.nn.functional``.

L1, smooth L1, Huber, binary cross-entropy (of probabilities and of logits), KL
divergence, soft margin, margin ranking, hinge embedding, Poisson and Gaussian negative
log-likelihood; and the cosine embedding loss, whose term is per row (the cosine of two
vectors). Each computes its term, multiplies a weight where there is one, and
:func:`~minitorch_accel.ops.loss.reduce_loss` returns the terms ("none"), their sum
("sum") or their mean ("mean").

Most terms are compositions of differentiable ops, built as PyTorch builds them, so
their gradients (of every order) are PyTorch's. Smooth L1, Huber and the two binary
cross-entropies are one small :class:`~minitorch_accel.core.function.Function` each
whose backward is PyTorch's formula: the side a kink takes, the finite gradient where
binary cross-entropy clamps its logs, and what infinities and NaNs give.

Where every loss here differs from PyTorch:

- ``input`` and ``target`` must have one shape: a mismatch is a ValueError naming both
  (PyTorch broadcasts some pairs, with or without a warning, which turns an (N, 1)
  against (N,) mistake into an (N, N) loss).
- ``input`` must be floating point. An integer target is converted to the input's
  dtype where PyTorch accepts one; binary cross-entropy (both) and ``kl_div`` refuse it,
  as PyTorch. Two float dtypes compute in the wider one.
- The deprecated ``size_average`` and ``reduce`` arguments are not accepted: use
  ``reduction``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..core.function import Function, on_input_device
from ..core.tensor import Tensor
from .activation import log_sigmoid_array, logsigmoid
from .elementwise import clamp, exp, log, sigmoid, where
from .loss import _capturing, check_reduction, reduce_loss
from .operands import result_dtype
from .unary import log1p

# PyTorch's floor on x (1 - x) in binary cross-entropy's gradient: 1e-12 held as a
# C float, so in float64 too it is float32's nearest value to 1e-12
_BCE_EPSILON = float(np.float32(1e-12))
_COSINE_EPSILON = 1e-12  # PyTorch's addition to each squared norm in cosine_embedding_loss


# ------------------------------------------------------------------ checks and reduction
def _check_tensor(name: str, label: str, t: Any) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: {label} must be a Tensor, got {type(t).__name__}")
    return t


def _same_shape_floats(name: str, integer_ok: bool, **named: Tensor) -> tuple[Tensor, ...]:
    """The named tensors (the first is the input) checked and brought to one float dtype.

    Each must be a Tensor on the input's device with the input's shape; the input must
    be floating point; the others too, unless ``integer_ok`` (PyTorch promotes an
    integer target for this loss).
    """
    (first, input), *others = named.items()
    _check_tensor(name, first, input)
    if input.dtype.kind != "f":
        raise TypeError(
            f"{name}: {first} must be floating point, got {input.dtype}; convert it with .float()"
        )
    for label, t in others:
        _check_tensor(name, label, t)
        if t.dtype.kind != "f" and not integer_ok:
            raise TypeError(
                f"{name}: {label} must be floating point, got {t.dtype} (as PyTorch); "
                "convert it with .float()"
            )
        if t.device is not input.device:
            raise RuntimeError(f"{name}: {first} is on {input.device} but {label} on {t.device}")
        if t.shape != input.shape:
            raise ValueError(
                f"{name}: {first} shape {input.shape} and {label} shape {t.shape} differ; "
                "they must be equal (no broadcasting here, unlike PyTorch)"
            )
    dtype = result_dtype(*(t.dtype for t in named.values()))
    return tuple(t.to(dtype=dtype) for t in named.values())


def _broadcast_weight(name: str, label: str, weight: Tensor, input: Tensor) -> Tensor:
    """``weight`` checked: a float tensor on the input's device that broadcasts to its
    shape, in the dtype the two share.
    """
    _check_tensor(name, label, weight)
    if weight.dtype.kind != "f":
        raise TypeError(f"{name}: {label} must be floating point, got {weight.dtype}")
    if weight.device is not input.device:
        raise RuntimeError(f"{name}: input is on {input.device} but {label} on {weight.device}")
    try:
        fits = np.broadcast_shapes(weight.shape, input.shape) == input.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"{name}: {label} of shape {weight.shape} does not broadcast to the input's "
            f"shape {input.shape}"
        )
    return weight.to(dtype=result_dtype(weight.dtype, input.dtype))


# ------------------------------------------------------------------ L1, smooth L1, Huber
def l1_loss(
    input: Tensor, target: Tensor, reduction: str = "mean", weight: Tensor | None = None
) -> Tensor:
    """The absolute error ``|input - target|``, reduced.

    Its gradient is ``sign(input - target)``: 0 where they are equal, as PyTorch.

    Parameters
    ----------
    input, target : Tensor
        Of one shape (an integer target is converted to the input's dtype).
    reduction : {"mean", "sum", "none"}
    weight : Tensor, optional
        Of the input's shape: multiplies each term; "mean" is then
        ``sum(weight * term) / sum(weight)`` (PyTorch's rule).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.pointwise_loss import l1_loss
    >>> l1_loss(mta.tensor([1.0, 2.0, 3.0]), mta.tensor([1.5, 2.0, 1.0]))
    tensor(0.8333)
    """
    check_reduction("l1_loss", reduction)
    input, target = _same_shape_floats("l1_loss", True, input=input, target=target)
    term = (input - target).abs()
    if weight is None:
        return reduce_loss(term, reduction)
    (weight,) = _same_shape_floats("l1_loss", False, input=input, weight=weight)[1:]
    weighted = term * weight
    if reduction == "mean":
        return weighted.sum() / weight.sum()
    return reduce_loss(weighted, reduction)


class SmoothL1(Function):
    """Smooth L1 of the difference ``d``: ``0.5 d**2 / beta`` where ``|d| < beta``, else
    ``|d| - 0.5 beta``. Gradient (PyTorch's): ``d / beta`` inside, ``sign(d)`` from
    ``|d| >= beta`` on (the two sides agree at the boundary).
    """

    def forward(self, diff: Any, *, beta: float) -> Any:
        self.beta, size = beta, self.xp.abs(diff)
        return self.xp.where(size < beta, 0.5 * size * size / beta, size - 0.5 * beta)

    def backward(self, grad: Tensor) -> Tensor:
        (diff,), beta = self.inputs, self.beta
        return where(diff <= -beta, -grad, where(diff >= beta, grad, diff * grad / beta))


class Huber(Function):
    """Huber loss of the difference ``d``: ``0.5 d**2`` where ``|d| < delta``, else
    ``delta (|d| - 0.5 delta)``. Gradient (PyTorch's): ``d`` inside, ``delta sign(d)``
    from ``|d| >= delta`` on.
    """

    def forward(self, diff: Any, *, delta: float) -> Any:
        self.delta, size = delta, self.xp.abs(diff)
        return self.xp.where(size < delta, 0.5 * size * size, delta * (size - 0.5 * delta))

    def backward(self, grad: Tensor) -> Tensor:
        (diff,), delta = self.inputs, self.delta
        return where(diff <= -delta, -grad * delta, where(diff >= delta, grad * delta, diff * grad))


def smooth_l1_loss(
    input: Tensor, target: Tensor, reduction: str = "mean", beta: float = 1.0
) -> Tensor:
    """Smooth L1: quadratic for ``|input - target| < beta``, linear beyond, reduced.

    ``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta``, with
    ``d = input - target``; ``beta=0`` is :func:`l1_loss` (as PyTorch).

    Raises
    ------
    ValueError
        For a negative ``beta``, a bad ``reduction`` or shapes that differ.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.pointwise_loss import smooth_l1_loss
    >>> smooth_l1_loss(mta.tensor([0.5, 3.0]), mta.zeros(2), reduction="none")
    tensor([0.125, 2.5  ])
    """
    check_reduction("smooth_l1_loss", reduction)
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be >= 0, got {beta}")
    if beta == 0:
        return l1_loss(input, target, reduction)
    input, target = _same_shape_floats("smooth_l1_loss", True, input=input, target=target)
    return reduce_loss(SmoothL1.apply(input - target, beta=float(beta)), reduction)


def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """Huber loss: quadratic for ``|input - target| < delta``, linear beyond, reduced.

    ``0.5 d**2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``: for
    ``delta = beta`` it is ``beta`` times :func:`smooth_l1_loss`.

    Parameters
    ----------
    weight : Tensor, optional
        Of the input's shape: multiplies each term; "mean" is then the mean of the
        weighted terms (PyTorch's rule, unlike :func:`l1_loss`).

    Raises
    ------
    ValueError
        For ``delta <= 0``, a bad ``reduction`` or shapes that differ.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.pointwise_loss import huber_loss
    >>> huber_loss(mta.tensor([0.5, 3.0]), mta.zeros(2), reduction="none", delta=2.0)
    tensor([0.125, 4.   ])
    """
    check_reduction("huber_loss", reduction)
    if not delta > 0:
        raise ValueError(f"huber_loss: delta must be > 0, got {delta}")
    input, target = _same_shape_floats("huber_loss", True, input=input, target=target)
    term = Huber.apply(input - target, delta=float(delta))
    if weight is not None:
        term = term * _same_shape_floats("huber_loss", False, input=input, weight=weight)[1]
    return reduce_loss(term, reduction)


# ------------------------------------------------------------------ binary cross-entropy
class BinaryCrossEntropy(Function):
    """``-(y log x + (1 - y) log(1 - x))`` with each log clamped at -100 (PyTorch's rule:
    ``x`` of exactly 0 or 1 gives a finite loss).

    Gradients (PyTorch's): ``(x - y) / max(x (1 - x), 1e-12)`` for ``x``, finite even
    where a clamped log is flat, and ``-logit(x) = log((1 - x) / x)`` for ``y``.
    """

    def forward(self, x: Any, y: Any) -> Any:
        xp = self.xp
        with np.errstate(divide="ignore"):  # log(0) = -inf, clamped to -100 next
            log_x, log_rest = xp.log(x), xp.log1p(-x)
        return (y - 1) * xp.maximum(log_rest, -100.0) - y * xp.maximum(log_x, -100.0)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
        x, y = self.inputs
        need_x, need_y = self.needs_input_grad
        grad_x = grad * (x - y) / clamp((1.0 - x) * x, min=_BCE_EPSILON) if need_x else None
        grad_y = -log(x / (1.0 - x)) * grad if need_y else None
        return grad_x, grad_y


def _check_probabilities(name: str, label: str, t: Tensor) -> None:
    """Raise unless every element of ``t`` is in [0, 1] (NaN is not). On a GPU reading
    the verdict back waits for the GPU; inside a CUDA graph capture nothing is read.
    """
    if _capturing(t):
        return
    a = t.array
    if not bool(((a >= 0) & (a <= 1)).all()):
        raise RuntimeError(
            f"{name}: all elements of {label} should be between 0 and 1 (got values outside "
            "[0, 1] or NaN); for logits use binary_cross_entropy_with_logits"
        )


@on_input_device
def binary_cross_entropy(
    input: Tensor, target: Tensor, weight: Tensor | None = None, reduction: str = "mean"
) -> Tensor:
    """The binary cross-entropy of probabilities ``input`` for targets in [0, 1].

    ``-weight (target log(input) + (1 - target) log(1 - input))``, each log clamped at
    -100 as PyTorch (a probability of exactly 0 or 1 gives at most 100, not inf). The
    gradient in ``input`` is PyTorch's, ``(input - target) / max(input (1 - input),
    1e-12)``: large but finite at 0 and 1. Prefer
    :func:`binary_cross_entropy_with_logits` on logits: it is stable without clamps.

    Parameters
    ----------
    input : Tensor
        Probabilities, every element in [0, 1].
    target : Tensor
        Of the input's shape, every element in [0, 1], floating point (as PyTorch).
    weight : Tensor, optional
        Multiplies each term; it must broadcast to the input's shape. Unlike PyTorch,
        it may require grad (and gets its gradient).
    reduction : {"mean", "sum", "none"}

    Raises
    ------
    RuntimeError
        If an element of ``input`` or ``target`` is outside [0, 1] or NaN (PyTorch's
        error). Checking reads one bool back from the device: on a GPU each call waits
        for the queued work there (PyTorch asserts inside its GPU kernel instead);
        nothing is checked while a CUDA graph is captured.
    TypeError, ValueError
        For an integer target, shapes that differ, a weight that does not broadcast.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.pointwise_loss import binary_cross_entropy
    >>> p, y = mta.tensor([0.9, 0.2, 0.0]), mta.tensor([1.0, 0.0, 1.0])
    >>> binary_cross_entropy(p, y, reduction="none")
    tensor([  0.1054,   0.2231, 100.    ])
    """
    name = "binary_cross_entropy"
    check_reduction(name, reduction)
    input, target = _same_shape_floats(name, False, input=input, target=target)
    _check_probabilities(name, "input", input)
    _check_probabilities(name, "target", target)
    term = BinaryCrossEntropy.apply(input, target)
    if weight is not None:
        term = term * _broadcast_weight(name, "weight", weight, input)
    return reduce_loss(term, reduction)


class BinaryCrossEntropyWithLogits(Function):
    """``(1 - y) x - (1 + (p - 1) y) log_sigmoid(x)`` for logits ``x``, targets ``y`` and
    an optional ``pos_weight`` ``p`` (PyTorch's formula: no exp overflows).

    Gradients (PyTorch's): ``(p y + 1 - y) sigmoid(x) - p y`` for ``x`` (``sigmoid(x) -
    y`` without ``p``), ``log_sigmoid(-x) - p log_sigmoid(x)`` for ``y`` (``-x``), and
    ``-y log_sigmoid(x)`` for ``p``.
    """

    def forward(self, x: Any, y: Any, pos_weight: Any) -> Any:
        log_sigmoid = log_sigmoid_array(self.xp, x)
        if pos_weight is not None:
            log_sigmoid = log_sigmoid * ((pos_weight - 1) * y + 1)
        return (1 - y) * x - log_sigmoid

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x, y, pos_weight = self.inputs
        need_x, need_y, need_p = self.needs_input_grad
        grad_x = grad_y = grad_p = None
        if pos_weight is None:
            grad_x = (sigmoid(x) - y) * grad if need_x else None
            grad_y = -x * grad if need_y else None
            return grad_x, grad_y, None
        if need_x:
            positive = pos_weight * y
            grad_x = ((positive + 1 - y) * sigmoid(x) - positive) * grad
        if need_y:
            grad_y = (logsigmoid(-x) - logsigmoid(x) * pos_weight) * grad
        if need_p:
            grad_p = -y * logsigmoid(x) * grad
        return grad_x, grad_y, grad_p


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """The binary cross-entropy of ``sigmoid(input)``, computed stably from logits.

    ``-weight (pos_weight target log sigmoid(x) + (1 - target) log(1 - sigmoid(x)))``,
    evaluated as PyTorch does, ``(1 - target) x - (1 + (pos_weight - 1) target)
    log_sigmoid(x)`` with ``log_sigmoid(x) = min(x, 0) - log(1 + exp(-|x|))``: no
    overflow for any finite logit. Infinite logits give what PyTorch gives (NaN where
    ``0 * inf`` appears, e.g. ``x = +inf`` with ``target = 1``).

    Parameters
    ----------
    input : Tensor
        Logits, any real values.
    target : Tensor
        Of the input's shape, floating point (as PyTorch), usually in [0, 1].
    weight : Tensor, optional
        Multiplies each term; must broadcast to the input's shape.
    reduction : {"mean", "sum", "none"}
    pos_weight : Tensor, optional
        Weight of the positive part, broadcast along the last dim as PyTorch: (C,) for
        an input (N, C), one per class. Must broadcast to the input's shape.

    Notes
    -----
    Unlike PyTorch, ``weight`` and ``pos_weight`` may require grad (and get their
    gradients).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.pointwise_loss import binary_cross_entropy_with_logits
    >>> logits, y = mta.tensor([0.0, 100.0]), mta.tensor([1.0, 0.0])
    >>> binary_cross_entropy_with_logits(logits, y, reduction="none")
    tensor([  0.6931, 100.    ])
    """
    name = "binary_cross_entropy_with_logits"
    check_reduction(name, reduction)
    input, target = _same_shape_floats(name, False, input=input, target=target)
    positive = (
        None if pos_weight is None else _broadcast_weight(name, "pos_weight", pos_weight, input)
    )
    term = BinaryCrossEntropyWithLogits.apply(input, target, positive)
    if weight is not None:
        term = term * _broadcast_weight(name, "weight", weight, input)
    return reduce_loss(term, reduction)


# ------------------------------------------------------------------ KL divergence
class XLogY(Function):
    """``x log(y)``, and 0 where ``x == 0`` unless ``y`` is NaN (``torch.xlogy``).

    Gradients (PyTorch's): ``log(y)`` for ``x``, also at ``x = 0`` except where
    ``y <= 0`` (0 there: ``x log(y)`` is not defined around such points), and ``x / y``
    for ``y``.
    """

    def forward(self, x: Any, y: Any) -> Any:
        xp = self.xp
        with np.errstate(divide="ignore", invalid="ignore"):  # 0 * log(0): replaced next
            product = x * xp.log(y)
        self.undefined = (x == 0) & (y <= 0)  # no gradient in x there (PyTorch's choice)
        return xp.where((x == 0) & ~xp.isnan(y), x.dtype.type(0), product)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, Tensor | None]:
        x, y = self.inputs
        need_x, need_y = self.needs_input_grad
        grad_x = grad_y = None
        if need_x:
            undefined = Tensor._make(self.undefined, self.device, False, None)
            grad_x = where(undefined, 0.0, XLogY.apply(grad, y))
        if need_y:
            grad_y = grad * x / y
        return grad_x, grad_y


def kl_div(
    input: Tensor, target: Tensor, reduction: str = "mean", log_target: bool = False
) -> Tensor:
    """The Kullback-Leibler divergence of ``target`` from the distribution whose
    log-probabilities are ``input``.

    Pointwise ``target (log(target) - input)`` (0 where ``target`` is 0), or with
    ``log_target`` (``target`` holds log-probabilities too) ``exp(target) (target -
    input)``, as PyTorch.

    Parameters
    ----------
    input : Tensor
        Log-probabilities (e.g. from ``log_softmax``).
    target : Tensor
        Probabilities (or log-probabilities with ``log_target``), of the input's shape,
        floating point (as PyTorch).
    reduction : {"mean", "batchmean", "sum", "none"}
        "batchmean" divides the sum by the batch size ``input.shape[0]``: that is the
        divergence's definition. "mean" divides by the number of elements and, as
        PyTorch, warns (UserWarning) that it is not the divergence.
    log_target : bool

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.pointwise_loss import kl_div
    >>> q = mta.tensor([[0.5, 0.5]])
    >>> kl_div(q.log(), mta.tensor([[1.0, 0.0]]), reduction="batchmean").item()  # log 2
    0.6931471824645996
    """
    if reduction != "batchmean":
        check_reduction("kl_div", reduction)
    if reduction == "mean":
        warnings.warn(
            "kl_div: reduction='mean' divides the total loss by both the batch size and the "
            "support size; 'batchmean' divides only by the batch size, as the KL "
            "divergence's definition does (the same warning as PyTorch's)",
            UserWarning,
            stacklevel=2,
        )
    input, target = _same_shape_floats("kl_div", False, input=input, target=target)
    if log_target:
        term = exp(target) * (target - input)
    else:
        term = XLogY.apply(target, target) - target * input
    if reduction != "batchmean":
        return reduce_loss(term, reduction)
    total = term.sum()
    return total / input.shape[0] if input.ndim else total


# ------------------------------------------------------------------ margins
def soft_margin_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """The logistic loss ``log(1 + exp(-target input))`` for targets of 1 or -1, reduced.

    Computed as PyTorch does (``log1p(exp(-target input))``): it overflows to inf for
    ``-target input`` above about 88 in float32 (710 in float64), with a NaN gradient
    there, as PyTorch's.

    Notes
    -----
    PyTorch refuses a target that requires grad; here it gets its gradient.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.pointwise_loss import soft_margin_loss
    >>> soft_margin_loss(mta.tensor([0.0, 2.0]), mta.tensor([1.0, -1.0]), reduction="sum")
    tensor(2.8201)
    """
    check_reduction("soft_margin_loss", reduction)
    input, target = _same_shape_floats("soft_margin_loss", True, input=input, target=target)
    return reduce_loss(log1p(exp(-input * target)), reduction)


def margin_ranking_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: str = "mean"
) -> Tensor:
    """``max(0, -target (input1 - input2) + margin)``: ``target = 1`` asks for
    ``input1`` to rank higher than ``input2`` by ``margin``, ``-1`` for the reverse.

    The gradient at the kink (exactly 0 before the max) passes, as PyTorch's
    ``clamp_min``.

    Raises
    ------
    ValueError
        If the three shapes are not one (PyTorch only asks for one number of dims).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.pointwise_loss import margin_ranking_loss
    >>> a, b = mta.tensor([1.0, 1.0]), mta.tensor([0.0, 3.0])
    >>> margin_ranking_loss(a, b, mta.tensor([1.0, 1.0]), margin=0.5, reduction="none")
    tensor([0. , 2.5])
    """
    check_reduction("margin_ranking_loss", reduction)
    input1, input2, target = _same_shape_floats(
        "margin_ranking_loss", True, input1=input1, input2=input2, target=target
    )
    return reduce_loss(clamp(-target * (input1 - input2) + margin, min=0.0), reduction)


def hinge_embedding_loss(
    input: Tensor, target: Tensor, margin: float = 1.0, reduction: str = "mean"
) -> Tensor:
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1.

    Built as PyTorch's: an element whose target is neither 1 nor -1 gets both terms. The
    target gets no gradient (it only selects).

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.pointwise_loss import hinge_embedding_loss
    >>> d = mta.tensor([0.3, 0.3, 2.0])
    >>> hinge_embedding_loss(d, mta.tensor([1, -1, -1]), reduction="none")
    tensor([0.3, 0.7, 0. ])
    """
    check_reduction("hinge_embedding_loss", reduction)
    input, target = _same_shape_floats("hinge_embedding_loss", True, input=input, target=target)
    below_margin = clamp(margin - input, min=0.0)
    term = where(target != 1, below_margin, 0.0) + where(target != -1, input, 0.0)
    return reduce_loss(term, reduction)


def cosine_embedding_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: str = "mean"
) -> Tensor:
    """``1 - cos(x1, x2)`` for the rows whose target is 1, ``max(0, cos(x1, x2) -
    margin)`` for those whose target is -1 (0 for any other target), as PyTorch.

    ``cos = x1 . x2 / sqrt((|x1|^2 + 1e-12) (|x2|^2 + 1e-12))`` over the last dim.

    Parameters
    ----------
    input1, input2 : Tensor
        (N, D) with a target (N,), or (D,) with a 0-d target.
    target : Tensor
        1 or -1 per row (integers or floats).
    margin : float
        In [-1, 1]; PyTorch suggests [0, 0.5].
    reduction : {"mean", "sum", "none"}
        "none" gives one loss per row.

    Raises
    ------
    ValueError
        If ``input1`` and ``input2`` differ in shape or do not fit the target.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.pointwise_loss import cosine_embedding_loss
    >>> x1 = mta.tensor([[1.0, 0.0], [1.0, 0.0]])
    >>> x2 = mta.tensor([[0.0, 1.0], [1.0, 1.0]])
    >>> cosine_embedding_loss(x1, x2, mta.tensor([1, -1]), reduction="none")
    tensor([1.    , 0.7071])
    """
    name = "cosine_embedding_loss"
    check_reduction(name, reduction)
    input1, input2 = _same_shape_floats(name, False, input1=input1, input2=input2)
    target = _check_tensor(name, "target", target)
    if target.device is not input1.device:
        raise RuntimeError(f"{name}: input1 is on {input1.device} but target on {target.device}")
    if target.ndim > 1 or input1.ndim != target.ndim + 1 or input1.shape[:-1] != target.shape:
        raise ValueError(
            f"{name}: inputs of shape {input1.shape} do not fit a target of shape "
            f"{target.shape}; expected inputs (N, D) with a target (N,), or (D,) with a 0-d one"
        )
    dim = target.ndim  # the feature dim: 1 for rows, 0 for one pair of vectors
    dot = (input1 * input2).sum(dim)
    squares1 = (input1 * input1).sum(dim) + _COSINE_EPSILON
    squares2 = (input2 * input2).sum(dim) + _COSINE_EPSILON
    cosine = dot / (squares1 * squares2).sqrt()
    term = where(target == 1, 1.0 - cosine, 0.0) + where(
        target == -1, clamp(cosine - margin, min=0.0), 0.0
    )
    return reduce_loss(term, reduction)


# ------------------------------------------------------------------ negative log-likelihoods
def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    eps: float = 1e-8,
    reduction: str = "mean",
) -> Tensor:
    """The Poisson negative log-likelihood of counts ``target`` for rates ``input``.

    ``exp(input) - target input`` when ``input`` is the log-rate (``log_input``), else
    ``input - target log(input + eps)``. With ``full``, Stirling's approximation of
    ``log(target!)``, ``target log(target) - target + 0.5 log(2 pi target)``, is added
    where ``target > 1``.

    Notes
    -----
    The argument order drops PyTorch's deprecated ``size_average`` and ``reduce``:
    ``(input, target, log_input, full, eps, reduction)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.pointwise_loss import poisson_nll_loss
    >>> poisson_nll_loss(mta.tensor([0.0]), mta.tensor([2])).item()  # exp(0) - 2 * 0
    1.0
    """
    name = "poisson_nll_loss"
    check_reduction(name, reduction)
    input, target = _same_shape_floats(name, True, input=input, target=target)
    term = exp(input) - target * input if log_input else input - target * log(input + eps)
    if full:
        stirling = target * log(target) - target + 0.5 * log(2 * math.pi * target)
        term = term + where(target <= 1, 0.0, stirling)
    return reduce_loss(term, reduction)


class VarianceFloor(Function):
    """``max(var, eps)`` whose gradient passes unchanged, also where the floor is
    applied: PyTorch's ``gaussian_nll_loss`` clamps ``var`` under ``no_grad``.
    """

    saves_inputs = False  # backward needs no input's values

    def forward(self, var: Any, *, eps: float) -> Any:
        return self.xp.maximum(var, eps)  # NaN stays NaN, as clamp_

    def backward(self, grad: Tensor) -> Tensor:
        return grad


def _variance(name: str, var: Tensor | float, input: Tensor) -> Tensor:
    """``var`` as a tensor that broadcasts to the input, after PyTorch's checks."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError(f"{name}: var must be >= 0, got {var}")
        full = input.xp.full(input.shape, var, dtype=input.dtype)  # PyTorch: var * ones_like
        return Tensor._make(full, input.device, False, None)
    var = _check_tensor(name, "var", var)
    if var.device is not input.device:
        raise RuntimeError(f"{name}: input is on {input.device} but var on {var.device}")
    if var.dtype != input.dtype:
        var = var.to(dtype=result_dtype(var.dtype, input.dtype))
    if not _capturing(var) and bool((var.array < 0).any()):  # a read-back: waits for a GPU
        raise ValueError(f"{name}: var has negative entries; a variance must be >= 0")
    if var.shape == input.shape:
        return var
    if var.shape == input.shape[:-1]:  # one variance per row: homoscedastic
        return var.unsqueeze(-1)
    if var.ndim == input.ndim:  # size 1 in the one dim where they differ: broadcasts
        mismatched = [v for i, v in zip(input.shape, var.shape, strict=True) if i != v]
        if sum(mismatched) == 1:
            return var
    raise ValueError(
        f"{name}: var of shape {var.shape} does not fit the input's shape {input.shape}; "
        "expected the input's shape, its shape without the last dim, or its shape with "
        "one dim of size 1"
    )


@on_input_device
def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """The Gaussian negative log-likelihood of ``target`` under means ``input`` and
    variances ``var``: ``0.5 (log(var) + (input - target)**2 / var)``, plus
    ``0.5 log(2 pi)`` with ``full``.

    ``var`` is floored at ``eps`` for stability; as in PyTorch the floor does not stop
    its gradient (it is applied outside autograd there).

    Parameters
    ----------
    input, target : Tensor
        Of one shape.
    var : Tensor or float
        Of the input's shape, or that shape without its last dim, or with one dim of
        size 1 (homoscedastic); a float is one variance for all.
    full : bool
    eps : float
    reduction : {"mean", "sum", "none"}

    Raises
    ------
    ValueError
        For a negative variance (PyTorch's check: reading its verdict back waits for a
        GPU), a ``var`` of the wrong shape, or a bad ``reduction``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.pointwise_loss import gaussian_nll_loss
    >>> gaussian_nll_loss(mta.tensor([1.0]), mta.tensor([3.0]), var=4.0).item()
    1.1931471824645996
    """
    name = "gaussian_nll_loss"
    check_reduction(name, reduction)
    input, target = _same_shape_floats(name, True, input=input, target=target)
    floored = VarianceFloor.apply(_variance(name, var, input), eps=float(eps))
    diff = input - target
    term = 0.5 * (log(floored) + diff**2 / floored)
    if full:
        term = term + 0.5 * math.log(2 * math.pi)
    return reduce_loss(term, reduction)
