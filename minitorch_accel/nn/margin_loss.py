"""Margin loss modules over classes and triplets, as ``torch.nn``: each holds its
settings (a class weight as a buffer) and calls its function in
:mod:`minitorch_accel.ops.margin_loss`, where the math is written down.

The constructors drop PyTorch's deprecated ``size_average`` and ``reduce``; the other
arguments keep PyTorch's names, order and defaults.

Examples
--------
>>> import minitorch_accel as mta
>>> from minitorch_accel import nn
>>> loss = nn.MultiMarginLoss(weight=mta.ones(4))
>>> round(loss(mta.tensor([[0.1, 0.2, 0.4, 0.8]]), mta.tensor([3])).item(), 4)
0.325
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.tensor import Tensor
from ..ops import margin_loss as losses
from .loss import _Loss


class MultiMarginLoss(_Loss):
    """The multi-class hinge; see :func:`~minitorch_accel.nn.functional.multi_margin_loss`.

    Parameters
    ----------
    p : {1, 2}
    margin : float
    weight : Tensor, optional
        One weight per class (C,); a buffer (moves with ``to``, in the state dict).
    reduction : {"mean", "sum", "none"}

    Examples
    --------
    >>> from minitorch_accel import nn
    >>> nn.MultiMarginLoss(p=2, margin=0.5)
    MultiMarginLoss(p=2, margin=0.5, reduction='mean')
    """

    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight: Tensor | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(reduction)
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 are supported, got {p}")
        self.p, self.margin = p, margin
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of scores ``input`` (N, C) for class indices ``target`` (N,)."""
        return losses.multi_margin_loss(
            input, target, self.p, self.margin, self.weight, self.reduction
        )

    def extra_repr(self) -> str:
        """The settings shown inside this loss's ``repr``."""
        return f"p={self.p}, margin={self.margin}, {super().extra_repr()}"


class MultiLabelMarginLoss(_Loss):
    """The multi-label hinge; see
    :func:`~minitorch_accel.nn.functional.multilabel_margin_loss`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> x, y = mta.tensor([[0.1, 0.2, 0.4, 0.8]]), mta.tensor([[3, 0, -1, 1]])
    >>> round(nn.MultiLabelMarginLoss()(x, y).item(), 4)
    0.85
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of scores ``input`` for class lists ``target`` (same shape, -1 ends)."""
        return losses.multilabel_margin_loss(input, target, self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """Mean per-class logistic loss; see
    :func:`~minitorch_accel.nn.functional.multilabel_soft_margin_loss`.

    Parameters
    ----------
    weight : Tensor, optional
        Broadcast to the input, usually one per class (C,); a buffer.
    reduction : {"mean", "sum", "none"}

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> round(nn.MultiLabelSoftMarginLoss()(mta.zeros(2, 3), mta.ones(2, 3)).item(), 4)
    0.6931
    """

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of logits ``input`` for 0/1 targets ``target`` (same shape)."""
        return losses.multilabel_soft_margin_loss(input, target, self.weight, self.reduction)


class TripletMarginLoss(_Loss):
    """The triplet loss with a ``p``-norm distance; see
    :func:`~minitorch_accel.nn.functional.triplet_margin_loss`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> a, pos, neg = mta.zeros(1, 2), mta.zeros(1, 2), mta.tensor([[3.0, 4.0]])
    >>> nn.TripletMarginLoss(margin=6.0, eps=0.0)(a, pos, neg).item()
    1.0
    """

    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        reduction: str = "mean",
    ) -> None:
        super().__init__(reduction)
        if not margin > 0:
            raise ValueError(f"TripletMarginLoss: margin must be > 0, got {margin}")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        """The loss of the triplets (rows of the three inputs)."""
        return losses.triplet_margin_loss(
            anchor, positive, negative, self.margin, self.p, self.eps, self.swap, self.reduction
        )

    def extra_repr(self) -> str:
        """The settings shown inside this loss's ``repr``."""
        return f"margin={self.margin}, p={self.p}, swap={self.swap}, {super().extra_repr()}"


class TripletMarginWithDistanceLoss(_Loss):
    """The triplet loss with any distance function; see
    :func:`~minitorch_accel.nn.functional.triplet_margin_with_distance_loss`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> loss = nn.TripletMarginWithDistanceLoss(margin=6.0)
    >>> round(loss(mta.zeros(1, 2), mta.zeros(1, 2), mta.tensor([[3.0, 4.0]])).item(), 4)
    1.0
    """

    def __init__(
        self,
        *,
        distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
        margin: float = 1.0,
        swap: bool = False,
        reduction: str = "mean",
    ) -> None:
        super().__init__(reduction)
        if not margin > 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: margin must be > 0, got {margin}")
        self.distance_function, self.margin, self.swap = distance_function, margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        """The loss of the triplets (rows of the three inputs)."""
        return losses.triplet_margin_with_distance_loss(
            anchor,
            positive,
            negative,
            distance_function=self.distance_function,
            margin=self.margin,
            swap=self.swap,
            reduction=self.reduction,
        )

    def extra_repr(self) -> str:
        """The settings shown inside this loss's ``repr``."""
        return f"margin={self.margin}, swap={self.swap}, {super().extra_repr()}"


__all__ = [
    "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss",
    "MultiMarginLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
]
