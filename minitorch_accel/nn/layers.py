"""Small layers without learned state: activation, reshaping, dropout, losses."""

from __future__ import annotations

from ..core.tensor import Tensor
from ..ops.loss import check_reduction
from . import functional as F
from .module import Module


class Identity(Module):
    """Return the input unchanged (a placeholder, e.g. to remove a layer)."""

    def forward(self, input: Tensor) -> Tensor:
        """``input`` itself."""
        return input


class ReLU(Module):
    """``max(x, 0)`` elementwise.

    Parameters
    ----------
    inplace : bool
        Write the result into the input (as PyTorch; see
        :func:`~minitorch_accel.nn.functional.relu`).

    Examples
    --------
    >>> from minitorch_accel import nn
    >>> nn.ReLU(inplace=True)
    ReLU(inplace=True)
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.relu`."""
        return F.relu(input, self.inplace)

    def extra_repr(self) -> str:
        """``inplace=True`` when set (as PyTorch prints it)."""
        return "inplace=True" if self.inplace else ""


class Flatten(Module):
    """Merge dims ``start_dim..end_dim`` into one: (N, C, H, W) -> (N, C*H*W) by default.

    Parameters
    ----------
    start_dim, end_dim : int
        The first and last dims to merge (default 1 and -1: all but the batch dim).
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        """The flattened input (a view when possible)."""
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size``: the inverse of :class:`Flatten`.

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> mta.nn.Unflatten(1, (1, 28, 28))(mta.zeros(2, 784)).shape
    (2, 1, 28, 28)
    """

    def __init__(self, dim: int, unflattened_size: tuple[int, ...]) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        """The input with dim ``dim`` split (a view when possible)."""
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Dropout(Module):
    """Zero each element with probability ``p`` in training mode, scaling the rest by
    ``1 / (1 - p)``; the identity in evaluation mode.

    Parameters
    ----------
    p : float
        Probability of zeroing an element (default 0.5), in ``[0, 1]``.
    inplace : bool
        Write the result into the input (as PyTorch).
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: probability p must be in [0, 1], got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`~minitorch_accel.nn.functional.dropout` when training."""
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"p={self.p}, inplace={self.inplace}"


class CrossEntropyLoss(Module):
    """Cross-entropy of logits against class indices or class probabilities; see
    :func:`~minitorch_accel.nn.functional.cross_entropy`.

    The arguments keep PyTorch's names, order and defaults, less the deprecated
    ``size_average`` and ``reduce`` (which the functional form accepts).

    Parameters
    ----------
    weight : Tensor, optional
        One weight per class (C,); a buffer, as in PyTorch: it moves with
        :meth:`~minitorch_accel.nn.Module.to` and is in the state dict.
    ignore_index : int
    reduction : {"mean", "sum", "none"}
    label_smoothing : float

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> loss = nn.CrossEntropyLoss()(mta.zeros(4, 10), mta.tensor([0, 1, 2, 3]))
    >>> round(loss.item(), 4)  # log(10)
    2.3026
    >>> sorted(nn.CrossEntropyLoss(weight=mta.ones(10)).state_dict())
    ['weight']
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        ignore_index: int = -100,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__()
        check_reduction("CrossEntropyLoss", reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(
                f"CrossEntropyLoss: label_smoothing must be in [0, 1], got {label_smoothing}"
            )
        self.register_buffer("weight", weight)
        self.reduction, self.label_smoothing = reduction, label_smoothing
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of ``input`` (logits) for ``target`` (class indices or
        probabilities).
        """
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"reduction={self.reduction!r}, label_smoothing={self.label_smoothing}"


class NLLLoss(Module):
    """Negative log-likelihood of log-probabilities; see
    :func:`~minitorch_accel.nn.functional.nll_loss`.

    Parameters
    ----------
    weight : Tensor, optional
        One weight per class (C,); a buffer.
    ignore_index : int
    reduction : {"mean", "sum", "none"}

    Examples
    --------
    >>> import minitorch_accel as mta
    >>> from minitorch_accel import nn
    >>> loss = nn.NLLLoss(weight=mta.tensor([1.0, 3.0]))
    >>> loss(mta.tensor([[-1.0, -2.0]]), mta.tensor([1])).item()
    2.0
    """

    def __init__(
        self, weight: Tensor | None = None, ignore_index: int = -100, reduction: str = "mean"
    ) -> None:
        super().__init__()
        check_reduction("NLLLoss", reduction)
        self.register_buffer("weight", weight)
        self.reduction, self.ignore_index = reduction, ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of ``input`` (log-probabilities) for ``target`` (class indices)."""
        return F.nll_loss(
            input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction
        )

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"reduction={self.reduction!r}"


class MSELoss(Module):
    """Mean squared error; see :func:`~minitorch_accel.nn.functional.mse_loss`."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        check_reduction("MSELoss", reduction)
        self.reduction = reduction

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """The loss of ``input`` against ``target`` (same shapes)."""
        return F.mse_loss(input, target, self.reduction)

    def extra_repr(self) -> str:
        """The settings shown inside this layer's ``repr``."""
        return f"reduction={self.reduction!r}"
