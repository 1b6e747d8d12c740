"""Loss modules whose term is per element (or per row), as ``torch.nn``: each holds its
settings and calls its function in :mod:`minitorch_accel.ops.pointwise_loss` (also
:mod:`~minitorch_accel.nn.functional`), where the math and the differences from PyTorch
are written down.

As :class:`~minitorch_accel.nn.MSELoss`, the constructors drop PyTorch's deprecated
``size_average`` and ``reduce``; the other arguments keep PyTorch's names, order and
defaults.

Examples
--------
>>> import minitorch_accel as mta
>>> from minitorch_accel import nn
>>> loss = nn.BCEWithLogitsLoss(pos_weight=mta.tensor([2.0, 1.0]))
>>> round(loss(mta.zeros(4, 2), mta.ones(4, 2)).item(), 4)  # (2 + 1) / 2 * log 2
1.0397
"""

from __future__ import annotations

from ..core.tensor import Tensor
from ..ops import pointwise_loss as losses
from ..ops.loss import check_reduction
from .module import Module


class _Loss(Module):
    """A loss module's ``reduction``, checked when it is built, and its repr."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        check_reduction(type(self).__name__, reduction)
        self.reduction = reduction

    def extra_repr(self) -> str:
        """The settings shown inside this loss's ``repr``."""
        return f"reduction={self.reduction!r}"


class L1Loss(_Loss):
    """Mean absolute error; see :func:`~minitorch_accel.nn.functional.l1_loss`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.L1Loss()(mta.tensor([1.0, -1.0]), mta.zeros(2)).item()
    1.0
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of ``input`` against ``target`` (same shapes)."""
        return losses.l1_loss(input, target, self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic below ``beta``, linear above; see
    :func:`~minitorch_accel.nn.functional.smooth_l1_loss`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.SmoothL1Loss(beta=0.5)
    SmoothL1Loss(reduction='mean', beta=0.5)
    """

    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        if beta < 0:
            raise ValueError(f"SmoothL1Loss: beta must be >= 0, got {beta}")
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of ``input`` against ``target`` (same shapes)."""
        return losses.smooth_l1_loss(input, target, self.reduction, self.beta)

    def extra_repr(self) -> str:
        """The settings shown inside this loss's ``repr``."""
        return f"{super().extra_repr()}, beta={self.beta}"


class HuberLoss(_Loss):
    """Quadratic below ``delta``, linear (slope ``delta``) above; see
    :func:`~minitorch_accel.nn.functional.huber_loss`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.HuberLoss(delta=2.0)(mta.tensor([3.0]), mta.zeros(1)).item()  # 2 * (3 - 1)
    4.0
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        if not delta > 0:
            raise ValueError(f"HuberLoss: delta must be > 0, got {delta}")
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of ``input`` against ``target`` (same shapes)."""
        return losses.huber_loss(input, target, self.reduction, self.delta)

    def extra_repr(self) -> str:
        """The settings shown inside this loss's ``repr``."""
        return f"{super().extra_repr()}, delta={self.delta}"


class BCELoss(_Loss):
    """Binary cross-entropy of probabilities; see
    :func:`~minitorch_accel.nn.functional.binary_cross_entropy`.

    Parameters
    ----------
    weight : Tensor, optional
        Multiplies each term (broadcast to the input's shape); a buffer, as in PyTorch:
        it moves with :meth:`~minitorch_accel.nn.Module.to` and is in the state dict.
    reduction : {"mean", "sum", "none"}

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> round(nn.BCELoss()(mta.tensor([0.5]), mta.tensor([1.0])).item(), 4)  # log 2
    0.6931
    """

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of probabilities ``input`` for ``target`` (same shapes)."""
        return losses.binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of logits, computed stably; see
    :func:`~minitorch_accel.nn.functional.binary_cross_entropy_with_logits`.

    Parameters
    ----------
    weight : Tensor, optional
        Multiplies each term (broadcast to the input's shape); a buffer.
    reduction : {"mean", "sum", "none"}
    pos_weight : Tensor, optional
        Weight of the positive part, broadcast along the last dim (one per class); a
        buffer.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> sorted(nn.BCEWithLogitsLoss(pos_weight=mta.ones(3)).state_dict())
    ['pos_weight']
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        reduction: str = "mean",
        pos_weight: Tensor | None = None,
    ) -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of logits ``input`` for ``target`` (same shapes)."""
        return losses.binary_cross_entropy_with_logits(
            input, target, self.weight, self.reduction, self.pos_weight
        )


class KLDivLoss(Module):
    """Kullback-Leibler divergence of ``target`` from log-probabilities ``input``; see
    :func:`~minitorch_accel.nn.functional.kl_div`.

    Parameters
    ----------
    reduction : {"mean", "batchmean", "sum", "none"}
        "batchmean" is the divergence; "mean" warns, as PyTorch.
    log_target : bool
        ``target`` holds log-probabilities.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> p = mta.tensor([[0.25, 0.75]])
    >>> nn.KLDivLoss(reduction="batchmean")(p.log(), p).item()
    0.0
    """

    def __init__(self, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__()
        if reduction != "batchmean":
            check_reduction("KLDivLoss", reduction)
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The divergence for log-probabilities ``input`` (same shapes)."""
        return losses.kl_div(input, target, self.reduction, self.log_target)

    def extra_repr(self) -> str:
        """The settings shown inside this loss's ``repr``."""
        return f"reduction={self.reduction!r}, log_target={self.log_target}"


class SoftMarginLoss(_Loss):
    """Logistic loss for targets of 1 or -1; see
    :func:`~minitorch_accel.nn.functional.soft_margin_loss`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> round(nn.SoftMarginLoss()(mta.zeros(3), mta.ones(3)).item(), 4)  # log 2
    0.6931
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of ``input`` for targets ``target`` of 1 or -1 (same shapes)."""
        return losses.soft_margin_loss(input, target, self.reduction)


class _MarginLoss(_Loss):
    """A loss with a ``margin`` before its ``reduction``."""

    def __init__(self, margin: float, reduction: str) -> None:
        super().__init__(reduction)
        self.margin = margin

    def extra_repr(self) -> str:
        """The settings shown inside this loss's ``repr``."""
        return f"margin={self.margin}, {super().extra_repr()}"


class CosineEmbeddingLoss(_MarginLoss):
    """Pulls pairs of rows together (target 1) or apart beyond a cosine of ``margin``
    (target -1); see :func:`~minitorch_accel.nn.functional.cosine_embedding_loss`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> x = mta.tensor([[1.0, 2.0]])
    >>> nn.CosineEmbeddingLoss()(x, x, mta.tensor([1])).item()
    0.0
    """

    def __init__(self, margin: float = 0.0, reduction: str = "mean") -> None:
        super().__init__(margin, reduction)

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        """The loss of the rows of ``input1`` and ``input2`` for targets of 1 or -1."""
        return losses.cosine_embedding_loss(input1, input2, target, self.margin, self.reduction)


class MarginRankingLoss(_MarginLoss):
    """Asks ``input1`` to rank above ``input2`` by ``margin`` where the target is 1 (and
    below where it is -1); see :func:`~minitorch_accel.nn.functional.margin_ranking_loss`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.MarginRankingLoss(margin=1.0)(mta.ones(1), mta.ones(1), mta.ones(1)).item()
    1.0
    """

    def __init__(self, margin: float = 0.0, reduction: str = "mean") -> None:
        super().__init__(margin, reduction)

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        """The loss of the pairs ``(input1, input2)`` for targets of 1 or -1."""
        return losses.margin_ranking_loss(input1, input2, target, self.margin, self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """``input`` where the target is 1, ``max(0, margin - input)`` where it is -1; see
    :func:`~minitorch_accel.nn.functional.hinge_embedding_loss`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.HingeEmbeddingLoss()(mta.tensor([0.25]), mta.tensor([-1])).item()
    0.75
    """

    def __init__(self, margin: float = 1.0, reduction: str = "mean") -> None:
        super().__init__(margin, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of ``input`` (e.g. distances) for targets of 1 or -1."""
        return losses.hinge_embedding_loss(input, target, self.margin, self.reduction)


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood; see
    :func:`~minitorch_accel.nn.functional.poisson_nll_loss`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.PoissonNLLLoss()(mta.zeros(2), mta.tensor([0.0, 3.0])).item()  # exp(0) - 0
    1.0
    """

    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        eps: float = 1e-8,
        reduction: str = "mean",
    ) -> None:
        super().__init__(reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        """The loss of rates (or log-rates) ``log_input`` for counts ``target``."""
        return losses.poisson_nll_loss(
            log_input, target, self.log_input, self.full, self.eps, self.reduction
        )

    def extra_repr(self) -> str:
        """The settings shown inside this loss's ``repr``."""
        return f"log_input={self.log_input}, full={self.full}, {super().extra_repr()}"


class GaussianNLLLoss(_Loss):
    """Gaussian negative log-likelihood with predicted variances; see
    :func:`~minitorch_accel.nn.functional.gaussian_nll_loss`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> nn.GaussianNLLLoss()(mta.zeros(2), mta.zeros(2), mta.ones(2)).item()
    0.0
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        """The loss of ``target`` under means ``input`` and variances ``var``."""
        return losses.gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)

    def extra_repr(self) -> str:
        """The settings shown inside this loss's ``repr``."""
        return f"full={self.full}, eps={self.eps}, {super().extra_repr()}"
