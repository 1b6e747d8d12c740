"""Margin losses over classes and over triplets, as ``torch.nn.functional``.

- ``multi_margin_loss``: the multi-class hinge,
  ``loss_i = sum_{j != y_i} w[y_i] * max(0, margin - x[i, y_i] + x[i, j]) ** p / C``.
- ``multilabel_margin_loss``: each sample's target lists its classes (ended by the
  first -1); ``loss_i = sum_{j listed} sum_{k not a target} max(0, 1 - (x[i, j] -
  x[i, k])) / C``.
- ``multilabel_soft_margin_loss``: the mean over classes of a (weighted) binary
  cross-entropy of logits.
- ``triplet_margin_loss`` and ``triplet_margin_with_distance_loss``:
  ``max(0, margin + d(a, p) - d(a, n))``, with ``d(a, n)`` replaced by ``d(p, n)`` where
  smaller when ``swap``.

The two multi-class margins are one :class:`~minitorch_accel.core.function.Function`
each whose backward is PyTorch's: a term with ``z <= 0`` (or NaN) counts for nothing,
and the local gradient is multiplied by the incoming one last (so an infinite incoming
gradient gives NaN where the local one is 0, as PyTorch). The others are compositions of
differentiable ops, built as PyTorch builds them.

Where these differ from PyTorch: the deprecated ``size_average`` and ``reduce`` are
not accepted; ``multilabel_soft_margin_loss`` wants the target of the input's shape (no
broadcasting).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.function import Function
from ..core.tensor import Tensor
from .activation import logsigmoid
from .distance import pairwise_distance
from .elementwise import clamp, minimum, where
from .index import gather
from .loss import check_reduction, reduce_loss
from .pointwise_loss import _broadcast_weight, _same_shape_floats
from .weighted_loss import class_weight


def _constant(array: Any, like: Tensor) -> Tensor:
    return Tensor._make(array, like.device, False, None)


def _class_rows(name: str, input: Any, target: Any, per_class: bool) -> tuple[Tensor, Tensor]:
    """``input`` as (N, C) and ``target`` as (N,) (or (N, C) when ``per_class``).

    Accepted: input (N, C) with target (N,) [(N, C)]; input (C,) with target () or
    (1,) [(C,)].
    """
    if not isinstance(input, Tensor) or not isinstance(target, Tensor):
        raise TypeError(f"{name}: input and target must be tensors")
    if input.dtype.kind != "f":
        raise TypeError(f"{name}: input must be floating point, got {input.dtype}")
    if target.dtype.kind not in "iu":
        raise TypeError(
            f"{name}: target must hold class indices in an integer tensor, got {target.dtype}; "
            "convert it with .long()"
        )
    if input.device is not target.device:
        raise RuntimeError(f"{name}: input is on {input.device} but target on {target.device}")
    if input.ndim not in (1, 2) or input.shape[-1] == 0:
        raise ValueError(f"{name}: input must be (N, C) or (C,) with C > 0, got {input.shape}")
    if per_class:
        fits = target.shape == input.shape
    else:
        fits = target.shape == input.shape[:1] if input.ndim == 2 else target.numel() == 1
    if not fits:
        wanted = input.shape if per_class else input.shape[:1] if input.ndim == 2 else "() or (1,)"
        raise ValueError(
            f"{name}: input of shape {input.shape} needs a target of shape {wanted}, "
            f"got {target.shape}"
        )
    classes = input.shape[-1]
    return input.reshape(-1, classes), target.reshape(-1, classes) if per_class else target.reshape(
        -1
    )


# ------------------------------------------------------------------ multi-class hinge
class MultiMargin(Function):
    """The per-row multi-class hinge of ``x`` (N, C) for labels ``y`` (N,): see
    :func:`multi_margin_loss`. ``row_weight`` (N, 1) is ``w[y_i]`` or None.
    """

    def forward(self, x: Any, y: Any, *, p: int, margin: float, row_weight: Any) -> Any:
        xp, rows = self.xp, self.xp.arange(x.shape[0])
        z = x.dtype.type(margin) - x[rows, y][:, None] + x
        keep = z > 0
        keep[rows, y] = False
        term = xp.where(keep, z if p == 1 else z * z, x.dtype.type(0))
        if row_weight is not None:
            term = term * row_weight
        self.keep, self.p, self.margin, self.row_weight = keep, p, margin, row_weight
        return term.sum(axis=1) / x.shape[1]

    def backward(self, grad: Tensor) -> tuple[Tensor, None]:
        x, y = self.inputs
        keep, classes = _constant(self.keep, x), x.shape[1]
        if self.p == 1:
            g = x.dtype.type(1.0 / classes)  # PyTorch's 1 / C, in the input's dtype
            h = _constant(self.xp.where(self.keep, g, x.dtype.type(0)), x)
        else:
            z = self.margin - gather(x, 1, y.reshape(-1, 1)) + x
            h = where(keep, (2.0 / classes) * z, 0.0)
        if self.row_weight is not None:
            h = h * _constant(self.row_weight, x)
        is_label = _constant(self.xp.arange(classes)[None, :] == y.array[:, None], x)
        local = where(is_label, -h.sum(1, keepdim=True), h)
        return local * grad.reshape(-1, 1), None


def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-class hinge loss (PyTorch's ``multi_margin_loss``).

    ``loss_i = sum_{j != y_i} w[y_i] * max(0, margin - x[i, y_i] + x[i, j]) ** p / C``:
    every other class should score at least ``margin`` below the target's.

    Parameters
    ----------
    input : Tensor
        Scores (N, C) or (C,).
    target : Tensor
        Class indices in ``[0, C)``: (N,), or () or (1,) for a 1-D input.
    p : {1, 2}
    margin : float
    weight : Tensor, optional
        One float weight per class (C,), taken at each row's target; no gradient.
    reduction : {"mean", "sum", "none"}

    Returns
    -------
    Tensor
        A scalar, or the per-row losses (N,) for "none" (a scalar for a 0-d target).

    Raises
    ------
    IndexError
        For a label outside ``[0, C)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.margin_loss import multi_margin_loss
    >>> x = mta.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> round(multi_margin_loss(x, mta.tensor([3])).item(), 4)  # (0.3 + 0.4 + 0.6) / 4
    0.325
    """
    name = "multi_margin_loss"
    check_reduction(name, reduction)
    if p not in (1, 2):
        raise ValueError(f"{name}: only p == 1 and p == 2 are supported, got p={p}")
    x, y = _class_rows(name, input, target, per_class=False)
    labels = y.array.astype(np.int64, copy=False)
    if ((labels < 0) | (labels >= x.shape[1])).any():
        raise IndexError(f"{name}: target out of range: labels must be in [0, {x.shape[1] - 1}]")
    row_weight = None
    if weight is not None:
        row_weight = class_weight(name, weight, x).detach().array[labels][:, None]
    rows = MultiMargin.apply(
        x, _constant(labels, x), p=p, margin=float(margin), row_weight=row_weight
    )
    if reduction == "none":
        return rows.reshape(target.shape if target.ndim else ())
    return reduce_loss(rows, reduction)


# ------------------------------------------------------------------ multi-label hinge
class MultiLabelMargin(Function):
    """The per-row multi-label hinge of ``x`` (N, C) for target lists ``t`` (N, C):
    see :func:`multilabel_margin_loss`. The local gradient is piecewise constant.
    """

    def forward(self, x: Any, t: Any) -> Any:
        xp, (n, classes) = self.xp, x.shape
        listed = xp.cumprod(t >= 0, axis=1).astype(bool)  # entries before the first -1
        safe = xp.where(listed, t, 0)
        rows = xp.broadcast_to(xp.arange(n)[:, None], t.shape)
        is_target = xp.zeros((n, classes), dtype=bool)
        is_target[rows[listed], t[listed]] = True
        x_listed = xp.take_along_axis(x, safe, axis=1)
        z = 1 - x_listed[:, :, None] + x[:, None, :]  # (N, entry, class)
        active = listed[:, :, None] & ~is_target[:, None, :] & (z > 0)
        g = x.dtype.type(1.0 / classes)
        local = active.sum(axis=1).astype(x.dtype) * g
        xp.add.at(local, (rows, safe), -active.sum(axis=2).astype(x.dtype) * g)
        self.local = local
        return xp.where(active, z, x.dtype.type(0)).sum(axis=(1, 2)) / classes

    def backward(self, grad: Tensor) -> tuple[Tensor, None]:
        return _constant(self.local, grad) * grad.reshape(-1, 1), None


def multilabel_margin_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """The multi-label hinge loss (PyTorch's ``multilabel_margin_loss``).

    Each row of ``target`` lists the sample's classes, ended by the first -1 (the rest
    is ignored): ``loss_i = sum_{j listed} sum_{k not a target} max(0, 1 - (x[i, j] -
    x[i, k])) / C``.

    Parameters
    ----------
    input : Tensor
        Scores (N, C) or (C,).
    target : Tensor
        Integer class lists of the input's shape, values in ``[-1, C)``.
    reduction : {"mean", "sum", "none"}
        "none" gives (N,), or a scalar for a 1-D input (as PyTorch).

    Raises
    ------
    IndexError
        For a target value outside ``[-1, C)``.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.margin_loss import multilabel_margin_loss
    >>> x = mta.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> y = mta.tensor([[3, 0, -1, 1]])  # classes 3 and 0
    >>> round(multilabel_margin_loss(x, y).item(), 4)
    0.85
    """
    name = "multilabel_margin_loss"
    check_reduction(name, reduction)
    x, t = _class_rows(name, input, target, per_class=True)
    lists = t.array.astype(np.int64, copy=False)
    if ((lists < -1) | (lists >= x.shape[1])).any():
        raise IndexError(
            f"{name}: target out of range: values must be in [-1, {x.shape[1] - 1}] "
            "(class indices, -1 ends a row's list)"
        )
    rows = MultiLabelMargin.apply(x, _constant(lists, x))
    if reduction == "none":
        return rows if input.ndim == 2 else rows.reshape(())
    return reduce_loss(rows, reduction)


def multilabel_soft_margin_loss(
    input: Tensor, target: Tensor, weight: Tensor | None = None, reduction: str = "mean"
) -> Tensor:
    """The mean over classes of a binary cross-entropy of logits (PyTorch's
    ``multilabel_soft_margin_loss``):
    ``loss_i = -sum_c w[c] * (y log sigmoid(x) + (1 - y) log sigmoid(-x))[i, c] / C``.

    Parameters
    ----------
    input : Tensor
        Logits (N, C) (the classes run along the last dim).
    target : Tensor
        0 or 1 (or any value in between) per class, of the input's shape.
    weight : Tensor, optional
        Broadcast to the input's shape, usually one per class (C,).
    reduction : {"mean", "sum", "none"}

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.margin_loss import multilabel_soft_margin_loss
    >>> round(multilabel_soft_margin_loss(mta.zeros(2, 3), mta.ones(2, 3)).item(), 4)  # log 2
    0.6931
    """
    name = "multilabel_soft_margin_loss"
    check_reduction(name, reduction)
    input, target = _same_shape_floats(name, True, input=input, target=target)
    if input.ndim == 0:
        raise ValueError(f"{name}: input needs a class dimension, got a 0-d tensor")
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * _broadcast_weight(name, "weight", weight, input)
    class_dim = input.ndim - 1
    rows = loss.sum(class_dim) / input.shape[class_dim]
    return reduce_loss(rows, reduction)


# ------------------------------------------------------------------ triplets
def _triplet_dims(name: str, anchor: Any, positive: Any, negative: Any) -> None:
    for label, t in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: {label} must be a Tensor, got {type(t).__name__}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise ValueError(
            f"{name}: anchor, positive and negative must have the same number of dims, got "
            f"anchor {anchor.ndim}-D, positive {positive.ndim}-D and negative {negative.ndim}-D"
        )


def _triplet(
    d_pos: Tensor, d_neg: Tensor, d_swap: Tensor | None, margin: float, reduction: str
) -> Tensor:
    if d_swap is not None:
        d_neg = minimum(d_neg, d_swap)
    return reduce_loss(clamp(margin + d_pos - d_neg, min=0.0), reduction)


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2.0,
    eps: float = 1e-6,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """The triplet loss ``max(0, margin + d(a, p) - d(a, n))`` with the ``p``-norm
    distance ``d(x, y) = ||x - y + eps||_p`` along the last dim (PyTorch's
    ``triplet_margin_loss``). With ``swap``, ``d(a, n)`` is replaced by ``d(p, n)``
    where that is smaller (Balntas et al., 2016).

    Parameters
    ----------
    anchor, positive, negative : Tensor
        (N, D) or (D,), broadcast against each other; the same number of dims.
    margin, p, eps : float
    swap : bool
    reduction : {"mean", "sum", "none"}

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.margin_loss import triplet_margin_loss
    >>> a, pos, neg = mta.zeros(1, 2), mta.zeros(1, 2), mta.tensor([[3.0, 4.0]])
    >>> triplet_margin_loss(a, pos, neg, margin=6.0, eps=0.0).item()  # 6 + 0 - 5
    1.0
    """
    name = "triplet_margin_loss"
    check_reduction(name, reduction)
    _triplet_dims(name, anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    d_swap = pairwise_distance(positive, negative, p, eps) if swap else None
    return _triplet(d_pos, d_neg, d_swap, margin, reduction)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """The triplet loss ``max(0, margin + d(a, p) - d(a, n))`` with any distance
    function (PyTorch's ``triplet_margin_with_distance_loss``); the default is
    :func:`~minitorch_accel.ops.distance.pairwise_distance`.

    Parameters
    ----------
    anchor, positive, negative : Tensor
        Of the same number of dims.
    distance_function : callable, optional
        ``(x, y) -> distances``, a non-negative Tensor (one per row).
    margin : float
        Must be > 0.
    swap : bool
    reduction : {"mean", "sum", "none"}

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel.ops.margin_loss import triplet_margin_with_distance_loss
    >>> l1 = lambda x, y: (x - y).abs().sum(-1)
    >>> a, pos, neg = mta.zeros(1, 2), mta.ones(1, 2), mta.tensor([[3.0, 4.0]])
    >>> triplet_margin_with_distance_loss(a, pos, neg, distance_function=l1, margin=6.0).item()
    1.0
    """
    name = "triplet_margin_with_distance_loss"
    check_reduction(name, reduction)
    if not margin > 0:
        raise ValueError(f"{name}: margin must be > 0, got {margin}")
    _triplet_dims(name, anchor, positive, negative)
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    d_swap = distance(positive, negative) if swap else None
    return _triplet(d_pos, d_neg, d_swap, margin, reduction)


__all__ = [
    "MultiLabelMargin",
    "MultiMargin",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]
